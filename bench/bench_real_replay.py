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

    .venv/bin/python -m bench real_replay [--heldout | --heldout2] [--corpus DIR] [--every] [--misses]
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import os
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bench import real_census
from bench.bench_real import add_split_options, fingerprint, head, load_split, split_of
from slmactor import harnesses
from slmactor.hooks.advice import shown_guidance
from slmactor.logic.evolve import environment as env
from slmactor.logic.evolve import path_hints
from slmactor.logic.evolve import typed_repairs as tr
from slmactor.logic.evolve.rule_seeds import seed_rules
from slmactor.logic.evolve.rules import Rule, RuleBook
from slmactor.logic.evolve.suggest import lookup
from slmactor.logic.evolve.transforms import apply_transform

Row = dict[str, Any]
_FMT = {"mini-swe-agent": "mini_swe_agent", "swe-agent": "sweagent"}


def call_of(tool: str, args: object) -> tr.Call:
    a = args if isinstance(args, dict) else {}
    return tr.Call(tool, a, harnesses.tool_family(tool) or tool.lower())


def _norm(value: object) -> object:
    if isinstance(value, str):
        return tr.norm_command(value)
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_norm(v) for v in value]
    return value


def same_call(a: tr.Call, b: tr.Call) -> bool:
    return a.tool == b.tool and _norm(dict(a.args)) == _norm(dict(b.args))


def facets(failed: tr.Call, fix: tr.Call) -> list[list[str]]:
    """The fix's distinguishing part: a list of facets, each a list of acceptable namings."""
    out: list[list[str]] = []
    if fix.tool != failed.tool:
        out.append([fix.tool])
    before, after = failed.command, fix.command
    if after and before:
        a, b = tr._words(tr.norm_command(before)), tr._words(tr.norm_command(after))
        ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
        for op, _i1, _i2, j1, j2 in ops:
            if op in ("insert", "replace"):
                out.append([" ".join(b[j1:j2])])
        if a == b and fix.tool == failed.tool:
            # The same command again: what it was sent with is what differs (Codex's
            # `sandbox_permissions` asking to leave the sandbox, a longer `timeout`); with
            # nothing else changed, a read before it (the precondition).
            settings = [key for key, value in fix.args.items() if key not in ("command", "cmd")
                        and (key not in failed.args or not tr._same(failed.args[key], value))]
            out.extend([f"`{key}", f"{key}:", f"{key}="] for key in settings)
            if not settings:
                out.append(_read_tools(failed.tool))
        return out
    changed = {k for k, v in fix.args.items() if k not in failed.args or not tr._same(failed.args[k], v)}
    if (fix.tool == failed.tool and changed and changed <= tr.CONTENT_KEYS
            and not set(failed.args) - set(fix.args) and tr.target(failed) == tr.target(fix)
            and failed.family == "edit"):
        # The same edit of the same file with other text: the text is the model's work, read
        # from the file again — the labels' "read then resend"; reading is the derivable part.
        return [_read_tools(failed.tool)]
    for key, value in fix.args.items():
        if key in failed.args and tr._same(failed.args[key], value):
            continue
        if key == failed.path_key or key in tr.PATH_KEYS:
            out.append([str(value).replace("\\", "/"), str(value)])
        elif key in ("command", "cmd") and after and not before:
            continue  # the action the fix took: its other facet (one block) is what differs
        elif key in tr.CONTENT_KEYS or not tr._scalar(value):
            if fix.tool != failed.tool:
                continue  # the new tool's content is the model's work; the switch is the part
            out.append([json.dumps(value)[:60]])
        elif value == 1:
            out.append(["exactly one"])
        else:
            out.append([f"`{key}", f"{key}:", f"{key}="])
    if not out:
        out.append(_read_tools(failed.tool))
    return out


def _read_tools(tool: str) -> list[str]:
    room = next((h for h in harnesses.every() if tool in h.families), None)
    names = [t for t, f in (room.families.items() if room else ()) if f == "read"]
    return names or ["Read", "read_file", "ws_read"]


def names_fix(text: str, wanted: list[list[str]]) -> bool:
    low = tr.norm_command(text).lower()
    return bool(wanted) and all(any(tr.norm_command(n).lower() in low for n in facet if n)
                                for facet in wanted)


_PATHLIKE = re.compile(r"^[~\w.\-/\\:@+]+$")
_EXTENSION = re.compile(r"\.[A-Za-z]\w{0,5}$")


def named_paths(tool: str, args: object) -> list[str]:
    """The paths a call named: its path argument, and the path-like words of its command."""
    call = call_of(tool, args)
    out = [call.path] if call.path else []
    for word in tr._words(call.command):
        if word.startswith("-") or "://" in word or not _PATHLIKE.match(word):
            continue
        if "/" in word or "\\" in word or _EXTENSION.search(word):
            out.append(word)
    return out


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


