"""Label one rendered line true / content-free / false-or-stale against the project's transcripts.

The rules are those of `tests/fixtures/truth/README.md`; each is one function (or one clearly marked
branch) here, and every verdict carries its rule id and the transcript evidence, so any label can
be checked by hand. The labeller reads the transcripts only through `bench/truth/history.py`
(`bench/real_census.py` readers; `bench/label_real.py`'s stated failure kinds) and imports nothing
of the product: what it labels is the product's output.

The order: a line is first parsed into its shape (the README's table); false-or-stale rules are
tried first (the first that holds decides), then content-free rules; a line no rule faults is true.
Where the README leaves room, the labeller is lenient: a line is false only when the transcripts
contradict it (a count matches none of the stated ways of counting; a fix is false only when no
occurrence of the failure supports it).
"""


from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from bench.label_real import family
from bench.truth.evidence import (
    Index,
    Rec,
    Verdict,
    empty,
    failures_by_error,
    false,
    find_failures,
    ref_of,
    refusal_rule,
    resolved_by,
    says_nothing,
    show,
    stale_path,
)
from bench.truth.fixes import (
    Fix,
    check_fix,
    check_one,
    commands_of_fix,
    file_of_fix,
    fix_candidates,
    fix_command,
    parse_fix,
    where_of,
)
from bench.truth.history import History
from bench.truth.shell import (
    COMMENT,
    begins,
    cnorm,
    command_paths,
    fragments,
    ignored,
    is_pathlike,
    norm,
    quotes,
    step,
    ticks,
)

LABELS = ("false", "content_free", "true", "structure")


_HEADINGS = re.compile(r"^(#{1,6} .*|[A-Z][A-Za-z /'’()-]{0,60}:|Do/don't lessons.*|No similar past work.*|"
                       r"\(no lessons yet\)|\(no do/don't lessons.*\))$")


@dataclass
class Line:
    raw: str
    body: str
    channel: str
    session_hint: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


def parse_line(text: str, channel: str, meta: dict[str, Any]) -> Line:
    body = text.strip()
    hint = ""
    comment = COMMENT.search(body)
    if comment:
        found = re.search(r"task=import:[a-z_]+:([^\s#]+)", comment.group(1))
        hint = found.group(1) if found else ""
        body = body[:comment.start()].strip()
    body = re.sub(r"^[-*]\s+", "", body)
    body = re.sub(r"^project memory:\s*", "", body)
    body = re.sub(r"^[⚠⚙]\s*", "", body)
    body = re.sub(r"\s{2,}\[[^\]`]*\]$", "", body)  # `memory lessons` prints a lesson's tags after it
    return Line(text, body, channel, hint, meta)


def count_ok(claimed: int, ways: Iterable[int]) -> bool:
    return claimed in set(ways)


def _error_counts(recs: list[Rec], index: Index) -> list[int]:
    sessions = {r.s for r in recs}
    recent = len(index.history.sessions) - 120
    return [len(recs), len(sessions), len([r for r in recs if r.s >= recent]), len({r.s for r in recs if r.s >= recent})]


def _digits(text: str) -> str:
    return re.sub(r"\d+", "#", text)


_UNKNOWN_CLASS = re.compile(r"an unrecognised failure|\bunknown/|\bclass `?unknown`?", re.IGNORECASE)


_FRAME_TITLES = re.compile(r"^(?:<command-name>|<command-message>|# Context from my IDE setup|<ide_|<local-command|"
                           r"Caveat:|\[Request interrupted|This session is being continued)")


_GENERIC_COMMANDS = frozenset({"git status", "git log", "git diff", "git push", "git pull", "git fetch", "git branch",
                               "ls", "pwd", "whoami", "date", "git show", "git stash", "git add", "gh pr", "ls -la",
                               "ls -l"})


def _mangled_command(command: str, index: Index, prefix: bool = False) -> str | None:
    """Why a command shown as runnable is not: a here-document without its body, a clipped line,
    or a command no call of the history ran (words lost)."""
    c = norm(command)
    if re.search(r"<<-?\s*'?\"?\w+'?\"?\s*$", c) or re.search(r"(?:\||&&|\\)\s*$", c):
        return f"`{c[:80]}` stops mid-command (a here-document without its body, a dangling `|`)"
    if c.endswith("…"):
        return f"`{c[:80]}` is clipped"
    ran = [r for r in index.all() if r.command and (cnorm(r.command) == cnorm(c) or "<<" in r.command
                                                     and cnorm(r.command.split(chr(10), 1)[0]) == cnorm(c)
                                                     or prefix and begins(c, r.command))]
    if not ran:
        return f"no call of the history ran `{c[:100]}` as shown (its arguments were lost)"
    return None


