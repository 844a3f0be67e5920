"""Episodic recall speed: slmactor's BM25F index next to bm25s on the same corpus and queries.

Corpus (fixed seed 42): synthetic episodes with a 10–30-word
Zipf task text, a 0–20-word summary, 1–6 paths, 2–8 tools, 1–4 tags, a language, 0–2 failures and
a time within the last year. Queries (seed 7): 4–12 Zipf words, half with a focus path, 30 % with
error words. Sizes 300 (the default cap), 1k, 10k and 100k.

Measured per size, in this process: index build time, RSS growth while building, and recall
latency p50/p99 over the queries. slmactor runs the whole S-3.7 pipeline (filters, coverage gate,
absolute floor, recency, success, relative floor, top 3) in its default mode; bm25s runs plain
BM25 over the concatenated fields (tokenise the query + retrieve top 3) — the speed anchor.

Targets: 300 episodes p50 ≤ 1 ms; 100k p50 ≤ 1.5× bm25s and p99 ≤ 10 ms.

    .venv/bin/python -m bench recall [--quick]      # quick: 300 / 1k / 10k only
"""

from __future__ import annotations

import gc
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import psutil

from slmactor.logic.recall.episode import IndexEntry
from slmactor.logic.recall.index import EpisodeIndex, RecallQuery

NOW = 1_800_000_000.0
DAY = 86_400.0
COMMON = ["fix", "add", "update", "test", "parser", "cache", "build", "error", "config", "client", "server", "handler", "request", "response", "session", "token", "user", "file", "path", "module", "import", "export", "release", "docs", "lint", "type", "refactor", "remove", "rename", "move", "retry", "timeout", "network", "database", "query", "index", "schema"]
ERRORS = ["TypeError", "KeyError", "timeout", "segfault", "ImportError", "assertion", "ENOENT"]
TOOLS = ["bash", "ws_edit", "ws_read", "ws_grep", "ws_write", "read", "edit", "run_command",
         "ws_glob", "ws_list", "ws_patch", "shell"]
LANGS = ["python", "go", "typescript", "rust", ""]


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    syllables = ["ka", "lo", "mi", "ren", "tor", "vex", "qua", "zen", "pli", "dro", "sna", "fu",
                 "gar", "hel", "jin", "wob", "yur", "cix"]
    words = list(COMMON)
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class _Zipf:
    def __init__(self, rng: random.Random, words: list[str], s: float = 1.1) -> None:
        self.rng = rng
        self.words = words
        weights = [1.0 / (rank + 1) ** s for rank in range(len(words))]
        total = 0.0
        self.cumulative: list[float] = []
        for w in weights:
            total += w
            self.cumulative.append(total)

    def draw(self, k: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cumulative, k=k)


def _paths(rng: random.Random, words: list[str], count: int) -> list[str]:
    dirs = ["src", "pkg", "lib", "tests", "internal", "cmd", "app", "docs"]
    exts = ["py", "go", "ts", "rs", "md", "json"]
    return [f"{rng.choice(dirs)}/{rng.choice(words[:400])}/{rng.choice(words)}.{rng.choice(exts)}"
            for _ in range(count)]


