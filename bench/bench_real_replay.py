"""Replay with learning over the labelled real failures, in session order, per project.

Over `tests/fixtures/real_failures/dev.jsonl` (`--heldout`: `heldout.jsonl`, never tuned on;
`--heldout2`: `heldout2.jsonl`, measured once, a second tuning set since),
each project (repository) starts with a fresh rule book (the shipped rules only) and meets its
failures in session order (sessions in the order the file first lists them, calls by `seq`).
For each failure the loop answers as the daemon's rules actor would: a transform rule that
applies to the call rewrites it; else a learned typed repair whose
precondition fits the call (`typed_repairs.fits`) first — a *rewrite* when the repair is exact
and has succeeded every time, at least 3 times (`typed_repairs.REWRITE_MIN_SUCCESSES`), else advice naming the fix
(`typed_repairs.advice`) — then any rule `suggest.lookup` finds (its guidance in the harness's
words, `hooks.advice.localize`). Then it learns from the row's `fix` (`typed_repairs.infer`),
and the rule that answered is told whether it was right (Beta outcomes).

Scored: the failures whose `fix_source` is `call` or `memory`, that have a recorded `fix`, and
whose kind already failed earlier in that project (rows without a recorded fix are counted and
left out: nothing says what would have been right). Right when

* the rewritten call equals the fix (same tool; arguments equal, whitespace of strings
  collapsed), or
* the advice names the fix's *distinguishing part* (`facets` below), every facet of it:
  a changed tool's name (the new tool's content arguments are then the model's work, not part
  of it); each changed setting's key (a count set to 1 — mini-swe-agent's
  `blocks` — is named by "exactly one"); a changed path's new value; for a shell command, each
  word run the fix inserted or replaced (`difflib` over the words); for a fix that resends the
  same call, a read tool of the harness (the precondition); for an edit resent to the same file
  with other text only (the labels' "read then resend": the text is the model's, read anew), a
  read tool of the harness too.

A **wrong rewrite** is a rewrite that differs from the recorded fix (target 0), or a rewrite
of a call whose session never got past it.

**Memory-derivable repeats** (the issue's measure, decided from the labels alone — before, and
whatever, the loop learned): a failure with a recorded fix is memory-derivable when an earlier
failure of the same project (any earlier session, or earlier in this one), of the same label
kind, had a fix with the same distinguishing part (`derivable_key`: the kind and the `facets`
below, each naming folded to its blanks and case). A fix that is the failed call again (what got
past it happened between the calls) or whose distinguishing part is empty (it only removed
words) is never memory-derivable. They are scored like the rest (a rewrite equal to the fix, or
advice naming every facet); the figure is printed beside the share of them the labels call
`fix_source=memory` (the kinds whose fix is project memory: a runtime, an interpreter, a server,
a policy, a quota). Before any answer, each row is checked against the project's earlier rows,
so the measure does not depend on what the replay learned.

The loop here also holds the project's **environment facts** (`logic/evolve/environment.py`),
as the rules actor does: a call one of them may rewrite before it runs (exact: this command
failed here and the rewrite succeeded right after it; or proven: >= 3 times, never failed) is
answered with the rewrite; else a fact that speaks of the call names its fix; then the rules.

Answers, learning and the distinguishing part come from the product's replay engine
(`slmactor/logic/loop/histories`, `slmactor/cli/loop/histories.py`): `ProductMemory` answers as
the rules actor and the hooks do (environment facts, pre-flight, `evolve.on_failure` worded for
the harness's model, `evolve.resolved` learning), so this figure and the user's are made by the
same code; what stays here is the labels' scoring.

**`--histories`** is the user's replay itself: the split's fetched transcripts (`--corpus`, one
folder per repository) read by the harness rooms and replayed by the engine — exactly
`slmactor metrics replay <those folders> --learn` (tests/bench/test_one_replay.py checks that
both print the same figures) — scored structurally, not by labels (docs/LOOP.md, "Replay").

    .venv/bin/python -m bench real_replay [--heldout | --heldout2] [--corpus DIR] [--every] [--misses]
    .venv/bin/python -m bench real_replay --histories [--heldout | --heldout2 | --tuned] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bench import real_census
from bench.bench_real import add_split_options, load_split, split_of
from slmactor import harnesses
from slmactor.cli.loop.histories import ProductMemory, Project
from slmactor.cli.loop.histories import named_paths as _named_paths
from slmactor.logic.evolve import typed_repairs as tr
from slmactor.logic.loop.histories.engine import Step, Told
from slmactor.logic.loop.histories.facets import facets as _facets
from slmactor.logic.loop.histories.facets import names_fix, same_call

Row = dict[str, Any]
_FMT = {"mini-swe-agent": "mini_swe_agent", "swe-agent": "sweagent"}


def call_of(tool: str, args: object) -> tr.Call:
    """The call as the daemon reads it: its room's record, in the shared words."""
    call = tr.Call.of(harnesses.tool_call(tool, args if isinstance(args, dict) else {}))
    return call if call.family else dataclasses.replace(call, family=tool.lower())


