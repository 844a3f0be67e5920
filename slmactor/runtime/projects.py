"""The project rule, and a bounded LRU of per-project stores shared by every actor that serves
many projects.

The project rule (clients/PROTOCOL.md §3), one check for every kind: a `project` that is given
must be the absolute path of an existing directory (no NUL byte); the front door answers any
other `BAD_PROJECT` before an actor sees the message. A kind about a project answers
`BAD_PROJECT` without one (`Actor.project_root`); working-memory tells without one are dropped
and counted. `real_root` resolves a checked project path to the directory it names.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")

#: How long a resolved project path is reused (seconds). Every request resolves its project, and
#: `realpath` costs a system call per path component (13 µs for a 4-deep path, measured): under
#: 50 writing clients that was a few per cent of the daemon's only core. A symlinked project
#: pointed elsewhere is followed within this time.
ROOT_REUSE_S = 1.0
_ROOTS_MAX = 1024
_roots: dict[str, tuple[float, Path]] = {}
_roots_lock = threading.Lock()


def real_root(raw: str, clock: Callable[[], float] = time.monotonic) -> Path:
    """The directory the absolute path `raw` names, symlinks resolved (`os.path.realpath`)."""
    now = clock()
    with _roots_lock:
        known = _roots.get(raw)
    if known is not None and now - known[0] < ROOT_REUSE_S:
        return known[1]
    root = Path(os.path.realpath(raw))
    with _roots_lock:
        if len(_roots) >= _ROOTS_MAX:
            _roots.clear()
        _roots[raw] = (now, root)
    return root


def project_problem(raw: str) -> str:
    """Why `raw` is not a usable project root ("" when it is one)."""
    if not raw:
        return "this request needs 'project' (the absolute path of the project root)"
    if "\x00" in raw or not os.path.isabs(raw):
        return f"project must be an absolute path: {raw[:300]!r}"
    if not os.path.isdir(raw):
        return f"project directory does not exist: {raw[:300]}"
    return ""


class ProjectCache(Generic[T]):
    """Open project stores on first use; close the least recently used past `limit`."""

    def __init__(self, opener: Callable[[Path], T], closer: Callable[[T], None], limit: int) -> None:
        self._opener = opener
        self._closer = closer
        self._limit = max(limit, 1)
        self._open: OrderedDict[Path, T] = OrderedDict()

    def get(self, root: Path) -> T:
        store = self._open.get(root)
        if store is not None:
            self._open.move_to_end(root)
            return store
        store = self._opener(root)
        self._open[root] = store
        while len(self._open) > self._limit:
            _, evicted = self._open.popitem(last=False)
            self._closer(evicted)
        return store

    def peek(self, root: Path) -> T | None:
        return self._open.get(root)

    def items(self) -> list[tuple[Path, T]]:
        return list(self._open.items())

    def discard(self, root: Path) -> None:
        store = self._open.pop(root, None)
        if store is not None:
            self._closer(store)

    def close_all(self) -> None:
        while self._open:
            _, store = self._open.popitem(last=False)
            self._closer(store)

    def __len__(self) -> int:
        return len(self._open)
