"""What every install writes with: the report of one change (`Change`), the one error for a
settings file we will not touch (`SettingsError`), an atomic write that keeps the file's mode,
and the unified diff a dry run prints."""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path
from typing import NamedTuple


class SettingsError(ValueError):
    """A settings file we cannot merge into safely (not JSON, not an object, odd `hooks`)."""


class Change(NamedTuple):
    """What an install or uninstall did (or, on a dry run, would do)."""

    harness: str
    path: Path
    changed: bool
    diff: str
    backup: Path | None
    notes: tuple[str, ...] = ()


def diff(path: Path, old: bytes | None, new: bytes | None) -> str:
    a = (old or b"").decode(errors="replace").splitlines(keepends=True)
    b = (new or b"").decode(errors="replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, f"{path} (before)", f"{path} (after)"))


def write(path: Path, data: bytes, mode: int | None) -> None:
    """Write `data` to `path` atomically (a reader sees the old bytes or the new), mode `mode`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(temp, mode if mode is not None else 0o644)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return None
