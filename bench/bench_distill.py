"""Distillation never blocks an ask: `memory.block` latency while the distiller works.

Setup (fixed seed 5): a project whose episode store holds 10,000 synthetic episodes (Zipf-ish task
text, 1–5 paths, 1–4 commands, 0–2 failures with resolutions, an edit format and a language),
written with the real `EpisodeStore`; a real daemon (`SLMACTOR_EPISODES_CAP=20000` so the store is
kept whole) on ipc sockets in a temp dir; a real client.

Measured in the same run, twice: on the daemon as shipped (the distiller keeps the window's
episodes between passes, so a pass after one more run fetches one episode and counts the other
119 from memory; passes start at least 2 s apart however often they are asked for) and with
`SLMACTOR_DISTILL_CACHE=0 SLMACTOR_DISTILL_INTERVAL=0` (every pass cold — it fetches all 120,
as the first pass after a start does — and the next one starting as soon as it ends):
* distill pass: wall time of `memory.distill wait=true` after one more episode, and how many
  episodes it fetched from the recall actor;
* idle: a client asks `memory.block` (role worker, query, focus file, model, language — every
  section is computed, the episodic one asks the recall actor) every 10 ms; p50 / p95 / p99;
* runs finishing: the same while another process appends an episode every 0.3 s (a finished
  run) — the load the episode store adds, without distillation;
* busy: the same, and that process also asks `memory.distill` every 10 ms (the run.finish
  pipeline asks at most every 30 s), so passes follow the appends as fast as the distiller
  allows (a pass over an unchanged window is skipped: it would only inflate support);
  p50 / p95 / p99 and how many passes ran.
The three phases alternate (4 rounds each) so that load from other processes on a shared machine
falls on all of them.

Target: p99 while distilling ≤ 1.5× the p99 without it, in both modes. Both ratios
are printed: against idle (the target) and against "runs finishing" (the distiller's own cost).

    .venv/bin/python -m bench distill [--quick]
"""

from __future__ import annotations

import math
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from slmactor.logic.recall.episode import Episode
from slmactor.protocol.messages import EpisodeAppend, MemoryBlock, MemoryDistill, ProcedureObserve
from slmactor.stores.base.layout import ProjectLayout
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.episodes import EpisodeStore
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

EPISODES = 10_000
REPO = Path(__file__).resolve().parent.parent
TICK = 0.010
#: A finished run every 0.3 s in the busy phase (about one distill pass).
APPEND_EVERY = 0.3
ROUNDS = 4
MODEL = "qwen2.5-coder:7b-instruct-q4_K_M"
_WORD_TEXT = (
    "fix add update test parser cache build error config client server handler request "
    "response session token user file path module import export release docs lint type "
    "refactor remove rename retry timeout network database query index schema graph walker "
    "loop runner"
)
WORDS = _WORD_TEXT.split()
DIRS = ("pkg/graph", "pkg/loop", "pkg/api", "internal/db", "cmd/tool", "web/src", "docs")
COMMANDS = ("go test ./...", "go vet ./...", "make lint", "pytest -q", "npm test", "cargo test")
FAILURES = (
    "old_str not found in {f}",
    "undefined: walker in {f}",
    "timeout after 30s",
    "hunk #2 FAILED at 14",
    "ModuleNotFoundError: No module named 'yaml'",
)


def _episode(rng: random.Random, i: int, start: float) -> Episode:
    weights = [1.0 / (k + 1) for k in range(len(WORDS))]
    words = rng.choices(WORDS, weights, k=rng.randint(5, 14))
    files = [
        f"{rng.choice(DIRS)}/{rng.choice(WORDS)}{rng.randint(0, 40)}.go"
        for _ in range(rng.randint(1, 5))
    ]
    failures = [
        {
            "fingerprint": f"fp_{k}",
            "message": FAILURES[k].format(f=files[0]),
            "resolution": rng.choice(["re-read the file", "ran go mod tidy", ""]),
            "resolved_by": rng.choice(["rule:r1", "llm", "", "retry"]),
        }
        for k in rng.sample(range(len(FAILURES)), rng.randint(0, 2))
    ]
    attempted = rng.randint(0, 6)
    return Episode.from_dict(
        {
            "at": start + i * 60.0,
            "query": " ".join(words) + f" #{i}",
            "files_changed": files,
            "commands": [
                {"cmd": c, "ok": rng.random() < 0.8}
                for c in rng.sample(COMMANDS, rng.randint(1, 4))
            ],
            "failures": failures,
            "edit_format": rng.choice(["diff", "whole", "udiff"]),
            "edits_attempted": attempted,
            "edits_applied": rng.randint(0, attempted),
            "language": rng.choice(["go", "go", "python", "typescript"]),
            "model": MODEL,
            "success": rng.random() < 0.7,
        }
    )


def build_store(project: Path, n: int) -> float:
    """Write `n` episodes with the real store; returns seconds taken."""
    started = time.perf_counter()
    rng = random.Random(5)
    store = EpisodeStore(ProjectLayout(project).memory_dir, WarningLog(), cap=2 * n)
    t0 = time.time() - n * 60.0
    for i in range(n):
        store.append(_episode(rng, i, t0))
    store.close()
    return time.perf_counter() - started


