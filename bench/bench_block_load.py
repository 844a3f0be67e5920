"""`memory.block` while many clients write: the prompt path must not queue behind write I/O.

For each load, one daemon and a project seeded with facts and episodes. The block is asked back
to back by one client: on the fresh daemon, then six times (three with --quick) while a
separate process runs 50 writer clients (`AsyncClient`s, one connection pair each) and while
they are paused — the quiet floor, from the same minutes and the same store as the loaded
rounds. A writer loops: record_tool tells,
and every few loops a `fact.observe` (evidence for a fact the project already has, answered once
the facts file is written) and an `episode.append`, pausing ±50 % around its pace (each writer
its own, from a fixed seed). The loads (`LOADS`):

    agents     10 tool calls/s each, a fact and an episode every 30 calls   (the target)
    3x agents  30 tool calls/s each, likewise
    stress     50 tool calls/s each (five every 0.1 s), a fact and an episode every 0.1 s

Rows per load: block p50/p99 quiet and under load, `ping` under the same load (what any ask costs
then), and the rates the writers achieved. Asked in the same rounds, beside the daemon
(`bench.block_floors`): a raw pyzmq echo in a process of its own — the machine's tail under this
load, the floor of any reply — and, as an experiment, the block's store sections served by a
separate read-only process from the project files (what a file-following read replica would
get); each as its loaded p99 over its quiet p50.

Target: under `agents`, block p99 under load ≤ 3 × block p50 quiet.

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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Load:
    """What each of the writer clients does: a loop every `pace` seconds (±50 %, per client)
    of `tools` record_tool tells, with a fact.observe and an episode.append every
    `writes_every` loops."""

    name: str
    pace: float
    tools: int
    writes_every: int
    target: str


LOADS = (
    # An agent at 10 tool calls/s — ten times the busy agent of docs/SCALE.md (real sessions are
    # slower: the model thinks between calls) — finishing a run (an episode, a fact) every 30
    # calls: the real sessions of bench/real_sessions.json hold 14,159 calls in 472 sessions
    # (`python bench/real_census.py`), 30 a session.
    Load("agents", 0.1, 1, 30, "≤ 3× quiet p50"),
    Load("3x agents", 0.1 / 3, 1, 30, "info"),
    # Each client a fact, an episode and 5 tool calls every 0.1 s: 5× the tool calls and 150×
    # the writes of `agents`; the daemon's one thread is ~85 % busy.
    Load("stress", 0.1, 5, 1, "info"),
)
SEED_FACTS = 40
#: The block's budget (the daemon's default, `Settings.memory_tokens`), sent to the replica floor too.
BUDGET = 1200
#: (how many, loaded seconds, quiet seconds) of the alternating phases of one load.
PHASES = (6, 2.5, 1.0)
QUICK_PHASES = (3, 1.5, 0.5)
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


Samples = dict[str, list[float]]


def _measure(client: Client, seconds: float, echo: _Floor, replica: _Floor,
             into: Samples | None = None) -> Samples:
    """Milliseconds of memory.block, ping and the two floors, asked in turn for `seconds`
    (added to `into` when given)."""
    samples: Samples = into if into is not None else {}
    for name in ("block", "ping", "echo", "replica"):
        samples.setdefault(name, [])
    until = time.monotonic() + seconds
    i = 0
    while time.monotonic() < until:
        i += 1
        t0 = time.perf_counter()
        client.ask(MemoryBlock(role="worker", query=TASKS[i % len(TASKS)], budget=BUDGET))
        t1 = time.perf_counter()
        client.ask(Ping())
        t2 = time.perf_counter()
        echo.ask(b"x")
        t3 = time.perf_counter()
        replica.ask(_replica_request(i))
        t4 = time.perf_counter()
        for name, start, stop in (("block", t0, t1), ("ping", t1, t2), ("echo", t2, t3),
                                  ("replica", t3, t4)):
            samples[name].append((stop - start) * 1e3)
    return samples


def _summary(samples: Samples) -> dict[str, tuple[float, float]]:
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


def _tell(writers: subprocess.Popen[str], line: str) -> None:
    assert writers.stdin is not None
    writers.stdin.write(line + "\n")
    writers.stdin.flush()


def _expect(writers: subprocess.Popen[str], line: str) -> None:
    assert writers.stdout is not None
    got = writers.stdout.readline().strip()
    if got != line:
        raise RuntimeError(f"the writers said {got!r}, not {line!r}")


def run(quick: bool) -> list[Row]:
    rows: list[Row] = []
    for load in LOADS:
        rows.extend(_run_load(load, QUICK_PHASES if quick else PHASES))
    return rows


def _run_load(load: Load, phases: tuple[int, float, float]) -> list[Row]:
    """One daemon: quiet rounds, then `count` times `loaded_s` seconds of rounds while the
    writers run `load` and `quiet_s` seconds while they are paused. Quiet and loaded rounds
    alternate so both come from the same minutes (this VM's speed drifts by up to 2× within a
    session) and from the same store (the writers' episodes grow it)."""
    count, loaded_s, quiet_s = phases
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
                _measure(client, 0.2, echo, replica)  # warm-up: stores open, caches filled
                fresh = _percentiles(_measure(client, quiet_s, echo, replica)["block"])[0]
                quiet_samples: Samples = {}
                writers = subprocess.Popen(
                    [sys.executable, "-m", "bench.bench_block_load", "--writers", str(WRITERS),
                     "--pace", str(load.pace), "--tools", str(load.tools),
                     "--writes-every", str(load.writes_every), str(daemon.runtime_dir),
                     str(project)],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                    cwd=Path(__file__).resolve().parent.parent)
                assert writers.stdin is not None and writers.stdout is not None
                _expect(writers, "ready")
                loaded_samples: Samples = {}
                seconds = 0.0
                for _ in range(count):
                    started = time.monotonic()
                    _measure(client, loaded_s, echo, replica, loaded_samples)
                    seconds += time.monotonic() - started
                    _tell(writers, "pause")
                    _expect(writers, "paused")
                    _measure(client, quiet_s, echo, replica, quiet_samples)
                    _tell(writers, "resume")
                writers.stdin.close()
                done = json.loads(writers.stdout.readline())
                writers.wait(30)
        finally:
            for floor in floors:
                floor.close()
            zctx.term()
            stop_quietly(daemon)
    quiet, loaded = _summary(quiet_samples), _summary(loaded_samples)
    q50, q99 = quiet["block"]
    l50, l99 = loaded["block"]
    p50, p99 = loaded["ping"]
    under = f"under {WRITERS} clients, {load.name}"
    rows: list[Row] = [
        {"name": f"{load.name}: memory.block p50 on the fresh daemon (before any writer)",
         "value": fresh, "unit": "ms", "target": "info"},
        {"name": f"{load.name}: memory.block p50 quiet (writers paused)", "value": q50, "unit": "ms",
         "floor": quiet["ping"][0], "floor_name": "ping p50 quiet", "ratio": q50 / quiet["ping"][0],
         "target": "info"},
        {"name": f"{load.name}: memory.block p99 quiet (writers paused)", "value": q99, "unit": "ms", "floor": q50,
         "floor_name": "block p50 quiet", "ratio": q99 / q50, "target": "info"},
        {"name": f"memory.block p50 {under}", "value": l50, "unit": "ms",
         "floor": q50, "floor_name": "block p50 quiet", "ratio": l50 / q50, "target": "info"},
        {"name": f"memory.block p99 {under}", "value": l99, "unit": "ms",
         "floor": q50, "floor_name": "block p50 quiet", "ratio": l99 / q50, "target": load.target},
        {"name": f"memory.block p99 {under}, over the fresh daemon's p50", "value": l99,
         "unit": "ms", "floor": fresh, "floor_name": "block p50 fresh", "ratio": l99 / fresh,
         "target": "info"},
        {"name": f"ping p50 / p99 {under}", "value": p50, "unit": "ms",
         "floor": p99, "floor_name": "p99", "target": "info"},
    ]
    # The same ratio for the floors, measured in the same rounds: a raw pyzmq echo in a process
    # of its own (the machine's tail under this load), and the block's store sections served by
    # a separate read-only process (what a file-following read replica would get).
    for name, label in (("echo", "floor: raw pyzmq echo (own process)"),
                        ("replica", "experiment: block sections in a replica process")):
        f50, f99 = quiet[name][0], loaded[name][1]
        rows.append({"name": f"{label} p99 {under}", "value": f99, "unit": "ms", "floor": f50,
                     "floor_name": "its p50 quiet", "ratio": f99 / f50, "target": "info"})
    rows.append({"name": f"{load.name}: writes/s ({done['tells'] / seconds:,.0f} tool tells/s, "
                         f"{done['errors']} errors)",
                 "value": (done["observes"] + done["appends"]) / max(seconds, 1e-9),
                 "unit": "ask/s", "target": "info"})
    return rows


# ---------------------------------------------------------------- the writers' process


class _Pause:
    """The writers' pause: `pause()` returns once every writer has finished its loop and
    parked; `resume()` lets them go, each after its own offset (no herd at the restart)."""

    def __init__(self, writers: int) -> None:
        self.running = asyncio.Event()
        self.running.set()
        self._writers = writers
        self._parked = 0
        self._all_parked = asyncio.Event()

    async def checkpoint(self, rng: random.Random, pace: float) -> None:
        if self.running.is_set():
            return
        self._parked += 1
        if self._parked == self._writers:
            self._all_parked.set()
        await self.running.wait()
        self._parked -= 1
        await asyncio.sleep(rng.uniform(0, pace))

    async def pause(self) -> None:
        self._all_parked.clear()
        self.running.clear()
        await self._all_parked.wait()

    def resume(self) -> None:
        self.running.set()


async def _writer(client: Any, n: int, load: Load, counts: dict[str, int], pause: _Pause,
                  started: asyncio.Event, stop: asyncio.Event) -> None:
    from slmactor.client import DaemonUnavailable, RequestFailed

    # Independent agents, not a drill: each starts at its own offset and pauses a little more
    # or less each time (fixed seed), so the 50 do not all write in the same millisecond.
    rng = random.Random(n)
    await asyncio.sleep(rng.uniform(0, load.pace))
    i = 0
    while not stop.is_set():
        if i % load.writes_every == 0:
            try:
                # Evidence for facts the project has (support counts): the memory the block
                # renders stays the size it was on the quiet daemon, so the rows compare like
                # with like — only the writing differs.
                k = (n + i) % SEED_FACTS
                await client.ask(FactObserve(kind="command", subject=f"make target{k}",
                                             text=f"Run make target{k} before pushing"))
                counts["observes"] += 1
                await client.ask(EpisodeAppend(episode=_episode(i, f"w{n}")))
                counts["appends"] += 1
            except (DaemonUnavailable, RequestFailed):
                counts["errors"] += 1
        for k in range(load.tools):
            counts["tells"] += client.record_tool(f"w{n}-run", "Bash", command=f"make step{k}")
        started.set()
        i += 1
        await asyncio.sleep(load.pace * rng.uniform(0.5, 1.5))
        await pause.checkpoint(rng, load.pace)


async def _writers(runtime_dir: str, project: str, writers: int, load: Load) -> dict[str, int]:
    """Run the writers; stdin says `pause` (answered `paused` once they all are) and `resume`;
    its end stops them."""
    from slmactor.client import AsyncClient

    counts = {"observes": 0, "appends": 0, "tells": 0, "errors": 0}
    stop = asyncio.Event()
    pause = _Pause(writers)
    clients = [AsyncClient(runtime_dir, project=project, timeout=10.0) for _ in range(writers)]
    firsts = [asyncio.Event() for _ in clients]
    tasks = [asyncio.create_task(_writer(c, n, load, counts, pause, firsts[n], stop))
             for n, c in enumerate(clients)]
    for first in firsts:
        await first.wait()
    print("ready", flush=True)
    before = dict(counts)  # the first loops (every client's writes at once) are not the load
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        if line.strip() == "pause":
            await pause.pause()
            print("paused", flush=True)
        elif line.strip() == "resume":
            pause.resume()
    stop.set()
    pause.resume()
    await asyncio.gather(*tasks)
    for c in clients:
        await c.aclose()
    return {name: count - before[name] for name, count in counts.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="writer clients for the block-under-load bench")
    parser.add_argument("runtime_dir")
    parser.add_argument("project")
    parser.add_argument("--writers", type=int, default=WRITERS)
    parser.add_argument("--pace", type=float, required=True, help="seconds between loops")
    parser.add_argument("--tools", type=int, required=True, help="record_tool tells per loop")
    parser.add_argument("--writes-every", type=int, required=True,
                        help="a fact.observe and an episode.append every this many loops")
    args = parser.parse_args(argv)
    load = Load("", args.pace, args.tools, args.writes_every, "")
    counts = asyncio.run(_writers(args.runtime_dir, args.project, args.writers, load))
    print(json.dumps(counts), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
