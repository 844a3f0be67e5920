"""Which store directories cannot be written right now, and which store files were found
unusable (a store that cannot write, a file set aside as corrupt or of the wrong shape, a
symlink where a store file should be, a signing key that cannot be read): each marks the daemon
degraded in `status`, with the fault named.

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


#: path → (reason, since, the file whose presence keeps the fault; None: until cleared)
_found: dict[str, tuple[str, float, str | None]] = {}


def found(path: str | Path, reason: str, *, while_exists: str | Path | None = None,
          now: float | None = None) -> None:
    """A store file was found unusable (`reason` names what and what was done). With
    `while_exists` (the `.corrupt` copy it was moved to, a symlink left in place), the fault
    lasts as long as that path exists: the user clears it by dealing with the file."""
    key = str(path)
    with _lock:
        if key in _found or len(_found) < MAX_FAULTS:
            _found[key] = (reason, time.time() if now is None else now,
                           None if while_exists is None else str(while_exists))


def resolved(path: str | Path) -> None:
    """The unusable file at `path` is usable again (a key that loads, a file rewritten)."""
    if _found:
        with _lock:
            _found.pop(str(path), None)


def faults() -> list[dict[str, object]]:
    """Oldest first: the failing store directories `{"dir", "reason", "since", "project"}`
    (`project`: the project whose store it is, "" for the user store), then the unusable files
    `{"file", "reason", "since", "project"}` still present."""
    from slmactor.stores.base.warnings import project_of

    with _lock:
        items = sorted(_faults.items(), key=lambda item: item[1][1])
        for path, (_reason, _at, witness) in list(_found.items()):
            if witness is not None and not os.path.lexists(witness):
                del _found[path]
        files = sorted(_found.items(), key=lambda item: item[1][1])
    out: list[dict[str, object]] = [{"dir": d, "reason": r, "since": at, "project": project_of(d)}
                                    for d, (r, at, _dev, _code) in items]
    out += [{"file": f, "reason": r, "since": at, "project": project_of(str(Path(f).parent))}
            for f, (r, at, _witness) in files]
    return out


def clear() -> None:
    """Forget every fault (tests, and a daemon starting over)."""
    with _lock:
        _faults.clear()
        _found.clear()