MEMORY = ProductMemory()


def _read_tools(tool: str) -> list[str]:
    return MEMORY.read_tools(tool)


def facets(failed: tr.Call, fix: tr.Call) -> list[list[str]]:
    """The fix's distinguishing part (the engine's `facets`, with the harness's read tools)."""
    return _facets(failed, fix, _read_tools(failed.tool))


def named_paths(tool: str, args: object) -> list[str]:
    """The paths a call named: its path argument, and the path-like words of its command."""
    return _named_paths(call_of(tool, args))


class KnownPaths:
    """Paths known to exist when a failure happens, per project: with the fetched transcripts
    (`--corpus DIR`, else `$SLMACTOR_REAL_CORPUS`), those the successful calls of the project's
    earlier sessions and of this session before the failure named; without them, only the
    recorded fixes of earlier failures (far fewer)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._files: dict[Path, list[real_census.Session]] = {}

    def session(self, row: Row) -> list[tuple[int, list[str]]]:
        """The successful calls of the row's session, as (seq, paths named), in order."""
        if self.root is None:
            return []
        source = row["source"]
        path = self.root / str(source["harness"]) / str(source["repo"]).replace("/", "__") / str(source["path"])
        if path not in self._files:
            reader = real_census.READERS.get(str(source["harness"]))
            try:
                self._files[path] = list(reader(path)) if reader and path.is_file() else []
            except (ValueError, OSError, AttributeError, TypeError):
                self._files[path] = []
        for session in self._files[path]:
            if str(session.session_id) == str(row["session"]):
                return [(c.seq, named_paths(c.tool, c.args)) for c in session.calls if not c.failed]
        return []


def corpus_root(given: str | None) -> Path | None:
    """Where the fetched transcripts are, if anywhere: `--corpus`, else `$SLMACTOR_REAL_CORPUS`."""
    if given:
        return Path(given)
    env = os.environ.get("SLMACTOR_REAL_CORPUS")
    return Path(env) if env and Path(env).is_dir() else None


def session_order(rows: list[Row]) -> dict[str, list[Row]]:
    by_repo: dict[str, list[Row]] = defaultdict(list)
    first: dict[tuple[str, str], int] = {}
    for i, row in enumerate(rows):
        repo = str(row["source"]["repo"])
        first.setdefault((repo, str(row["session"])), i)
        by_repo[repo].append(row)
    for repo, items in by_repo.items():
        items.sort(key=lambda r: (first[(repo, str(r["session"]))], int(r.get("seq") or 0)))
    return by_repo


def answer(state: Project, row: Row, fp: Any, failed: tr.Call, known: list[str] | None = None,
           now: float = 0.0) -> Told:
    """What memory would have done at this failure: a rewrite before the call runs (an
    environment fact's or a learned rule's pre-flight), else the answer the hook hands the model
    after it (`ProductMemory`: the same functions the rules actor and the hook answer with)."""
    fmt = _FMT.get(str(row["source"]["harness"]), str(row["source"]["harness"]))
    before = MEMORY.before(state, fmt, failed)
    if before is not None and before.rewrite is not None:
        return before
    step = Step(failed, False, str(row.get("error") or ""))
    return MEMORY.after(state, fmt, fp, step, known or [], now)


