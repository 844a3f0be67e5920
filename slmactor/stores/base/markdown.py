"""Markdown mirrors (WORKING.md, SEMANTIC.md, MEMORY.md, REFLECTION.md, ...): human-readable views
of the stores, rewritten whole.

`write_markdown` redacts the text, caps it at `cap_bytes` (cutting on a character boundary and
ending with a `_[truncated]_` line so a reader can tell), and replaces the file atomically like
`JsonDoc.save`. `read_text` never raises: a missing, unreadable or non-regular file (a directory,
FIFO or symlink — never followed) reads as "", and at most `cap_bytes` are read.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
import time
from pathlib import Path

from slmactor.logic.text.redact import redact as redact_text
from slmactor.logic.text.strings import cut_bytes
from slmactor.stores.base import health
from slmactor.stores.base.errors import StoreWriteError
from slmactor.stores.base.fsutil import READ_FLAGS, atomic_write_bytes, is_regular, quarantine
from slmactor.stores.base.warnings import WarningLog

DEFAULT_CAP_BYTES = 64 * 1024
TRUNCATED_LINE = "_[truncated]_"
_TRUNCATED_SUFFIX = "\n\n" + TRUNCATED_LINE + "\n"


def cap_markdown(text: str, cap_bytes: int) -> str:
    """`text` cut to at most `cap_bytes` UTF-8 bytes, marked with a `_[truncated]_` line if cut."""
    if len(text.encode("utf-8", "surrogatepass")) <= cap_bytes:
        return text
    room = cap_bytes - len(_TRUNCATED_SUFFIX.encode())
    return cut_bytes(text, max(room, 0)).rstrip() + _TRUNCATED_SUFFIX


def write_markdown(
    path: str | os.PathLike[str],
    text: str,
    *,
    cap_bytes: int = DEFAULT_CAP_BYTES,
    warnings: WarningLog | None = None,
    redact: bool = True,
) -> None:
    """Atomically replace `path` by `text` (redacted, capped). Raises StoreWriteError."""
    target = Path(path)
    body = cap_markdown(redact_text(text) if redact else text, cap_bytes)
    if body and not body.endswith("\n"):
        body += "\n"
    if is_regular(target) is False:
        log = warnings if warnings is not None else WarningLog()
        if quarantine(target, log, time.time(), "is not a regular file") is None:
            raise StoreWriteError(target, "a non-file is in the way")
    atomic_write_bytes(target, body.encode("utf-8", "surrogatepass"))


def read_text(path: str | os.PathLike[str], cap_bytes: int = DEFAULT_CAP_BYTES) -> str:
    """Up to `cap_bytes` of the file as text ("" when missing, unreadable or not a file)."""
    if cap_bytes <= 0:
        return ""
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symlink where a store file should be: never followed
            health.found(Path(path), "is a symlink: not followed, read as empty",
                         while_exists=Path(path))
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            health.found(Path(path), "is not a regular file: read as empty", while_exists=Path(path))
            return ""
        chunks: list[bytes] = []
        total = 0
        while total < cap_bytes:
            chunk = os.read(fd, min(1 << 16, cap_bytes - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError:
        return ""
    finally:
        os.close(fd)
    # A cap may fall inside a character: a non-final incremental decode holds that partial
    # character back instead of showing U+FFFD; invalid bytes elsewhere become U+FFFD.
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    return decoder.decode(b"".join(chunks), final=total < cap_bytes)
