"""`memory/facts.json` + `memory/SEMANTIC.md`: the project's semantic memory on disk (SPEC S-4.10).

`facts.json` is `{version: 1, updated, facts: [...]}` (one fact per line with sorted keys, final
newline, written atomically and redacted); `SEMANTIC.md` is its human view, regenerated on every
flush. A corrupt `facts.json` is moved to `facts.json.corrupt` with a warning and the store starts
empty; unusable records are skipped on load (`FactBook.from_records`). Hand edits
(`"pinned": true`) made while the daemon runs are picked up, and a removed file is not written
back (`MirroredBook.sync`).

With the user's signing `key`, each record the daemon writes carries `sig`; a record without a
valid one (a facts.json a repository brought) loads as unverified (`Fact.verified`), is shown
only labelled with its commands withheld, and is written back unsigned until `slmactor trust`
adopts it. `pinned` stays outside the signature, so pinning a fact by hand keeps it the user's.

`memory/retired.json` (`RetiredLines`) holds the lines of the memory block a user took back
(`memory.retire`): `{"version": 1, "lines": {id: {"text", "at"}}}`, one writer (the distiller),
read again when the file changes on disk — `rm` of it brings every retired line back, an edit by
hand is honoured. At most MAX_RETIRED lines: past it, the oldest retirement goes first.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slmactor.logic.memory.facts import MAX_FACTS, FactBook, semantic_markdown
from slmactor.stores.base.jsondoc import JsonDoc, Shape
from slmactor.stores.base.layout import ProjectLayout
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.base.watched import MirroredBook


class FactStore(MirroredBook[FactBook]):
    """The facts of one project. Owned by the distiller actor (single writer)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        mirror: str | os.PathLike[str],
        warnings: WarningLog,
        *,
        cap: int = MAX_FACTS,
        read_only: bool = False,
        now: Callable[[], float] = time.time,
        key: bytes | None = None,
    ) -> None:
        def load(records: list[Any]) -> FactBook:
            return FactBook.from_records(records, cap=cap, key=key)

        super().__init__(
            path,
            mirror,
            "facts",
            load,
            semantic_markdown,
            warnings,
            read_only=read_only,
            # Shared through git (`slmactor git setup`): one fact per line diffs and merges well.
            one_per_line=True,
            now=now,
        )

    @classmethod
    def for_project(cls, layout: ProjectLayout, warnings: WarningLog, **kwargs: Any) -> FactStore:
        return cls(layout.facts, layout.semantic_md, warnings, **kwargs)


MAX_RETIRED = 2000
FILE_NAME = "retired.json"


class RetiredLines:
    """The retired lines of one project (owned by the distiller actor)."""

    def __init__(self, memory_dir: Path, warnings: WarningLog) -> None:
        self.doc = JsonDoc(memory_dir / FILE_NAME, warnings, shape=Shape("lines", dict))
        self.lines: dict[str, dict[str, Any]] = {}
        self._stamp: tuple[int, int, int] | None = None
        self.sync()

    def _disk_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.doc.path)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def sync(self) -> None:
        """Read the file again when it changed on disk (or went away)."""
        stamp = self._disk_stamp()
        if stamp == self._stamp:
            return
        self._stamp = stamp
        data = self.doc.load() if stamp is not None else None
        raw = data.get("lines") if isinstance(data, dict) else None
        self.lines = {str(k): dict(v) for k, v in raw.items() if isinstance(v, dict)} \
            if isinstance(raw, dict) else {}

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(self.lines)

    def retire(self, entries: dict[str, str], at: str) -> list[str]:
        """Retire `entries` (id → the line's text); returns the ids newly retired."""
        new = [i for i in entries if i not in self.lines]
        for line_id in new:
            self.lines[line_id] = {"text": entries[line_id], "at": at}
        while len(self.lines) > MAX_RETIRED:
            del self.lines[next(iter(self.lines))]
        return new

    def restore(self, ids: list[str]) -> list[str]:
        back = [i for i in ids if i in self.lines]
        for line_id in back:
            del self.lines[line_id]
        return back

    def save(self) -> None:
        self.doc.path.parent.mkdir(parents=True, exist_ok=True)
        self.doc.save({"version": 1, "lines": self.lines})
        self._stamp = self._disk_stamp()
