"""File-system steps shared by the stores: safe opens, atomic replace, directory fsync, quarantine.

Every call goes through the `os` module attribute (`os.write`, `os.fsync`, ...) rather than a
name imported from it, so fault-injection tests can monkeypatch one syscall and watch each store
react (RELIABILITY T8).

Write discipline for a whole document (RELIABILITY (b) 3): `mkstemp` in the target's directory as
`.<name>.tmp-*` (mode 0600) → write all → fsync(temp) → `os.replace` → fsync(directory). If any
step before the rename fails, the temp file is removed and the old document is untouched. An
fsync that failed is never retried and taken as success (the PostgreSQL rule): it is an error.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from slmactor.stores.base import health
from slmactor.stores.base.errors import StoreWriteError
from slmactor.stores.base.warnings import WarningLog

DIR_MODE = 0o700
FILE_MODE = 0o600
#: How many `NAME.corrupt.N` siblings are tried before giving up on keeping another copy.
MAX_QUARANTINE = 1000

Clock = Callable[[], float]

READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
_NOT_A_FILE_ERRNOS = frozenset({errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.ENOTDIR})


#: (device, inode, size) of a file: changes when it is replaced, deleted and re-created, or grown.
FileState = tuple[int, int, int]


def file_state(path: Path) -> FileState | None:
    """The file's identity and size, or None when it is missing (links are not followed).

    Stores compare it with what they last wrote, to notice a log removed (`rm -rf`), replaced
    or extended behind their back.
    """
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size)


def ensure_dir(path: Path) -> bool:
    """Create `path` and its parents with mode 0700; True when a directory had to be created."""
    if path.is_dir():
        return False
    try:
        os.makedirs(path, mode=DIR_MODE, exist_ok=True)
    except OSError as exc:
        # A store that cannot even make its directory is a store fault `status` must show,
        # not only an error of the one write that tried.
        health.dir_failed(path, f"could not create {path}: {exc.strerror or exc}", exc.errno)
        raise
    return True


def fsync_dir(path: Path) -> None:
    """fsync a directory so a rename or a new entry in it survives power loss."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_prefix(path: Path) -> str:
    """The prefix of temp files written next to `path` (SPEC S-18.3: `.<base>.tmp-`)."""
    return f".{path.name}.tmp-"


def remove_stale_temps(path: Path) -> int:
    """Delete `.<name>.tmp-*` files a crash left next to `path`; returns how many."""
    prefix = temp_prefix(path)
    removed = 0
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return 0
    for entry in entries:
        if entry.name.startswith(prefix):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed += 1
    return removed


#: A temp file untouched this long is litter of a crash or a failed write, not one being written.
STALE_TEMP_SECONDS = 60.0


def remove_temps_in(directory: Path, now: float, min_age: float = STALE_TEMP_SECONDS) -> int:
    """Delete the `.NAME.tmp-*` files in `directory` (any store file's) not modified for
    `min_age` seconds before `now` — what crashes and failed writes left; how many."""
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        if not (entry.name.startswith(".") and ".tmp-" in entry.name):
            continue
        with contextlib.suppress(OSError):
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode) or info.st_mtime > now - min_age:
                continue
            os.unlink(entry.path)
            removed += 1
    return removed


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to a private (temp) file, looping over short writes."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, "write made no progress")
        view = view[written:]


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` by `data` atomically and durably, or raise StoreWriteError leaving it as was.

    A directory or other non-file sitting at `path` is not replaced (os.replace would fail);
    callers quarantine it first (`quarantine`). The outcome is reported to `health`.
    """
    try:
        _atomic_write_bytes(path, data)
    except StoreWriteError as exc:
        health.write_failed(path, str(exc), exc.errno)
        raise
    health.write_succeeded(path)


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    try:
        ensure_dir(path.parent)
    except OSError as exc:
        raise StoreWriteError(path, "could not create its directory", exc.errno) from exc
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=temp_prefix(path), dir=path.parent)
    except OSError as exc:
        raise StoreWriteError(path, "could not create a temp file", exc.errno) from exc
    replaced = False
    try:
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp_name, path)
        replaced = True
        fsync_dir(path.parent)
    except OSError as exc:
        if not replaced:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise StoreWriteError(path, "write was not completed", exc.errno) from exc
        # The new content is in place but its rename may not survive a power loss.
        raise StoreWriteError(path, "directory fsync failed after replace", exc.errno) from exc


def is_regular(path: Path) -> bool | None:
    """True for a regular file (not followed through a symlink), False for anything else there,
    None when nothing is there."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError:
        return False
    return stat.S_ISREG(mode)


def not_a_file(exc: OSError) -> bool:
    """True when an open failed because the path is a symlink, directory, FIFO or similar."""
    return exc.errno in _NOT_A_FILE_ERRNOS


def quarantine(path: Path, warnings: WarningLog, now: float, why: str) -> Path | None:
    """Move `path` aside to `NAME.corrupt` (or `.corrupt.1`, `.2`, ...; never overwriting an
    earlier copy) and record a warning. Returns the new path, or None if it could not be moved.
    """
    for n in range(MAX_QUARANTINE):
        target = path.with_name(path.name + (".corrupt" if n == 0 else f".corrupt.{n}"))
        if os.path.lexists(target):
            continue
        try:
            os.rename(path, target)
        except FileNotFoundError:
            return None
        except OSError as exc:
            warnings.warn(f"{path.name} {why}; could not move it aside: {exc.strerror}", now,
                          path)
            return None
        warnings.warn(f"{path.name} {why}; moved to {target.name}", now, path)
        health.found(path, f"{why}; moved to {target.name}", while_exists=target, now=now)
        return target
    warnings.warn(f"{path.name} {why}; {MAX_QUARANTINE} corrupt copies exist, left in place",
                  now, path)
    return None
