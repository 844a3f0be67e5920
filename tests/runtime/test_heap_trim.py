"""The heap is given back once after a burst of messages, never during one.

`trim_after_bursts` is driven interval by interval: each `wait` moves the actors' processed
counters to the next value of a script, and the test records after which intervals the daemon
trimmed. The RSS it gives back is measured by `bench foundation` (RSS after the ingest flood).
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest

from slmactor.runtime import heap


class _Done(Exception):
    """Raised by the scripted wait when its script runs out: ends the trimming loop under test."""


async def _drive(script: list[int], burst: int = 10_000, find: Any = None) -> list[int]:
    """Intervals (1-based) after which a trim ran, with processed totals following `script`."""
    stats = {"working": SimpleNamespace(processed=0), "recall": SimpleNamespace(processed=0)}
    router: Any = SimpleNamespace(stats=stats)
    trimmed: list[int] = []
    step = 0

    async def wait() -> None:
        nonlocal step
        if step == len(script):
            raise _Done
        stats["working"].processed = script[step] - 1  # two actors' counters add up
        stats["recall"].processed = 1
        step += 1

    def trimmer() -> Any:
        return lambda: trimmed.append(step) or 0

    with pytest.raises(_Done):
        await heap.trim_after_bursts(router, burst, wait, find or trimmer)
    return trimmed


@pytest.mark.anyio
async def test_one_trim_when_a_burst_is_over_none_while_it_lasts() -> None:
    script = [5_000, 12_000, 30_000, 30_050, 30_050, 33_000, 33_000, 50_000, 50_001]
    #  interval:   1       2       3       4       5       6       7       8       9
    # 30,000 arrived by interval 3, a few asks in 4: trim. Nothing new in 5; 3,000 by 6 and 7
    # quiet is below the burst; 17,000 more by 8 (20,000 since the trim) and 9 quiet: trim.
    assert await _drive(script) == [4, 9]


@pytest.mark.anyio
async def test_steady_traffic_never_trims() -> None:
    assert await _drive([i * heap.QUIET for i in range(1, 400)]) == []


@pytest.mark.anyio
async def test_without_malloc_trim_the_task_ends() -> None:
    async def run() -> None:
        stats: Any = SimpleNamespace(stats={"w": SimpleNamespace(processed=0)})
        steps = iter([20_000, 20_000])

        async def wait() -> None:
            stats.stats["w"].processed = next(steps)

        await heap.trim_after_bursts(stats, 10_000, wait, lambda: None)

    await run()  # returns instead of looking again every interval


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_malloc_trim_of_this_libc_runs() -> None:
    trim = heap.malloc_trim()
    assert trim is not None and trim() in (0, 1)
