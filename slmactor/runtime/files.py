"""Files an actor reads from the event loop, through aiofiles (the design card's choice).

The daemon's event loop never waits on a disk: a file an actor reads while it runs on the loop
(a configuration at start, a small document) is read here, off the loop by aiofiles, bounded,
and only if it is a regular file (a FIFO or a device named by a setting must not hang the
daemon). Stores that write — an atomic replace with fsync, a JSONL append — run in a worker
thread through `Actor.run_sync`: they are a store's own multi-step writes, not one read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: Opened without following a final symlink's target's special file semantics: non-blocking, so
#: opening a FIFO returns at once (and is then refused as no regular file).
_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _opener(path: str, flags: int) -> int:
    return os.open(path, _FLAGS)


async def read_text(path: Path, limit: int = 1 << 20) -> str | None:
    """The text of the regular file at `path` (UTF-8), None when there is none; ValueError when
    it is no regular file, larger than `limit` bytes or not UTF-8; OSError otherwise."""
    import aiofiles

    try:
        async with aiofiles.open(path, "rb", opener=_opener) as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ValueError(f"{path} is not a regular file")
            data = await handle.read(limit + 1)
    except FileNotFoundError:
        return None
    if len(data) > limit:
        raise ValueError(f"{path} is larger than {limit} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text: {exc}") from exc
