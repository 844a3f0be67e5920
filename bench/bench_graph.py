"""Knowledge graph (S-21): backfill, store load/rebuild, queries, and the daemon round trip.

Synthetic project (seed 42): episodes with 1–6 files from a 400-file tree, 0–2 failures from 60
fingerprints (half fixed by one of 40 rules), run ids shared by 1–3 episodes; 80 facts with 1–4
sources and 40 project rules with 1–3 evidence runs. Floors are measured in the same run:

1. `backfill_edges` over 300 episodes (the default cap) vs parsing the same records with
   `Episode.from_dict` (the derivation's unavoidable input step).
2. First backfill into an empty store (append every edge + write the index) per edge, vs raw
   `json.dumps` + `os.write` O_APPEND of the same lines + one atomic index write.
3. Second (no-op) backfill per edge vs computing the edges' SHA-256 ids (the idempotence check).
4. Opening a 20 000-edge store (the cap) from its index vs `json.loads` of the index file; and a
   rebuild from the log vs readline + `json.loads` per line.
5. `known_about_file` and a depth-3 walk on the 20 000-edge graph (p50) vs a plain BFS over a
   dict-of-lists adjacency reaching the same nodes.
6. Daemon: `graph.file` round trip after the graph is fresh (includes the freshness ask to the
   recall actor) vs a `ping` round trip, p50; first backfill of 300 episodes inside the daemon vs
   the client fetching the same 300 episodes itself (`episode.recent` + `episode.get` each).

    .venv/bin/python -m bench graph [--quick]
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slmactor.logic.graph.backfill import backfill_edges
from slmactor.logic.graph.core import edge_id, make_edge, node_value
from slmactor.logic.graph.query import WalkOptions, known_about_file, walk
from slmactor.logic.recall.episode import Episode
from slmactor.stores.base.fsutil import atomic_write_bytes
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.graph import INDEX_NAME, LOG_NAME, GraphStore

Row = dict[str, Any]
NOW = time.time()


def _row(name: str, value: float, unit: str, floor: float | None, floor_name: str,
         target: str) -> Row:  # fmt: skip
    return {"name": name, "value": value, "unit": unit, "floor": floor, "floor_name": floor_name,
            "ratio": value / floor if floor else None, "target": target}


def _median_s(fn: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def project(n: int, seed: int = 42) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                              list[dict[str, Any]]]:
    rng = random.Random(seed)
    files = [f"pkg/m{i // 20}/f{i}.py" for i in range(400)]
    fingerprints = [f"fp_{i:012x}" for i in range(60)]
    rules = [f"rule_{i:012x}" for i in range(40)]
    episodes: list[dict[str, Any]] = []
    run = 0
    for i in range(n):
        if rng.random() < 0.5:
            run += 1
        failures = []
        for _ in range(rng.choice([0, 0, 1, 2])):
            fixed = rng.random() < 0.5
            failures.append({"fingerprint": rng.choice(fingerprints),
                             "class": rng.choice(["compile_error", "edit_not_found", "test_fail"]),
                             "resolved_by": f"rule:{rng.choice(rules)}" if fixed else "llm",
                             "resolution": "applied the stored repair" if fixed else ""})
        episodes.append({"id": f"ep_{i:012x}", "at": NOW - (n - i) * 600, "run_id": f"run-{run}",
                         "query": f"task {i}", "files_changed": rng.sample(files, rng.randint(1, 6)),
                         "failures": failures})
    facts = [{"id": f"f_{i:012x}", "kind": "command", "last_seen": NOW - i,
              "sources": [e["id"] for e in rng.sample(episodes, min(len(episodes), rng.randint(1, 4)))]}
             for i in range(80)]
    rule_records = [{"id": r, "scope": "project", "created_at": NOW - 3600,
                     "evidence": [f"run-{rng.randint(0, max(run, 1))}" for _ in range(rng.randint(1, 3))]}
                    for r in rules]
    return episodes, facts, rule_records


def _big_graph(n_edges: int) -> list[Any]:
    rng = random.Random(7)
    edges = []
    for i in range(n_edges):
        ep = f"episode:ep_{i // 8:012x}"
        kind = i % 8
        if kind < 5:
            edges.append(make_edge(ep, f"file:pkg/m{rng.randint(0, 99)}/f{rng.randint(0, 999)}.py",
                                   "touched", NOW - i))
        elif kind < 7:
            fp = f"failure:fp_{rng.randint(0, 499):012x}"
            edges.append(make_edge(ep, fp, "produced", NOW - i, note="compile_error"))
        else:
            edges.append(make_edge(f"failure:fp_{rng.randint(0, 499):012x}",
                                   f"rule:rule_{rng.randint(0, 99):012x}", "resolved_by", NOW - i))
    return edges


def _pure_rows(quick: bool) -> list[Row]:
    repeats = 3 if quick else 7
    episodes, facts, rules = project(300)
    derive = _median_s(lambda: backfill_edges(episodes, facts, rules), repeats)
    parse = _median_s(lambda: [Episode.from_dict(e) for e in episodes], repeats)
    n = len(backfill_edges(episodes, facts, rules))
    return [_row(f"backfill_edges, 300 episodes → {n} edges", derive * 1e3, "ms", parse * 1e3,
                 "Episode.from_dict of the same records", "≤ 5×")]


def _store_rows(base: Path, quick: bool) -> list[Row]:
    rows: list[Row] = []
    episodes, facts, rules = project(300)
    edges = backfill_edges(episodes, facts, rules)
    repeats = 3 if quick else 5

    def first() -> None:
        directory = base / "first"
        shutil.rmtree(directory, ignore_errors=True)
        store = GraphStore(directory, WarningLog())
        store.add_many(edges)
        store.flush()
        store.close()

    def raw_first() -> None:
        directory = base / "raw"
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir()
        fd = os.open(directory / LOG_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            for edge in edges:
                os.write(fd, (json.dumps(edge.to_dict(), separators=(",", ":")) + "\n").encode())
        finally:
            os.close(fd)
        doc = {"entries": [e.to_dict() for e in edges]}
        atomic_write_bytes(directory / INDEX_NAME, json.dumps(doc, indent=2).encode())

    ours = _median_s(first, repeats) / len(edges) * 1e6
    floor = _median_s(raw_first, repeats) / len(edges) * 1e6
    rows.append(_row(f"first backfill into the store, per edge ({len(edges)})", ours, "µs", floor,
                     "json.dumps+os.write per line + atomic index", "≤ 3×"))

    store = GraphStore(base / "first", WarningLog())
    again = _median_s(lambda: store.add_many(edges), repeats) / len(edges) * 1e6
    ids = _median_s(lambda: [edge_id(e.source, e.target, e.type) for e in edges],
                    repeats) / len(edges) * 1e6
    rows.append(_row("second backfill (no-op), per edge", again, "µs", ids,
                     "SHA-256 edge ids of the same edges", "≤ 5×"))
    store.close()

    n_big = 4_000 if quick else 20_000
    big = _big_graph(n_big)
    big_dir = base / "big"
    store = GraphStore(big_dir, WarningLog())
    store.add_many(big)
    store.close()
    raw_index = (big_dir / INDEX_NAME).read_bytes()
    load = _median_s(lambda: GraphStore(big_dir, WarningLog(), read_only=True), repeats)
    parse = _median_s(lambda: json.loads(raw_index), repeats)
    rows.append(_row(f"open {n_big} edges from the index", load * 1e3, "ms", parse * 1e3,
                     "json.loads of the index file", "≤ 4×"))

    def rebuild() -> None:
        GraphStore(big_dir, WarningLog(), read_only=True).rebuild()

    def raw_scan() -> None:
        with open(big_dir / LOG_NAME, "rb") as handle:
            for line in handle:
                json.loads(line)

    rebuilt = _median_s(rebuild, repeats) - load
    scan = _median_s(raw_scan, repeats)
    rows.append(_row(f"rebuild {n_big} edges from the log", rebuilt * 1e3, "ms", scan * 1e3,
                     "readline + json.loads per line", "≤ 6×"))

    index = GraphStore(big_dir, WarningLog(), read_only=True).index()
    adjacency: dict[str, list[str]] = {}
    for edge in big:
        adjacency.setdefault(edge.source, []).append(edge.target)
        adjacency.setdefault(edge.target, []).append(edge.source)
    files = sorted({e.target for e in big if e.type == "touched"})[:200]

    def plain_bfs(start: str) -> int:
        seen, frontier = {start}, [start]
        for _ in range(3):
            nxt = []
            for node in frontier:
                for far in adjacency.get(node, ()):
                    if far not in seen:
                        seen.add(far)
                        nxt.append(far)
            frontier = nxt
        return len(seen)

    known_t, walk_t, bfs_t = [], [], []
    for f in files:
        start = time.perf_counter()
        known_about_file(index, node_value(f))
        known_t.append(time.perf_counter() - start)
        start = time.perf_counter()
        walk(index, f, WalkOptions(depth=3, direction="either", max_nodes=2000))
        walk_t.append(time.perf_counter() - start)
        start = time.perf_counter()
        plain_bfs(f)
        bfs_t.append(time.perf_counter() - start)
    bfs = statistics.median(bfs_t) * 1e6
    rows.append(_row(f"known_about_file p50 ({n_big} edges)", statistics.median(known_t) * 1e6,
                     "µs", bfs, "plain dict BFS, depth 3", "—"))
    rows.append(_row(f"walk depth 3, either, p50 ({n_big} edges)", statistics.median(walk_t) * 1e6,
                     "µs", bfs, "plain dict BFS, depth 3", "≤ 20×"))
    return rows


def _daemon_rows(quick: bool) -> list[Row]:
    from slmactor.protocol.messages import (
        EpisodeAppend,
        EpisodeGet,
        EpisodeRecent,
        GraphBackfill,
        GraphFile,
        Ping,
    )
    from slmactor.testing import spawn_daemon, stop_quietly

    episodes, _facts, _rules = project(300)
    daemon = spawn_daemon(debug_hooks=False)
    rows: list[Row] = []
    try:
        with daemon.client(timeout=60) as client:
            for episode in episodes:
                client.ask(EpisodeAppend(episode=episode))
            start = time.perf_counter()
            result = client.ask(GraphBackfill(), timeout=120)
            first = time.perf_counter() - start
            start = time.perf_counter()
            ids = [e["id"] for e in client.ask(EpisodeRecent(n=0))["episodes"]]
            for episode_id in ids:
                client.ask(EpisodeGet(episode_id=episode_id))
            fetch = time.perf_counter() - start
            rows.append(_row(f"daemon: first backfill, 300 episodes → {result['edges']} edges",
                             first * 1e3, "ms", fetch * 1e3,
                             "client fetching the 300 episodes itself", "≤ 1.5×"))
            n = 200 if quick else 1000
            files = sorted({f for e in episodes for f in e["files_changed"]})
            asks, pings = [], []
            for i in range(n):
                start = time.perf_counter()
                client.ask(GraphFile(path=files[i % len(files)]))
                asks.append(time.perf_counter() - start)
                start = time.perf_counter()
                client.ask(Ping())
                pings.append(time.perf_counter() - start)
            rows.append(_row("daemon: graph.file round trip p50", _pct(asks, 0.5) * 1e6, "µs",
                             _pct(pings, 0.5) * 1e6, "ping round trip p50", "≤ 4×"))
            rows.append(_row("daemon: graph.file round trip p99", _pct(asks, 0.99) * 1e6, "µs",
                             _pct(pings, 0.99) * 1e6, "ping round trip p99", "—"))
    finally:
        stop_quietly(daemon)
    return rows


def run(quick: bool) -> list[Row]:
    base = Path(tempfile.mkdtemp(prefix="slmactor-bench-graph-", dir=os.environ.get("TMPDIR")))
    try:
        return [*_pure_rows(quick), *_store_rows(base, quick), *_daemon_rows(quick)]
    finally:
        shutil.rmtree(base, ignore_errors=True)