def corpus(n: int, seed: int = 42) -> list[IndexEntry]:
    rng = random.Random(seed)
    words = _vocabulary(rng, 20_000)
    zipf = _Zipf(rng, words)
    paths = _paths(rng, words, max(200, n // 5))
    return [
        IndexEntry(
            id=f"ep_{i:08d}", at=NOW - rng.uniform(0, 365) * DAY, offset=0,
            query=" ".join(zipf.draw(rng.randint(10, 30))),
            summary=" ".join(zipf.draw(rng.randint(0, 20))),
            files=tuple(rng.sample(paths, rng.randint(1, 6))),
            tools=tuple(rng.sample(TOOLS, rng.randint(2, 8))),
            tags=tuple(zipf.draw(rng.randint(1, 4))),
            language=rng.choice(LANGS), success=rng.random() < 0.6,
            failures=rng.choice((0, 0, 1, 2)),
        )
        for i in range(n)
    ]


def queries(entries: list[IndexEntry], count: int, seed: int = 7) -> list[RecallQuery]:
    rng = random.Random(seed)
    words = _vocabulary(random.Random(42), 20_000)
    zipf = _Zipf(rng, words)
    out = []
    for _ in range(count):
        text = zipf.draw(rng.randint(4, 12))
        if rng.random() < 0.3:
            text.append(rng.choice(ERRORS))
        files = (rng.choice(rng.choice(entries).files),) if rng.random() < 0.5 else ()
        out.append(RecallQuery(text=" ".join(text), files=files, n=3))
    return out


def _rss() -> int:
    gc.collect()
    return int(psutil.Process().memory_info().rss)


def _latencies(fn: Callable[[RecallQuery], object], qs: list[RecallQuery]) -> tuple[float, float]:
    for q in qs[:20]:
        fn(q)  # warm-up
    times = []
    for q in qs:
        t0 = time.perf_counter()
        fn(q)
        times.append(time.perf_counter() - t0)
    times.sort()
    return statistics.median(times) * 1e3, times[int(0.99 * (len(times) - 1))] * 1e3


def measure(n: int, n_queries: int) -> dict[str, Any]:
    entries = corpus(n)
    qs = queries(entries, n_queries)
    rss0 = _rss()
    t0 = time.perf_counter()
    index = EpisodeIndex()
    index.add_many(entries)
    build = time.perf_counter() - t0
    rss_ours = _rss() - rss0
    p50, p99 = _latencies(lambda q: index.recall(q, NOW), qs)
    row: dict[str, Any] = {"n": n, "build_s": build, "rss_mb": rss_ours / 2**20,
                           "p50_ms": p50, "p99_ms": p99}
    try:
        import bm25s
    except ImportError:  # pragma: no cover - bm25s is a bench extra
        return row
    texts = [f"{e.query} {e.summary} {' '.join(e.files)} {' '.join(e.tools)} {' '.join(e.tags)} "
             f"{e.language}" for e in entries]
    rss1 = _rss()
    t0 = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False),
                    show_progress=False)
    row["bm25s_build_s"] = time.perf_counter() - t0
    row["bm25s_rss_mb"] = (_rss() - rss1) / 2**20

    def bm25s_query(q: RecallQuery) -> object:
        tokens = bm25s.tokenize([q.text + " " + " ".join(q.files)], stopwords="en",
                                show_progress=False)
        return retriever.retrieve(tokens, k=3, show_progress=False)

    row["bm25s_p50_ms"], row["bm25s_p99_ms"] = _latencies(bm25s_query, qs)
    return row


def measure_store(n: int) -> dict[str, float]:
    """Open times of an on-disk store of n episodes: from its index, and rebuilt from the log."""
    import tempfile
    from pathlib import Path

    from slmactor.logic.recall.episode import Episode
    from slmactor.stores.base.warnings import WarningLog
    from slmactor.stores.episodes import INDEX_NAME, EpisodeStore

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "memory"
        store = EpisodeStore(directory, WarningLog(), now=lambda: NOW, cap=-1, max_age_days=-1)
        for e in corpus(n):
            store.append(Episode(query=e.query, summary=e.summary, at=e.at,
                                 files_changed=e.files, tools_used=e.tools, tags=e.tags,
                                 language=e.language, success=e.success))
        store.close()
        t0 = time.perf_counter()
        EpisodeStore(directory, WarningLog(), now=lambda: NOW, cap=-1, max_age_days=-1)
        from_index = time.perf_counter() - t0
        (directory / INDEX_NAME).unlink()
        t0 = time.perf_counter()
        EpisodeStore(directory, WarningLog(), now=lambda: NOW, cap=-1, max_age_days=-1)
        from_log = time.perf_counter() - t0
    return {"open_index_s": from_index, "open_log_s": from_log}


