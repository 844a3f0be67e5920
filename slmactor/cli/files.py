"""Files the CLI writes for the user to keep or share (a report, a service unit).

Unlike the stores' files (private, 0600, under `.slmcode`), these follow the user's umask —
a report meant for sharing must be readable like any file the user makes — unless the caller
needs an exact mode (a unit file is 0644 whatever the umask). Written to a temp file beside the
target, fsynced, then renamed over it: a reader never sees half a file.
"""

from __future__ import annotations

import os
from pathlib import Path


def write_text_atomically(path: Path, text: str, *, mode: int | None = None) -> None:
    """Replace `path` with `text`; mode `mode`, else 0666 less the umask. Raises OSError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        # O_CREAT's mode is filtered by the umask, like the mode of any file the user creates.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666 if mode is None else mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
