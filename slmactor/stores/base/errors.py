"""The exceptions every store raises: one base class, and the few cases callers tell apart.

A store never lets a bare `OSError` escape a write path: a write either completes whole (and
durably, when the store was asked to fsync) or raises `StoreWriteError`, after the store has put
the file back the way it was. Read paths do not raise at all; they return their zero value and add
a warning instead (see `warnings.py`).
"""

from __future__ import annotations

import errno as errno_codes
from pathlib import Path

#: Operating-system errors that mean "the store cannot be written", not a bug: answered as a
#: store error (STORE_ERROR), never as an internal one.
STORAGE_ERRNOS = frozenset(
    {
        errno_codes.ENOSPC,
        errno_codes.EDQUOT,
        errno_codes.EROFS,
        errno_codes.EIO,
        errno_codes.EFBIG,
        errno_codes.EACCES,
        errno_codes.EPERM,
        errno_codes.ENOTDIR,
        errno_codes.ELOOP,
    }
)


class StoreError(Exception):
    """Something about a store that the caller should report instead of acknowledging."""


class StoreWriteError(StoreError):
    """A write could not be made whole (or durable); nothing partial was left behind.

    `errno` is the operating-system error number when there was one (ENOSPC, EIO, EFBIG, ...)
    and None for conditions detected by the store itself, such as a short write.
    """

    def __init__(self, path: str | Path, reason: str, errno: int | None = None) -> None:
        self.path = str(path)
        self.reason = reason
        self.errno = errno
        name = errno_codes.errorcode.get(errno, str(errno)) if errno is not None else None
        detail = f"{reason} ({name})" if name else reason
        super().__init__(f"could not write {self.path}: {detail}")


class RecordTooLarge(StoreError):
    """A record serialises to more bytes than the store accepts for one line or document."""

    def __init__(self, path: str | Path, size: int, limit: int) -> None:
        self.path = str(path)
        self.size = size
        self.limit = limit
        super().__init__(f"record for {self.path} is {size} bytes, over the {limit}-byte limit")


class RecordNotSerializable(StoreError):
    """A record holds a value JSON cannot represent (NaN, a set, an arbitrary object, ...)."""


class AlreadyRunning(StoreError):
    """Another process holds the store lock; `pid` is what it wrote into the lock file, if any."""

    def __init__(self, lock_path: str | Path, pid: int | None) -> None:
        self.lock_path = str(lock_path)
        self.pid = pid
        who = f"pid {pid}" if pid is not None else "another process"
        super().__init__(f"already running as {who} (store locked: {self.lock_path})")