def derivable_key(kind: str, failed: tr.Call, fix: tr.Call) -> str:
    """What makes a fix derivable from memory: the failure's kind and the fix's distinguishing
    part (`facets`), as one key; "" when the fix has none a memory could hold (the same call
    again — what got past it happened between the calls — or a fix that only removed words)."""
    if same_call(failed, fix):
        return ""
    parts = facets(failed, fix)
    if not parts:
        return ""
    return json.dumps([kind, sorted(sorted(tr.norm_command(n).lower() for n in facet)
                                    for facet in parts)])


def replay(rows: list[Row], paths: KnownPaths | None = None, misses: bool = False) -> dict[str, Any]:
    """Replay `rows` (see the module docstring); `misses` prints each memory-derivable repeat
    that was not answered right, one JSON line on stderr."""
    paths = paths or KnownPaths(None)
    scored = right = rewrites = wrong = unscorable = learned = 0
    by_kind: Counter[str] = Counter()
    right_kind: Counter[str] = Counter()
    # Memory-derivable repeats (decided from the labels alone, before and whatever the loop
    # learned): an earlier failure of the project, of the same kind, had a fix with the same
    # distinguishing part. `derivable[kind]`, `derivable_right[kind]`; `memory_*` the subset the
    # labels call fix_source=memory.
    derivable: Counter[str] = Counter()
    derivable_right: Counter[str] = Counter()
    memory_derivable = memory_right = 0
    examples: list[dict[str, Any]] = []
    now = 1_800_000_000.0
    for items in session_order(rows).values():
        state = MEMORY.start()
        seen: set[str] = set()
        fixes_seen: set[str] = set()
        project_paths: list[str] = []  # known from sessions already past, and recorded fixes
        current: tuple[str, list[tuple[int, list[str]]]] = ("", [])
        for row in items:
            now += 60.0
            if current[0] != str(row["session"]):
                project_paths.extend(p for _, named in current[1] for p in named)
                current = (str(row["session"]), paths.session(row))
            seq = int(row.get("seq") or 0)
            known = project_paths + [p for s, named in current[1] if s < seq for p in named]
            fp = MEMORY.fingerprint(Step(call_of(str(row.get("tool") or ""), row.get("args")), False,
                                         str(row.get("error") or "")))
            kind = str(row["kind"])
            repeat = kind in seen
            seen.add(kind)
            failed = call_of(str(row.get("tool") or ""), row.get("args"))
            fix_row = row.get("fix")
            fix = call_of(str(fix_row["tool"]), fix_row.get("args")) if fix_row else None
            key = derivable_key(kind, failed, fix) if fix is not None and not row.get("benign") \
                else ""
            is_derivable = bool(key) and key in fixes_seen
            if key:
                fixes_seen.add(key)
            if is_derivable:
                derivable[kind] += 1
                memory_derivable += row.get("fix_source") == "memory"
            if fp.benign or fp.is_zero:
                continue
            got = answer(state, row, fp, failed, known, now)
            in_scope = repeat and row.get("fix_source") in ("call", "memory")
            ok = False
            if got.rewrite is not None:
                rewrites += 1
                ok = fix is not None and same_call(got.rewrite, fix)
                wrong += not ok
            elif fix is not None and got.text:
                ok = names_fix(got.text, facets(failed, fix))
            if is_derivable:
                derivable_right[kind] += ok
                memory_right += ok and row.get("fix_source") == "memory"
                if misses and not ok:
                    print(json.dumps({"miss": kind, "src": row.get("fix_source"),
                                      "call": failed.command or [failed.tool, dict(failed.args)],
                                      "fix": fix.command or [fix.tool, dict(fix.args)] if fix else None,
                                      "err": str(row.get("error"))[:160], "advice": got.text[:200]},
                                     ensure_ascii=False)[:900], file=sys.stderr)
            if in_scope:
                if fix is None:
                    unscorable += 1
                else:
                    scored += 1
                    right += ok
                    by_kind[kind] += 1
                    right_kind[kind] += ok
                    if len(examples) < 400:
                        examples.append({"kind": kind, "ok": ok, "advice": got.text[:300],
                                         "rewrite": got.rewrite is not None,
                                         "call": [failed.tool, dict(failed.args)],
                                         "fix": [fix.tool, dict(fix.args)],
                                         "needs": facets(failed, fix)})
            if got.learned and got.by and fix is not None:
                MEMORY.observe(state, got, ok, now)
            if fix is not None and paths.root is None:
                project_paths.extend(named_paths(fix.tool, dict(fix.args)))
            run = f"{row['session']}#{row.get('seq')}"
            failed_step = Step(failed, False, str(row.get("error") or ""))
            if MEMORY.learn(state, fp, failed_step, Step(fix, True) if fix is not None else None, now, run):
                learned += 1
    return {"scored": scored, "right": right, "unscorable": unscorable, "rewrites": rewrites,
            "wrong": wrong, "learned": learned, "by_kind": by_kind, "right_kind": right_kind,
            "examples": examples, "derivable": derivable, "derivable_right": derivable_right,
            "memory_derivable": memory_derivable, "memory_right": memory_right}