def _specific(body: str) -> bool:
    """Whether a line names anything of a project: a backticked span, a path, a quoted text, a number."""
    return bool(ticks(body) or re.search(r"[/\\]\w|\w\.[a-z]{1,5}\b|\"[^\"]+\"|'[^']+'|\d", body))


ShapeRule = Callable[[Line, "re.Match[str]", Index], Verdict]


def shape_unresolved(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-unresolved: "<what> failed here and stayed unresolved: <error>"."""
    ref = ref_of(m.group("what"))
    ref.error = m.group("err")
    recs = find_failures(ref, index, line.session_hint)
    refused = refusal_rule(ref.error, recs)
    if refused:
        return refused
    if recs:
        unresolved = [r for r in recs if resolved_by(r, index) is None]
        if not unresolved:
            r = recs[0]
            return false("F-resolved", f"{show(r)} → reached later by {show(resolved_by(r, index) or r)}")
        if all(r.kind == "not_a_failure" for r in recs):
            return empty("C-benign", f"{show(recs[0])}: not a failure ({recs[0].kind}), nothing to repair")
    if not ref.command and not ref.path and ref.tool:
        if re.search(r"[^\w.-]", ref.tool):
            return empty("C-mangled", f"the tool name `{ref.tool[:60]}` is the model's garbled call")
        if recs and (recs[0].command or recs[0].path) or family(ref.tool) == "shell":
            return empty("C-mangled", f"the line names {ref.tool} without what it ran"
                         + (f" ({show(recs[0])})" if recs else ""))
    if not recs:
        return false("F-unsupported", "no failed call of the history matches the line")
    if says_nothing(ref.error) and not ref.command and not ref.path:
        return empty("C-no-content", f"the error `{norm(ref.error)[:60]}` says nothing")
    return Verdict("true", "T-unresolved", show(unresolved[0]))


def shape_gotcha(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-gotcha: "<error> — fix: <fix> (seen N×)"."""
    error, fix_text, seen = m.group("err"), m.group("fix"), m.group("n")
    recs = failures_by_error(error, index)
    if not recs and fragments(error):
        recs = [r for r in index.failures() if quotes(_digits(error), _digits(r.call.result))]
    return _judge_fix(line, error, fix_text, recs, index, seen=int(seen) if seen else None)


_CLASS_REFUSED = re.compile(r"^[\w-]+: the user refused the call")


_CLASS_POLICY = re.compile(r"^[\w-]+: the harness's own policy refused the call")


_CLASS_BENIGN = re.compile(r"^[\w-]+: not a failure\b")


def _clipped_away(fix: Fix) -> bool:
    """The product clipped the fix before it says what to do (what to run, on what)."""
    if fix.kind == "same":
        return not where_of(fix)
    if fix.kind == "reread":
        return not where_of(fix)
    return fix.kind == "other" and fix.clipped


def _judge_fix(line: Line, error: str, fix_text: str, recs: list[Rec], index: Index, seen: int | None = None,
               times: tuple[int, int] | None = None) -> Verdict:
    """A line that pairs a failure (its error, or its class words) with a fix: false rules first
    (what the failure is, the fix, its paths, its counts), then content-free ones."""
    refused = refusal_rule(error, recs)
    if refused and refused.rule != "F-not-run":
        return refused
    words = re.sub(r"^\[\w+\] When: ", "", line.body)
    if _CLASS_REFUSED.match(words):
        return false("F-refusal", "the line files a user's refusal as a failure with a fix")
    if _CLASS_POLICY.match(words):
        return false("F-policy", "the line files the harness's policy as a failure with a fix")
    fix = parse_fix(fix_text)
    verdict = check_fix(fix, recs, index)
    if verdict is not None:
        return verdict
    stale = stale_path(file_of_fix(fix), index, fix_path=True) or stale_path(commands_of_fix(fix), index)
    if stale:
        return false("F-stale", stale)
    cands = fix_candidates(recs, fix, index)
    if seen is not None and recs:
        ways = _error_counts(recs, index) + _error_counts(cands, index)
        if not count_ok(seen, ways):
            return false("F-count", f"seen {seen}×; the history holds it {ways[0]}× in {ways[1]} session(s)"
                         + (f", {ways[4]}× with this fix's target" if cands != recs else ""))
    if times is not None and cands and times[1] > len(cands):
        return false("F-count", f"({times[0]} of {times[1]} times); the history holds the failure {len(cands)}×")
    if refused:  # a call that never ran, "fixed" by running it
        return empty("C-benign", refused.evidence)
    if _CLASS_BENIGN.match(words) or recs and all(r.kind == "not_a_failure" for r in recs):
        return empty("C-benign", "not a failure (" + (show(recs[0]) if recs else "the line's own words") + ")")
    if _clipped_away(fix):
        return empty("C-mangled", f"the fix `{norm(fix.text)[:80]}` is clipped before it says what to do")
    if fix.kind == "corrected":
        return empty("C-no-fix", "\"a corrected call\" does not say what the correction was")
    if _UNKNOWN_CLASS.search(line.body):
        return empty("C-unknown", "the line names the unrecognised (`unknown`) class")
    if fix.kind == "add" and not fix.fields.get("add", "").strip():
        return empty("C-mangled", "the fix adds nothing (its words were lost)")
    if fix.kind in ("command", "swap") and fix.clipped:
        return empty("C-mangled", f"the fix `{norm(fix_command(fix))[:80]}…` is clipped: not runnable as shown")
    if fix.kind in ("command", "swap") and (why := _mangled_command(fix_command(fix), index,
                                                                    prefix=fix.kind == "swap")):
        return empty("C-mangled", why)
    if not _specific(fix.text):
        return empty("C-generic", "the fix names nothing of this project: the same words in every project")
    return Verdict("true", f"T-fix-{fix.kind}", "")


def shape_convention(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-convention: "<family>: <class words> — fixed by <fix>"; S-polar: "[type] When: … -> Do: …"."""
    return _judge_fix(line, "", m.group("fix"), [], index)


def shape_never(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-never: "NEVER: <trigger> (Reason: <why>)" — a don't-lesson; judged as its reason's fix."""
    return _judge_fix(line, m.group("when"), m.group("why"), [], index)


def s52(command: str) -> str:
    """A command as the seed's S-5.2 names it: the first line, no leading `$ `, flags dropped, at
    most 6 words (the ledger's key for "commands that work")."""
    line = command.strip().split("\r", 1)[0].split("\n", 1)[0].strip().removeprefix("$ ")
    return " ".join([t for t in line.split() if not t.startswith("-")][:6])


def shape_works(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-works: "`<command>` works here (a/b runs succeeded)"."""
    shown, ok, runs = m.group("cmd"), int(m.group("a")), int(m.group("b"))
    key = norm(shown).rstrip("…").strip()
    named = [r for r in index.all() if r.command and (s52(r.command) == key or shown.endswith("…")
                                                      and s52(r.command).startswith(key))]
    recent = len(index.history.sessions) - 120
    tallies = {(len(x), sum(not r.failed for r in x)) for x in (named, [r for r in named if r.s >= recent])}
    if (runs, ok) not in tallies:
        total, good = len(named), sum(not r.failed for r in named)
        return false("F-count", f"({ok}/{runs}); the history ran `{key[:80]}` {total}× ({good} ok)")
    stale = stale_path(command_paths(shown), index)
    if stale:
        return false("F-stale", stale)
    why = _mangled_command(shown, index)
    if why:
        return empty("C-mangled", why)
    words = key.split()
    if step(key).head in _GENERIC_COMMANDS and not any(is_pathlike(w) for w in words[1:]) and len(words) <= 3:
        return empty("C-generic", f"`{key}` works in any repository")
    return Verdict("true", "T-works", f"{len(named)} runs")


def _subsequence(needle: list[str], hay: list[str]) -> bool:
    it = iter(hay)
    return all(any(w == h for h in it) for w in needle)


_FORMAT_TOOLS = {"search_replace": ("edit", "Edit", "MultiEdit", "replace", "replace_in_file", "str_replace_editor",
                                    "edit_file", "str_replace_based_edit_tool"),
                 "whole_file": ("Write", "write_file", "write_to_file", "create_file"),
                 "apply_patch": ("apply_patch",), "udiff": ("apply_patch",)}


def _hunks(rec: Rec) -> int:
    args = rec.call.args
    if isinstance(args.get("edits"), list):
        return len(args["edits"])
    diff = args.get("diff") or args.get("input") or args.get("patch")
    if isinstance(diff, str):
        return max(1, diff.count("<<<<<<< SEARCH") or diff.count("\n@@") + diff.startswith("@@")
                   or diff.count("*** Update File") + diff.count("*** Add File") + diff.count("*** Delete File"))
    return 1


def _close(claimed: int, counted: int) -> bool:
    """Counts agree: exactly below 20; within a quarter at 20 and more (the census readers and the
    product's may pair a harness's calls differently on long histories)."""
    return claimed == counted if max(claimed, counted) < 20 else abs(claimed - counted) <= 0.25 * max(claimed, counted)


def shape_edit_format(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-format: "Edit format `F` applies P% of the time here (a/b hunks)"."""
    fmt, ok, total = m.group("fmt"), int(m.group("a")), int(m.group("b"))
    tools = _FORMAT_TOOLS.get(fmt)
    if tools is None:
        return Verdict("true", "T-format", "an edit format the labeller does not count")
    recs = [r for r in index.all() if r.call.tool in tools]
    ways = {(len(recs), sum(not r.failed for r in recs)),
            (sum(_hunks(r) for r in recs), sum(_hunks(r) for r in recs if not r.failed))}
    # per session, the format of its most used edit tool, with every edit call of the session
    by_session = [sum(not r.failed for r in row if r.fam == "edit") for row in index.recs]
    attempts = [sum(1 for r in row if r.fam == "edit") for row in index.recs]
    recent = len(index.history.sessions) - 120
    for window in (0, recent):
        got = tried = 0
        for s, row in enumerate(index.recs):
            edits = [r.call.tool for r in row if r.fam == "edit"]
            top = max((edits.count(t) for t in edits), default=0)
            # a tie counts the session under each tied format (the product picks one)
            if s >= window and edits and any(edits.count(t) == top for t in tools):
                got, tried = got + by_session[s], tried + attempts[s]
        ways.add((tried, got))
    if not any(_close(total, t) and _close(ok, o) for t, o in ways):
        calls = (len(recs), sum(not r.failed for r in recs))
        return false("F-count", f"({ok}/{total} hunks); the history has {calls[0]} {fmt} edits ({calls[1]} ok)")
    return Verdict("true", "T-format", "")


def shape_changed(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-changed: "`<file>` changed in N recent runs"."""
    path, n = m.group("path"), int(m.group("n"))
    edits = [r for r in index.all() if r.fam == "edit" and not r.failed and r.path and index.same_path(r.path, path)]
    recent = len(index.history.sessions) - 120
    ways = {len({r.s for r in edits}), len({r.s for r in edits if r.s >= recent})}
    if n not in ways:
        return false("F-count", f"changed in {n} runs; the history changed it in {min(ways)} session(s)")
    stale = stale_path([(path, "")], index, fix_path=True)
    if stale:
        return false("F-stale", stale)
    return Verdict("true", "T-changed", "")


def shape_layout(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-layout: "Most work happens in: `dir` (n), …"."""
    for folder, _n in re.findall(r"`([^`]+)` \((\d+)\)", m.group("rest")):
        rel = index.rel(folder)
        if rel is None:
            return false("F-stale", f"`{folder}` is outside the project (another folder of the user's machine)")
        tree = index.history.tree
        if tree is not None and rel != "." and rel not in tree and not ignored(rel, index.history.ignores):
            return false("F-stale", f"`{folder}` ({rel}) is not in the project tree")
    return Verdict("true", "T-layout", "")


def shape_episode(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-episode: a past session with a verdict mark (✓ ✗ [succeeded] [failed])."""
    return false("F-verdict", "an imported transcript records no verdict of its task; the mark is not in the records")


def shape_hit(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-hit: "hit: <error> → fixed by <fix>" / "failure (N times): <error> → <fix | unresolved>"."""
    error, fix_text = m.group("err"), m.group("fix").strip()
    recs = failures_by_error(error, index)
    if fix_text == "unresolved":
        refused = refusal_rule(error, recs)
        if refused:
            return refused
        if recs and all(resolved_by(r, index) is not None for r in recs):
            return false("F-resolved", f"{show(recs[0])} → reached later by {show(resolved_by(recs[0], index) or recs[0])}")
        if not recs:
            return false("F-unsupported", "no failed call of the history quotes this error")
        return Verdict("true", "T-unresolved", show(recs[0]))
    return _judge_fix(line, error, re.sub(r"^fixed by ", "", fix_text), recs, index)


def shape_hook_memory(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-hook: "slmactor memory: `<what>` failed here with `<error>`; <fix> worked (n of m times)." (and
    "Also worked here: …"), or "… seen before with <tool>; P% confidence over N outcomes. <guidance>"."""
    body = m.group("rest")
    probe = _probe(line, index)
    found = re.match(r"^(?P<what>`.+?`(?: on `.+?`)?) failed here with `(?P<err>.*?)`; (?P<fixes>.+)$", body, re.DOTALL)
    if found:
        ref = ref_of(found.group("what"))
        ref.error = found.group("err")
        recs = find_failures(ref, index) or ([probe] if probe else [])
        parts = re.split(r"\s*Also worked here:\s*", found.group("fixes"))
        for part in parts:
            fm = re.match(r"^(?P<fix>.+?) worked \((?P<n>\d+) of (?P<m>\d+) times?\)\.?$", part.strip(), re.DOTALL)
            if not fm:
                continue
            times = (int(fm.group("n")), int(fm.group("m")))
            verdict = _judge_fix(line, ref.error, fm.group("fix"), recs, index, times=times)
            if verdict.rule in ("F-fix-absent", "F-count"):
                # "worked n of m times" may count the same failure of other calls: every call
                # that failed with this error
                wider = _judge_fix(line, ref.error, fm.group("fix"), failures_by_error(ref.error, index) or recs, index,
                                   times=times)
                verdict = wider if wider.label != "false" else verdict
            if verdict.label != "true":
                return verdict
        return Verdict("true", "T-hook-fix", "")
    seen = re.match(r"^a failure like this was seen before with (?P<tool>\S+); .*?outcomes?\. (?P<g>.+)$", body,
                    re.DOTALL) or re.match(r"^this exact failure was seen before with (?P<tool>\S+)[;.].*?\. (?P<g>.+)$",
                                           body, re.DOTALL)
    if seen:
        return _judge_fix(line, "", seen.group("g"), [probe] if probe else [], index)
    return _judge_fix(line, "", body, [probe] if probe else [], index)


def _probe(line: Line, index: Index) -> Rec | None:
    probe = (line.meta or {}).get("probe") or {}
    for rec in index.all():
        if index.history.sessions[rec.s].session_id == probe.get("session") and rec.call.seq == probe.get("seq"):
            return rec
    return None


def shape_hook_shipped(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-shipped: "slmactor: a known fix for this kind of <tool> failure (not tried in this project yet). …"."""
    guidance = m.group("g")
    if re.search(r"\((\w+) / \1\)", guidance):
        return empty("C-mangled", "the tool names of the advice collapsed into one (`X / X`)")
    fix = parse_fix(guidance)
    probe = _probe(line, index)
    if fix.kind == "dont" and probe is not None:
        verdict = check_one(fix, probe, index)
        if verdict is not None:
            return verdict
    return empty("C-shipped", "a shipped rule's words: the same in every project")


def shape_path_hint(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-hint: "`P` is not there; `D` holds `a`, `b`." — listed entries must be in the project."""
    tree = index.history.tree
    listed = ticks(m.group("rest"))
    if tree is not None:
        for entry in listed[1:]:
            rel = index.rel(entry)
            if rel is not None and rel not in tree and not ignored(rel, index.history.ignores):
                return false("F-stale", f"`{entry}` is not in the project tree")
        missing = index.rel(m.group("missing"))
        if missing is not None and missing in tree:
            return false("F-stale", f"`{m.group('missing')}` is in the project tree")
    return Verdict("true", "T-hint", "")


def shape_repaired(line: Line, m: re.Match[str], index: Index) -> Verdict:
    """S-repaired: "The repaired call: <tool> <json>" / "The repaired arguments (<transform>): <json>"."""
    try:
        args = json.loads(m.group("json"))
    except ValueError:
        return empty("C-mangled", "the repaired arguments do not parse")
    if not isinstance(args, dict):
        return empty("C-mangled", "the repaired arguments are not an object")
    for rec in index.all():
        if not rec.failed and norm(json.dumps(rec.call.args, sort_keys=True)) == norm(json.dumps(args, sort_keys=True)):
            return Verdict("true", "T-repaired", show(rec))
    return false("F-unsupported", "no successful call of the history had these arguments")


def shape_guidance(line: Line, index: Index) -> Verdict:
    """S-guidance: a rule's guidance (`evolve rules`) or any other line: judged as a fix."""
    verdict = _judge_fix(line, "", line.body, [], index)
    if verdict.label == "true" and not _specific(line.body):
        return empty("C-generic", "names nothing of this project: the same words in every project")
    return verdict


SHAPES: tuple[tuple[str, re.Pattern[str], ShapeRule], ...] = (
    ("unresolved", re.compile(r"^(?P<what>.+?) failed here and stayed unresolved: (?P<err>.*)$", re.DOTALL),
     shape_unresolved),
    ("hook_shipped", re.compile(r"^slmactor: a known fix for this kind of \S+ failure \(not tried in this project "
                                r"yet\)\. (?P<g>.+)$", re.DOTALL), shape_hook_shipped),
    ("hook_memory", re.compile(r"^slmactor memory: (?P<rest>.+)$", re.DOTALL), shape_hook_memory),
    ("repaired", re.compile(r"^The repaired (?:call: \S+|arguments \([^)]*\):) (?P<json>\{.*\})$", re.DOTALL),
     shape_repaired),
    ("path_hint", re.compile(r"^`(?P<missing>[^`]+)` is not there; (?P<rest>.+)$"), shape_path_hint),
    ("gotcha", re.compile(r"^(?P<err>.+?) — fix: (?P<fix>.+?)(?: \(seen (?P<n>\d+)×\))?$", re.DOTALL), shape_gotcha),
    ("convention", re.compile(r"^[\w-]+: .+? — fixed by (?P<fix>.+)$", re.DOTALL), shape_convention),
    ("polar", re.compile(r"^\[\w+\] When: (?P<when>.+?) -> Do: (?P<fix>.+)$", re.DOTALL), shape_convention),
    ("never", re.compile(r"^NEVER: (?P<when>.+?) \(Reason: (?P<why>.+)\)$", re.DOTALL), shape_never),
    ("works", re.compile(r"^`(?P<cmd>.+)` works here \((?P<a>\d+)/(?P<b>\d+) runs? succeeded\)$"), shape_works),
    ("format", re.compile(r"^Edit format `(?P<fmt>[^`]+)` applies \d+% of the time here \((?P<a>\d+)/(?P<b>\d+) "
                          r"hunks?\)$"), shape_edit_format),
    ("layout", re.compile(r"^Most work happens in: (?P<rest>.+)$"), shape_layout),
    ("changed", re.compile(r"^`(?P<path>[^`]+)` changed in (?P<n>\d+) recent runs?$"), shape_changed),
    ("episode", re.compile(r"^(?:✓|✗|\[succeeded\]|\[failed\]|\[partial\])\s"), shape_episode),
    ("hit", re.compile(r"^(?:hit|failure(?: \(\d+ times\))?): (?P<err>.+?) → (?P<fix>.+)$", re.DOTALL), shape_hit),
)


def label(item: Any, history: History) -> Verdict:
    """The verdict of one rendered line (an `render.Item`)."""
    line = parse_line(item.text, item.channel, item.meta)
    if not line.body or _HEADINGS.match(line.body) or _HEADINGS.match(item.text.strip()):
        return Verdict("structure", "S-structure")
    index = Index.of(history)
    for _shape, pattern, rule in SHAPES:
        m = pattern.match(line.body)
        if m:
            return rule(line, m, index)
    return shape_guidance(line, index)


def shape_of(text: str) -> str:
    body = parse_line(text, "", {}).body
    for name, pattern, _rule in SHAPES:
        if pattern.match(body):
            return name
    return "guidance"
