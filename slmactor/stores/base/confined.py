"""Safe, bounded reads of files below a project root, for offline regression checks.

The path is first validated lexically (`slmactor.logic.loop.confine`). Then it is walked one component
at a time from a descriptor of the (resolved) root, each directory opened with `O_NOFOLLOW |
O_DIRECTORY` relative to its parent, so a symlink anywhere on the way — in or out of the root — is
refused instead of followed, and a directory swapped for a symlink between checks cannot redirect
the read (no check-then-open race on path strings). The leaf is opened with `O_NOFOLLOW |
O_NONBLOCK` (a FIFO never blocks the open), `fstat`-ed, and read only if it is a regular file, at
most `MAX_SCAN_BYTES`, in chunks. Nothing here writes, creates or executes anything.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from slmactor.logic.loop.confine import Confined, confine
from slmactor.logic.loop.regressions import FileObservation

#: Largest file a "contains" check will scan; beyond it the check is skipped, not guessed.
MAX_SCAN_BYTES = 8 * 1024 * 1024
CHUNK = 64 * 1024

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _open_parent(root_fd: int, where: Confined) -> int | FileObservation:
    fd = os.dup(root_fd)
    for part in where.parts[:-1]:
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            os.close(fd)
            return FileObservation("missing")
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                return FileObservation("refused", reason=f"{part}: symlink or not a directory")
            return FileObservation("refused", reason=f"{part}: {exc.strerror}")
        os.close(fd)
        fd = child
    return fd


def _scan(fd: int, size: int, needle: bytes) -> bool:
    if not needle:
        return True
    tail = b""
    remaining = size
    while remaining > 0:
        chunk = os.read(fd, min(CHUNK, remaining))
        if not chunk:
            break
        remaining -= len(chunk)
        window = tail + chunk
        if needle in window:
            return True
        tail = window[-(len(needle) - 1) :] if len(needle) > 1 else b""
    return False


def observe(root: Path, path: str, substring: str = "") -> FileObservation:
    """What is at `root/path`: missing, present (and whether it contains `substring`), or refused."""
    where = confine(path)
    if not isinstance(where, Confined):
        return FileObservation("refused", reason=where.reason)
    try:
        root_fd = os.open(os.path.realpath(root), _DIR_FLAGS)
    except OSError as exc:
        return FileObservation("refused", reason=f"project root unreadable: {exc.strerror}")
    try:
        parent = _open_parent(root_fd, where)
        if isinstance(parent, FileObservation):
            return parent
        try:
            try:
                fd = os.open(where.parts[-1], _FILE_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                return FileObservation("missing")
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    return FileObservation("refused", reason="symlink (not followed)")
                return FileObservation("refused", reason=exc.strerror or "unreadable")
        finally:
            os.close(parent)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return FileObservation("refused", reason="not a regular file")
            if not substring:
                return FileObservation("present")
            if info.st_size > MAX_SCAN_BYTES:
                return FileObservation(
                    "refused", reason=f"larger than {MAX_SCAN_BYTES} bytes; not scanned"
                )
            needle = substring.encode("utf-8", "surrogatepass")
            return FileObservation("present", contains=_scan(fd, info.st_size, needle))
        except OSError as exc:
            return FileObservation("refused", reason=exc.strerror or "unreadable")
        finally:
            os.close(fd)
    finally:
        os.close(root_fd)
