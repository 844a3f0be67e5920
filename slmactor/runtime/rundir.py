"""The runtime directory that holds the daemon's sockets and lock: private, checked, short.

Rules (docs/SPEC.md, "Runtime directory (ipc mode)"; docs/DOOR.md, "Who is on the other end"):
mode 0700, owned by us, not a symlink — the same rule clients check before they connect
(`slmactor.peer`); sockets bound under umask 077; ipc paths no longer than ZeroMQ allows.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import zmq

from slmactor.peer import runtime_dir_problem


class RuntimeDirError(Exception):
    """The runtime directory is unsafe or unusable; the message says why and what to do."""


def ensure_runtime_dir(path: Path) -> Path:
    """Create `path` (0700) if missing and check it is private to us. Raises RuntimeDirError.

    Another user's directory (one created first at `/tmp/slmactor-<uid>`), a symlink, or our own
    directory holding another user's files is refused with one line saying so: clients refuse it
    too (`slmactor.peer`), so a daemon there would serve nobody."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError as exc:
        raise RuntimeDirError(f"cannot create runtime dir {path}: {exc.strerror}") from None
    problem = runtime_dir_problem(str(path))
    if problem and (stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode)
                    or info.st_uid != os.getuid()):
        raise RuntimeDirError(problem)
    if info.st_mode & 0o077:
        # Our own directory with loose bits (e.g. created under a permissive umask): tighten it,
        # unless another user has already put something in it.
        try:
            os.chmod(path, 0o700)
        except OSError as exc:
            raise RuntimeDirError(
                f"runtime dir {path} is readable by others (mode {stat.S_IMODE(info.st_mode):o}) "
                f"and cannot be made private: {exc.strerror}; set SLMACTOR_RUNTIME_DIR to a "
                "writable directory"
            ) from None
        _refuse_foreign_entries(path)
    if not os.access(path, os.W_OK | os.X_OK):
        raise RuntimeDirError(
            f"runtime dir {path} is not writable (read-only file system or permissions); set "
            "SLMACTOR_RUNTIME_DIR to a writable directory"
        )
    check_ipc_path(path / "events.sock")
    return path


def _refuse_foreign_entries(path: Path) -> None:
    """Raise RuntimeDirError when a directory that was open to others holds another user's file."""
    uid = os.getuid()
    try:
        entries = list(os.scandir(path))
    except OSError as exc:
        raise RuntimeDirError(f"cannot list runtime dir {path}: {exc.strerror}") from None
    for entry in entries:
        try:
            owner = entry.stat(follow_symlinks=False).st_uid
        except OSError:
            continue  # gone meanwhile
        if owner != uid:
            raise RuntimeDirError(
                f"runtime dir {path} was open to other users and holds {entry.name}, owned by uid "
                f"{owner}: refusing it; remove it or set SLMACTOR_RUNTIME_DIR to a private directory"
            )


def check_ipc_path(path: Path) -> None:
    """Raise RuntimeDirError when `path` is too long for an ipc endpoint on this platform."""
    limit = int(getattr(zmq, "IPC_PATH_MAX_LEN", 107)) or 107
    if len(str(path).encode()) > limit:
        raise RuntimeDirError(
            f"socket path {path} is longer than {limit} bytes; set SLMACTOR_RUNTIME_DIR to a shorter dir"
        )


def bind_private(path: Path, bind: Callable[[], object]) -> None:
    """Run `bind` (which makes the socket file at `path`) under umask 077, then make the file
    0600: a stale file there is removed first (the caller holds the runtime dir's lock)."""
    if path.exists() or path.is_symlink():
        path.unlink()
    old = os.umask(0o077)
    try:
        bind()
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