#: The other harness of the busy phases: a run finishes (its episode is appended) about every
#: APPEND_EVERY seconds; with distill=1 it also asks `memory.distill` every tick, so the distiller
#: never idles. Stops on a line on stdin and prints "<appended> <distill asks>".
_BACKGROUND = """
import random, sys, threading, time
sys.path.insert(0, sys.argv[1])
from bench.bench_distill import APPEND_EVERY, TICK, _episode
from slmactor.client import Client
from slmactor.protocol.messages import EpisodeAppend, MemoryDistill
runtime, project, first, t0, distill = sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), sys.argv[6] == "1"
rng = random.Random(int(sys.argv[7]))
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
made = asked = 0
with Client(runtime, project=project, timeout=10.0) as client:
    client.status()
    print("ready", flush=True)
    next_append = 0.0
    while not stop.is_set():
        if time.perf_counter() >= next_append:
            client.ask(EpisodeAppend(episode=_episode(rng, first + made, t0).to_dict()))
            made += 1
            next_append = time.perf_counter() + APPEND_EVERY
        if distill:
            client.ask(MemoryDistill())
            asked += 1
        time.sleep(TICK)
print(made, asked, flush=True)
"""


def _ticked_blocks(daemon: DaemonProcess, count: int) -> list[float]:
    """Ask `memory.block` every TICK seconds; latency of each in ms."""
    ask = MemoryBlock(
        role="worker",
        budget=1200,
        query="fix the graph walker timeout",
        files=["pkg/graph/walker3.go"],
        model=MODEL,
        language="golang",
    )
    out: list[float] = []
    with daemon.client(timeout=10.0) as client:
        next_at = time.perf_counter()
        for _ in range(count):
            now = time.perf_counter()
            if now < next_at:
                time.sleep(next_at - now)
            t = time.perf_counter()
            client.ask(ask)
            out.append((time.perf_counter() - t) * 1000)
            next_at += TICK
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]  # nearest rank


