"""Progress of an import, as a person reads it.

The import counts its files and bytes before it reads any (`files.collect`), so progress has a
total: on a terminal, one line redrawn at most five times a second — a bar, the percentage,
files done of total, megabytes done of total, and the time left (bytes still to read at the rate
so far, once a second has passed); anywhere else (a pipe, a log, `--json`), a plain line on
stderr per 10 % of the bytes, and at least one every `QUIET_S` seconds, so a scripted run says
it is alive. stdout stays the result's alone.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

BAR = 24
#: Longest silence of a plain (non-terminal) progress report.
QUIET_S = 30.0
#: Fastest redraw on a terminal.
REDRAW_S = 0.2


def duration(seconds: float) -> str:
    """`42s`, `3m05s`, `1h02m`."""
    seconds = max(0, int(seconds + 0.5))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def line(files: int, total_files: int, done: int, total: int, elapsed: float, *, bar: bool) -> str:
    """One report: percentage, files, megabytes and time left (`bar`: with a drawn bar)."""
    share = done / total if total else 1.0
    left = ""
    if elapsed >= 1.0 and done and done < total:
        left = f", {duration(elapsed * (total - done) / done)} left"
    digits = 0 if total >= 10e6 else 1
    text = f"{share:4.0%} {files}/{total_files} files, {done / 1e6:.{digits}f}/{total / 1e6:.{digits}f} MB{left}"
    if bar:
        filled = int(BAR * min(1.0, share))
        return f"[{'#' * filled}{'.' * (BAR - filled)}] {text}"
    return text


class Progress:
    """Reports an import's progress on `stream` (a terminal: a redrawn bar; else plain lines)."""

    def __init__(self, total_files: int, total_bytes: int, *, stream: TextIO | None = None,
                 terminal: bool | None = None, clock: Callable[[], float] = time.monotonic,
                 label: str = "importing sessions") -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.total_files = total_files
        self.total_bytes = total_bytes
        self.clock = clock
        self.label = label
        self.started = clock()
        self._last = self.started
        self._tenths = 0
        self.lines_written = 0

    def update(self, files: int, done: int, *, final: bool = False) -> None:
        now = self.clock()
        elapsed = now - self.started
        if self.terminal:
            if not final and now - self._last < REDRAW_S:
                return
            self._last = now
            text = line(files, self.total_files, done, self.total_bytes, elapsed, bar=True)
            self.stream.write(f"\r{self.label}: {text}\x1b[K" + ("\n" if final else ""))
        else:
            tenths = int(10 * done / self.total_bytes) if self.total_bytes else 10
            if not final and tenths <= self._tenths and now - self._last < QUIET_S:
                return
            if final and self._tenths >= 10:
                return
            self._tenths = max(self._tenths, tenths)
            self._last = now
            text = line(files, self.total_files, done, self.total_bytes, elapsed, bar=False)
            self.stream.write(f"{self.label}: {text}\n")
        self.lines_written += 1
        self.stream.flush()
