"""Lesson files: the project's `.slmcode/MEMORY.md` and the user's global MEMORY.md (SPEC S-8.9).

Lessons are appended, never rewritten wholesale: MEMORY.md is also a human's file, and one
`write()` in O_APPEND mode leaves everything already in it byte-for-byte alone (even bytes that are
not valid UTF-8). A new file gets a header first (`# Project memory` / `# SLMCode Global Memory`,
then `## Lessons`); global additions go in a `## <title> (<RFC 3339>)` block (mode 0644 as in the
seed). Lesson text is redacted before it is written.

Reading never fails: a missing or unreadable file, a directory or a symlink in its place reads as
"" (`read_text`); undecodable bytes read as U+FFFD and lines that are not bullets are ignored by
the parser, so a damaged MEMORY.md costs only its damaged lines. Something that is not a regular
file where MEMORY.md should be is moved aside (`MEMORY.md.corrupt`) before the next append.
The files are bounded: past `MAX_MEMORY_BYTES` the oldest bullets the daemon wrote (those with its
provenance marker) are dropped, with a global block's heading once its bullets are gone (atomic
rewrite); the user's own lines are never dropped.
Global lessons are read from `$XDG_CONFIG_HOME/slmcode/MEMORY.md` (else `~/.config/slmcode/`) and
from the user store's `MEMORY.md`, joined by a blank line.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from slmactor.logic.memory.lessons import (
    GLOBAL_HEADER,
    PROJECT_HEADER,
    Lesson,
    adopt_lines,
    fold_into,
    foreign_lines,
    forget_own_bullets,
    global_block,
    join_memory_texts,
    render_markdown,
    trim_oldest_bullets,
    without_lines,
)
from slmactor.logic.text.redact import redact
from slmactor.stores.base.errors import StoreWriteError
from slmactor.stores.base.fsutil import (
    atomic_write_bytes,
    ensure_dir,
    is_regular,
    quarantine,
    write_all,
)
from slmactor.stores.base.markdown import read_text
from slmactor.stores.base.signing import KEY_NAME, load_signing_key
from slmactor.stores.base.warnings import WarningLog

__all__ = ["KEY_NAME", "LessonFile", "LessonStore", "global_read_paths", "load_signing_key"]

MAX_MEMORY_BYTES = 256 * 1024
READ_CAP_BYTES = 1024 * 1024
#: New MEMORY.md files are private like every store file; a mode the user gave an
#: existing one (to share it) is kept, also when it is compacted.
GLOBAL_FILE_MODE = 0o600
PROJECT_FILE_MODE = 0o600


def global_read_paths(home: Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where global lessons are read from: the XDG config copy, then the user store's."""
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_CONFIG_HOME", "").strip()
    config = Path(xdg) if xdg else Path.home() / ".config"
    return [config / "slmcode" / "MEMORY.md", home / "MEMORY.md"]


