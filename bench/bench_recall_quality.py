"""Recall quality on real task histories: the seed's literal gates against slmactor's default.

Data (real histories that ship on this machine, no network):

* `harfbuzz` — `/usr/share/doc/libharfbuzz0b/changelog.gz`, a `git log --stat` of HarfBuzz
  (14.6k commits with subject, body, date and the files each commit changed);
* `strace` — `/usr/share/doc/strace/changelog.gz`, a GNU ChangeLog (one entry per change: a
  summary line and `* file (function): ...` lines naming the files changed);
* `slmactor` — this repository's own `git log` (small; it grows while the project is built);
* any other git repository named in `SLMACTOR_BENCH_GIT` (`name=/path/to/repo-or-git-dir`,
  comma-separated; e.g. public Python projects such as pallets/click and psf/requests).

Protocol (docs/RECALL.md, "Two modes"): the last `TASKS` changes are new tasks, the
`EPISODES` changes before them are the episode store (query = subject, summary = body, files =
changed files, at = commit time). A past episode is relevant to a task when it changed one of the
same files. Tasks with no relevant episode are left out. Each task is recalled at its own time with
its subject only ("text") and with its subject plus its files as focus files ("text+files").

Measures per ranker: MRR of the first relevant hit (n = 10; 0 when none), precision of the top 3
(relevant share of what is returned, over tasks with a result) and the empty-result rate.
Rankers: `seed` (S-3 exactly), `default` (coverage over known terms, numbers as noise, plural
folding, acronym plurals, whole-path terms, floor 0.45, recency 45 d), `default-nofloor`,
`default-norecency`, `nogates` (seed tokenizer, no coverage gate, no floor, with recency) and
`bm25s` (plain BM25 over the concatenated text: the anchor).

    .venv/bin/python -m bench recall_quality        # or: .venv/bin/python bench/bench_recall_quality.py
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from slmactor.logic.recall.episode import IndexEntry
from slmactor.logic.recall.index import EpisodeIndex, RecallQuery
from slmactor.logic.recall.rank import RankOptions

HARFBUZZ = Path("/usr/share/doc/libharfbuzz0b/changelog.gz")
STRACE = Path("/usr/share/doc/strace/changelog.gz")
REPO = Path(__file__).resolve().parent.parent
EPISODES = 3600
TASKS = 400


@dataclass(frozen=True)
class Change:
    at: float
    subject: str
    body: str
    files: tuple[str, ...]


def _stat_path(raw: str) -> str:
    path = raw.strip()
    rename = re.match(r"^(.*)\{(.*) => (.*)\}(.*)$", path)
    if rename:
        path = rename.group(1) + rename.group(3) + rename.group(4)
    elif " => " in path:
        path = path.split(" => ", 1)[1]
    return path.replace("//", "/")


def parse_git_stat(text: str) -> list[Change]:
    """`git log --stat` text → changes, oldest first."""
    changes: list[Change] = []
    for block in re.split(r"^commit [0-9a-f]{40}.*$", text, flags=re.MULTILINE)[1:]:
        date = re.search(r"^Date:\s+(.+)$", block, flags=re.MULTILINE)
        if not date:
            continue
        try:
            at = datetime.strptime(date.group(1).strip(), "%a %b %d %H:%M:%S %Y %z").timestamp()
        except ValueError:
            continue
        message = [ln[4:] for ln in block.splitlines() if ln.startswith("    ")]
        files = tuple(
            _stat_path(m.group(1))
            for m in re.finditer(r"^ (\S.*?)\s+\|\s+(?:\d+|Bin)", block, flags=re.MULTILINE)
        )
        if not message or not files:
            continue
        changes.append(Change(at, message[0].strip(), "\n".join(message[1:]).strip(), files))
    changes.sort(key=lambda c: c.at)
    return changes


def parse_gnu_changelog(text: str) -> list[Change]:
    """GNU ChangeLog → one change per entry (summary line + `* file` lines), oldest first."""
    changes: list[Change] = []
    at = 0.0
    for chunk in re.split(r"\n\s*\n", text):
        lines = chunk.splitlines()
        if not lines:
            continue
        head = re.match(r"^(\d{4}-\d{2}-\d{2})\s", lines[0])
        if head:
            at = datetime.strptime(head.group(1), "%Y-%m-%d").replace(tzinfo=UTC).timestamp()
            lines = lines[1:]
        body = [ln.strip() for ln in lines if ln.strip()]
        if not body or body[0].startswith("*"):
            continue
        files: list[str] = []
        for ln in body:
            if ln.startswith("* "):
                names = re.split(r"[:(\[]", ln[2:], maxsplit=1)[0]
                files.extend(f.strip() for f in names.split(",") if f.strip())
        if files and at:
            changes.append(Change(at, body[0], "\n".join(body[1:]), tuple(files)))
    changes.sort(key=lambda c: c.at)  # stable: same-day entries keep file order (newest first)
    return changes


def own_history() -> list[Change]:
    return git_history(REPO)


def git_history(path: Path) -> list[Change]:
    """`git log --stat` of a work tree or a bare git directory, parsed."""
    where = ["--git-dir", str(path)] if (path / "HEAD").is_file() else ["-C", str(path)]
    out = subprocess.run(
        ["git", *where, "log", "--stat=200", "--date=default"],
        capture_output=True, text=True, check=False,
    ).stdout
    return parse_git_stat(out)


def other_histories() -> dict[str, Path]:
    """`SLMACTOR_BENCH_GIT=name=path,...` → {name: path}."""
    named: dict[str, Path] = {}
    for item in os.environ.get("SLMACTOR_BENCH_GIT", "").split(","):
        name, _, path = item.partition("=")
        if name.strip() and path.strip():
            named[name.strip()] = Path(path.strip())
    return named


def _same_file(a: str, b: str) -> bool:
    a, b = a.removeprefix(".../"), b.removeprefix(".../")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a) or (
        a.startswith("...") and b.endswith(a[3:])) or (b.startswith("...") and a.endswith(b[3:]))


def _relevant(task: Change, episode: Change) -> bool:
    return any(_same_file(a, b) for a in task.files for b in episode.files)


Ranker = Callable[[Change, bool], list[int]]


def _slm_ranker(episodes: Sequence[Change], options: RankOptions, **query: Any) -> Ranker:
    index = EpisodeIndex(options)
    index.add_many(
        IndexEntry(id=str(i), at=c.at, offset=0, query=c.subject, summary=c.body[:600],
                   files=c.files[:24])
        for i, c in enumerate(episodes)
    )

    def rank(task: Change, with_files: bool) -> list[int]:
        q = RecallQuery(text=task.subject, files=task.files[:24] if with_files else (), n=10,
                        **query)
        return [int(h.entry.id) for h in index.recall(q, task.at)]

    return rank


def _bm25s_ranker(episodes: Sequence[Change]) -> Ranker:
    import bm25s

    corpus = [f"{c.subject} {c.body[:600]} {' '.join(c.files)}" for c in episodes]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False),
                    show_progress=False)

    def rank(task: Change, with_files: bool) -> list[int]:
        text = task.subject + (" " + " ".join(task.files) if with_files else "")
        tokens = bm25s.tokenize([text], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        docs, scores = retriever.retrieve(tokens, k=min(10, len(corpus)), show_progress=False)
        return [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    return rank


def evaluate(changes: list[Change], n_episodes: int, n_tasks: int) -> list[dict[str, Any]]:
    tasks = changes[-n_tasks:]
    episodes = changes[-(n_tasks + n_episodes):-n_tasks]
    judged = [(t, {i for i, e in enumerate(episodes) if _relevant(t, e)}) for t in tasks]
    judged = [(t, rel) for t, rel in judged if rel]
    no_gates = replace(RankOptions.seed(), relative_floor=0.0)
    rankers: dict[str, Ranker] = {
        "seed": _slm_ranker(episodes, RankOptions.seed()),
        "default": _slm_ranker(episodes, RankOptions()),
        "default-nofloor": _slm_ranker(episodes, replace(RankOptions(), relative_floor=0.0)),
        "default-norecency": _slm_ranker(episodes, replace(RankOptions(), half_life_days=0.0)),
        "nogates": _slm_ranker(episodes, no_gates, min_coverage=-1.0),
    }
    try:
        rankers["bm25s"] = _bm25s_ranker(episodes)
    except ImportError:  # pragma: no cover - bm25s is a bench extra
        pass
    rows: list[dict[str, Any]] = []
    for name, ranker in rankers.items():
        for with_files in (False, True):
            rr = p3 = 0.0
            empty = nonempty = 0
            for task, relevant in judged:
                hits = ranker(task, with_files)
                if not hits:
                    empty += 1
                    continue
                nonempty += 1
                first = next((k for k, h in enumerate(hits) if h in relevant), None)
                rr += 0.0 if first is None else 1.0 / (first + 1)
                top = hits[:3]
                p3 += sum(h in relevant for h in top) / len(top)
            rows.append({
                "ranker": name, "query": "text+files" if with_files else "text",
                "tasks": len(judged), "episodes": len(episodes),
                "mrr": rr / len(judged) if judged else 0.0,
                "p_at_3": p3 / nonempty if nonempty else 0.0,
                "empty_rate": empty / len(judged) if judged else 0.0,
            })
    return rows


def datasets(quick: bool) -> dict[str, tuple[list[Change], int, int]]:
    out: dict[str, tuple[list[Change], int, int]] = {}
    scale = 4 if quick else 1
    if HARFBUZZ.exists():
        changes = parse_git_stat(gzip.decompress(HARFBUZZ.read_bytes()).decode("utf-8", "replace"))
        out["harfbuzz"] = (changes, EPISODES // scale, TASKS // scale)
    if STRACE.exists():
        changes = parse_gnu_changelog(
            gzip.decompress(STRACE.read_bytes()).decode("utf-8", "replace"))
        out["strace"] = (changes, EPISODES // scale, TASKS // scale)
    for name, path in other_histories().items():
        changes = git_history(path)
        if len(changes) >= EPISODES // scale + TASKS // scale:
            out[name] = (changes, EPISODES // scale, TASKS // scale)
        elif len(changes) >= 100:
            tasks = max(20, len(changes) // 10)
            out[name] = (changes, len(changes) - tasks, tasks)
    own = own_history()
    if len(own) >= 40:
        tasks = max(10, len(own) // 5)
        out["slmactor"] = (own, len(own) - tasks, tasks)
    return out


def run(quick: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for data, (changes, n_ep, n_tasks) in datasets(quick).items():
        for r in evaluate(changes, n_ep, n_tasks):
            label = f"{data} {r['ranker']} {r['query']}"
            rows.append({"name": f"{label} MRR", "value": r["mrr"], "unit": "",
                         "target": f"tasks={r['tasks']} episodes={r['episodes']}"})
            rows.append({"name": f"{label} P@3", "value": r["p_at_3"], "unit": ""})
            rows.append({"name": f"{label} empty", "value": r["empty_rate"], "unit": "share"})
    return rows


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    print(f"{'data':<9} {'ranker':<16} {'query':<10} {'tasks':>5} {'eps':>5} "
          f"{'MRR':>6} {'P@3':>6} {'empty':>6}")
    for data, (changes, n_ep, n_tasks) in datasets(quick).items():
        for r in evaluate(changes, n_ep, n_tasks):
            print(f"{data:<9} {r['ranker']:<16} {r['query']:<10} {r['tasks']:>5} "
                  f"{r['episodes']:>5} {r['mrr']:>6.3f} {r['p_at_3']:>6.3f} "
                  f"{r['empty_rate']:>6.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