@dataclasses.dataclass
class Answer:
    rewrite: tr.Call | None = None
    text: str = ""
    rule: Rule | None = None
    env_fact: env.EnvFact | None = None


def _command_arg(call: tr.Call, command: str) -> dict[str, Any]:
    key = next((k for k in tr.COMMAND_KEYS if k in call.args), "command")
    return {key: command}


def env_call(call: tr.Call, row: Row | None = None) -> env.Call:
    return env.Call(call.tool, call.command, dict(call.args),
                    session=str(row["session"]) if row else "",
                    error=str(row.get("error") or "") if row else "")


def answer(book: RuleBook, row: Row, fp: Any, failed: tr.Call, known: list[str] | None = None,
           facts: env.EnvBook | None = None) -> Answer:
    """What the hook hands the model: a pre-flight rewrite by an environment fact (the call is
    changed before it runs), else the daemon's `evolve.on_failure` answer (the same order as the
    rules actor: an environment fact that speaks of this call first), and for a missing path
    where it probably is among the `known` paths (the hook reads the project's tree; here the
    paths known to exist stand in for it)."""
    if facts is not None and failed.command:
        call = env_call(failed, row)
        pre = facts.preflight(call)
        if pre is not None:
            return Answer(rewrite=tr.Call(failed.tool, {**pre.args, **_command_arg(failed,
                                                                                 pre.command)},
                                          failed.family), env_fact=pre.fact)
        relevant = facts.relevant(fp.cls, call)
        if relevant:
            return Answer(text=env.advice(relevant[0], call, head(str(row.get("error") or ""))),
                          env_fact=relevant[0])
    got = _daemon_answer(book, row, fp, failed)
    if fp.cls in path_hints.MISSING_CLASSES and got.rewrite is None and known:
        missing = path_hints.missing_path(str(row.get("error") or ""), failed.path)
        found = path_hints.hint(missing, known) if missing else ""
        if found:
            got = Answer(text=f"{got.text}\n{found}" if got.text else found, rule=got.rule)
    return got


def _daemon_answer(book: RuleBook, row: Row, fp: Any, failed: tr.Call) -> Answer:
    error = str(row.get("error") or "")
    fmt = _FMT.get(str(row["source"]["harness"]), str(row["source"]["harness"]))
    args = json.dumps(dict(failed.args))
    found = lookup(book, fp, error, args, family=harnesses.tool_family)
    if (found is not None and found.apply and not found.ambiguous
            and found.rule.repair.kind == "transform_args"):
        new_args, changed = apply_transform(found.rule.repair.transform, args)
        if changed:
            return Answer(rewrite=tr.Call(failed.tool, json.loads(new_args), failed.family),
                          rule=found.rule)
    picked = tr.choose(book, fp, error, failed, error_head=head(error),
                       read_tool=_read_tools(failed.tool)[0])
    if picked is not None:
        if picked.rewritten is not None:
            return Answer(rewrite=picked.rewritten, rule=picked.rule)
        return Answer(text=picked.text, rule=picked.rule)
    if found is None or not found.rule.repair.guidance.strip():
        return Answer()
    text = shown_guidance(fmt, failed.tool, fp.cls, found.rule.repair.guidance,
                          seeded=found.rule.seeded)
    return Answer(text=text, rule=found.rule)


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
        book = RuleBook()
        for rule in seed_rules():
            book.add(rule)
        facts = env.EnvBook()
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
            fp = fingerprint(row)
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
            got = answer(book, row, fp, failed, known, facts)
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
            if got.rule is not None and fix is not None and not got.rule.seeded:
                book.observe(got.rule.id, ok, now)
            if got.env_fact is not None and fix is not None:
                facts.observe(got.env_fact.id, ok, now)
            if fix is not None:
                facts.learn(fp.cls, env_call(failed, row), env_call(fix), now)
            if fix is not None and paths.root is None:
                project_paths.extend(named_paths(fix.tool, dict(fix.args)))
            run = f"{row['session']}#{row.get('seq')}"
            if tr.learn(book, fp, failed, fix, now, run=run) is not None:
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
    args = parser.parse_args(argv)
    corpus = corpus_root(args.corpus)
    split = split_of(args)
    if args.examples:
        for ex in replay(rows_of_split(split, corpus, args.every), KnownPaths(corpus))["examples"]:
            print(json.dumps(ex, ensure_ascii=False), file=sys.stderr)
    return run(quick, split=split, corpus=corpus, every=args.every, misses=args.misses)


if __name__ == "__main__":
    for out in run_args(False, sys.argv[1:]):
        print(json.dumps(out))
