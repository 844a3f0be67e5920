"""An append-only JSONL log (episodes, graph edges, run metrics), written by a single owner.

Write rules (SPEC S-18.4, RELIABILITY (b) 1, 2 and 7):

* one `os.write` of the whole newline-terminated record on an `O_APPEND|O_CLOEXEC|O_NOFOLLOW`
  descriptor; the written length is checked, and after a short write or an error the file is
  truncated back to its size before the write and `StoreWriteError` is raised, so the file never
  keeps a partial record. If even the truncate fails, the descriptor is dropped and the torn tail
  is repaired before the next append;
* a torn tail (no final newline, e.g. after a crash mid-write) is repaired when the log is opened
  for appending: a tail that is a complete JSON object gets its newline, anything else is cut off
  (with a warning), so a new record never glues onto garbage;
* before every append the open descriptor is compared with the path (st_dev, st_ino, st_nlink):
  if the file or its directory was deleted or replaced, the directories are recreated (0700), the
  file reopened and a warning recorded — a record is never acknowledged into an unlinked inode;
* with `fsync=True` every append is followed by `fdatasync` (and a new file by an fsync of its
  directory); a failed fdatasync truncates the record back and raises — it is never retried and
  taken as success.

Reads never raise: `scan` skips lines that are not a JSON object, are not UTF-8, or are longer
than `max_line_bytes`, keeps their neighbours, counts them in `corrupt_lines` and records one
warning per scan. A directory, FIFO or symlink where the log should be reads as empty and is moved
aside to `NAME.corrupt[.N]` by the next append.

Every record is passed through `redact_obj` before it is encoded unless `redact=False`.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from slmactor.logic.text.redact import redact_obj
from slmactor.stores.base import health
from slmactor.stores.base.errors import (
    RecordNotSerializable,
    RecordTooLarge,
    StoreError,
    StoreWriteError,
)
from slmactor.stores.base.fsutil import (
    FILE_MODE,
    READ_FLAGS,
    Clock,
    atomic_write_bytes,
    ensure_dir,
    fsync_dir,
    is_regular,
    not_a_file,
    quarantine,
    remove_stale_temps,
)
from slmactor.stores.base.jsonl_lines import (
    CHUNK,
    last_line_start,
    line_at,
    parse_line,
    seek_line_start,
    skip_rest_of_line,
)
from slmactor.stores.base.warnings import WarningLog

DEFAULT_MAX_LINE_BYTES = 32 * 1024
_APPEND_FLAGS = (
    os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
)


class JsonlLog:
    """One JSONL file at `path`; `append` returns each record's byte offset for an index."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        warnings: WarningLog,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        fsync: bool = False,
        redact: bool = True,
        read_only: bool = False,
        now: Clock = time.time,
    ) -> None:
        if max_line_bytes < 2:
            raise ValueError("max_line_bytes must be at least 2")
        self.path = Path(path)
        self.warnings = warnings
        self.max_line_bytes = max_line_bytes
        self.fsync = fsync
        self.redact = redact
        self.read_only = read_only
        self._now = now
        self._fd: int | None = None
        self._lock = threading.RLock()
        #: Lines the last complete `scan` skipped (corrupt, not an object, oversize, torn tail).
        self.corrupt_lines = 0
        if not read_only:
            remove_stale_temps(self.path)

    # ------------------------------------------------------------------ writing

    def encode(self, record: Mapping[str, Any], *, redacted: bool = False) -> bytes:
        """The line `append` would write for `record` (redacted, compact, newline-terminated).
        `redacted`: the caller passes `redact_obj`'s own output, which a second pass would
        return unchanged (redaction is idempotent) at the cost of the first."""
        data = redact_obj(dict(record)) if self.redact and not redacted else record
        try:
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise RecordNotSerializable(f"record for {self.path} is not JSON: {exc}") from exc
        line = (text + "\n").encode("utf-8", "surrogatepass")
        if len(line) > self.max_line_bytes:
            raise RecordTooLarge(self.path, len(line), self.max_line_bytes)
        return line

    def append(self, record: Mapping[str, Any], *, redacted: bool = False) -> int:
        """Append one record; returns the byte offset its line starts at. Raises StoreWriteError
        (reported to `health`, as is the next success). `redacted` as for `encode`."""
        line = self.encode(record, redacted=redacted)
        try:
            offset = self._append_line(line)
        except StoreWriteError as exc:
            health.write_failed(self.path, str(exc), exc.errno)
            raise
        health.write_succeeded(self.path)
        return offset

    def _append_line(self, line: bytes) -> int:
        with self._lock:
            for _attempt in range(2):
                fd, before = self._ready()
                self._write_line(fd, line, before)
                # Checked again after the write: a store removed *during* it took the record
                # into a dead inode, so it is written once more into the recreated file.
                if self._still_linked(os.fstat(fd)):
                    return before
                self.warnings.warn(
                    f"{self.path.name} was deleted or replaced during a write; wrote it again",
                    self._now(),
                )
                self._drop_fd()
            raise StoreWriteError(self.path, "the log kept disappearing during the write")

    def _write_line(self, fd: int, line: bytes, before: int) -> None:
        try:
            written = os.write(fd, line)
        except OSError as exc:
            self._undo(fd, before)
            raise StoreWriteError(self.path, "append failed", exc.errno) from exc
        if written != len(line):
            self._undo(fd, before)
            raise StoreWriteError(self.path, f"short write ({written} of {len(line)} bytes)")
        if self.fsync:
            try:
                os.fdatasync(fd)
            except OSError as exc:
                self._undo(fd, before)
                self._drop_fd()
                raise StoreWriteError(self.path, "fdatasync failed", exc.errno) from exc

    def rewrite(self, records: Iterable[Mapping[str, Any]]) -> list[int]:
        """Replace the whole log by `records` atomically (so it can shrink); the new offsets."""
        self._check_writable()
        lines = [self.encode(record) for record in records]
        offsets: list[int] = []
        position = 0
        for line in lines:
            offsets.append(position)
            position += len(line)
        with self._lock:
            self._drop_fd()
            if is_regular(self.path) is False:
                self._quarantine_in_the_way()
            atomic_write_bytes(self.path, b"".join(lines))
        return offsets

    def keep_lines(self, kept: Iterable[tuple[int, str]]) -> list[int] | None:
        """Replace the log atomically by the lines starting at the given offsets, copied byte for
        byte, in the order given; their new offsets. `kept` pairs each offset with the `id` its
        record must carry: when a line is not there (the file was changed by someone else), the
        log is left alone and None is returned, for the caller to `rewrite` from a scan.

        Pruning an episode log this way costs one read and one write of the bytes it keeps:
        decoding, redacting and encoding again every kept record took ~30 ms per prune of a
        300-episode log, on the event loop of the actor that answers recalls. The lines are the
        ones `append` wrote, so they are already redacted and within `max_line_bytes`."""
        self._check_writable()
        with self._lock:
            try:
                fd = os.open(self.path, READ_FLAGS)
            except OSError:
                return None
            try:
                info = os.fstat(fd)
                data = os.pread(fd, info.st_size, 0) if stat.S_ISREG(info.st_mode) else b""
            finally:
                os.close(fd)
            lines: list[bytes] = []
            for offset, record_id in kept:
                end = data.find(b"\n", offset) + 1
                line = data[offset:end] if end > offset and (
                    offset == 0 or data[offset - 1:offset] == b"\n") else b""
                needle = b'"id":' + json.dumps(record_id, ensure_ascii=False).encode("utf-8")
                if not line.startswith(b"{") or needle not in line:
                    return None
                lines.append(line)
            offsets: list[int] = []
            position = 0
            for line in lines:
                offsets.append(position)
                position += len(line)
            self._drop_fd()
            atomic_write_bytes(self.path, b"".join(lines))
        return offsets

    def _check_writable(self) -> None:
        if self.read_only:
            raise StoreError(f"{self.path} is open read-only")

    def _ready(self) -> tuple[int, int]:
        """An append descriptor that still names `path`, and the file's current size."""
        self._check_writable()
        if self._fd is not None:
            info = os.fstat(self._fd)
            if self._still_linked(info):
                return self._fd, info.st_size
            self.warnings.warn(
                f"{self.path.name} was deleted or replaced while open; recreated it", self._now()
            )
            self._drop_fd()
        fd = self._open_for_append()
        return fd, os.fstat(fd).st_size

    def _still_linked(self, info: os.stat_result) -> bool:
        try:
            current = os.stat(self.path, follow_symlinks=False)
        except OSError:
            return False
        return info.st_nlink > 0 and (current.st_dev, current.st_ino) == (
            info.st_dev,
            info.st_ino,
        )

    def _open_for_append(self) -> int:
        try:
            ensure_dir(self.path.parent)
        except OSError as exc:
            raise StoreWriteError(self.path, "could not create its directory", exc.errno) from exc
        existed = os.path.lexists(self.path)
        fd = self._open_regular()
        try:
            self._repair_tail(fd)
            if self.fsync and not existed:
                fsync_dir(self.path.parent)
        except OSError as exc:
            os.close(fd)
            raise StoreWriteError(self.path, "could not prepare the log", exc.errno) from exc
        except StoreWriteError:
            os.close(fd)
            raise
        self._fd = fd
        return fd

    def _open_regular(self) -> int:
        for attempt in range(2):
            try:
                fd = os.open(self.path, _APPEND_FLAGS, FILE_MODE)
            except OSError as exc:
                if attempt == 0 and not_a_file(exc):
                    self._quarantine_in_the_way()
                    continue
                raise StoreWriteError(self.path, "could not open", exc.errno) from exc
            if stat.S_ISREG(os.fstat(fd).st_mode):
                return fd
            os.close(fd)
            if attempt == 0:
                self._quarantine_in_the_way()
        raise StoreWriteError(self.path, "a non-file is in the way")

    def _quarantine_in_the_way(self) -> None:
        quarantine(self.path, self.warnings, self._now(), "is not a regular file")

    def _repair_tail(self, fd: int) -> None:
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return
        start = last_line_start(fd, size)
        tail = os.pread(fd, size - start, start) if size - start <= self.max_line_bytes else b""
        if tail and parse_line(tail) is not None:
            if os.write(fd, b"\n") != 1:
                raise StoreWriteError(self.path, "could not terminate the last record")
            self.warnings.warn(f"{self.path.name}: added the missing final newline", self._now(),
                               self.path)
            return
        os.ftruncate(fd, start)
        self.warnings.warn(
            f"{self.path.name}: cut a torn final record ({size - start} bytes)", self._now()
        )

    def _undo(self, fd: int, before: int) -> None:
        """Cut the file back to `before`; if that fails, force a tail repair on the next open."""
        try:
            os.ftruncate(fd, before)
        except OSError as exc:
            self.warnings.warn(
                f"{self.path.name}: could not cut back a failed append ({exc.strerror}); "
                "the torn record will be repaired on the next write",
                self._now(),
            )
            self._drop_fd()

    def _drop_fd(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    # ------------------------------------------------------------------ reading

    def scan(self, start: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
        """Every readable record as (offset, record), in file order; never raises.

        `start` resumes at a byte offset (e.g. the size an index was built at); if it falls
        inside a line, that line is skipped and reading begins at the next one. A scan reads the
        log as it was when the scan started; later appends are for the next scan.
        """
        try:
            fd = os.open(self.path, READ_FLAGS)
        except FileNotFoundError:
            self.corrupt_lines = 0
            return
        except OSError as exc:
            self.warnings.warn(f"{self.path.name} could not be read: {exc.strerror}", self._now(),
                               self.path)
            return
        bad = 0
        try:
            with os.fdopen(fd, "rb", buffering=CHUNK) as handle:
                # The size is taken while no append of this log is in flight, and reading stops
                # there: a record being written by another thread is not mistaken for a torn
                # tail, and records appended during the scan are left for the next one.
                with self._lock:
                    info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode):
                    self.warnings.warn(f"{self.path.name} is not a regular file", self._now(), self.path)
                    return
                end = info.st_size
                offset = seek_line_start(handle, max(start, 0))
                while offset < end:
                    raw = handle.readline(min(self.max_line_bytes + 1, end - offset))
                    if not raw:
                        break
                    start = offset
                    offset += len(raw)
                    if not raw.endswith(b"\n"):
                        if len(raw) <= self.max_line_bytes:
                            # The last line never got its newline: whole (kept, as the next
                            # append does) or torn by a crash (skipped; a strict prefix of a
                            # JSON object is never itself an object).
                            tail = parse_line(raw)
                            if tail is None:
                                bad += 1
                            else:
                                yield start, tail
                            break
                        offset += skip_rest_of_line(handle)
                        bad += 1
                        continue
                    record = parse_line(raw)
                    if record is None:
                        if raw.strip():
                            bad += 1
                        continue
                    yield start, record
        except OSError as exc:
            self.warnings.warn(f"{self.path.name}: read stopped: {exc.strerror}", self._now(),
                               self.path)
        self.corrupt_lines = bad
        if bad:
            self.warnings.warn(
                f"skipped {bad} corrupt record(s) in {self.path.name}", self._now()
            )

    def records(self) -> list[dict[str, Any]]:
        """All readable records, without offsets."""
        return [record for _offset, record in self.scan()]

    def read_at(self, offset: int) -> dict[str, Any] | None:
        """The record whose line starts at `offset`, or None (no such line, corrupt, missing)."""
        return self.read_many([offset])[0]

    def read_many(self, offsets: Iterable[int]) -> list[dict[str, Any] | None]:
        """`read_at` for several offsets through one descriptor (hydrating search hits)."""
        wanted = list(offsets)
        try:
            fd = os.open(self.path, READ_FLAGS)
        except OSError:
            return [None] * len(wanted)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return [None] * len(wanted)
            return [line_at(fd, offset, self.max_line_bytes) for offset in wanted]
        except OSError:
            return [None] * len(wanted)
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ housekeeping

    def size(self) -> int:
        """The file's size in bytes (0 when missing or not a file)."""
        try:
            info = os.stat(self.path, follow_symlinks=False)
        except OSError:
            return 0
        return info.st_size if stat.S_ISREG(info.st_mode) else 0

    def close(self) -> None:
        with self._lock:
            self._drop_fd()

    def delete(self) -> None:
        """Close and remove the log; a missing file is fine."""
        self._check_writable()
        with self._lock:
            self._drop_fd()
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            except IsADirectoryError:
                self._quarantine_in_the_way()
            except OSError as exc:
                raise StoreWriteError(self.path, "could not delete", exc.errno) from exc

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
