"""The single-instance guard: an exclusive `flock` on the user store's `.lock` file.

The daemon takes it before touching any store or binding any socket (RELIABILITY (b) 5: a second
ZeroMQ ipc bind silently steals the endpoint, so the lock is the only real guard). The holder's
pid is written into the file for diagnostics only; the lock itself is the kernel's flock, which is
released when the holder's descriptor closes — including when the process is SIGKILLed — so there
is no stale-pidfile logic. flock locks belong to the open file description, so a second acquire
in the same process also fails, which is what tests want.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from types import TracebackType
from typing import Self

from slmactor.stores.base.errors import AlreadyRunning, StoreError
from slmactor.stores.base.fsutil import FILE_MODE, ensure_dir

__all__ = ["AlreadyRunning", "StoreLock", "acquire_store_lock", "read_lock_note", "read_lock_pid"]

_FLAGS = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW


def _lock_lines(path: str | os.PathLike[str]) -> list[str]:
    try:
        with open(path, "rb") as handle:
            return handle.read(4096).decode("utf-8", "replace").splitlines()
    except OSError:
        return []


def read_lock_pid(path: str | os.PathLike[str]) -> int | None:
    """The pid written in a lock file (its first line), or None (missing, empty, garbage)."""
    lines = _lock_lines(path)
    text = lines[0].strip() if lines else ""
    return int(text) if text.isdigit() else None


def read_lock_note(path: str | os.PathLike[str]) -> str:
    """The note the holder wrote after its pid (the daemon: the runtime dir it serves), or ""."""
    lines = _lock_lines(path)
    return lines[1].strip() if len(lines) > 1 else ""


class StoreLock:
    """A held store lock; `release()` (or leaving a `with` block) lets it go."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Unlock and close. The file stays (unlinking it would race with a new acquirer)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        with contextlib.suppress(OSError):
            os.close(fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def acquire_store_lock(path: str | os.PathLike[str], note: str = "") -> StoreLock:
    """Take the lock at `path` without waiting; raise AlreadyRunning(pid) if someone holds it.

    The holder's pid and `note` (one line) are written into the file for whoever finds it held.
    """
    lock_path = Path(path)
    try:
        ensure_dir(lock_path.parent)
        fd = os.open(lock_path, _FLAGS, FILE_MODE)
    except OSError as exc:
        raise StoreError(f"cannot open the store lock {lock_path}: {exc.strerror}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise AlreadyRunning(lock_path, read_lock_pid(lock_path)) from None
    except OSError as exc:
        os.close(fd)
        raise StoreError(f"cannot lock {lock_path}: {exc.strerror}") from exc
    try:
        os.ftruncate(fd, 0)
        note = note.replace("\n", " ").strip()
        os.pwrite(fd, (f"{os.getpid()}\n" + (f"{note}\n" if note else "")).encode(), 0)
    except OSError:
        pass  # the pid is only a diagnostic; the flock is what guards
    return StoreLock(lock_path, fd)