def _pct(a: int, b: int) -> float:
    return 100.0 * a / b if b else 100.0


def rows_of_split(split: str, corpus: Path | None, every: bool) -> list[Row]:
    """The labelled failures to replay: the split's fixture, or with `every` each failed call of
    the split's fetched sessions, labelled by `bench/label_real.py` (the same rules)."""
    if not every:
        return load_split(split)
    if corpus is None:
        raise SystemExit("bench real_replay --every needs the fetched sessions (--corpus DIR)")
    from bench import label_real

    parts = ("dev", "heldout2") if split == "tuned" else (split,)
    return [row for part in parts for row in label_real.label_corpus(corpus, part)]


def run(quick: bool = False, split: str = "dev", corpus: Path | None = None,
        every: bool = False, misses: bool = False) -> list[dict[str, Any]]:
    name = f"{split} (every failure)" if every else split
    r = replay(rows_of_split(split, corpus, every), KnownPaths(corpus), misses=misses)
    where = (f"paths known from the whole sessions in {corpus}" if corpus is not None else
             "paths known from recorded fixes only (no --corpus / $SLMACTOR_REAL_CORPUS)")
    lines = [(f"## {name}: replay with learning, {r['scored']} repeats with a recorded fix "
             f"({r['unscorable']} more without one), {r['learned']} typed repairs learned; {where}"),
             f"{'kind':<22} {'n':>4} {'right':>6}"]
    for kind, n in r["by_kind"].most_common():
        lines.append(f"{kind:<22} {n:>4} {_pct(r['right_kind'][kind], n):>5.0f}%")
    d, dr = r["derivable"], r["derivable_right"]
    lines.append(f"memory-derivable repeats: {sum(d.values())}, right {sum(dr.values())}; "
                 f"of them fix_source=memory: {r['memory_derivable']}, right {r['memory_right']}")
    lines.append(f"{'kind':<22} {'n':>4} {'right':>6}")
    for kind, n in d.most_common():
        lines.append(f"{kind:<22} {n:>4} {_pct(dr[kind], n):>5.0f}%")
    print("\n".join(lines), file=sys.stderr)
    mode = "" if corpus is not None else ", fixes only"
    return [
        {"name": f"{name}: repeats repaired or advised with the fix{mode}", "unit": "%",
         "value": _pct(r["right"], r["scored"]), "floor": None, "ratio": None,
         "target": ">= 60 %", "n": r["scored"]},
        {"name": f"{name}: memory-derivable repeats right{mode}", "unit": "%",
         "value": _pct(sum(dr.values()), sum(d.values())), "floor": None, "ratio": None,
         "target": ">= 60 %", "n": sum(d.values())},
        {"name": f"{name}: of those, labels' fix_source=memory{mode}", "unit": "%",
         "value": _pct(r["memory_right"], r["memory_derivable"]), "floor": None, "ratio": None,
         "target": None, "n": r["memory_derivable"]},
        {"name": f"{name}: wrong rewrites", "unit": "calls", "value": r["wrong"], "floor": None,
         "ratio": None, "target": "0", "n": r["rewrites"]},
    ]