def measure(layout: DaemonProcess, count: int, cache: int, interval: float | None = None) -> dict[str, Any]:
    """The three phases on a daemon over `layout`'s project whose distiller keeps `cache`
    episodes between passes (0: every pass fetches its whole window) and starts passes
    `interval` seconds apart (None: the shipped default)."""
    env = {"SLMACTOR_EPISODES_CAP": str(2 * EPISODES), "SLMACTOR_DISTILL_CACHE": str(cache)}
    if interval is not None:
        env["SLMACTOR_DISTILL_INTERVAL"] = str(interval)
    live = spawn_daemon(project=layout.project, home=layout.home, env=env)
    fetched: list[int] = []
    try:
        with live.client(timeout=60.0) as client:
            for _ in range(3):
                client.ask(
                    ProcedureObserve(
                        topic="edit_format", option="diff", model=MODEL, language="go", ok=True
                    )
                )
            warm = client.ask(MemoryDistill(wait=True))  # opens the 10k store, first pass
            passes: list[float] = []
            for k in range(5):  # a new episode each time, so every pass has a new window
                episode = _episode(random.Random(100 + k + 10 * cache), 2 * EPISODES + k, time.time())
                client.ask(EpisodeAppend(episode=episode.to_dict()))
                t = time.perf_counter()
                done = client.ask(MemoryDistill(wait=True))
                passes.append((time.perf_counter() - t) * 1000)
                fetched.append(int(done.get("fetched", 0)))
        _ticked_blocks(live, 50)  # warm-up
        # Three phases alternate, so load from elsewhere on the machine lands on all of them:
        # idle; runs finishing (appends) without distillation; runs finishing with distillation.
        idle: list[float] = []
        appends_only: list[float] = []
        busy: list[float] = []
        sent = [0]
        appended = [0]
        ran = 0
        rng = random.Random(6)
        t0 = time.time()

        def phase(distill: bool) -> list[float]:
            # The other harness is another process, as it would be: in a thread of this one, its
            # asks every tick would contend with the measured asks for this process's GIL.
            argv = [sys.executable, "-c", _BACKGROUND, str(REPO), str(live.runtime_dir),
                    str(live.project), str(EPISODES + appended[0]), str(t0), "1" if distill else "0",
                    str(rng.randrange(1 << 30))]
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdout.readline()  # "ready": connected
                return _ticked_blocks(live, count // ROUNDS)
            finally:
                proc.stdin.write("stop\n")
                proc.stdin.flush()
                made, asked = (int(x) for x in proc.stdout.readline().split())
                proc.wait(timeout=30)
                appended[0] += made
                sent[0] += asked

        for _ in range(ROUNDS):
            idle += _ticked_blocks(live, count // ROUNDS)
            appends_only += phase(distill=False)
            before = _distills(live)
            busy += phase(distill=True)
            ran += _distills(live) - before
            with live.client(timeout=60.0) as client:
                client.ask(MemoryDistill(wait=True))  # let the last pass finish before idling
    finally:
        stop_quietly(live)
    return {
        "episodes_distilled": warm.get("episodes"),
        "pass_ms": statistics.median(passes),
        "pass_fetched": statistics.median(fetched),
        "idle_p50": _pct(idle, 0.5),
        "idle_p99": _pct(idle, 0.99),
        "appends_p50": _pct(appends_only, 0.5),
        "appends_p99": _pct(appends_only, 0.99),
        "idle_p95": _pct(idle, 0.95),
        "appends_p95": _pct(appends_only, 0.95),
        "busy_p95": _pct(busy, 0.95),
        "busy_p50": _pct(busy, 0.5),
        "busy_p99": _pct(busy, 0.99),
        "passes_during_busy": ran,
        "appended": appended[0],
        "distill_asks": sent[0],
        "asks": count,
    }


def _distills(daemon: DaemonProcess) -> int:
    with daemon.client() as client:
        for row in client.status()["actors"]:
            if row["name"] == "distiller":
                return int(row.get("extra", {}).get("distills", 0))
    return 0


def _row(
    name: str,
    value: float,
    unit: str = "ms",
    floor: float | None = None,
    floor_name: str = "",
    target: str = "",
) -> dict[str, Any]:
    return {
        "name": name,
        "value": value,
        "unit": unit,
        "floor": floor,
        "floor_name": floor_name,
        "ratio": value / floor if floor else None,
        "target": target,
    }


def relevance_cost(facts: int = 200, queries: int = 50) -> tuple[float, float]:
    """Median ms to rank `facts` fact texts for a task: cached index vs `rank_text` (the floor)."""
    from slmactor.logic.recall.rank import TextCandidate, rank_text
    from slmactor.logic.recall.text_rank import clear_cache, rank_texts

    rng = random.Random(9)
    texts = [
        f"`{rng.choice(DIRS)}/{rng.choice(WORDS)}.go` " + " ".join(rng.choices(WORDS, k=14))
        for _ in range(facts)
    ]
    asks = [" ".join(rng.choices(WORDS, k=6)) for _ in range(queries)]
    clear_cache()
    rank_texts(asks[0], texts, time.time())  # built once, as the distiller's first block does
    cached: list[float] = []
    plain: list[float] = []
    candidates = [TextCandidate(t) for t in texts]
    for query in asks:
        t = time.perf_counter()
        rank_texts(query, texts, time.time())
        cached.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        rank_text(query, candidates, 0, time.time())
        plain.append((time.perf_counter() - t) * 1000)
    return statistics.median(cached), statistics.median(plain)


def _phase_rows(m: dict[str, Any], mode: str) -> list[dict[str, Any]]:
    return [
        _row(f"{mode}: distill pass after one more run (median of 5)", m["pass_ms"]),
        _row(f"{mode}: episodes fetched by that pass", m["pass_fetched"], unit="episodes"),
        _row(f"{mode}: memory.block p50 idle", m["idle_p50"]),
        _row(f"{mode}: memory.block p99 idle", m["idle_p99"]),
        _row(
            f"{mode}: memory.block p99 runs finishing",
            m["appends_p99"],
            floor=m["idle_p99"],
            floor_name="idle p99",
        ),
        _row(
            f"{mode}: memory.block p50 runs finishing + distilling",
            m["busy_p50"],
            floor=m["idle_p50"],
            floor_name="idle p50",
        ),
        _row(
            f"{mode}: memory.block p95 runs finishing + distilling",
            m["busy_p95"],
            floor=m["idle_p95"],
            floor_name="idle p95",
        ),
        _row(
            f"{mode}: memory.block p99 runs finishing + distilling",
            m["busy_p99"],
            floor=m["appends_p99"],
            floor_name="runs finishing p99",
            target="info (the distiller's own cost)",
        ),
        _row(
            f"{mode}: memory.block p99 runs finishing + distilling vs idle",
            m["busy_p99"],
            floor=m["idle_p99"],
            floor_name="idle p99",
            target="≤ 1.5× idle p99",
        ),
        _row(f"{mode}: distill passes in the busy phases", m["passes_during_busy"], unit="passes"),
    ]


def run(quick: bool) -> list[dict[str, Any]]:
    cached_ms, plain_ms = relevance_cost()
    layout = spawn_daemon()  # only to lay out the temp dirs; the store is written offline
    layout.stop()
    try:
        build_store(layout.project, EPISODES)
        count = 300 if quick else 1000
        # The daemon as shipped (episodes cached between passes, passes 2 s apart at most),
        # then the hardest case: every pass cold — it fetches all 120 episodes of its window, as
        # the first pass after a start does — and the next one starting as soon as it ends.
        warm = measure(layout, count, cache=120)
        print(f"# cached: {warm}", file=sys.stderr, flush=True)
        cold = measure(layout, count, cache=0, interval=0.0)
        print(f"# cold: {cold}", file=sys.stderr, flush=True)
    finally:
        stop_quietly(layout)
    return [
        _row(
            "rank 200 fact texts for a task (cached index)",
            cached_ms,
            floor=plain_ms,
            floor_name="rank_text p50",
        ),
        *_phase_rows(warm, "as shipped"),
        *_phase_rows(cold, "every pass cold, back to back"),
    ]


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(r)
