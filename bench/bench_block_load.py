"""`memory.block` while many clients write: the prompt path must not queue behind write I/O.

One daemon, a project seeded with facts and episodes. The block is asked back to back by one
client, first on a quiet daemon (the floor), then while a separate process runs 50 writer
clients (`AsyncClient`s, one connection pair each), each looping over a `fact.observe` (evidence
for a fact the project already has, answered once the facts file is written), an
`episode.append` and five `record_tool` tells, with a pause of 50–150 ms per loop (each writer
its own, from a fixed seed). Rows: block p50/p99 quiet and under load, `ping` under the same load (what any
ask costs then), and the write rate the writers achieved.

Asked in the same rounds, beside the daemon (`bench.block_floors`): a raw pyzmq echo in a process
of its own — the machine's tail under this load, the floor of any reply — and, as an experiment,
the block's store sections served by a separate read-only process from the project files (what a
file-following read replica would get); each as its loaded p99 over its quiet p50.

Target: block p99 under load ≤ 3 × block p50 quiet.

    python -m bench block_load [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgpack
import zmq

from slmactor.client import Client
from slmactor.protocol.messages import EpisodeAppend, FactObserve, MemoryBlock, Ping
from slmactor.testing import spawn_daemon, stop_quietly

from .block_floors import STOP

Row = dict[str, Any]

WRITERS = 50
#: Pause of each writer between loops (seconds): 50 writers ≈ 500 loops/s in all.
PACE_S = 0.1
SEED_FACTS = 40
#: The block's budget (the daemon's default, `Settings.memory_tokens`), sent to the replica floor too.
BUDGET = 1200
TASKS = [f"fix the {w} handling in the {m} module" for w in ("retry", "timeout", "upload", "cache")
         for m in ("parser", "server", "client", "store")]


def _episode(i: int, tag: str) -> dict[str, Any]:
    return {"run_id": f"{tag}-{i}", "query": TASKS[i % len(TASKS)], "summary": f"loop {i}",
            "success": i % 3 != 0, "files_changed": [f"src/mod{i % 7}.py"], "tools_used": ["Bash"]}


def _seed(client: Client) -> None:
    for i in range(SEED_FACTS):
        client.ask(FactObserve(kind="command", subject=f"make target{i}",
                               text=f"Run make target{i} before pushing"))
    for i in range(200):
        client.ask(EpisodeAppend(episode=_episode(i, "seed")))


def _percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.99))]


class _Floor:
    """A REQ socket to one of the floor processes (`bench.block_floors`)."""

    def __init__(self, zctx: zmq.Context[zmq.Socket[bytes]], endpoint: str, argv: list[str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "bench.block_floors", *argv],
                                     cwd=Path(__file__).resolve().parent.parent)
        self.sock = zctx.socket(zmq.REQ)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.RCVTIMEO, 30_000)
        self.sock.connect(endpoint)

    def ask(self, request: bytes) -> bytes:
        self.sock.send(request)
        return self.sock.recv()

    def close(self) -> None:
        try:
            self.ask(STOP)
            self.proc.wait(10)
        except (zmq.ZMQError, subprocess.TimeoutExpired):
            self.proc.kill()
        self.sock.close()


def _replica_request(i: int) -> bytes:
    packed: bytes = msgpack.packb(["worker", TASKS[i % len(TASKS)], BUDGET])
    return packed


def _measure(client: Client, rounds: int, echo: _Floor, replica: _Floor) -> dict[str, tuple[float, float]]:
    """(p50, p99) ms of memory.block, ping and the two floors, interleaved, `rounds` each."""
    samples: dict[str, list[float]] = {"block": [], "ping": [], "echo": [], "replica": []}
    for i in range(rounds):
        t0 = time.perf_counter()
        client.ask(MemoryBlock(role="worker", query=TASKS[i % len(TASKS)], budget=BUDGET))
        t1 = time.perf_counter()
        client.ask(Ping())
        t2 = time.perf_counter()
        echo.ask(b"x")
        t3 = time.perf_counter()
        replica.ask(_replica_request(i))
        t4 = time.perf_counter()
        for name, start, end in (("block", t0, t1), ("ping", t1, t2), ("echo", t2, t3),
                                 ("replica", t3, t4)):
            samples[name].append((end - start) * 1e3)
    return {name: _percentiles(values) for name, values in samples.items()}


def _shape(text: str) -> tuple[list[str], int]:
    return [line for line in text.splitlines() if line.startswith("#")], len(text.splitlines())


def _check_replica(client: Client, replica: _Floor) -> None:
    """The replica floor means something only if it renders the daemon's block: the same
    sections with as many lines (which facts fill a section may differ: facts.json keeps their
    times to the second, so facts the daemon ranks by sub-second recency tie in the replica)."""
    for i in range(len(TASKS)):
        ours = client.ask(MemoryBlock(role="worker", query=TASKS[i], budget=BUDGET))["text"]
        theirs = replica.ask(_replica_request(i)).decode()
        if _shape(theirs) != _shape(ours):
            raise RuntimeError(f"the replica floor renders another block than the daemon for "
                               f"{TASKS[i]!r}:\n{theirs}\n--- the daemon's:\n{ours}")


def run(quick: bool, mix: str = "fet") -> list[Row]:
    rounds = 150 if quick else 400
    with tempfile.TemporaryDirectory(prefix="slm-blockload-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        daemon = spawn_daemon(project=project, debug_hooks=False)
        zctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        floors: list[_Floor] = []
        try:
            with daemon.client(timeout=30.0) as client:
                _seed(client)
                echo = _Floor(zctx, f"ipc://{tmp}/echo.sock", ["echo", f"ipc://{tmp}/echo.sock"])
                floors.append(echo)
                replica = _Floor(zctx, f"ipc://{tmp}/replica.sock",
                                 ["replica", f"ipc://{tmp}/replica.sock", str(project),
                                  str(daemon.home)])
                floors.append(replica)
                _check_replica(client, replica)
                _measure(client, 20, echo, replica)  # warm-up: stores open, caches filled
                quiet = _measure(client, rounds, echo, replica)
                load = subprocess.Popen(
                    [sys.executable, "-m", "bench.bench_block_load", "--writers", str(WRITERS),
                     "--pace", str(PACE_S), "--mix", mix, str(daemon.runtime_dir), str(project)],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                    cwd=Path(__file__).resolve().parent.parent)
                assert load.stdin is not None and load.stdout is not None
                if load.stdout.readline().strip() != "ready":
                    raise RuntimeError("the writers did not start")
                started = time.monotonic()
                loaded = _measure(client, rounds, echo, replica)
                seconds = time.monotonic() - started
                load.stdin.close()
                done = json.loads(load.stdout.readline())
                load.wait(30)
        finally:
            for floor in floors:
                floor.close()
            zctx.term()
            stop_quietly(daemon)
    q50, q99 = quiet["block"]
    l50, l99 = loaded["block"]
    p50, p99 = loaded["ping"]
    writes = done["observes"] + done["appends"]
    rows: list[Row] = [
        {"name": "memory.block p50 quiet", "value": q50, "unit": "ms", "floor": quiet["ping"][0],
         "floor_name": "ping p50 quiet", "ratio": q50 / quiet["ping"][0], "target": "info"},
        {"name": "memory.block p99 quiet", "value": q99, "unit": "ms", "floor": q50,
         "floor_name": "block p50 quiet", "ratio": q99 / q50, "target": "info"},
        {"name": f"memory.block p50 under {WRITERS} writers", "value": l50, "unit": "ms",
         "floor": q50, "floor_name": "block p50 quiet", "ratio": l50 / q50, "target": "info"},
        {"name": f"memory.block p99 under {WRITERS} writers", "value": l99, "unit": "ms",
         "floor": q50, "floor_name": "block p50 quiet", "ratio": l99 / q50,
         "target": "≤ 3× quiet p50"},
        {"name": f"ping p50 / p99 under {WRITERS} writers", "value": p50, "unit": "ms",
         "floor": p99, "floor_name": "p99", "target": "info"},
    ]
    # The same ratio for the floors, measured in the same rounds: a raw pyzmq echo in a process
    # of its own (the machine's tail under this load), and the block's store sections served by
    # a separate read-only process (what a read replica of the daemon would get).
    for name, label in (("echo", "raw pyzmq echo (own process)"),
                        ("replica", "block sections in a replica process")):
        f50, f99 = quiet[name][0], loaded[name][1]
        rows.append({"name": f"floor: {label} p99 under {WRITERS} writers", "value": f99,
                     "unit": "ms", "floor": f50, "floor_name": "its p50 quiet",
                     "ratio": f99 / f50, "target": "info"})
    rows.append({"name": f"writer asks/s ({done['tells']} tells, {done['errors']} errors)",
                 "value": writes / max(seconds, 1e-9), "unit": "ask/s", "target": "info"})
    return rows


# ---------------------------------------------------------------- the writers' process


async def _writer(client: Any, n: int, pace: float, mix: str, counts: dict[str, int],
                  started: asyncio.Event, stop: asyncio.Event) -> None:
    from slmactor.client import DaemonUnavailable, RequestFailed

    # Independent agents, not a drill: each starts at its own offset and pauses a little more
    # or less each time (fixed seed), so the 50 do not all write in the same millisecond.
    rng = random.Random(n)
    await asyncio.sleep(rng.uniform(0, pace))
    i = 0
    while not stop.is_set():
        try:
            if "f" in mix:
                # Evidence for facts the project has (support counts): the memory the block
                # renders stays the size it was on the quiet daemon, so the rows compare like
                # with like — only the writing differs.
                k = (n + i) % SEED_FACTS
                await client.ask(FactObserve(kind="command", subject=f"make target{k}",
                                             text=f"Run make target{k} before pushing"))
                counts["observes"] += 1
            if "e" in mix:
                await client.ask(EpisodeAppend(episode=_episode(i, f"w{n}")))
                counts["appends"] += 1
        except (DaemonUnavailable, RequestFailed):
            counts["errors"] += 1
        for k in range(5 if "t" in mix else 0):
            counts["tells"] += client.record_tool(f"w{n}-run", "Bash", command=f"make step{k}")
        started.set()
        i += 1
        await asyncio.sleep(pace * rng.uniform(0.5, 1.5))


async def _writers(runtime_dir: str, project: str, writers: int, pace: float,
                   mix: str) -> dict[str, int]:
    from slmactor.client import AsyncClient

    counts = {"observes": 0, "appends": 0, "tells": 0, "errors": 0}
    stop = asyncio.Event()
    clients = [AsyncClient(runtime_dir, project=project, timeout=10.0) for _ in range(writers)]
    firsts = [asyncio.Event() for _ in clients]
    tasks = [asyncio.create_task(_writer(c, n, pace, mix, counts, firsts[n], stop))
             for n, c in enumerate(clients)]
    for first in firsts:
        await first.wait()
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until EOF
    stop.set()
    await asyncio.gather(*tasks)
    for c in clients:
        await c.aclose()
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="writer clients for the block-under-load bench")
    parser.add_argument("runtime_dir")
    parser.add_argument("project")
    parser.add_argument("--writers", type=int, default=WRITERS)
    parser.add_argument("--pace", type=float, default=PACE_S)
    parser.add_argument("--mix", default="fet",
                        help="what each loop writes: f = fact.observe, e = episode.append, "
                             "t = five record_tool tells (default: all three)")
    args = parser.parse_args(argv)
    counts = asyncio.run(_writers(args.runtime_dir, args.project, args.writers, args.pace,
                                  args.mix))
    print(json.dumps(counts), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
