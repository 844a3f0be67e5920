"""What merging shared learning costs: the git merge driver on each store at its cap, and a bundle.

For each shared store at its cap (rules 2 × 400 before a prune, facts 200, checks 200, lessons
10,000) an ancestor is built with a fixed seed; each side strengthens 10 % of the records and
learns 5 % new ones; `merge_texts` (what `slmactor merge-driver` runs) merges the three files.
The floor is parsing the three files and writing one with the stdlib `json` (the work any
merge of these files must do). Target: well under a second at every cap (git waits for it).

    python -m bench share [--quick]
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from typing import Any

from slmactor.logic.evolve.rules import MAX_RULES
from slmactor.logic.loop.regressions import MAX_CHECKS
from slmactor.logic.memory.facts import MAX_FACTS
from slmactor.stores.polar_lessons import MAX_LESSONS
from slmactor.stores.shared import BY_NAME, encode

Row = dict[str, Any]
STAMP = "2026-11-{:02d}T10:00:00Z"


def _rule(i: int, rng: random.Random) -> dict[str, Any]:
    return {"id": f"rule_{i:06d}", "trigger": {"cls": "edit_no_match", "tool": f"tool{i}",
            "language": "python"}, "repair": {"kind": "transform_args",
            "transform": "strip_line_number_prefix", "guidance": "remove the gutter"},
            "successes": rng.randint(0, 20), "failures": rng.randint(0, 5),
            "evidence": [f"run-{rng.randint(0, 999)}"], "created_at": STAMP.format(1 + i % 28),
            "last_used": STAMP.format(1 + i % 28), "scope": "project"}


def _fact(i: int, rng: random.Random) -> dict[str, Any]:
    return {"kind": "convention", "subject": f"subject {i}", "text": f"claim number {i}",
            "support": rng.randint(1, 9), "contradict": rng.randint(0, 2),
            "first_seen": STAMP.format(1 + i % 28), "last_seen": STAMP.format(1 + i % 28),
            "sources": [f"run-{rng.randint(0, 99)}"]}


def _check(i: int, rng: random.Random) -> dict[str, Any]:
    return {"id": f"chk_{i:06d}", "description": f"the parser handles case {i}", "kind": "file",
            "path": f"src/m{i}.py", "substring": "def parse", "added_at": STAMP.format(1 + i % 28),
            "runs": rng.randint(0, 30), "fails": rng.randint(0, 3)}


def _lesson(i: int, rng: random.Random) -> dict[str, Any]:
    return {"ts": 1_780_000_000 + i, "type": "error_pattern", "trigger": f"trigger {i} happens",
            "fix": f"do fix {i}", "confidence": round(rng.random(), 3), "used": rng.randint(0, 9),
            "tags": ["python"], "source_task": ""}


def _side(base: list[dict[str, Any]], make: Callable[[int, random.Random], dict[str, Any]],
          counter: str, start: int, rng: random.Random) -> list[dict[str, Any]]:
    out = [dict(r) for r in base]
    for record in rng.sample(out, len(out) // 10):
        record[counter] = int(record.get(counter, 0)) + 1
    out.extend(make(start + i, rng) for i in range(max(1, len(base) // 20)))
    return out


def _measure(kind: str, cap: int, make: Callable[[int, random.Random], dict[str, Any]],
             counter: str, repeat: int) -> Row:
    from slmactor.stores.shared import merge_texts, parse

    shared = BY_NAME[kind]
    rng = random.Random(7)
    base = [make(i, rng) for i in range(cap)]
    a = _side(base, make, counter, cap, rng)
    b = _side(base, make, counter, 2 * cap, rng)
    files = [encode(shared, {"version": 1}, parse(shared, encode(shared, {}, side))[1])
             for side in (base, a, b)]
    best = floor = float("inf")
    merged = b""
    for _ in range(repeat):
        started = time.perf_counter()
        merged = merge_texts(shared, *files)
        best = min(best, time.perf_counter() - started)
        started = time.perf_counter()
        parsed = [[json.loads(line) for line in f.splitlines() if line.strip()]
                  if shared.records_key is None else json.loads(f) for f in files]
        json.dumps(parsed[1])
        floor = min(floor, time.perf_counter() - started)
    records = len(parse(shared, merged)[1])
    return {"name": f"merge-driver on {kind} ({cap} → {records} records, {len(merged) // 1024} KiB)",
            "value": best * 1000, "unit": "ms", "floor": floor * 1000, "ratio": best / floor,
            "target": "< 1000 ms"}


def run(quick: bool) -> list[Row]:
    repeat = 2 if quick else 5
    return [
        _measure("rules", 2 * MAX_RULES, _rule, "successes", repeat),
        _measure("facts", MAX_FACTS, _fact, "support", repeat),
        _measure("regressions", MAX_CHECKS, _check, "runs", repeat),
        _measure("lessons", MAX_LESSONS, _lesson, "used", repeat),
    ]