def measure_daemon(n: int, n_queries: int) -> dict[str, float]:
    """Recall asked through a real daemon and client (ipc), next to a ping round trip."""
    from slmactor.logic.recall.episode import Episode
    from slmactor.protocol.messages import EpisodeAppend, MemoryRecall, Ping
    from slmactor.testing import spawn_daemon, stop_quietly

    daemon = spawn_daemon(debug_hooks=False)
    try:
        with daemon.client() as client:
            for e in corpus(n):
                client.ask(EpisodeAppend(episode=Episode(
                    query=e.query, summary=e.summary, at=e.at, files_changed=e.files,
                    tools_used=e.tools, tags=e.tags, language=e.language,
                    success=e.success).to_dict()))
            qs = queries(corpus(n), n_queries)
            ping_p50, ping_p99 = _latencies(lambda q: client.ask(Ping()), qs)
            p50, p99 = _latencies(
                lambda q: client.ask(MemoryRecall(query=q.text, files=list(q.files), n=3)), qs)
    finally:
        stop_quietly(daemon)
    return {"ask_p50_ms": p50, "ask_p99_ms": p99, "ping_p50_ms": ping_p50,
            "ping_p99_ms": ping_p99}


def run(quick: bool) -> list[dict[str, Any]]:
    sizes = [300, 1_000, 10_000] if quick else [300, 1_000, 10_000, 100_000]
    rows: list[dict[str, Any]] = []
    d = measure_daemon(300, 200 if quick else 1000)
    rows.append({"name": "recall ask p50 @300 (daemon)", "value": d["ask_p50_ms"], "unit": "ms",
                 "floor": d["ping_p50_ms"], "floor_name": "ping ask p50",
                 "ratio": d["ask_p50_ms"] / d["ping_p50_ms"], "target": ""})
    rows.append({"name": "recall ask p99 @300 (daemon)", "value": d["ask_p99_ms"], "unit": "ms",
                 "floor": d["ping_p99_ms"], "floor_name": "ping ask p99",
                 "ratio": d["ask_p99_ms"] / d["ping_p99_ms"], "target": ""})
    for n in ([1_000] if quick else [10_000]):
        st = measure_store(n)
        rows.append({"name": f"store open from index @{n}", "value": st["open_index_s"],
                     "unit": "s"})
        rows.append({"name": f"store rebuild from log @{n}", "value": st["open_log_s"],
                     "unit": "s"})
    for n in sizes:
        m = measure(n, 300 if quick else 1000)
        anchor = m.get("bm25s_p50_ms")
        target = "≤ 1 ms" if n == 300 else "≤ 1.5× bm25s" if n == 100_000 else ""
        rows.append({"name": f"recall p50 @{n}", "value": m["p50_ms"], "unit": "ms",
                     "floor": anchor, "floor_name": "bm25s p50",
                     "ratio": m["p50_ms"] / anchor if anchor else None, "target": target})
        rows.append({"name": f"recall p99 @{n}", "value": m["p99_ms"], "unit": "ms",
                     "floor": m.get("bm25s_p99_ms"), "floor_name": "bm25s p99",
                     "ratio": m["p99_ms"] / m["bm25s_p99_ms"] if m.get("bm25s_p99_ms") else None,
                     "target": "≤ 10 ms" if n == 100_000 else ""})
        rows.append({"name": f"index build @{n}", "value": m["build_s"], "unit": "s",
                     "floor": m.get("bm25s_build_s"), "floor_name": "bm25s build",
                     "ratio": m["build_s"] / m["bm25s_build_s"] if m.get("bm25s_build_s") else None})
        rows.append({"name": f"index RSS @{n}", "value": m["rss_mb"], "unit": "MB",
                     "floor": m.get("bm25s_rss_mb"), "floor_name": "bm25s RSS",
                     "ratio": None})
        print(f"# {m}", file=sys.stderr, flush=True)
    return rows


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(r)
