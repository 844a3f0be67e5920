"""Finding the files an import reads and reading them, whatever a disk holds.

`collect` walks the given files and folders once, before anything is read, so the import knows
its total (files and bytes) for its progress. Every entry it meets is either a regular file to
read, a folder to walk, or a skip counted with its reason: a FIFO, a device or a socket (never
opened), a folder that cannot be listed, a link to a folder already walked (a loop), a folder
named like a session file, an entry that vanished or cannot be stat'ed. Symlinked folders are
followed once each (by device and inode), so a loop ends the walk of that branch, not the import.

`Lines` reads one file as decoded lines, bounded three ways: never past the size the file had
when it was counted (a file still growing is read as it stood; its new lines are the next run's),
never more than `MAX_FILE_BYTES`, and no line longer than `MAX_LINE_BYTES` (such a line is
skipped, drained without being kept, and counted). The file is opened non-blocking and checked
to be a regular file after opening, so a path swapped for a FIFO between the walk and the read
cannot hang the import. Invalid UTF-8 is replaced (U+FFFD) and counted; the line still counts.
Skipped lines — here and in the rooms' parsers (`logic.loop.transcripts.json_objects` finds the
counter on the iterable) — land in `Lines.skipped`, by reason.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

#: Longest file read (a JSONL file is read up to it; a JSON document longer than it is skipped).
MAX_FILE_BYTES = 32 << 20
#: Longest line kept (a whole-file JSON document is one line in some formats, so this is the
#: file cap: a longer line could never be part of a document the import reads).
MAX_LINE_BYTES = MAX_FILE_BYTES
#: What a room sees of a file to tell whether it is one of its sessions.
HEAD_BYTES = 64 << 10
#: Bytes a drained (over-long) line is read in.
_DRAIN = 1 << 20
#: File endings that make a folder look like a session file (counted, never walked).
SESSION_SUFFIXES = (".jsonl", ".json", ".traj")

INVALID_UTF8 = "invalid UTF-8 replaced (line kept)"
LINE_TOO_LONG = f"line longer than {MAX_LINE_BYTES >> 20} MiB"
CUT_AT_CAP = f"read only its first {MAX_FILE_BYTES >> 20} MiB"


@dataclass(frozen=True, slots=True)
class Found:
    """A regular file to read, as it stood when counted."""

    path: Path
    size: int
    mtime_ns: int

    @property
    def key(self) -> str:
        """How the import's state names the file."""
        return str(self.path.absolute())

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def label(self) -> str:
        """How reports name the file."""
        return str(self.path)

    @property
    def stamp(self) -> int:
        """What, with the size, tells a later run the file is unchanged."""
        return self.mtime_ns

    @property
    def origin(self) -> tuple[str, ...]:
        """The command-line arguments that read this file again."""
        return (str(self.path),)

    #: The project a file belongs to whatever its sessions say ("" for a file on disk) and the
    #: tags its sessions' reports carry (a committed history's commit).
    project: ClassVar[str] = ""
    tags: ClassVar[tuple[str, ...]] = ()

    def head(self) -> str:
        return head(str(self.path))

    def opener(self) -> Lines:
        return Lines(str(self.path), self.size)

    def data(self) -> bytes:
        """The whole file (up to `MAX_FILE_BYTES`)."""
        fd = open_regular(str(self.path))
        with os.fdopen(fd, "rb") as fh:
            return fh.read(MAX_FILE_BYTES)


Skip = Callable[[str, str], None]


