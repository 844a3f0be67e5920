"""What an ask costs through the daemon, beside the in-process cost of the same work.

For a project store of 1k, 10k and 100k episodes (the distill benchmark's generator, fixed seed),
one daemon serves the store and one Python client asks, in one run:

* `ping` — the floor of any ask (front door, router, an actor, the reply);
* `memory.recall` with n = 1, 3, 10 — p50/p99 over the client, beside `EpisodeStore.recall` of the
  same queries on the same store opened in this process (the ranking work the ask has to do);
* `memory.block` for the same task texts — beside the in-process cost of its parts (the recall of
  its episodic section plus rendering): `BlockBuilder` over the same facts and hits.

Target at 10k episodes: p50 ≤ ping p50 + 1.3 × in-process p50; p99 ≤ 3 × p50.

    python -m bench asks [--quick]
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.bench_distill import WORDS, build_store
from slmactor.logic.memory import block as block_logic
from slmactor.logic.recall.index import RecallQuery
from slmactor.protocol.messages import MemoryBlock, MemoryRecall, Ping
from slmactor.stores.base.layout import ProjectLayout
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.episodes import EpisodeStore
from slmactor.testing import spawn_daemon, stop_quietly

Row = dict[str, Any]


def _queries(count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    weights = [1.0 / (k + 1) for k in range(len(WORDS))]
    return [" ".join(rng.choices(WORDS, weights, k=rng.randint(3, 8))) for _ in range(count)]


def _timed(fn: Callable[[str], object], texts: list[str], rounds: int) -> tuple[float, float]:
    """(p50, p99) in ms of `fn` over `rounds` calls cycling through `texts` (after a warm-up)."""
    for text in texts[:20]:
        fn(text)
    samples = []
    for i in range(rounds):
        text = texts[i % len(texts)]
        t0 = time.perf_counter()
        fn(text)
        samples.append((time.perf_counter() - t0) * 1e3)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.99))]


def _in_process(project: Path, texts: list[str], rounds: int) -> dict[str, tuple[float, float]]:
    store = EpisodeStore(ProjectLayout(project).memory_dir, WarningLog(), cap=-1,
                         max_age_days=-1)
    now = time.time()
    out: dict[str, tuple[float, float]] = {}
    try:
        for n in (1, 3, 10):
            def recall(q: str, n: int = n) -> object:
                return store.recall(RecallQuery(text=q, n=n), now)

            out[f"recall n={n}"] = _timed(recall, texts, rounds)

        def block(q: str) -> str:
            builder = block_logic.BlockBuilder("worker", 1200)
            hits = store.recall(RecallQuery(text=q, n=block_logic.MAX_EPISODES), now)
            episodes = [h.entry.to_dict() for h in hits]
            builder.add("episodic", block_logic.episodic_items(
                episodes, builder.allowance("episodic")))
            return builder.render()

        out["block"] = _timed(block, texts, rounds)
    finally:
        store.close()
    return out


def _through_daemon(project: Path, texts: list[str], rounds: int) -> dict[str, tuple[float, float]]:
    daemon = spawn_daemon(project=project, debug_hooks=False)
    out: dict[str, tuple[float, float]] = {}
    try:
        with daemon.client(timeout=30.0) as client:
            # First contact opens the store (a worker thread); not part of any ask's cost.
            client.ask(MemoryRecall(query="warm up", n=1))
            out["ping"] = _timed(lambda q: client.ask(Ping()), texts, rounds)
            for n in (1, 3, 10):
                def ask(q: str, n: int = n) -> object:
                    return client.ask(MemoryRecall(query=q, n=n))

                out[f"recall n={n}"] = _timed(ask, texts, rounds)
            out["block"] = _timed(
                lambda q: client.ask(MemoryBlock(role="worker", query=q)), texts, rounds)
    finally:
        stop_quietly(daemon)
    return out


def run(quick: bool) -> list[Row]:
    sizes = [1_000, 10_000] if quick else [1_000, 10_000, 100_000]
    rounds = 150 if quick else 300
    texts = _queries(200)
    rows: list[Row] = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="slm-asks-") as tmp:
            project = Path(tmp) / "project"
            project.mkdir()
            build_store(project, size)
            local = _in_process(project, texts, rounds)
            remote = _through_daemon(project, texts, rounds)
        ping50, ping99 = remote["ping"]
        rows.append({"name": f"ping p50 / p99 @{size}", "value": ping50, "unit": "ms",
                     "floor": ping99, "floor_name": "p99"})
        for what in ("recall n=1", "recall n=3", "recall n=10", "block"):
            p50, p99 = remote[what]
            work50, _ = local[what]
            allowed = ping50 + 1.3 * work50
            target = "≤ ping + 1.3× work; p99 ≤ 3× p50" if size == 10_000 else "info"
            rows.append({"name": f"{what} p50 @{size} (work {work50:.3f} ms)", "value": p50,
                         "unit": "ms", "floor": allowed, "floor_name": "ping + 1.3 × work",
                         "ratio": p50 / allowed, "target": target})
            rows.append({"name": f"{what} p99 @{size}", "value": p99, "unit": "ms",
                         "floor": p50, "floor_name": "p50", "ratio": p99 / p50, "target": ""})
    return rows
