"""One writer per project store: an exclusive `flock` on `<project>/.slmcode/.lock`.

The daemon's own lock is per user store (`~/.slmcode/.lock`), so two daemons with different homes
— a user's daemon and a container's or CI's on a shared checkout — could both write one project's
`.slmcode/` and lose each other's records. Every request that names a project claims the
project's store first (`claim`); the first daemon holds the lock for its whole life, a second one
is refused with a message naming the owner (pid, host and home, written into the lock file for
diagnostics only — the kernel's flock is the guard, released even on SIGKILL).

A cloned repository is not trusted: a `.slmcode` (or a store directory inside it) that
is a symlink or belongs to another user is refused rather than written through (a regular file in
the way is left to the stores, which keep memory in memory and say so), so a repository cannot point the daemon's writes outside the project. A new `.slmcode`
is created 0700 with its `.gitignore`.

A claim is remembered by the directory's identity; one `lstat` per request notices a `.slmcode`
removed (`rm -rf`) or replaced, and claims the new one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import socket
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from slmactor.stores.base import health
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.fsutil import DIR_MODE, FILE_MODE, atomic_write_bytes, remove_temps_in
from slmactor.stores.base.layout import (
    GITIGNORE_TEXT,
    STORE_DIR_NAME,
    ProjectLayout,
    default_home,
)

log = logging.getLogger("slmactor.stores")
LOCK_NAME = ".lock"
_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafeProjectStore(StoreError):
    """`.slmcode` (or a directory in it) is a symlink, not a directory, or not ours."""


class ProjectLocked(StoreError):
    """Another daemon writes this project's store; `owner` is what it wrote in the lock file."""

    def __init__(self, root: Path, owner: str) -> None:
        self.root = root
        self.owner = owner
        super().__init__(
            f"the project store {root / STORE_DIR_NAME} is in use by another slmactor daemon "
            f"({owner or 'owner unknown'}); one daemon writes a project at a time — stop that "
            "daemon or use it for this project"
        )


def _owner_text(home: str) -> str:
    return f"pid {os.getpid()} on {socket.gethostname()}, home {home or default_home()}"


