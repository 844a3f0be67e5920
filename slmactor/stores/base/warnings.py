"""A bounded log of store warnings (corrupt files quarantined, torn tails repaired, ...).

Stores add to it instead of raising from read paths; `slmactor status` shows `recent()`. The log
keeps the newest `cap` entries, and a warning identical to the newest one bumps that entry's count
instead of pushing older, different warnings out (a store deleted during a write burst would
otherwise flood the log with one line).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from slmactor.logic.text.timefmt import to_rfc3339

DEFAULT_CAP = 50

_log = logging.getLogger("slmactor.stores")


@dataclass(slots=True)
class _Entry:
    first: float
    last: float
    text: str
    count: int


class WarningLog:
    """The newest `cap` warnings as (time, text), safe to share between threads."""

    def __init__(
        self,
        cap: int = DEFAULT_CAP,
        *,
        on_warn: Callable[[str], None] | None = None,
        on_warn_in: Callable[[str, str], None] | None = None,
    ) -> None:
        """`on_warn(text)` is also called for every warning (e.g. an actor's status hook), and
        `on_warn_in(text, project)` with the project the warning is about ("" = none known)."""
        if cap <= 0:
            raise ValueError("cap must be positive")
        self._on_warn = on_warn
        self._on_warn_in = on_warn_in
        self._entries: deque[_Entry] = deque(maxlen=cap)
        self._lock = threading.Lock()
        self._total = 0

    def warn(self, text: str, now: float, path: str | os.PathLike[str] | None = None) -> None:
        """Record `text` as seen at `now` (epoch seconds) and pass it to the `logging` module;
        `path` is the store file it is about (names its project in `status`)."""
        _log.warning("%s", text)
        if self._on_warn is not None:
            self._on_warn(text)
        if self._on_warn_in is not None:
            self._on_warn_in(text, project_of(path) if path is not None else project_in(text))
        with self._lock:
            self._total += 1
            if self._entries and self._entries[-1].text == text:
                newest = self._entries[-1]
                newest.last = now
                newest.count += 1
                return
            self._entries.append(_Entry(now, now, text, 1))

    @property
    def total(self) -> int:
        """How many warnings were ever recorded, including repeats and ones pushed out."""
        with self._lock:
            return self._total

    def recent(self) -> list[dict[str, object]]:
        """Oldest first: `{"at", "epoch", "text", "count"}` (`at`/`epoch` = the latest time)."""
        with self._lock:
            entries = list(self._entries)
        return [
            {"at": to_rfc3339(e.last), "epoch": e.last, "text": e.text, "count": e.count}
            for e in entries
        ]

    def texts(self) -> list[str]:
        """Just the texts, oldest first (handy in tests and logs)."""
        with self._lock:
            return [e.text for e in self._entries]

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


STORE_DIR = ".slmcode"
_STORE_PATH = re.compile(r"(/[^\s'\"]*?)/\.slmcode(?:/|\b)")


def project_of(path: str | os.PathLike[str]) -> str:
    """The project root a store path belongs to (the directory holding its `.slmcode`), or ""
    for a path outside any project store (the user store)."""
    parts = Path(path).parts
    if STORE_DIR not in parts:
        return ""
    index = len(parts) - 1 - parts[::-1].index(STORE_DIR)
    return str(Path(*parts[:index])) if index else ""


def project_in(text: str) -> str:
    """The project a warning's text names through a store path in it, or ""."""
    match = _STORE_PATH.search(text)
    return match.group(1) if match else ""