def kind_of(mode: int) -> str:
    """What a non-regular, non-folder entry is, in words."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (never opened)"
    if stat.S_ISCHR(mode):
        return "a character device (never opened)"
    if stat.S_ISBLK(mode):
        return "a block device (never opened)"
    if stat.S_ISSOCK(mode):
        return "a socket (never opened)"
    return "not a regular file (never opened)"


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def collect(roots: Iterable[Path], skip: Skip) -> list[Found]:
    """Every regular file under `roots` (each folder in name order), every other entry given to
    `skip` with its reason."""
    found: list[Found] = []
    seen_dirs: set[tuple[int, int]] = set()

    def walk(folder: Path, info: os.stat_result) -> None:
        stack = [(folder, info)]
        while stack:
            here, here_info = stack.pop()
            ident = (here_info.st_dev, here_info.st_ino)
            if ident in seen_dirs:
                skip(str(here), "a link to a folder already read (a loop)")
                continue
            seen_dirs.add(ident)
            try:
                with os.scandir(here) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError as exc:
                skip(str(here), f"unreadable folder ({_why(exc)})")
                continue
            folders: list[tuple[Path, os.stat_result]] = []
            for entry in entries:
                path = Path(entry.path)
                try:
                    st = entry.stat()  # follows a symlink: what it points to is what counts
                except OSError as exc:
                    skip(str(path), f"unreadable ({_why(exc)})")
                    continue
                if stat.S_ISDIR(st.st_mode):
                    if entry.name.endswith(SESSION_SUFFIXES):
                        skip(str(path), "a folder named like a session file (not read)")
                    else:
                        folders.append((path, st))
                elif stat.S_ISREG(st.st_mode):
                    found.append(Found(path, st.st_size, st.st_mtime_ns))
                else:
                    skip(str(path), kind_of(st.st_mode))
            stack.extend(reversed(folders))  # name order, depth first

    for root in roots:
        try:
            st = root.stat()
        except OSError as exc:
            skip(str(root), f"unreadable ({_why(exc)})")
            continue
        if stat.S_ISREG(st.st_mode):
            found.append(Found(root, st.st_size, st.st_mtime_ns))
        elif stat.S_ISDIR(st.st_mode):
            walk(root, st)
        else:
            skip(str(root), kind_of(st.st_mode))
    return found


class NotRegular(OSError):
    """The path no longer names a regular file (swapped after it was counted)."""


def open_regular(path: str) -> int:
    """A read descriptor of the regular file at `path` (non-blocking open: a FIFO swapped in
    cannot hang); NotRegular or another OSError otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(f"{path}: not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def head(path: str, size: int = HEAD_BYTES) -> str:
    """The file's first `size` bytes, decoded (invalid UTF-8 replaced)."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(size).decode("utf-8", errors="replace")


class Pass:
    """One reading of a file: its decoded lines (with their ends), and the lines skipped on the
    way, by reason (`skipped`: the reader's own skips and those of a parser that counts on it)."""

    def __init__(self, path: str, limit: int, cut_reason: str, lines: Iterable[str] | None = None) -> None:
        self.skipped: dict[str, int] = {}
        self._lines = iter(lines) if lines is not None else _read(path, limit, MAX_LINE_BYTES, cut_reason,
                                                                  self.skipped)

    def __iter__(self) -> Iterator[str]:
        return self._lines


class Lines:
    """Re-opens one file as a bounded `Pass` each time it is called (`read_sessions` takes such
    an opener: a room may read a file twice, the second time whole). `skipped` is the largest
    count per reason over the passes, so a line skipped on two passes counts once."""

    def __init__(self, path: str, size: int | None = None) -> None:
        self.path = path
        over = size is None or size > MAX_FILE_BYTES
        self.limit = MAX_FILE_BYTES if size is None else min(size, MAX_FILE_BYTES)
        # A file longer than the cap is cut (counted); one that grew after it was counted is
        # read as it stood (its new lines are the next run's, nothing is lost).
        self.cut_reason = CUT_AT_CAP if over else ""
        self._passes: list[Pass] = []
        self._cache: list[str] | None = None
        self._cache_skipped: dict[str, int] = {}

    def __call__(self) -> Pass:
        if self._cache is None:  # read once, whole (bounded); later passes reuse the lines
            counter: dict[str, int] = {}
            self._cache = _read_all(self.path, self.limit, self.cut_reason, counter)
            self._cache_skipped = counter
        one = Pass(self.path, 0, "", self._cache)
        one.skipped.update(self._cache_skipped)
        self._passes.append(one)
        return one

    def note(self, reason: str, count: int = 1) -> None:
        """A skip found outside any pass (the file as a whole)."""
        if count:
            self._passes.append(Pass(self.path, 0, "", ()))
            self._passes[-1].skipped[reason] = count

    @property
    def skipped(self) -> dict[str, int]:
        merged: dict[str, int] = {}
        for one in self._passes:
            for reason, n in one.skipped.items():
                merged[reason] = max(merged.get(reason, 0), n)
        return merged


def _note(counter: dict[str, int], reason: str) -> None:
    counter[reason] = counter.get(reason, 0) + 1


def _read_all(path: str, limit: int, cut_reason: str, counter: dict[str, int]) -> list[str]:
    """The file's lines up to `limit` bytes, read in one go (the fast path of `_read` when no
    line can be longer than the read itself): a last line the limit cuts is dropped (counted
    with `cut_reason` when the limit is the cap), invalid UTF-8 replaced per line and counted.
    Lines are split on `\n` only (a JSON string may hold U+2028, which `splitlines` would cut)."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(limit)
        more = bool(data) and not data.endswith(b"\n") and bool(fh.read(1))
    if more:
        cut = data.rfind(b"\n") + 1
        data = data[:cut]
        if cut_reason:
            _note(counter, cut_reason)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        lines: list[str] = []
        for raw in data.split(b"\n"):
            try:
                lines.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                _note(counter, INVALID_UTF8)
                lines.append(raw.decode("utf-8", errors="replace"))
        text = "\n".join(lines)
    del data
    parts = text.split("\n")
    last = parts.pop()  # after the final newline: "" (or a last line without one)
    out = [line + "\n" for line in parts]
    if last:
        out.append(last)
    return out


def _read(path: str, limit: int, line_cap: int, cut_reason: str, counter: dict[str, int]) -> Iterator[str]:
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        left = limit
        while left > 0:
            raw = fh.readline(min(left, line_cap + 1))
            if not raw:
                return
            left -= len(raw)
            if not raw.endswith(b"\n"):
                if len(raw) > line_cap:  # over-long: drain the rest of it, keep nothing
                    while left > 0:
                        more = fh.readline(min(left, _DRAIN))
                        left -= len(more)
                        if not more or more.endswith(b"\n"):
                            break
                    _note(counter, LINE_TOO_LONG)
                    continue
                if left <= 0 and fh.read(1):  # cut by the cap or the counted size: never half a record
                    if cut_reason:
                        _note(counter, cut_reason)
                    return
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError:
                _note(counter, INVALID_UTF8)
                yield raw.decode("utf-8", errors="replace")


def bounded_lines(path: str, cap: int = MAX_FILE_BYTES) -> Iterator[str]:
    """The file's lines (with their ends), decoded, up to `cap` bytes; a line the cap cuts is
    dropped (never half a record)."""
    return iter(Pass(path, cap, "cut"))


class TextLines(Lines):
    """`Lines` over text already in memory (a blob from git, a document re-read as lines)."""

    def __init__(self, label: str, text: list[str]) -> None:
        super().__init__(label, 0)
        self._text = text

    def __call__(self) -> Pass:
        one = Pass(self.path, 0, "", self._text)
        self._passes.append(one)
        return one


def array_as_lines(data: bytes) -> tuple[list[str], str]:
    """A JSON document that is an array of objects (a JSONL transcript a hook saved as one JSON
    array) as JSONL lines, one compact object each; ([], why not) otherwise."""
    import json

    from slmactor.logic.loop.transcripts import parse_json

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
    value, why = parse_json(text)
    if why:
        return [], why
    if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
        return [], "not an array of JSON objects"
    return [json.dumps(v, ensure_ascii=False, separators=(",", ":")) + "\n" for v in value], ""


def looks_like_array(name: str, head_text: str) -> bool:
    """Whether a file may be a JSON array of objects (worth reading whole to find out)."""
    return name.endswith(".json") and head_text.lstrip()[:1] == "[" and head_text.lstrip()[1:].lstrip()[:1] == "{"
