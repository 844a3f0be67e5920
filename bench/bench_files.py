"""A store's atomic write from the event loop: one worker-thread hop (`Actor.run_sync`, what the
stores do) against aiofiles (the design card's file library: each step its own hop).

A store write is several steps that must happen in order: write a temporary file, flush, fsync,
rename it over the old one (and fsync the directory). aiofiles runs each step as its own job in
the loop's thread pool, so the loop is free between steps but the write takes one thread round
trip per step; `run_sync` runs the whole function in one job. Both keep the loop free while the
disk works. Measured here: the wall time per write of a 16 KiB JSON document, each way, in one
run (the better of two rounds each).

    .venv/bin/python -m bench files [--quick]
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

DOC = ("{" + ",".join(f'"k{i}": "{"x" * 40}"' for i in range(330)) + "}").encode()


def _write_once(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


async def _by_aiofiles(path: Path, data: bytes) -> None:
    import aiofiles
    import aiofiles.os

    tmp = path.with_suffix(".tmp")
    async with aiofiles.open(tmp, "wb") as handle:
        await handle.write(data)
        await handle.flush()
        await aiofiles.os.wrap(os.fsync)(handle.fileno())
    await aiofiles.os.replace(tmp, path)


async def _by_thread(path: Path, data: bytes) -> None:
    import anyio

    await anyio.to_thread.run_sync(_write_once, path, data)


async def _measure(n: int) -> dict[str, float]:
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rules.json"
        for name, write in (("run_sync", _by_thread), ("aiofiles", _by_aiofiles)) * 2:
            started = time.perf_counter()
            for _ in range(n):
                await write(path, DOC)
            per_write = (time.perf_counter() - started) / n
            # The better of two rounds each: a busy machine's noise lands on one of them.
            out[name] = min(out.get(name, per_write), per_write)
    return out


def run(quick: bool) -> list[dict[str, Any]]:
    import anyio

    got = anyio.run(_measure, 20 if quick else 200)
    floor = got["run_sync"]
    return [
        {"name": "atomic write, one run_sync hop", "value": floor * 1e3, "unit": "ms",
         "floor": floor * 1e3, "ratio": 1.0, "target": "the stores' way"},
        {"name": "atomic write, aiofiles step by step", "value": got["aiofiles"] * 1e3, "unit": "ms",
         "floor": floor * 1e3, "ratio": got["aiofiles"] / floor, "target": "<= 1 to prefer it"},
    ]
