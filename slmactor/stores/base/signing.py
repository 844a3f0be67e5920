"""The user's signing key: `~/.slmcode/.memory-key` (or `$SLMACTOR_HOME/.memory-key`), mode 0600.

One key per user signs everything the daemon learns into a project store — `MEMORY.md` bullets
and the records of rules, facts and regression checks (`slmactor.logic.text.trust`) — so what a
cloned repository brought along can be told from what this user learned. It lives in the user
store, never in a project, and is created (32 random bytes, hex) on first use.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

KEY_NAME = ".memory-key"


def load_signing_key(home: Path) -> bytes:
    """The user's signing key, created on first use. Raises OSError when the home cannot be
    read or written, or holds something that is not a usable key."""
    path = Path(home) / KEY_NAME
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        os.makedirs(path.parent, mode=0o700, exist_ok=True)
        key = secrets.token_hex(32).encode()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            return load_signing_key(home)  # created meanwhile: read that one
        try:
            os.write(fd, key)
        finally:
            os.close(fd)
        return key
    try:
        key = os.read(fd, 256).strip()
    finally:
        os.close(fd)
    if len(key) < 32:
        raise OSError(f"{path} holds no usable key; remove it to make a new one")
    return key
