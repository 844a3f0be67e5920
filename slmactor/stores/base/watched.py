"""A `JsonDoc` that notices when someone else changed or removed its file.

Memory files are meant to be edited by hand (`"pinned": true` in facts.json) and deleted by hand
(`rm -rf .slmcode/memory` is a supported operation, SPEC S-0.3). A store that keeps its state in
memory would otherwise undo both at its next save: the hand edit overwritten, the deleted memory
written back. `WatchedDoc` remembers the file's identity (inode, size, mtime) after every load and
save; `changed()` tells the owner to reload (edited) or to start empty (removed) before it acts.
One `stat` per check: cheap enough to run before every request.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from slmactor.logic.text.timefmt import to_rfc3339
from slmactor.stores.base.jsondoc import JsonDoc, Shape
from slmactor.stores.base.markdown import write_markdown
from slmactor.stores.base.warnings import WarningLog

Signature = tuple[int, int, int] | None


def signature(path: Path) -> Signature:
    """(inode, size, mtime_ns) of the file at `path`, or None when there is none."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns)


class WatchedDoc:
    """One JSON document plus the identity of the version this process last read or wrote."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        warnings: WarningLog,
        *,
        read_only: bool = False,
        records_key: str | None = None,
        now: Callable[[], float] = time.time,
        shape: Shape | None = None,
    ) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self._doc = JsonDoc(self.path, warnings, read_only=read_only, now=now, shape=shape,
                            records_key=records_key)
        self._seen: Signature = None
        # Held for a save and the signature taken after it, which may run in a worker thread:
        # the file is ours while it is held, not a change made behind our back.
        self._saving = threading.Lock()

    def load(self) -> Any | None:
        """The document (None when missing or quarantined as corrupt)."""
        data = self._doc.load()
        self._seen = signature(self.path)
        return data

    def set_aside(self, why: str) -> None:
        """Quarantine the document as `NAME.corrupt` with a warning (`why`)."""
        self._doc.set_aside(why)

    def changed(self) -> bool:
        """True when the file differs from what this process last loaded or saved.

        Never blocks: while a save of ours is in progress the answer is False.
        """
        if not self._saving.acquire(blocking=False):
            return False
        try:
            return signature(self.path) != self._seen
        finally:
            self._saving.release()

    def save(self, data: Any) -> None:
        with self._saving:
            self._doc.save(data)
            self._seen = signature(self.path)

    def delete(self) -> None:
        """Remove the document and its quarantined copies (`NAME.corrupt`, `NAME.corrupt.N`)."""
        self._doc.delete()
        for sibling in _corrupt_copies(self.path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(sibling)
        self._seen = None


def _corrupt_copies(path: Path) -> list[Path]:
    prefix = path.name + ".corrupt"
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    return [
        path.with_name(name)
        for name in names
        if name == prefix or (name.startswith(prefix + ".") and name[len(prefix) + 1 :].isdigit())
    ]


def remove_file(path: Path) -> None:
    """Delete a mirror file; a missing one is fine."""
    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
        os.unlink(path)


class Book(Protocol):
    """What `MirroredBook` needs of a logic collection (FactBook, ProcedureBook, LatencyBook)."""

    def to_records(self) -> list[dict[str, Any]]: ...

    def __len__(self) -> int: ...


BookT = TypeVar("BookT", bound=Book)

#: What a flush writes: the JSON document and the Markdown mirror's text.
Snapshot = tuple[dict[str, Any], str]


class MirroredBook(Generic[BookT]):
    """A logic collection persisted as `{version: 1, updated, <key>: [...]}` plus a Markdown mirror.

    Single writer, two-step flush so a caller can keep the slow part off its event loop:
    `snapshot()` (cheap, on the owner's loop: copies the records, renders the mirror, clears the
    dirty flag) then `write(snapshot)` (file I/O, in a worker thread). `flush()` does both.
    Before acting on the book the owner calls `sync()`: a file edited by hand is reloaded, a file
    removed by hand (`rm -rf .slmcode/memory`) empties the book instead of being written back.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        mirror: str | os.PathLike[str],
        key: str,
        load_book: Callable[[list[Any]], BookT],
        mirror_text: Callable[[BookT, float], str],
        warnings: WarningLog,
        *,
        read_only: bool = False,
        one_per_line: bool = False,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.mirror = Path(mirror)
        self.key = key
        self.warnings = warnings
        self._load_book = load_book
        self._mirror_text = mirror_text
        self._now = now
        self._doc = WatchedDoc(path, warnings, read_only=read_only, now=now,
                               shape=Shape(key, list),
                               records_key=key if one_per_line else None)
        self.dirty = False
        self.book: BookT = self._read()

    @property
    def path(self) -> Path:
        return self._doc.path

    def _read(self) -> BookT:
        # A document of the wrong shape is quarantined by the doc itself (`Shape`) and reads
        # as None: the book starts empty instead of overwriting it at the next save.
        data = self._doc.load()
        raw = data.get(self.key) if isinstance(data, dict) else data
        return self._load_book(raw if isinstance(raw, list) else [])

    def sync(self) -> bool:
        """Reload when the file changed behind our back; True when it did."""
        if not self._doc.changed():
            return False
        self.book = self._read()
        self.dirty = False
        return True

    def touch(self) -> None:
        """Mark the book changed (the next flush writes it)."""
        self.dirty = True

    def snapshot(self, now: float) -> Snapshot | None:
        """What to write, or None when nothing changed. Clears the dirty flag."""
        if not self.dirty or self._doc.read_only:
            return None
        self.dirty = False
        document = {"version": 1, "updated": to_rfc3339(now), self.key: self.book.to_records()}
        return document, self._mirror_text(self.book, now)

    def write(self, snapshot: Snapshot) -> None:
        """Save the document and rewrite the mirror (blocking I/O). Raises StoreWriteError."""
        document, mirror = snapshot
        self._doc.save(document)
        write_markdown(self.mirror, mirror, warnings=self.warnings)

    def flush(self) -> None:
        snap = self.snapshot(self._now())
        if snap is not None:
            self.write(snap)

    def forget(self) -> None:
        """Delete the document, its corrupt copies and the mirror; the book starts empty."""
        self._doc.delete()
        remove_file(self.mirror)
        self.book = self._load_book([])
        self.dirty = False
