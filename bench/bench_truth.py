"""Truth of what a model is told after a real history is imported.

For every project of `tests/fixtures/truth/projects.json` in the split (DEV by default,
`--heldout` for HELD-OUT, never tuned on), import its real transcripts as a new user would and render
every channel a model or `MEMORY.md` gets (`bench/truth/render.py`), then label every line true /
content-free / false-or-stale by the rules of `tests/fixtures/truth/README.md`
(`bench/truth/label.py`, which reads the transcripts itself and imports nothing of the product).

Prints, per split, per channel and per project: lines, and the shares false-or-stale, content-free,
true (targets: 0 false, ≤ 5 % content-free); `--examples` every false or content-free line with its
rule id and the transcript evidence.

    .venv/bin/python -m bench truth [--heldout] [--examples] [--project KEY ...]
        [--corpus DIR] [--mirror-root DIR] [--save DIR] [--renders DIR] [--json-out FILE]

`--save DIR` keeps each project's rendered items (`DIR/<project>.jsonl`); `--renders DIR` labels
those instead of rendering again (to work on the labeller without re-importing). The corpus
defaults to `$SLMACTOR_REAL_CORPUS` (`bench/fetch_real_sessions.py` makes it); the repositories'
mirrors to `$SLMACTOR_MIRROR_ROOT`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bench.fetch_real_sessions import default_corpus
from bench.truth.evidence import Verdict
from bench.truth.history import History, hook_probes, read_history, task_text
from bench.truth.label import label
from bench.truth.projects import (
    Project,
    default_mirror_root,
    load_projects,
    mirror_gitdir,
    tree_paths,
)
from bench.truth.render import CHANNELS, Item, Probe
from bench.truth.shell import gitignores

Row = dict[str, Any]
LABELS = ("false", "content_free", "true")


def _safe(key: str) -> str:
    return key.replace("/", "__")


def history_of(project: Project, corpus: Path, mirror_root: Path | None) -> History:
    tree = tree_paths(project, mirror_root)
    gitdir = mirror_gitdir(mirror_root, project.repo)
    ignores = gitignores(gitdir, project.tree_commit, tree) if gitdir is not None and tree else []
    return read_history(project.key, project.harness, project.files(corpus), tree, ignores)


def items_of(project: Project, history: History, corpus: Path, mirror_root: Path | None, renders: Path | None,
             save: Path | None) -> list[Item]:
    cached = renders / f"{_safe(project.key)}.jsonl" if renders is not None else None
    if cached is not None and cached.is_file():
        rows = [json.loads(line) for line in cached.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [Item(r["project"], r["split"], r["channel"], r["text"], r.get("meta") or {}) for r in rows]
    from bench.truth.render import render_project

    probes = [Probe(kind, call.tool, call.args, call.result, session.session_id, call.seq, call.status)
              for kind, session, _c, call in hook_probes(history)]
    with tempfile.TemporaryDirectory(prefix="truth-work-") as work:
        items, info = render_project(project, project.files(corpus), Path(work), mirror_root, task_text(history),
                                     probes)
    print(f"#   {project.key}: imported {info.get('import', {}).get('sessions', '?')} sessions, "
          f"{len(items)} lines", file=sys.stderr, flush=True)
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
        (save / f"{_safe(project.key)}.jsonl").write_text(
            "".join(json.dumps(i.as_json(), ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    return items


def _shares(counts: Counter[str]) -> str:
    total = sum(counts[label] for label in LABELS)
    if not total:
        return f"{0:>6}        -        -        -"
    return f"{total:>6}" + "".join(f"{100 * counts[label] / total:>8.1f}%" for label in LABELS)


def report(labelled: list[tuple[Item, Verdict]], split: str, examples: bool) -> list[Row]:
    """Print the tables; the rows for `python -m bench`."""
    overall: Counter[str] = Counter()
    by_channel: dict[str, Counter[str]] = defaultdict(Counter)
    by_project: dict[str, Counter[str]] = defaultdict(Counter)
    by_rule: Counter[tuple[str, str]] = Counter()
    skipped: Counter[str] = Counter()
    for item, verdict in labelled:
        if verdict.label == "structure":
            skipped[item.channel] += 1
            continue
        overall[verdict.label] += 1
        by_channel[item.channel][verdict.label] += 1
        by_project[item.project][verdict.label] += 1
        if verdict.label != "true":
            by_rule[(verdict.label, verdict.rule)] += 1
    head = f"{'':<58}{'lines':>6}{'false':>9}{'no-cont.':>9}{'true':>9}"
    print(f"\n== truth, {split.upper()}: {len(by_project)} projects ==")
    print(head)
    print(f"{'all':<58}{_shares(overall)}")
    print("-- per channel")
    for channel in CHANNELS:
        if channel in by_channel:
            print(f"  {channel:<56}{_shares(by_channel[channel])}")
    print("-- per project")
    for project in sorted(by_project):
        print(f"  {project:<56}{_shares(by_project[project])}")
    print("-- false / content-free by rule")
    for (lab, rule), n in by_rule.most_common():
        print(f"  {lab:<13}{rule:<40}{n:>6}")
    print(f"-- headings and structure lines, not labelled: {sum(skipped.values())}")
    if examples:
        print("-- examples")
        for item, verdict in labelled:
            if verdict.label in ("false", "content_free"):
                print(f"[{verdict.label} {verdict.rule}] {item.project} {item.channel}: {item.text[:400]}")
                if verdict.evidence:
                    print(f"    evidence: {verdict.evidence[:600]}")
    total = sum(overall[label] for label in LABELS)

    def share(label: str) -> float:
        return round(100 * overall[label] / total, 1) if total else 0.0

    return [{"name": f"{split}: lines told ({len(by_project)} projects)", "value": total, "unit": "lines"},
            {"name": f"{split}: false or stale", "value": share("false"), "unit": "%",
             "target": f"0 ({overall['false']} lines)"},
            {"name": f"{split}: content-free", "value": share("content_free"), "unit": "%",
             "target": f"≤ 5 % ({overall['content_free']} lines)"},
            {"name": f"{split}: true", "value": share("true"), "unit": "%", "target": "the rest"}]


def run_args(quick: bool, argv: list[str]) -> list[Row]:
    parser = argparse.ArgumentParser(prog="python -m bench truth")
    parser.add_argument("--heldout", action="store_true", help="measure HELD-OUT (never tuned on)")
    parser.add_argument("--examples", action="store_true", help="print every false and content-free line")
    parser.add_argument("--project", action="append", default=[], help="only this project (harness/owner/repo)")
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--mirror-root", type=Path, default=default_mirror_root())
    parser.add_argument("--save", type=Path, help="keep each project's rendered lines in this directory")
    parser.add_argument("--renders", type=Path, help="label the lines saved here instead of rendering")
    parser.add_argument("--json-out", type=Path, help="write every labelled line as JSON lines here")
    parser.add_argument("--labels-out", type=Path,
                        help="write the committed fixture's form: per project, each line's rule by its hash")
    args = parser.parse_args(argv)
    split = "heldout" if args.heldout else "dev"
    if not args.corpus.is_dir():
        raise SystemExit(f"bench truth: no corpus at {args.corpus}; make it with `python bench/fetch_real_sessions.py "
                         f"--target {args.corpus}` or point SLMACTOR_REAL_CORPUS at it")
    if args.mirror_root is None:
        print("bench truth: no $SLMACTOR_MIRROR_ROOT / --mirror-root: project dirs stay empty and paths are not "
              "checked against the project trees", file=sys.stderr)
    projects = [p for p in load_projects() if p.split == split and (not args.project or p.key in args.project)]
    labelled: list[tuple[Item, Verdict]] = []
    for n, project in enumerate(projects, 1):
        started = time.monotonic()
        print(f"# truth {split} {n}/{len(projects)} {project.key}", file=sys.stderr, flush=True)
        history = history_of(project, args.corpus, args.mirror_root)
        items = items_of(project, history, args.corpus, args.mirror_root, args.renders, args.save)
        labelled += [(item, label(item, history)) for item in items]
        print(f"#   {time.monotonic() - started:.1f}s", file=sys.stderr, flush=True)
    if args.json_out is not None:
        with args.json_out.open("w", encoding="utf-8") as out:
            for item, verdict in labelled:
                out.write(json.dumps({**item.as_json(), "label": verdict.label, "rule": verdict.rule,
                                      "evidence": verdict.evidence}, ensure_ascii=False) + "\n")
    if args.labels_out is not None:
        write_labels(labelled, args.labels_out)
    return report(labelled, split, args.examples)


def write_labels(labelled: list[tuple[Item, Verdict]], path: Path) -> None:
    """`tests/fixtures/truth/dev_labels.jsonl`: per project, each distinct line's rule id (the label is
    its first letter: F false, C content-free, T true) keyed by the first 12 hex of the line's sha256
    (the lines quote others' transcripts; `--save` re-creates them)."""
    rules: dict[str, dict[str, str]] = defaultdict(dict)
    for item, verdict in labelled:
        if verdict.label != "structure":
            rules[item.project][hashlib.sha256(item.text.encode("utf-8")).hexdigest()[:12]] = verdict.rule
    with path.open("w", encoding="utf-8") as out:
        for project in sorted(rules):
            out.write(json.dumps({"project": project, "rules": dict(sorted(rules[project].items()))}) + "\n")


def run(quick: bool) -> list[Row]:
    return run_args(quick, [])


if __name__ == "__main__":
    for row in run_args(False, sys.argv[1:]):
        print(json.dumps(row))
