"""The per-project pre-flight table, as a hook reads it: which rows speak of a call about to run.

The daemon writes the table when the project's environment facts change
(`stores/environment`, `EnvBook.table`): per fact that may rewrite a call, the exact commands it
was seen failing on, whether it is proven, its tool (a harness's own option) and the first words
of the commands it speaks of. A hook that the gate let through (`hooks/gate.py`) matches the
call here — a command seen failing, exactly; or the first word of a command a proven fact
speaks of — and asks the daemon (`evolve.preflight`) only when a row matches; the daemon decides
what the call becomes. A row that matches wrongly costs one ask, never a wrong rewrite.

Stdlib only, and total: a missing, unreadable or odd table is no rows.
"""

from __future__ import annotations

import json
import os
import re

from slmactor.hooks.gate import TABLE_FILE

#: The table is small by construction; anything larger is not ours.
MAX_TABLE_BYTES = 1 << 20
_SPACE = re.compile(r"\s+")
_SEPARATORS = re.compile(r"&&|\|\||[;|\n]")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_PREFIX_WORDS = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "nice", "timeout"})


def read_rows(project: str) -> list[dict[str, object]]:
    """The project's pre-flight rows (none when there is no table)."""
    path = os.path.join(project, TABLE_FILE)
    try:
        with open(path, "rb") as fh:
            data = json.loads(fh.read(MAX_TABLE_BYTES + 1)[:MAX_TABLE_BYTES])
    except (OSError, ValueError):
        return []
    rows = data.get("rows") if isinstance(data, dict) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def norm(command: str) -> str:
    return _SPACE.sub(" ", command).strip()


def first_word(command: str) -> str:
    """The program a shell line runs first: past `cd x &&`, assignments and `sudo`/`env`-style
    prefixes, without its directory."""
    for segment in _SEPARATORS.split(command):
        words = segment.split()
        while words and (_ASSIGNMENT.match(words[0]) or words[0] in _PREFIX_WORDS
                         or words[0].startswith("-") or words[0][:1].isdigit()):
            words = words[1:]
        if not words or words[0] == "cd":
            continue
        return words[0].strip("'\"").rsplit("/", 1)[-1]
    return ""


def matching(rows: list[dict[str, object]], command: str, tool: str = "") -> list[str]:
    """The ids of the facts whose row speaks of this call (the daemon decides the rest)."""
    text = norm(command)
    if not text:
        return []
    word = first_word(text)
    found: list[str] = []
    for row in rows:
        fact = row.get("fact")
        if not isinstance(fact, str):
            continue
        row_tool = row.get("tool")
        if isinstance(row_tool, str) and row_tool and tool and row_tool != tool:
            continue
        exact = row.get("exact")
        keys = row.get("keys")
        if (isinstance(exact, list) and text in exact) or (
                row.get("proven") is True and isinstance(keys, list) and word in keys):
            found.append(fact)
    return found