def split_folders(corpus: Path, split: str) -> list[Path]:
    """The fetched repositories of a split: `<corpus>/<harness>/<owner>__<repo>` for each
    repository whose manifest split is `split` (`tuned`: DEV and HELD-OUT-2)."""
    from bench import label_real

    wanted = {"dev", "heldout2"} if split == "tuned" else {split}
    repos = {(s["harness"], s["repo"].replace("/", "__", 1))
             for s in label_real.load_manifest()["sources"] if s["split"] in wanted}
    return [corpus / harness / repo for harness, repo in sorted(repos) if (corpus / harness / repo).is_dir()]


def histories(folders: list[Path], name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The user's replay over `folders` (`slmactor metrics replay FOLDERS --learn`): its `--json`
    figures, and this bench's rows of them."""
    from slmactor.cli.loop.histories import read
    from slmactor.logic.loop.histories.engine import replay as replay_histories
    from slmactor.logic.loop.histories.report import render, to_dict

    found, _tally = read(folders)
    result = replay_histories(found, MEMORY)
    print(f"## {name}: {len(folders)} repositories\n{render(result)}", file=sys.stderr)
    data = to_dict(result, failures=False)
    total = data["harnesses"]["all"]
    rows = [
        {"name": f"{name}: derivable repeats right (repaired or advice naming the fix)", "unit": "%",
         "value": 100.0 * (total["derivable_right_share"] or 0.0), "floor": None, "ratio": None,
         "target": ">= 60 %", "n": total["derivable"]},
        {"name": f"{name}: memory-derivable repeats right", "unit": "%",
         "value": 100.0 * (total["memory_derivable_right_share"] or 0.0), "floor": None,
         "ratio": None, "target": ">= 60 %", "n": total["memory_derivable"]},
        {"name": f"{name}: wrong rewrites", "unit": "calls", "value": total["wrong_rewrites"],
         "floor": None, "ratio": None, "target": "0", "n": total["failures"]},
        {"name": f"{name}: failed calls avoided per 100 calls", "unit": "calls",
         "value": total["failed_calls_avoided_per_100_calls"], "floor": None, "ratio": None,
         "target": None, "n": total["calls"]},
        {"name": f"{name}: model turns avoided per 100 calls", "unit": "turns",
         "value": total["model_turns_avoided_per_100_calls"], "floor": None, "ratio": None,
         "target": None, "n": total["calls"]},
    ]
    return data, rows


def run_args(quick: bool, argv: list[str]) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(prog="bench real_replay")
    add_split_options(parser)
    parser.add_argument("--examples", action="store_true", help="print each scored answer")
    parser.add_argument("--corpus", metavar="DIR", help="the fetched transcripts (whole sessions)")
    parser.add_argument("--misses", action="store_true",
                        help="print each memory-derivable repeat answered wrong (one JSON line each)")
    parser.add_argument("--every", action="store_true",
                        help="replay every failed call of the split's sessions, labelled by "
                             "bench/label_real.py, not only the fixture's selection")
    parser.add_argument("--histories", action="store_true",
                        help="the user's replay (metrics replay --learn) over the split's fetched "
                             "transcripts, scored from the calls, not the labels")
    parser.add_argument("--json", metavar="FILE", help="with --histories: write metrics replay's "
                                                       "--json figures to FILE")
    args = parser.parse_args(argv)
    corpus = corpus_root(args.corpus)
    split = split_of(args)
    if args.histories:
        if corpus is None:
            raise SystemExit("bench real_replay --histories needs the fetched sessions (--corpus DIR)")
        data, rows = histories(split_folders(corpus, split), f"{split} (histories)")
        if args.json:
            Path(args.json).write_text(json.dumps(data, indent=1, sort_keys=True))
        return rows
    if args.examples:
        for ex in replay(rows_of_split(split, corpus, args.every), KnownPaths(corpus))["examples"]:
            print(json.dumps(ex, ensure_ascii=False), file=sys.stderr)
    return run(quick, split=split, corpus=corpus, every=args.every, misses=args.misses)


if __name__ == "__main__":
    for out in run_args(False, sys.argv[1:]):
        print(json.dumps(out))