class LessonFile:
    """One MEMORY.md, appended to by a single writer."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        header: str,
        warnings: WarningLog,
        *,
        mode: int = PROJECT_FILE_MODE,
        max_bytes: int = MAX_MEMORY_BYTES,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path)
        self.header = header
        self.warnings = warnings
        self.mode = mode
        self.max_bytes = max_bytes
        self._now = now

    def read(self) -> str:
        return read_text(self.path, READ_CAP_BYTES)

    def append(self, text: str) -> None:
        """Append `text` (header first for a new file); raises StoreWriteError."""
        if not text.strip():
            return
        if is_regular(self.path) is False:
            moved = quarantine(self.path, self.warnings, self._now(), "is not a regular file")
            if moved is None and os.path.lexists(self.path):
                raise StoreWriteError(self.path, "a non-file is in the way")
        try:
            ensure_dir(self.path.parent)
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(self.path, flags, self.mode)
        except OSError as exc:
            raise StoreWriteError(self.path, "could not open for append", exc.errno) from exc
        try:
            size = os.fstat(fd).st_size
            if size == 0:
                text = self.header + text
            elif not _ends_with_newline(fd, size):
                text = "\n" + text
            write_all(fd, text.encode("utf-8", "surrogatepass"))
            os.fsync(fd)
            size += len(text.encode("utf-8", "surrogatepass"))
        except OSError as exc:
            raise StoreWriteError(self.path, "append was not completed", exc.errno) from exc
        finally:
            os.close(fd)
        if size > READ_CAP_BYTES:
            # Grown by hand past what is read back whole: trimming would lose its newest part.
            self.warnings.warn(
                f"{self.path.name} is over {READ_CAP_BYTES} bytes; not trimmed", self._now()
            )
        elif size > self.max_bytes:
            self._compact()

    def rewrite(self, text: str) -> None:
        """Replace the file by `text` atomically, keeping the mode a user gave it."""
        try:
            mode = os.stat(self.path, follow_symlinks=False).st_mode & 0o777
        except OSError:
            mode = self.mode
        atomic_write_bytes(self.path, text.encode("utf-8", "surrogatepass"))
        os.chmod(self.path, mode)

    def _compact(self) -> None:
        trimmed = trim_oldest_bullets(self.read(), self.max_bytes)
        self.rewrite(trimmed)
        trimmed_size = len(trimmed.encode("utf-8", "surrogatepass"))
        if trimmed_size > self.max_bytes:
            self.warnings.warn(f"{self.path.name} is over {self.max_bytes} bytes with its "
                               "hand-written text alone; that text is never trimmed", self._now(), self.path)

    def delete(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StoreWriteError(self.path, "could not delete", exc.errno) from exc


def _ends_with_newline(fd: int, size: int) -> bool:
    return os.pread(fd, 1, size - 1) == b"\n"


def _redacted(lessons: Sequence[Lesson]) -> list[Lesson]:
    return [
        Lesson(le.task_id, le.kind, redact(le.text), le.at) for le in lessons if le.text.strip()
    ]


class LessonStore:
    """The project's lessons and the user's global lessons (read: every global file)."""

    def __init__(
        self,
        project_md: str | os.PathLike[str] | None,
        global_md: str | os.PathLike[str],
        global_reads: Sequence[str | os.PathLike[str]],
        warnings: WarningLog,
        *,
        now: Callable[[], float] = time.time,
        signing_key: bytes | None = None,
    ) -> None:
        self._now = now
        self.signing_key = signing_key
        self.project = (
            LessonFile(project_md, PROJECT_HEADER, warnings, now=now) if project_md else None
        )
        self.global_ = LessonFile(
            global_md, GLOBAL_HEADER, warnings, mode=GLOBAL_FILE_MODE, now=now
        )
        self._global_reads = [Path(p) for p in global_reads]

    def read_project(self) -> str:
        return self.project.read() if self.project else ""

    def read_global(self) -> str:
        return join_memory_texts(read_text(p, READ_CAP_BYTES) for p in self._global_reads)

    def add_project(self, lessons: Sequence[Lesson]) -> list[Lesson]:
        """Append lesson bullets to the project's MEMORY.md (signed with `signing_key`, so they
        can be told from lines a repository brought); returns what was written."""
        clean = _redacted(lessons)
        if self.project is not None and clean:
            # One line per lesson signature, with its count: a lesson learned again (the same
            # failure in the next session) counts on its line instead of repeating it.
            text = self.project.read()
            # A file holding bytes that are not text is only appended to: a rewrite would not
            # give them back byte for byte.
            key = self.signing_key if "\ufffd" not in text else None
            text, new, changed = fold_into(text, clean, key)
            if changed:
                self.project.rewrite(text)
            if new:
                self.project.append(render_markdown(new, self.signing_key))
        return clean

    def remove_own(self, lines: set[str]) -> set[str]:
        """Take these lines (this daemon's bullets, as read) out of the project's MEMORY.md:
        a claim check found them false or stale. The lines removed; everything else is kept
        (atomic rewrite). Raises StoreWriteError."""
        if self.project is None or not lines:
            return set()
        text = self.project.read()
        if "\ufffd" in text:
            return set()  # bytes that are not text could not be given back byte for byte
        kept, found = without_lines(text, lines)
        if found:
            self.project.rewrite(kept)
        return found

    def foreign(self) -> list[tuple[str, str]]:
        """(id, text) of the project MEMORY.md lines this user's key did not sign."""
        if self.project is None or self.signing_key is None:
            return []
        return foreign_lines(self.project.read(), self.signing_key)

    def adopt(self, wanted: set[str] | None) -> list[str]:
        """Sign the foreign lines of the project MEMORY.md (`wanted` ids, or all); the ids
        adopted. The file is rewritten atomically with its mode kept; raises StoreWriteError."""
        if self.project is None or self.signing_key is None:
            return []
        text, adopted = adopt_lines(self.project.read(), self.signing_key, wanted)
        if adopted:
            self.project.rewrite(text)
        return adopted

    def forget_own(self, *, global_too: bool) -> int:
        """Take the bullets this user's daemon wrote out of the project's MEMORY.md (and the
        user store's global one): the user's own lines and a teammate's stay, a file left with
        only its header is removed. How many bullets went; raises StoreWriteError."""
        removed = 0
        files = [(self.project, self.signing_key)] + ([(self.global_, None)] if global_too else [])
        for file, key in files:
            if file is None or not is_regular(file.path):
                continue
            text, count = forget_own_bullets(file.read(), key, file.header)
            if not count:
                continue
            if text:
                file.rewrite(text)
            else:
                file.delete()
            removed += count
        return removed

    def add_global(self, title: str, lessons: Sequence[Lesson]) -> list[Lesson]:
        """Append a `## <title> (<time>)` block of bullets to the global MEMORY.md."""
        clean = _redacted(lessons)
        if clean:
            block = global_block(title.strip() or "Lessons", render_markdown(clean), self._now())
            self.global_.append(block)
        return clean
