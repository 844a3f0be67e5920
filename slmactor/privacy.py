"""The door every message of a harness passes before it leaves the process: what the user keeps
out of memory never crosses it.

`withheld(kind, body)` is called by the client on each encoded tell and ask (and so by the hooks,
`import sessions`, the MCP server and every Python harness, which all send through it); the hook
also cuts private spans out of its stdin before it spools or writes anything
(`strip_private_json_bytes`). The rules are `slmactor.logic.text.private`'s; this module reads a
project's exclude list (`<project>/.slmcode/exclude`), looked at again at most once a second.

A body with nothing private and a project without an exclude list costs one lower-cased search of
the encoded bytes (no decoding), so `record_tool` stays as cheap as before.
"""

from __future__ import annotations

import os
import time
from typing import Any

from slmactor.logic.text.private import (
    PROBE,
    Excluder,
    names_excluded,
    parse_patterns,
    scrub,
)

__all__ = ["EXCLUDE_FILE", "Excluder", "excluder_for", "names_excluded", "needs_look", "scrub",
           "withheld"]

EXCLUDE_FILE = os.path.join(".slmcode", "exclude")
#: Seconds an exclude list read from disk is used before its file is looked at again.
RECHECK_S = 1.0
#: Bytes of an exclude file read at most.
MAX_EXCLUDE_BYTES = 64 << 10
#: Tells that are one tool call: one naming an excluded path is not sent at all.
CALL_KINDS = frozenset({"record_tool", "fail"})

_cache: dict[str, tuple[float, tuple[int, int] | None, Excluder]] = {}


def excluder_for(project: str) -> Excluder:
    """The exclude list of `project` (empty when it has none or it cannot be read)."""
    if not project:
        return Excluder("")
    now = time.monotonic()
    cached = _cache.get(project)
    if cached is not None and now - cached[0] < RECHECK_S:
        return cached[2]
    path = os.path.join(project, EXCLUDE_FILE)
    try:
        st = os.stat(path)
        stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = None
    if cached is not None and cached[1] == stamp:
        _cache[project] = (now, stamp, cached[2])
        return cached[2]
    patterns: tuple[str, ...] = ()
    if stamp is not None:
        try:
            with open(path, "rb") as fh:
                patterns = parse_patterns(fh.read(MAX_EXCLUDE_BYTES).decode("utf-8", "replace"))
        except OSError:
            patterns = ()
    excluder = Excluder(os.path.realpath(project), patterns)
    if len(_cache) > 256:
        _cache.clear()
    _cache[project] = (now, stamp, excluder)
    return excluder


def needs_look(data: bytes, excluder: Excluder) -> bool:
    """Whether an encoded body may hold something to withhold (else it goes as it is)."""
    return bool(excluder) or PROBE in data.lower()


def withheld(kind: str, body: dict[str, Any], excluder: Excluder) -> dict[str, Any] | None:
    """`body` without private spans and excluded paths; None when the whole message is a tool
    call on an excluded path (it is not sent)."""
    if kind in CALL_KINDS and names_excluded(body, excluder):
        return None
    out = scrub(body, excluder)
    return out if isinstance(out, dict) else body