def _check_dir(path: Path, *, create: bool) -> tuple[int, int] | None:
    """(dev, ino) of the directory at `path`; None when missing (and not created) or a file is
    in the way. Raises UnsafeProjectStore for a symlink or another user's directory."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not create:
            return None
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, DIR_MODE)
        info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeProjectStore(
            f"{path} is a symlink; refusing to write through it (a repository must not point "
            "the store outside the project) — remove it or replace it by a directory"
        )
    if not stat.S_ISDIR(info.st_mode):
        return None  # a file in the way: nothing can be written there (the stores say so)
    if info.st_uid != os.getuid():
        raise UnsafeProjectStore(
            f"{path} belongs to uid {info.st_uid}, not to this user; refusing to write in it"
        )
    return info.st_dev, info.st_ino


def _tidy(directories: tuple[Path, ...]) -> None:
    """Once per claim: store directories private (0700 — a checkout makes them 0755) and the
    temp files a crash left in them removed (`.NAME.tmp-*`)."""
    for directory in directories:
        try:
            info = os.lstat(directory)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_mode & 0o077:
            with contextlib.suppress(OSError):
                os.chmod(directory, DIR_MODE)
        remove_temps_in(directory, time.time())


class ProjectLocks:
    """The project stores this process writes, each held by its flock until the process ends."""

    def __init__(self, home: str = "") -> None:
        self.home = home
        self._held: dict[Path, tuple[tuple[int, int], int]] = {}
        self._lock = threading.Lock()
        #: Where a reclaimed lock is reported (`warn(text, project)`; the daemon's status).
        self.warn: Callable[[str, str], None] | None = None

    def claim(self, root: Path) -> None:
        """Make sure this process holds `root`'s store. Raises ProjectLocked, UnsafeProjectStore
        or StoreError (the directory cannot be created)."""
        store = root / STORE_DIR_NAME
        with self._lock:
            # Every request claims its project: the store held already (the common case) costs
            # one lstat, before anything else is worked out.
            held = self._held.get(root)
            if held is not None:
                try:
                    current = os.lstat(store)
                except OSError:
                    current = None
                if current is not None and (current.st_dev, current.st_ino) == held[0]:
                    return
                self._release(root)
            own = Path(self.home) if self.home else default_home()
            if os.path.abspath(store) == os.path.abspath(own):
                # The project is the home directory: its store is the daemon's own user store,
                # whose lock the daemon holds for its whole life (a second flock would refuse it).
                return
            try:
                identity = _check_dir(store, create=True)
            except PermissionError:
                return  # a read-only project: nothing will be written there, reads may go on
            except OSError as exc:
                if exc.errno == errno.EROFS:
                    return
                raise StoreError(f"cannot create {store}: {exc.strerror}") from exc
            if identity is None:
                return
            for sub in ProjectLayout(root).directories()[1:]:
                _check_dir(sub, create=False)
            self._held[root] = (identity, self._take(root, store))
            layout = ProjectLayout(root)
            _tidy((*layout.directories(), layout.evolve_dir / "pending"))

    def _take(self, root: Path, store: Path) -> int:
        try:
            dir_fd = os.open(store, _DIR_FLAGS)
        except OSError as exc:
            raise UnsafeProjectStore(f"cannot open {store}: {exc.strerror}") from exc
        try:
            fd = self._open_lock(root, store, dir_fd)
        finally:
            os.close(dir_fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
            os.close(fd)
            raise ProjectLocked(root, owner) from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot lock {store / LOCK_NAME}: {exc.strerror}") from exc
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, (_owner_text(self.home) + "\n").encode(), 0)
        gitignore = store / ".gitignore"
        if not os.path.lexists(gitignore):
            with contextlib.suppress(StoreError):
                atomic_write_bytes(gitignore, GITIGNORE_TEXT.encode())
        return fd

    def _open_lock(self, root: Path, store: Path, dir_fd: int) -> int:
        """The lock file's descriptor. A directory (or a FIFO, a socket) where the lock file
        should be — a `.lock/` a repository committed — can never be locked: it is moved aside
        to `.lock.corrupt` with a warning and the lock is taken afresh, so the project is not
        unwritable forever. (A lock *file* left by a dead process needs nothing: flock is
        released with its holder.)"""
        for attempt in range(2):
            try:
                return os.open(LOCK_NAME, _LOCK_FLAGS | os.O_NONBLOCK, FILE_MODE, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise UnsafeProjectStore(f"{store / LOCK_NAME} is a symlink; refusing") from exc
                if attempt == 0 and self._reclaim(root, store, dir_fd):
                    continue
                reason = f"cannot open the project lock {store / LOCK_NAME}: {exc.strerror}"
                health.dir_failed(store, reason, exc.errno)  # every write here fails: say so
                raise StoreError(reason) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _reclaim(self, root: Path, store: Path, dir_fd: int) -> bool:
        try:
            info = os.lstat(LOCK_NAME, dir_fd=dir_fd)
        except OSError:
            return False
        if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
            return False
        for n in range(100):
            target = LOCK_NAME + (".corrupt" if n == 0 else f".corrupt.{n}")
            try:
                os.lstat(target, dir_fd=dir_fd)
                continue  # taken by an earlier corrupt lock: try the next name
            except FileNotFoundError:
                pass  # a free name for this one
            except OSError:
                return False
            try:
                os.rename(LOCK_NAME, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except OSError:
                return False
            text = (f"{store / LOCK_NAME} was not a lock file (a repository's?); moved to "
                    f"{target} and the lock taken afresh")
            log.warning("%s", text)
            if self.warn is not None:
                self.warn(text, str(root))
            return True
        return False

    def _release(self, root: Path) -> None:
        held = self._held.pop(root, None)
        if held is not None:
            with contextlib.suppress(OSError):
                os.close(held[1])

    def holds(self, root: Path) -> bool:
        with self._lock:
            return root in self._held

    def release_all(self) -> None:
        with self._lock:
            for root in list(self._held):
                self._release(root)


#: The daemon's claims (one process, one set of project locks).
PROJECT_LOCKS = ProjectLocks()


def claim_project_store(root: Path) -> None:
    """`PROJECT_LOCKS.claim(root)`: see `ProjectLocks.claim`."""
    PROJECT_LOCKS.claim(root)
