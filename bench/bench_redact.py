"""Redactor benchmark: what scanning for secrets costs on the texts the daemon really redacts,
next to a floor measured in the same run on the same text.

The floor is one `re` pass that any token scanner needs at least: `finditer` of a long run of
token characters (`[A-Za-z0-9_+/=.-]{20,}`) over the same text. Rows:

* a working-memory reply at full caps (`working.render` text, ~2.6 KB) through `redact_reply`;
* a working-memory snapshot at full caps (~8 KB of JSON, a dict of lists) through `redact_reply`;
* 1 MiB of realistic text (code, logs, ~2 % lines with a secret) through `redact`;
* the credential corpus of the tests (every form once, one line each) through `redact`;
* a secret-safe cut of a 16 KB tool argument to 200 bytes (the working-memory clip) next to a
  plain byte cut: what a cut that never splits a secret costs.

    .venv/bin/python -m bench redact [--quick]
"""

from __future__ import annotations

import json
import random
import re
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.bench_stores import _realistic_text
from bench.bench_working import full_memory
from slmactor.logic.text.redact import redact, redact_reply
from slmactor.logic.text.strings import clip

Row = dict[str, Any]

_FLOOR = re.compile(r"[A-Za-z0-9_+/=.-]{20,}")


def _floor_scan(text: str) -> int:
    return sum(1 for _ in _FLOOR.finditer(text))


def _us_per_call(function: Callable[[], object], n: int, repeats: int) -> float:
    """Median over `repeats` runs of the time of one call, in µs."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(n):
            function()
        samples.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(samples)


def _row(name: str, value: float, unit: str, floor: float | None, floor_name: str,
         target: str) -> Row:  # fmt: skip
    ratio = value / floor if floor else None
    return {"name": name, "value": value, "unit": unit, "floor": floor, "floor_name": floor_name,
            "ratio": ratio, "target": target}  # fmt: skip


def _corpus_text() -> str:
    try:
        from tests.fixtures.credential_corpus import FORMS
    except ImportError:  # the bench runs without the tests package too
        return ""
    return "\n".join(form.line for form in FORMS)


def _long_args(rng: random.Random) -> str:
    words = ["def", "retry(self,", "attempts:", "int", "=", "3)", "->", "None:", "return",
             "self.client.get(url,", "timeout=5)", "#", "TODO"]
    return json.dumps({"content": " ".join(rng.choice(words) for _ in range(2500))})[:16_000]


def run(quick: bool) -> list[Row]:
    n = 200 if quick else 2_000
    repeats = 3 if quick else 5
    floor_name = "re finditer of token runs, same text"
    rows: list[Row] = []
    memory = full_memory()
    render = memory.render(budget=1000)
    reply = {"text": render, "run_id": "bench", "chars": len(render)}
    snapshot = memory.snapshot().to_dict()
    snapshot_text = json.dumps(snapshot)

    ours = _us_per_call(lambda: redact_reply(reply), n, repeats)
    floor = _us_per_call(lambda: _floor_scan(render), n, repeats)
    rows.append(_row(f"redact_reply working render ({len(render)} chars)", ours, "µs", floor,
                     floor_name, "info"))  # fmt: skip
    ours = _us_per_call(lambda: redact_reply(snapshot), n // 4 or 1, repeats)
    floor = _us_per_call(lambda: _floor_scan(snapshot_text), n // 4 or 1, repeats)
    rows.append(_row(f"redact_reply working snapshot ({len(snapshot_text)} B JSON)", ours, "µs",
                     floor, floor_name, "info"))  # fmt: skip

    big = _realistic_text(1 << 20)
    ours = _us_per_call(lambda: redact(big), 1, repeats) / 1000
    floor = _us_per_call(lambda: _floor_scan(big), 1, repeats) / 1000
    rows.append(_row("redact 1 MiB realistic text", ours, "ms", floor, floor_name, "< 200 ms"))

    corpus = _corpus_text()
    if corpus:
        ours = _us_per_call(lambda: redact(corpus), n // 4 or 1, repeats)
        floor = _us_per_call(lambda: _floor_scan(corpus), n // 4 or 1, repeats)
        rows.append(_row(f"redact credential corpus ({len(corpus)} chars)", ours, "µs", floor,
                         floor_name, "info"))  # fmt: skip

    args = _long_args(random.Random(3))
    ours = _us_per_call(lambda: clip(args, 200), n, repeats)
    plain = _us_per_call(lambda: args.encode()[:200].decode("utf-8", "ignore"), n, repeats)
    rows.append(_row("clip 16 KB args to 200 B (secret-safe cut)", ours, "µs", plain,
                     "plain UTF-8 byte cut", "info"))  # fmt: skip
    return rows
