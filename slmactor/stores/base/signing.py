"""The user's signing key: `~/.slmcode/.memory-key` (or `$SLMACTOR_HOME/.memory-key`), mode 0600.

One key per user signs everything the daemon learns into a project store — `MEMORY.md` bullets
and the records of rules, facts and regression checks (`slmactor.logic.text.trust`) — so what a
cloned repository brought along can be told from what this user learned. It lives in the user
store, never in a project, and is created (32 random bytes, hex) on first use.

A key that cannot be read (a symlink in its place, an unreadable home, a file that is no key)
never means "trust everything": `signing_key` then answers a key of this process alone, under
which nothing on disk verifies — what a repository brought stays unverified, the user's own
records read as unverified until the key is back — and the fault is named in `status`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
from pathlib import Path

from slmactor.stores.base import health

KEY_NAME = ".memory-key"
_ephemeral_lock = threading.Lock()
_ephemeral: bytes | None = None


def signing_key(home: Path) -> tuple[bytes, str]:
    """(the user's signing key, "") — or, when it cannot be loaded, (this process's own key,
    why), with the fault recorded for `status` (every actor of the daemon gets the same one)."""
    global _ephemeral
    path = Path(home) / KEY_NAME
    try:
        key = load_signing_key(home)
    except OSError as exc:
        why = (f"signing key unusable ({exc.strerror or exc}); memory is signed with a "
               "temporary key until it is fixed: this user's records read as unverified")
        health.found(path, why)
        with _ephemeral_lock:
            if _ephemeral is None:
                _ephemeral = secrets.token_hex(32).encode()
            return _ephemeral, why
    health.resolved(path)
    return key, ""


def load_signing_key(home: Path) -> bytes:
    """The user's signing key, created on first use. Raises OSError when the home cannot be
    read or written, or holds something that is not a usable key.

    Several actors load it at once when the daemon first starts: the key is written whole to a
    private temp file and linked into place (`link` fails if another got there first, whose key
    is then read), so nobody ever reads a half-written key."""
    path = Path(home) / KEY_NAME
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        _create(path)
        fd = os.open(path, flags)
    try:
        key = os.read(fd, 256).strip()
    finally:
        os.close(fd)
    if len(key) < 32:
        raise OSError(f"{path} holds no usable key; remove it to make a new one")
    return key


def _create(path: Path) -> None:
    os.makedirs(path.parent, mode=0o700, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp-{secrets.token_hex(6)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            os.write(fd, secrets.token_hex(32).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):  # made meanwhile: that one is the key
            os.link(temp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
