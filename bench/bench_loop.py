"""Benchmark of the loop: `run.finish` latency, and that its pipeline delays nobody.

Measured against a real daemon in a private temp dir, with floors from the same run:

1. `run.finish` reply (reflect + persist REFLECTION.md and regressions; pipeline in the
   background) vs a `ping` round trip: p50/p99 in µs, ratio of the p50s.
2. Another client's `metrics.show` asks (on a second project) while finish pipelines run in the
   background (episode append, rule learning, policy update, lessons, metrics, distill, prune —
   in every other actor) vs the same asks on an idle daemon: p99 ratio, target ≤ 1.5×. Twice:
   with run.finish sent back to back (a backlog that keeps both cores busy — far above any real
   harness) and paced at one every 100 ms. No ask waits on a pipeline, but the pipelines still
   compete for the CPU and the GIL of the one daemon process.
3. The learning replay of the bundled trajectories (one pass): wall seconds, and
   failures fixed from memory / wrong repairs — the figures `slmactor demo` prints — and the
   share of the worker's memory block items that say something new (no rule, task or claim
   twice, numbers aside; target 1.0).

    .venv/bin/python -m bench loop [--quick]
"""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any

from slmactor.logic.memory.block import distinct_items
from slmactor.protocol.messages import (
    MemoryBlock,
    MemoryDistill,
    MetricsRecord,
    MetricsShow,
    Ping,
    RunFinish,
)
from slmactor.testing import spawn_daemon, stop_quietly

REPORT_FAILURES = 6


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _report(i: int) -> dict[str, Any]:
    gutter = json.dumps({"path": f"m{i}.py", "old_str": "  3| x = 1", "new_str": "  3| x = 2"})
    fixed = json.dumps({"path": f"m{i}.py", "old_str": "x = 1", "new_str": "x = 2"})
    failures = [
        {"tool": "ws_edit", "message": "old_str still contains ws_read's line-number prefix",
         "resolved_by": "llm", "failed_args": gutter, "fixed_args": fixed,
         "recheck": {"path": f"m{i}.py", "substring": "x = 2"}},
        {"tool": "bash", "message": f"ModuleNotFoundError: No module named 'pkg{i % 7}'"},
    ] * (REPORT_FAILURES // 2)
    return {
        "run_id": f"bench-{i}", "query": f"task {i}: fix module m{i}", "language": "python",
        "model": "qwen2.5-coder:7b", "planned_tasks": 1, "completed_tasks": 1,
        "edit_format": "search_replace", "edits_attempted": 3, "edits_applied": 3,
        "edits_first_attempt": 2, "llm_calls": 5, "tool_calls": 12, "tool_errors": 6,
        "files_changed": [f"m{i}.py"], "failures": failures,
        "decisions": [{"decision": "edit_format", "arm": "search_replace",
                       "outcome": {"applied": True}}],
    }


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e6


def run(quick: bool) -> list[dict[str, Any]]:
    n = 40 if quick else 400
    rows: list[dict[str, Any]] = []
    daemon = spawn_daemon(debug_hooks=False)
    try:
        with daemon.client(timeout=30) as client:
            for _ in range(20):
                client.ask(Ping())
            ping = [_timed(lambda: client.ask(Ping())) for _ in range(n)]
            finish = [_timed(lambda i=i: client.ask(RunFinish(report=_report(i))))
                      for i in range(n)]
            client.ask(RunFinish(report=_report(n), wait=True))  # drain the queued pipelines
            rows.append({"name": "run.finish reply p50 (pipeline in background)",
                         "value": _pct(finish, 0.5), "unit": "µs", "floor": _pct(ping, 0.5),
                         "floor_name": "ping p50", "ratio": _pct(finish, 0.5) / _pct(ping, 0.5),
                         "target": "reflect + fsync'd journal"})
            rows.append({"name": "run.finish reply p99", "value": _pct(finish, 0.99),
                         "unit": "µs", "floor": _pct(ping, 0.99), "floor_name": "ping p99",
                         "ratio": _pct(finish, 0.99) / _pct(ping, 0.99), "target": ""})

        # The probe reads a second project whose run log does not grow while we measure.
        probe_project = daemon.project / "probe"
        probe_project.mkdir()
        with daemon.client(project=probe_project, timeout=30) as probe:
            for i in range(50):
                probe.ask(MetricsRecord(run={"run_id": f"p{i}", "at": 1_767_225_600 + i,
                                             "tasks": 1, "tasks_passed": i % 2}))
            idle = [_timed(lambda: probe.ask(MetricsShow(last=1))) for _ in range(n)]
            for label, pause in (("back to back (CPU saturated)", 0.0),
                                 ("one run.finish every 100 ms", 0.1)):
                stop = threading.Event()

                def finisher(pause: float = pause, stop: threading.Event = stop) -> None:
                    with daemon.client(timeout=60) as other:
                        i = 10_000 + int(pause * 1e6)
                        while not stop.is_set():
                            other.ask(RunFinish(report=_report(i)))
                            i += 1
                            stop.wait(pause)
                        other.ask(RunFinish(report=_report(i), wait=True), timeout=120)

                worker = threading.Thread(target=finisher, daemon=True)
                worker.start()
                busy = [_timed(lambda: probe.ask(MetricsShow(last=1))) for _ in range(n)]
                stop.set()
                worker.join()  # its last finish waits until every queued pipeline ran
                for q, tag in ((0.5, "p50"), (0.99, "p99")):
                    rows.append({"name": f"metrics.show {tag}, finish pipelines {label}",
                                 "value": _pct(busy, q), "unit": "µs", "floor": _pct(idle, q),
                                 "floor_name": f"same ask, idle daemon {tag}",
                                 "ratio": _pct(busy, q) / _pct(idle, q),
                                 "target": "≤ 1.5×" if tag == "p99" else ""})
        rows.extend(_replay_rows(daemon))
    finally:
        stop_quietly(daemon)
    return rows


def _replay_rows(daemon: Any) -> list[dict[str, Any]]:
    from slmactor import harnesses
    from slmactor.cli.loop.replay_driver import bundled_trajectories, learning_replay
    from slmactor.stores.trajectories import load_trajectories

    trajectories, _ = load_trajectories(bundled_trajectories(), harnesses.read_trajectory)
    sub = daemon.project / "replay"
    sub.mkdir()
    with daemon.client(project=sub, timeout=30) as client:
        start = time.perf_counter()
        result = learning_replay(client, trajectories, "bench")
        seconds = time.perf_counter() - start
        client.ask(MemoryDistill(wait=True), timeout=60)
        last = trajectories[-1]
        block = client.ask(MemoryBlock(role="worker", query=last.query, budget=600,
                                       language=last.language, model=last.model))
    distinct, items = distinct_items(str(block.get("text", "")) if isinstance(block, dict) else "")
    t = result.tally
    share = t.repeat_share
    return [
        {"name": f"learning replay of {t.trajectories} bundled trajectories", "value": seconds,
         "unit": "s", "floor": None, "floor_name": "", "ratio": None, "target": "demo < 30 s"},
        {"name": "repeat failures fixed from memory", "value": share if share is not None else -1,
         "unit": f"share of {t.repeat_failures}", "floor": None, "floor_name": "", "ratio": None,
         "target": "≥ 0.90"},
        {"name": "wrong repairs", "value": t.wrong_repairs, "unit": "count", "floor": None,
         "floor_name": "", "ratio": None, "target": "0"},
        {"name": "memory block items that are distinct", "value": distinct / items if items else -1,
         "unit": f"{distinct}/{items}", "floor": None, "floor_name": "", "ratio": None,
         "target": "1.0"},
    ]
