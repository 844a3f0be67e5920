"""Line-level reading of a JSONL file, shared by `JsonlLog`'s read and repair paths.

A line is one record: bytes up to and including the newline. These helpers never trust the file: a
line is parsed only when it starts at a line start, fits the caller's byte limit and is a JSON
object; anything else reads as None.
"""

from __future__ import annotations

import json
import math
import os
from typing import IO, Any

from slmactor.protocol.codec import MAX_SAFE_INT

CHUNK = 64 * 1024
#: First read for one record: most records are small, so read a little and grow when needed.
FIRST_READ = 4096


#: Largest integer magnitude a stored record may hold: what the door accepts (±(2**53 − 1)),
#: with room for one rounding step of a count kept as a float.
STORED_INT_LIMIT = MAX_SAFE_INT + 1


def _servable_int(text: str) -> int:
    value = int(text)
    if -STORED_INT_LIMIT <= value <= STORED_INT_LIMIT:
        return value
    raise ValueError(f"integer {text[:24]} is outside ±{STORED_INT_LIMIT}")


def _servable_float(text: str) -> float:
    value = float(text)
    if math.isfinite(value):
        return value
    raise ValueError(f"number {text[:24]} overflows a float")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a reply can carry")


def loads_servable(raw: bytes | str) -> Any:
    """`json.loads` that refuses (ValueError) what the protocol refuses at the door: NaN,
    ±Infinity (also as an overflowing literal) and integers past ±STORED_INT_LIMIT. A stored value like that (written before the door
    checked, or by hand) could never be served — every reply built from it would fail or carry a
    saturated value — so the record is treated as corrupt (skipped and counted, or the document
    quarantined). Finite floats of any size are kept: they always encode."""
    return json.loads(raw, parse_int=_servable_int, parse_float=_servable_float,
                      parse_constant=_no_constant)


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """The JSON object on a line, or None (invalid JSON or UTF-8, too deep, not an object, or
    holding a number no reply can carry)."""
    try:
        value = loads_servable(raw)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def last_line_start(fd: int, size: int) -> int:
    """Offset just after the last newline before `size` (0 when there is none)."""
    end = size
    while end > 0:
        begin = max(0, end - CHUNK)
        chunk = os.pread(fd, end - begin, begin)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            return begin + newline + 1
        end = begin
    return 0


def skip_rest_of_line(handle: IO[bytes]) -> int:
    """Read past the next newline (or to the end); the number of bytes skipped."""
    skipped = 0
    while True:
        more = handle.readline(CHUNK)
        skipped += len(more)
        if not more or more.endswith(b"\n"):
            return skipped


def seek_line_start(handle: IO[bytes], start: int) -> int:
    """Position `handle` at the first line starting at or after `start`; that offset."""
    if start == 0:
        return 0
    handle.seek(start - 1)
    previous = handle.read(1)
    if previous == b"\n":
        return start
    if previous == b"":
        handle.seek(start)  # past the end: nothing left to read
        return start
    return start + skip_rest_of_line(handle)


def line_at(fd: int, offset: int, max_line_bytes: int) -> dict[str, Any] | None:
    """The record on the line starting exactly at `offset`, or None."""
    if offset < 0 or (offset > 0 and os.pread(fd, 1, offset - 1) != b"\n"):
        return None
    data = b""
    want = FIRST_READ
    while len(data) <= max_line_bytes:
        chunk = os.pread(fd, min(want, max_line_bytes + 1), offset + len(data))
        want = CHUNK
        if not chunk:
            return None  # no newline before the end: a torn tail
        newline = chunk.find(b"\n")
        if newline >= 0:
            data += chunk[: newline + 1]
            break
        data += chunk
    if len(data) > max_line_bytes:
        return None
    return parse_line(data)
