"""The bytes a settings file had before `slmactor hook install` first changed it, kept outside
the project: a copy beside a team's settings file would be one more untracked file in their
repository (or, committed, a stale copy of their settings).

One folder per settings file under the user's state directory
(`<user_state_dir>/slmactor/install-backups/<hash of the file's absolute path>/`), plain files
a person can read: `path` (which settings file this is), and `original` (its bytes before our
first change) — no `original` means the file did not exist: we created it. `slmactor hook
uninstall` puts `original` back when nothing else changed since, then drops the folder.
`rm -rf` of the folder is safe: uninstall then takes our entries out by editing the file, which
gives back the same bytes when the file was not reformatted since.

Earlier installs kept `<file>.slmactor-backup` beside the file; `adopt_legacy` moves such a copy
here (its bytes are the original) and deletes it from the project.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import NamedTuple

LEGACY_SUFFIX = ".slmactor-backup"


class Record(NamedTuple):
    """What the store knows of one settings file."""

    folder: Path
    #: A record exists (we changed or created this file, and did not undo it yet).
    known: bool
    #: The bytes before our first change; None when we created the file (or nothing is known).
    original: bytes | None


def root() -> Path:
    """Where backups live: the user's state directory (XDG_STATE_HOME, else ~/.local/state)."""
    import platformdirs

    return Path(platformdirs.user_state_dir("slmactor")) / "install-backups"


def _folder(store: Path, path: Path) -> Path:
    key = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:24]
    return store / key


def read(store: Path, path: Path) -> Record:
    folder = _folder(store, path)
    known = (folder / "path").is_file()
    original = (folder / "original").read_bytes() if known and (folder / "original").is_file() else None
    return Record(folder, known, original)


def save(store: Path, path: Path, original: bytes | None) -> Path:
    """Record `path`'s state before our first change (kept as it is when already recorded)."""
    folder = _folder(store, path)
    if (folder / "path").is_file():
        return folder
    # The settings may hold the user's own secrets (an `env` block): theirs to read only.
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if original is not None:
        _write(folder / "original", original)
    _write(folder / "path", (str(path.absolute()) + "\n").encode())
    return folder


def drop(store: Path, path: Path) -> None:
    shutil.rmtree(_folder(store, path), ignore_errors=True)


def adopt_legacy(store: Path, path: Path) -> bool:
    """Move a `<file>.slmactor-backup` of an earlier install into the store; True if one was."""
    legacy = path.with_name(path.name + LEGACY_SUFFIX)
    if not legacy.is_file():
        return False
    drop(store, path)
    save(store, path, legacy.read_bytes())
    legacy.unlink()
    return True


def _write(target: Path, data: bytes) -> None:
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
