"""The project rule, and a bounded LRU of per-project stores shared by every actor that serves
many projects.

The project rule (clients/PROTOCOL.md §3), one check for every kind: a `project` that is given
must be the absolute path of an existing directory (no NUL byte); the front door answers any
other `BAD_PROJECT` before an actor sees the message. A kind about a project answers
`BAD_PROJECT` without one (`Actor.project_root`); working-memory tells without one are dropped
and counted.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


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
