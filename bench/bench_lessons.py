"""Polar lessons: dedup, corpus import and recall, floors measured in the same run.

1. `deduplicate` of 500 lessons (triggers of 6–12 words from a Zipf-like vocabulary, one in five
   a reworded near-duplicate; the seed's T-C-5 size): best of the passes. Floor: the seed's old pairwise O(n²) scan on the same lessons (same result,
   tested). Target: well under 0.5 s (H-C-5).
2. The same at 5,000 lessons (the import size).
3. `slmactor import lessons` of a 5,000-line corpus with 1 % corrupt lines
   (`tests/fixtures/lessons/corpus.py`), the real CLI process against a real daemon, wall time
   including the process start. Floor: `slmactor status` against the same daemon (process start +
   one ask). Target: < 5 s.
4. `lessons.recall` asked through the daemon with those 4,950 lessons stored, p50; floor: a ping
   to the same actor.
5. `memory.block` (worker, with a task) p50 with those lessons; floor: the same before the import.

    .venv/bin/python -m bench lessons [--quick]
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slmactor.logic.memory.lesson_dedup import deduplicate, word_overlap
from slmactor.logic.memory.polar_lessons import PolarLesson
from slmactor.protocol.messages import LessonsRecall, MemoryBlock, Ping
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly
from tests.fixtures.lessons.corpus import WORDS, write_corpus

Row = dict[str, Any]
TYPES = ("error_pattern", "architecture", "tool_pattern", "dependency", "performance")


def _row(name: str, value: float, unit: str, floor: float | None, floor_name: str,
         target: str) -> Row:
    ratio = value / floor if floor else None
    return {"name": name, "value": value, "unit": unit, "floor": floor, "floor_name": floor_name,
            "ratio": ratio, "target": target}


#: A Zipf-like vocabulary (weight 1/rank): a few words ("when", "the", "import") are in many
#: triggers, most are rare — as in real lesson text.
VOCABULARY = [*WORDS, *(f"word{k}" for k in range(3000))]
WEIGHTS = [1 / (rank + 1) for rank in range(len(VOCABULARY))]


def lessons(n: int, seed: int = 5) -> list[PolarLesson]:
    """Triggers of 6–12 words; every fifth rewords an earlier one by one word (a merge)."""
    rng = random.Random(seed)
    out: list[PolarLesson] = []
    for i in range(n):
        kind = rng.choice(TYPES)
        if out and i % 5 == 0:
            source = rng.choice(out)
            words = source.trigger.split()
            words[rng.randrange(len(words))] = f"new{i}"
            trigger, kind = " ".join(words), source.type
        else:
            trigger = " ".join(rng.choices(VOCABULARY, WEIGHTS, k=rng.randrange(6, 13)))
        out.append(PolarLesson(ts=0.0, type=kind, trigger=trigger, fix="f",
                               confidence=rng.choice((0.3, 0.5, 0.9))))
    return out


def pairwise(items: list[PolarLesson]) -> list[PolarLesson]:
    kept: list[PolarLesson] = []
    for new in items:
        for i, old in enumerate(kept):
            if old.type == new.type and word_overlap(old.trigger, new.trigger) > 0.7:
                if new.confidence > old.confidence:
                    kept[i] = new
                break
        else:
            kept.append(new)
    return kept


def _best(fn: Callable[[], object], passes: int) -> float:
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _cli(daemon: DaemonProcess, *args: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", *args],
        check=True, env=daemon.env, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    if args[0] == "--json" and "import" in args:
        summary = json.loads(done.stdout)
        assert summary["imported"] == 4950 and summary["bad"] == 50, summary
    return elapsed


def _block_p50(daemon: DaemonProcess, n: int) -> float:
    took: list[float] = []
    with daemon.client() as client:
        for i in range(n):
            start = time.perf_counter()
            client.ask(MemoryBlock(role="worker", query=f"Build a Flask API with a cache {i}"))
            took.append((time.perf_counter() - start) * 1e3)
    return statistics.median(took)


def bench_import(quick: bool) -> dict[str, float]:
    daemon = spawn_daemon(debug_hooks=False)
    try:
        block_before = _block_p50(daemon, 50 if quick else 300)
        with tempfile.TemporaryDirectory() as tmp:
            corpus = Path(tmp) / "memory.jsonl"
            write_corpus(corpus, 5000, corrupt_every=100)
            status = min(_cli(daemon, "status") for _ in range(3))
            took = _cli(daemon, "--json", "import", "lessons", str(corpus))
        ping: list[float] = []
        recall: list[float] = []
        with daemon.client() as client:
            for i in range(50 if quick else 300):
                start = time.perf_counter()
                client.ask(Ping(actor="distiller"))
                ping.append((time.perf_counter() - start) * 1e3)
                start = time.perf_counter()
                client.ask(LessonsRecall(task=f"Build a Python Flask API with a cache {i}"))
                recall.append((time.perf_counter() - start) * 1e3)
        block_after = _block_p50(daemon, 50 if quick else 300)
    finally:
        stop_quietly(daemon)
    return {"import": took, "status": status, "recall_p50": statistics.median(recall),
            "ping_p50": statistics.median(ping), "block_before": block_before,
            "block_after": block_after}


def run(quick: bool) -> list[Row]:
    passes = 3 if quick else 7
    small, large = lessons(500), lessons(5000)
    assert deduplicate(small) == pairwise(small)
    rows = [
        _row("dedup 500 lessons", _best(lambda: deduplicate(small), passes) * 1e3, "ms",
             _best(lambda: pairwise(small), passes) * 1e3, "pairwise O(n²) scan (the seed's old)",
             "< 500 ms"),
        _row("dedup 5,000 lessons", _best(lambda: deduplicate(large), passes) * 1e3, "ms",
             _best(lambda: pairwise(large), 1) * 1e3, "pairwise O(n²) scan (the seed's old)",
             "info"),
    ]
    measured = bench_import(quick)
    rows.append(_row("import lessons: 5,000 lines, 1 % corrupt (CLI)", measured["import"], "s",
                     measured["status"], "`slmactor status` (process start + one ask)", "< 5 s"))
    rows.append(_row("lessons.recall ask p50, 4,950 lessons", measured["recall_p50"], "ms",
                     measured["ping_p50"], "ping to the distiller p50", "info"))
    rows.append(_row("memory.block p50 with 4,950 lessons", measured["block_after"], "ms",
                     measured["block_before"], "memory.block p50 before the import", "info"))
    return rows


if __name__ == "__main__":
    for row in run("--quick" in sys.argv):
        print(json.dumps(row, ensure_ascii=False))
