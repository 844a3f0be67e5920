"""Before/after of the redactor: another version's `redact.py` against this checkout's, timed
interleaved in one process (so machine load hits both alike), on the payloads of
`bench_redact`. The other version is any extracted tree of the repository:

    git archive <ref> | tar -x -C /tmp/before
    .venv/bin/python bench/redact_ab.py /tmp/before/slmactor/logic/text/redact.py

Prints the median µs of each side over 9 interleaved rounds and their ratio.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.bench_stores import _realistic_text
from bench.bench_working import full_memory
from slmactor.logic.text import redact as after


def _load(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("redact_before", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    before = _load(argv[0])
    memory = full_memory()
    render = memory.render(budget=1000)
    reply = {"text": render, "run_id": "bench", "chars": len(render)}
    snapshot = memory.snapshot().to_dict()
    big = _realistic_text(1 << 20)
    cases: list[tuple[str, Callable[[Any], object], int]] = [
        (f"working render reply ({len(render)} chars)", lambda r: r.redact_reply(reply), 300),
        ("working snapshot (8 KB of JSON)", lambda r: r.redact_reply(snapshot), 60),
        ("1 MiB realistic text", lambda r: r.redact(big), 1),
    ]
    try:
        from tests.fixtures.credential_corpus import FORMS

        corpus = "\n".join(form.line for form in FORMS)
        cases.append((f"credential corpus ({len(corpus)} chars)", lambda r: r.redact(corpus), 30))
    except ImportError:
        pass
    for name, call, n in cases:
        samples: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(9):
            for side, module in (("before", before), ("after", after)):
                start = time.perf_counter()
                for _ in range(n):
                    call(module)
                samples[side].append((time.perf_counter() - start) / n * 1e6)
        b, a = statistics.median(samples["before"]), statistics.median(samples["after"])
        print(f"{name:38} before {b:11.1f} µs  after {a:11.1f} µs  after/before {a / b:5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
