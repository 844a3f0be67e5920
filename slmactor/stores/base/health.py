"""Which store directories cannot be written right now (a store that cannot write marks
the daemon degraded in `status`, with the reason).

Every write primitive reports here: `atomic_write_bytes` (JSON documents, Markdown mirrors) and
`JsonlLog` appends. A failed write records its directory with the reason; the next successful
write into that directory clears it (permissions were fixed), and for a full disk (ENOSPC,
EDQUOT) any successful write on the same file system clears it (space came back). The registry is
process-wide (one daemon, one set of stores) and bounded by the number of store directories.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path

_lock = threading.Lock()
#: directory → (reason, since, device, errno)
_faults: dict[str, tuple[str, float, int | None, int | None]] = {}
#: More failing directories than this are not listed one by one (a bound, not a limit on writes).
MAX_FAULTS = 256
#: Errors of a whole file system: a success anywhere on that device clears them everywhere on it.
_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def _device(directory: str) -> int | None:
    try:
        return os.stat(directory).st_dev
    except OSError:
        return None


def write_failed(
    path: str | Path, reason: str, code: int | None = None, now: float | None = None
) -> None:
    """A write of `path` failed (`code`: its errno, if any): its directory is faulty until a
    write there succeeds — or, for a full disk, any write on that file system."""
    directory = str(Path(path).parent)
    device = _device(directory)
    with _lock:
        if directory in _faults or len(_faults) < MAX_FAULTS:
            _faults[directory] = (reason, time.time() if now is None else now, device, code)


def dir_failed(directory: str | Path, reason: str, code: int | None = None) -> None:
    """`directory` itself could not be created: it is faulty until a write into it succeeds."""
    write_failed(Path(directory) / "_", reason, code)  # a name in it: its parent is `directory`


def write_succeeded(path: str | Path) -> None:
    """A write of `path` completed: its directory is writable again, and its file system has
    space again."""
    if not _faults:  # the common case: one dict truth test, no lock
        return
    directory = str(Path(path).parent)
    device = _device(directory)
    with _lock:
        _faults.pop(directory, None)
        for other, (_reason, _since, dev, code) in list(_faults.items()):
            if code in _SPACE_ERRNOS and dev is not None and dev == device:
                del _faults[other]


def faults() -> list[dict[str, object]]:
    """The failing store directories, oldest first: `{"dir", "reason", "since", "project"}`
    (`project`: the project whose store it is, "" for the user store)."""
    from slmactor.stores.base.warnings import project_of

    with _lock:
        items = sorted(_faults.items(), key=lambda item: item[1][1])
    return [{"dir": d, "reason": r, "since": at, "project": project_of(d)}
            for d, (r, at, _dev, _code) in items]


def clear() -> None:
    """Forget every fault (tests, and a daemon starting over)."""
    with _lock:
        _faults.clear()
