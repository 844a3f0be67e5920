"""The runtime directory that holds the daemon's sockets and lock: private, checked, short.

Rules (docs/SPEC.md, "Runtime directory (ipc mode)"): mode 0700, owned by us, not a symlink;
sockets bound under umask 077; ipc paths no longer than ZeroMQ allows.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import zmq


class RuntimeDirError(Exception):
    """The runtime directory is unsafe or unusable; the message says why and what to do."""


def ensure_runtime_dir(path: Path) -> Path:
    """Create `path` (0700) if missing and check it is private to us. Raises RuntimeDirError."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError as exc:
        raise RuntimeDirError(f"cannot create runtime dir {path}: {exc.strerror}") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise RuntimeDirError(f"runtime dir {path} is a symlink or not a directory; refusing")
    if info.st_uid != os.getuid():
        raise RuntimeDirError(f"runtime dir {path} is owned by uid {info.st_uid}, not us; refusing")
    if info.st_mode & 0o077:
        # Our own directory with loose bits (e.g. created under a permissive umask): tighten it.
        try:
            os.chmod(path, 0o700)
        except OSError as exc:
            raise RuntimeDirError(
                f"runtime dir {path} is readable by others (mode {stat.S_IMODE(info.st_mode):o}) "
                f"and cannot be made private: {exc.strerror}; set SLMACTOR_RUNTIME_DIR to a "
                "writable directory"
            ) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise RuntimeDirError(
            f"runtime dir {path} is not writable (read-only file system or permissions); set "
            "SLMACTOR_RUNTIME_DIR to a writable directory"
        )
    check_ipc_path(path / "events.sock")
    return path


def check_ipc_path(path: Path) -> None:
    """Raise RuntimeDirError when `path` is too long for an ipc endpoint on this platform."""
    limit = int(getattr(zmq, "IPC_PATH_MAX_LEN", 107)) or 107
    if len(str(path).encode()) > limit:
        raise RuntimeDirError(
            f"socket path {path} is longer than {limit} bytes; set SLMACTOR_RUNTIME_DIR to a shorter dir"
        )
