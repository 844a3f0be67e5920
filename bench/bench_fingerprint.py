"""Benchmark of failure fingerprinting and repair advice, floors measured in the same run.

1. `analyze` throughput on the mixed real-tool corpus (`tests/fixtures/failures/corpus.jsonl`:
   python/pytest/mypy/gcc/rustc/node/javac/bash/git output and agent/provider errors), one core,
   every message once per pass, best of the passes.
   Floor: the seed's algorithm exactly as SPEC S-9 (`fingerprint_seed.seed_analyze`) on the same
   messages.  Target: >= 20k messages/s.
2. The same on the corpus's one-line messages only (< 400 characters).
3. `evolve.on_failure` asked through the real daemon and client (fingerprint + rule lookup +
   transform of the arguments) p50/p99, vs a `ping` ask to the rules actor in the same run.
4. The fast paths stay linear: the slowest of 8,000-character runs of path and file-name
   characters (`c.` × 4000, `a.py` × 2000, ...: a walk per extension or slash was quadratic,
   1.3 s on `c.` × 4000), against a quarter of its length — target ≤ 8× (linear: ~4×).

    .venv/bin/python -m bench fingerprint [--quick]
    .venv/bin/python bench/bench_fingerprint.py [--quick]   (one JSON row per line)
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slmactor.logic.failures.fingerprint import Fingerprint, analyze
from slmactor.logic.failures.fingerprint_seed import seed_analyze
from slmactor.protocol.messages import EvolveOnFailure, Ping
from slmactor.testing import spawn_daemon, stop_quietly

Row = dict[str, Any]
CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "failures" / "corpus.jsonl"


def _row(name: str, value: float, unit: str, floor: float | None, floor_name: str,
         target: str) -> Row:
    ratio = value / floor if floor else None
    return {"name": name, "value": value, "unit": unit, "floor": floor, "floor_name": floor_name,
            "ratio": ratio, "target": target}


def _load() -> list[dict[str, Any]]:
    with CORPUS.open() as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _throughput(fn: Callable[..., Fingerprint], records: list[dict[str, Any]],
                passes: int) -> float:
    """Messages per second, best of `passes` (each pass sees every message once)."""
    best = 0.0
    for _ in range(passes):
        start = time.perf_counter()
        for rec in records:
            fn(rec["tool"], rec["message"], rec["language"], rec["model"])
        best = max(best, len(records) / (time.perf_counter() - start))
    return best


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(pct * len(ordered)))]


def bench_on_failure(n: int) -> dict[str, float]:
    daemon = spawn_daemon(debug_hooks=False)
    try:
        args = json.dumps({"path": "/repo/a.py", "old_str": "  12| x = 1", "new_str": "  12| x = 2"})
        message = ("ERROR:\nNo replacement was performed, old_str `  12| x = 1` did not appear "
                   "verbatim in /repo/a.py.")
        with daemon.client() as client:
            for _ in range(50):  # warm up: project store opened, caches hot
                client.ask(Ping(actor="rules"))
                client.ask(EvolveOnFailure(run_id="b", tool="edit", message=message, args=args))
            ping: list[float] = []
            advice: list[float] = []
            for i in range(n):
                start = time.perf_counter()
                client.ask(Ping(actor="rules"))
                ping.append((time.perf_counter() - start) * 1e6)
                start = time.perf_counter()
                client.ask(EvolveOnFailure(run_id="b", tool="edit", message=f"{message} #{i}",
                                           language="python", model="qwen2.5-coder:7b", args=args))
                advice.append((time.perf_counter() - start) * 1e6)
    finally:
        stop_quietly(daemon)
    return {"ping_p50": statistics.median(ping), "ping_p99": _percentile(ping, 0.99),
            "advice_p50": statistics.median(advice), "advice_p99": _percentile(advice, 0.99)}


#: Runs of path and file-name characters the fast paths walk (each once).
_RUNS = ("c.", ".c", "c.c-", "a.py", "x/", "/a", "1a", "0x", "req_", "http://")


def _fast_paths(passes: int) -> tuple[float, float]:
    """(seconds of the slowest 8,000-character run, seconds of the same at 2,000), best of
    `passes` each."""
    def best(message: str) -> float:
        times = []
        for _ in range(passes):
            start = time.perf_counter()
            analyze("tool", message, "python")
            times.append(time.perf_counter() - start)
        return min(times)

    pairs = [(best(unit * (8000 // len(unit))), best(unit * (2000 // len(unit)))) for unit in _RUNS]
    return max(pairs)


def run(quick: bool) -> list[Row]:
    records = _load()
    passes = 3 if quick else 10
    ours = _throughput(analyze, records, passes)
    seed = _throughput(seed_analyze, records, passes)
    short = [r for r in records if "\n" not in r["message"] and len(r["message"]) < 400]
    ours_short = _throughput(analyze, short, passes)
    seed_short = _throughput(seed_analyze, short, passes)
    rows = [
        _row(f"analyze, mixed real-tool corpus ({len(records)} msgs)", ours, "msg/s", seed,
             "seed algorithm (S-9) on the same messages", "≥ 20k/s"),
        _row(f"analyze, one-line messages ({len(short)} msgs)", ours_short,
             "msg/s", seed_short, "seed algorithm (S-9) on the same messages", "info"),
    ]
    long, quarter = _fast_paths(passes)
    rows.append(_row("analyze, slowest 8k-char path/name run (fast paths)", long * 1e3, "ms",
                     quarter * 1e3, "the same run, a quarter as long", "≤ 8×"))
    ask = bench_on_failure(300 if quick else 3000)
    rows.append(_row("evolve.on_failure ask p50 (fingerprint+lookup+transform)", ask["advice_p50"],
                     "µs", ask["ping_p50"], "ping to the rules actor p50", "≤ 2× ping"))
    rows.append(_row("evolve.on_failure ask p99", ask["advice_p99"], "µs", ask["ping_p99"],
                     "ping to the rules actor p99", "≤ 5 ms"))
    return rows


if __name__ == "__main__":
    for row in run("--quick" in sys.argv):
        print(json.dumps(row, ensure_ascii=False))
