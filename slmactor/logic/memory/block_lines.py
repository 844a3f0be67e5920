"""The memory block as lines a user can point at: each line's id, section and text, and the block
without the lines a user retired.

A line's id is a hash of what it says, numbers left out (`- pytest passes (7/8 runs)` keeps its id
when the count moves), so a line retired once stays retired while the record behind it only gains
evidence; a claim that changes what it says is a new line. Headings are not lines: one left
without lines goes with them (`said_once` drops empty headings).

Written so that a claim record with evidence and a verdict (the block built from items) can take
the place of `BlockLine` field for field: id, section, text, evidence, verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from slmactor.logic.memory.block import BlockItem, said_once
from slmactor.logic.text.strings import hash_id

_DIGITS = re.compile(r"\d+")
#: Said of a line no check has judged yet.
UNCHECKED = "unchecked"


def line_meaning(text: str) -> str:
    """What a line says: its bullet mark, case, numbers and spacing left out."""
    body = text.strip().removeprefix("- ").strip()
    return " ".join(_DIGITS.sub("#", body.lower()).split())


def line_id(text: str) -> str:
    return hash_id("l_", line_meaning(text))


@dataclass(frozen=True, slots=True)
class BlockLine:
    """One line a model would be told: where it stands and what backs it."""

    id: str
    section: str
    heading: str
    text: str
    #: The records behind the line: {"kind": "fact"|"episode"|"lesson"|"procedure", "id", …}.
    evidence: tuple[Mapping[str, Any], ...] = ()
    verdict: str = UNCHECKED

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "section": self.section, "heading": self.heading,
                "text": self.text, "evidence": [dict(e) for e in self.evidence],
                "verdict": self.verdict}


@dataclass(slots=True)
class _Walk:
    section: str = ""
    heading: str = ""
    lines: list[BlockLine] = field(default_factory=list)


def _is_line(stripped: str) -> bool:
    return bool(stripped) and not stripped.startswith("#") and not stripped.endswith(":")


def block_lines(text: str) -> list[BlockLine]:
    """The lines of a rendered block, in order, each under its section (`## …`) and heading."""
    walk = _Walk()
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("## "):
            walk.section, walk.heading = stripped[3:].strip(), ""
        elif stripped.endswith(":") and not stripped.startswith("- "):
            walk.heading = stripped[:-1]
        elif _is_line(stripped):
            body = stripped.removeprefix("- ")
            walk.lines.append(BlockLine(line_id(stripped), walk.section, walk.heading, body))
    return walk.lines


def without_retired(items: Sequence[BlockItem], retired: Iterable[str]) -> list[BlockItem]:
    """`items` without the lines whose id is in `retired` (and the headings they leave empty)."""
    gone = set(retired)
    if not gone:
        return list(items)
    kept = [item for item in items
            if item.heading or not item.key or line_id(item.text.strip()) not in gone]
    return said_once(kept)
