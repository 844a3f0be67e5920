"""Memory freed during a burst goes back to the operating system once the burst is over.

After a flood of tells (bench foundation's 200,000 `record_tool` events) the daemon's RSS stayed
at twice its fresh idle RSS (40 → 84 MB) for good, yet no Python object held the difference:
glibc's malloc keeps freed chunks between live ones instead of returning them, and one
`malloc_trim(0)` gave back 45 MB (measured in the daemon: 84 → 39 MB). So every `CHECK_S`
seconds the daemon counts the messages its actors processed; when at least `BURST` arrived since
the last trim and the last interval was quiet (fewer than `QUIET`), it calls `malloc_trim(0)`
once, in a worker thread.
A busy daemon is never interrupted, an idle one costs one sum per interval, and where there is no
glibc (musl, macOS) this does nothing.

Large blocks are returned at once (`pin_mmap_threshold`): libzmq allocates each large frame on its
own, and glibc's default serves a block of 128 KiB or more with its own mapping only until such a
block is freed — then the threshold rises to that block's size (up to 32 MiB) and later frames of
that size come from the heap, where they stay, freed but resident, after a flood of multi-frame
messages that are too few for a burst. A fixed threshold keeps every large frame in its own
mapping, unmapped when freed.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable

import anyio
import anyio.to_thread

from .router import Router

#: Seconds between looks at the processed counters.
CHECK_S = 5.0
#: Messages since the last trim that make the next quiet interval worth a trim.
BURST = 10_000
#: An interval with fewer messages than this is quiet (a harness's asks, a status poll).
QUIET = 100


#: Allocations of at least this many bytes get their own mapping, unmapped when freed.
MMAP_THRESHOLD = 256 * 1024
_M_MMAP_THRESHOLD = -3  # glibc <malloc.h>


def pin_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at `threshold` (see the module docstring); False where there
    is no glibc or it refused."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, threshold))


def malloc_trim() -> Callable[[], int] | None:
    """`malloc_trim(0)` of the process's C library, or None where there is none (not glibc)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: only a daemon that saw a burst pays for it

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: int(trim(0))


def _processed(router: Router) -> int:
    return sum(stats.processed for stats in router.stats.values())


async def trim_after_bursts(
    router: Router,
    burst: int = BURST,
    wait: Callable[[], Awaitable[object]] = lambda: anyio.sleep(CHECK_S),
    trimmer: Callable[[], Callable[[], int] | None] = malloc_trim,
) -> None:
    """Run for the daemon's life: give the heap back after each burst of `burst` messages.
    `wait` (one interval) and `trimmer` (finds `malloc_trim`) are for tests."""
    trim: Callable[[], int] | None = None
    last = _processed(router)
    since_trim = 0
    while True:
        await wait()
        now = _processed(router)
        arrived, last = now - last, now
        since_trim += arrived
        if arrived >= QUIET or since_trim < burst:
            continue
        if trim is None:
            trim = trimmer()
            if trim is None:
                return
        await anyio.to_thread.run_sync(trim)
        since_trim = 0
