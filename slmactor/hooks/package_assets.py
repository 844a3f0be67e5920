"""What every package carries besides its manifests: a README (the plugin directory refuses a
plugin without one) and a square icon (`assets/icon.png`, 512 px: the size the directory asks).

The icon is drawn here, deterministically, with the standard library (zlib + the PNG chunk
layout of RFC 2083), so the repository's packages stay the generator's byte-for-byte output and
no binary is kept by hand: a ring that almost closes (the loop: fail once, learn, repair) around
three lines (what memory tells).
"""

from __future__ import annotations

import math
import struct
import zlib
from functools import lru_cache

SIZE = 512
_BACKGROUND = (17, 24, 39)
_RING = (16, 185, 129)
_LINES = (229, 231, 235)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def _pixel(x: float, y: float) -> tuple[int, int, int]:
    cx = cy = SIZE / 2
    dx, dy = x - cx, y - cy
    r = math.hypot(dx, dy)
    angle = math.degrees(math.atan2(-dy, dx)) % 360  # 0 = east, counter-clockwise
    if 168 <= r <= 208 and not 20 <= angle <= 70:
        return _RING
    # The arrowhead at the ring's end (70°), pointing along the loop.
    tip = (cx + 188 * math.cos(math.radians(45)), cy - 188 * math.sin(math.radians(45)))
    ax, ay = x - tip[0], y - tip[1]
    if abs(ax) + abs(ay) <= 44 and ax - ay <= 0 and r < 240:
        return _RING
    for i, width in enumerate((190, 150, 110)):
        top = cy - 62 + i * 48
        if top <= y <= top + 26 and cx - 95 <= x <= cx - 95 + width:
            return _LINES
    return _BACKGROUND


@lru_cache(maxsize=1)
def icon_png() -> bytes:
    rows = bytearray()
    for y in range(SIZE):
        rows.append(0)  # filter: none
        for x in range(SIZE):
            rows.extend(_pixel(x + 0.5, y + 0.5))
    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(bytes(rows), 9)) + _chunk(b"IEND", b""))


def readme(title: str) -> str:
    return f"""# slmactor — {title}

Memory and a self-improvement loop for coding agents. This package carries slmactor's hooks
(each tool call is recorded; a session starts with what the project's memory says; a failure
gets the repair memory learned last time) and its MCP server (tools `memory_block`, `recall`,
`list`, `forget`, `remember`, `repair`, `repair_outcome`, `report_outcome`).

It runs slmactor installed on this machine, through the per-user entry point
`~/.local/share/slmactor/bin/slmactor`. Install slmactor first, then once per machine:

    slmactor hook entry-point

Without it every hook answers neutrally and the MCP server exits: nothing of your session fails.

What it keeps stays on this machine (`<project>/.slmcode/`, `~/.slmcode/`); text inside
`<private>…</private>` and paths listed in `<project>/.slmcode/exclude` are never stored.
See what it remembers, and take any of it back, with `slmactor ui`.
"""
