"""The run report of a hook-driven session: what a harness's hooks saw, turned
into the `run.finish` report of docs/LOOP.md so episodes, rules, lessons, bandit and metrics
learn from sessions of Claude Code, Codex CLI, Gemini CLI and the rest.

Three sources, each for what only it knows:

* the session **ledger** the hook processes keep (one JSON object per line, see
  `slmactor/hooks/session.py`): every tool call with its full arguments and outcome, the first
  prompt, the model when the payload names it, and each pre-flight rewrite;
* the daemon's **working memory** of the run (a `working.snapshot`): its counters (calls, errors,
  redundant calls), the files edited and the commands run with their outcome;
* the harness's **transcript** when the payload names one (`transcripts.py`): model, number of
  LLM calls, tokens; for Codex CLI also the `apply_patch` calls that failed (Codex runs no hook
  after a tool call that did not produce an output).

Failures are read with `logic.evolve.fixes`: what each was (a failure, a refusal, the
harness's policy, a call that never ran, no failure), whether a later call of the session reached
its target (resolved), and the fix — the difference between the failed call and the call that
got past it on the same target, or what happened between when they are the same call — with the
call ids of its evidence (`call_id`, `fix_call_id`, `between_ids`) and whether it held
(`held: false` when the next test run failed or the edit was undone). Consecutive failures of
one target count as attempts of one failure.  A pre-flight rewrite followed by a successful call
is a failure *avoided*: resolved by the rule that produced the rewrite (`rule:<id>`, fixed from
memory) or, for a generic
transform, by `preflight` (the reflector then learns it as a rule).  Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from slmactor.logic.failures.call import ToolCall
from slmactor.logic.loop.transcripts import TranscriptStats, as_count

if TYPE_CHECKING:
    from slmactor.logic.evolve import fixes

#: Cap on the failures one session reports (the report reader keeps 500).
MAX_FAILURES = 200
MAX_LIST = 64
# ------------------------------------------------------------------------------------ the ledger


def _s(entry: Mapping[str, Any], key: str) -> str:
    value = entry.get(key, "")
    return value if isinstance(value, str) else ""


def _at(entry: Mapping[str, Any]) -> float:
    value = entry.get("at")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return 0.0


def _same_call(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Same tool on the same file; for a call without a file, the same command."""
    if _s(a, "tool").lower() != _s(b, "tool").lower():
        return False
    if _s(a, "path") or _s(b, "path"):
        return _s(a, "path") == _s(b, "path")
    # The ledger keeps a command's digest (`cmd`) on every call, its text only on failures.
    key = "cmd" if _s(a, "cmd") and _s(b, "cmd") else "command"
    return bool(_s(a, key)) and _s(a, key) == _s(b, key)


def _rewritten_as(pre: Mapping[str, Any], call: Mapping[str, Any]) -> bool:
    """Whether `call` is the call a pre-flight rewrite sent on: a rewritten command is known by
    its digest (a shell call may name a file too), an edit by its tool and file."""
    if _s(pre, "cmd"):
        return _s(pre, "tool").lower() == _s(call, "tool").lower() and _s(pre, "cmd") == _s(call, "cmd")
    return _same_call(pre, call)


@dataclass
class _Open:
    """A failure waiting for its fix (kept for a pre-flight rewrite's bookkeeping)."""

    call: Mapping[str, Any]
    attempts: int = 1
    rule_id: str = ""
    preflight: Mapping[str, Any] | None = None
    index: int = 0


def _failure(calls: Sequence[Mapping[str, Any]], outcome: fixes.Outcome,
             rule_id: str) -> dict[str, Any]:
    """One failure as a run-report failure event: what it was, its evidence (call ids) and,
    where the session got past it, who did and what the fix was (`fixes.Fix`)."""
    call = calls[outcome.index]
    out: dict[str, Any] = {"tool": _s(call, "tool"), "message": _s(call, "error"),
                           "attempts": len(outcome.attempts) or 1}
    # The hook's fingerprint of it, and what any other path fingerprints it by: one id.
    for key, name in (("key", "fingerprint"), ("family", "family"), ("command", "command"),
                      ("id", "call_id")):
        if _s(call, key):
            out[name] = _s(call, key)
    code = call.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        out["exit_code"] = code
    if _s(call, "args"):
        out["failed_args"] = _s(call, "args")
    if _s(call, "model"):
        out["model"] = _s(call, "model")
    if rule_id:
        out["rule_id"] = rule_id
    from slmactor.logic.evolve import fixes

    if outcome.kind != fixes.FAILURE:
        out["kind"] = outcome.kind
    ids = [_s(calls[i], "id") for i in outcome.attempts if _s(calls[i], "id")]
    if len(ids) > 1:
        out["attempt_ids"] = ids[:MAX_LIST]
    if outcome.kind != fixes.FAILURE or not outcome.resolved:
        return out
    # Resolved: by the call that did what it tried, else by one that reached its target.
    at = outcome.fixed_at if outcome.fixed_at is not None else outcome.resolved_at
    assert at is not None
    fixer = calls[at]
    if _s(fixer, "id"):
        out["fix_call_id"] = _s(fixer, "id")
    fix = outcome.fix
    if fix is None:
        # Got past it, but the difference is no repair (another target, the model's own
        # content) or there was none: resolved, nothing to learn or tell.
        out["resolved_by"] = "retry" if outcome.fixed_at is not None and fixes.same_call(
            ledger_call(call), ledger_call(fixer)) else "llm"
        return out
    out["resolved_by"] = "llm"
    out["resolution"] = fix.text
    out["fix_kind"] = fix.kind
    if fix.kind in _ARGUMENT_FIXES and _s(fixer, "args"):
        out["fixed_args"] = _s(fixer, "args")
    if fix.files:
        out["fix_files"] = list(fix.files)[:MAX_LIST]
    if fix.commands:
        out["fix_commands"] = list(fix.commands)[:MAX_LIST]
    between = [_s(calls[i], "id") for i in outcome.between if _s(calls[i], "id")]
    if between:
        out["between_ids"] = between[:MAX_LIST]
    if outcome.held is False:
        out["held"] = False
        if outcome.backfire_at is not None and _s(calls[outcome.backfire_at], "id"):
            out["backfire_id"] = _s(calls[outcome.backfire_at], "id")
    return out


#: Fixes whose fixing call's arguments are the repair (a rule learns them from the pair).
_ARGUMENT_FIXES = frozenset({"typed", "transform", "reread", "switch", "prepared"})


def _avoided(pre: Mapping[str, Any], ok: bool) -> dict[str, Any]:
    """A pre-flight rewrite: the failure the original call would have met, and who avoided it."""
    rule = _s(pre, "rule_id")
    out: dict[str, Any] = {"tool": _s(pre, "tool"), "message": _s(pre, "message"),
                           "failed_args": _s(pre, "failed_args"), "fixed_args": _s(pre, "fixed_args"),
                           "avoided": True}
    for key, name in (("key", "fingerprint"), ("family", "family")):
        if _s(pre, key):
            out[name] = _s(pre, key)
    if _s(pre, "model"):
        out["model"] = _s(pre, "model")
    if rule:
        out["rule_id"] = rule
    if ok:
        out["resolved_by"] = f"rule:{rule}" if rule else "preflight"
        out["resolution"] = f"rewritten before the call ({_s(pre, 'transform')}); the call succeeded"
    return out


def pair_failures(entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The session's failures as run-report failure events, each with what came of it
    (`fixes.outcomes`: resolved or not, the fix and its evidence), and the pre-flight rewrites:
    a rewritten call that then succeeded is a failure avoided."""
    rewritten: list[Mapping[str, Any]] = []
    done: list[dict[str, Any]] = []
    calls: list[Mapping[str, Any]] = []
    rule_of: dict[int, str] = {}
    for entry in entries:
        kind = entry.get("e")
        if kind == "preflight":
            rewritten.append(entry)
            continue
        if kind != "call":
            continue
        pre = next((p for p in rewritten if _rewritten_as(p, entry)), None)
        if pre is not None:
            rewritten.remove(pre)
            if entry.get("ok") is True:
                done.append(_avoided(pre, ok=True))
                continue
            if _s(pre, "rule_id"):
                rule_of[len(calls)] = _s(pre, "rule_id")
        calls.append(entry)
    if any(c.get("ok") is not True for c in calls):
        from slmactor.logic.evolve import fixes  # only a session with a failure needs it

        records = [ledger_call(c) for c in calls]
        done.extend(_failure(calls, outcome, rule_of.get(outcome.index, ""))
                    for outcome in fixes.outcomes(records))
    done.extend(_avoided(p, ok=False) for p in rewritten if _s(p, "rule_id"))
    return done[:MAX_FAILURES]


def told_lines(entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What the session's model was told, line by line, with the records each rests on (the
    ledger's `told` entries): kept with the episode, so `memory audit` can check it later."""
    out: list[dict[str, Any]] = []
    for entry in entries:
        if entry.get("e") != "told" or not isinstance(entry.get("said"), list):
            continue
        evidence = [e for e in entry.get("evidence") or [] if isinstance(e, str)]
        out.extend({"text": line, "channel": _s(entry, "channel") or "block",
                    "evidence": evidence[:8]}
                   for line in entry["said"] if isinstance(line, str) and line.strip())
    return out[:MAX_LIST]


def command_counts(calls: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every command of the session counted by its key (the seed's S-5.2: first line, flags
    dropped, six words): runs, successes, and a command as one of its runs ran it (`shown`:
    what memory says of it; none for a script of several lines)."""
    from slmactor.logic.memory.distill import normalize_command, project_command, shown_command

    counts: dict[str, dict[str, Any]] = {}
    for call in calls:
        command = _s(call, "command")
        key = normalize_command(command) if command else ""
        if not key:
            continue
        row = counts.setdefault(key, {"key": key, "runs": 0, "ok": 0})
        row["runs"] += 1
        row["ok"] += call.get("ok") is True
        shown = shown_command(command)
        if shown and "shown" not in row:
            row["shown"] = shown
    # Only a command that says something of this project is ever told: the others are not
    # kept. A key no run of this session can show is kept too: its runs count wherever
    # another session's run can.
    return [row for row in counts.values() if project_command(row["key"])][:MAX_LIST]


def deleted_paths(calls: Sequence[Mapping[str, Any]]) -> list[str]:
    """The paths the session deleted (a shell `rm`, `git rm`, `rmdir`, the source of a `mv`, a
    patch's `Delete File`) and did not create or write again afterwards."""
    from slmactor.logic.text import shell as target

    gone: dict[str, None] = {}
    for call in calls:
        if call.get("ok") is not True:
            continue
        command, args = _s(call, "command"), _s(call, "args")
        removed = target.deleted_paths(command) if command else []
        if "*** Delete File:" in args:
            import re

            removed += re.findall(r"\*\*\* Delete File: ([^\\\n\"]+)", args)
        made = target.created_paths(command) if command else []
        if _s(call, "path") and call.get("family") == "edit":
            made.append(_s(call, "path"))
        for path in made:
            for old in [p for p in gone if target.same_path(p, path)]:
                del gone[old]
        for path in removed:
            gone.setdefault(path.strip(), None)
    return [p for p in gone if p][:MAX_LIST]


def ledger_call(entry: Mapping[str, Any], family_of: Callable[[str], str] | None = None) -> ToolCall:
    """The call a ledger `call` entry keeps: its arguments are in the shared words already, so
    each names itself (`words` is the identity on the shared words it holds). `family_of` names
    the family of an entry written before entries kept it."""
    from slmactor.logic.evolve.typed_repairs import parse_args

    tool = _s(entry, "tool")
    family = _s(entry, "family") or (family_of(tool) if family_of is not None else "")
    code = entry.get("exit_code")
    text = _s(entry, "args")
    parsed = parse_args(text) if text else None
    call = ToolCall.in_shared_words(
        tool, family or tool.lower(), parsed or {},
        command=_s(entry, "command"), path=_s(entry, "path"), ok=entry.get("ok") is not False,
        error=_s(entry, "error"), call_id=_s(entry, "id"),
        exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None)
    # Arguments kept only in part (cut at import) or never an object: what the model sent
    # cannot be read, and nothing is learned from it.
    return replace(call, unparsed=text) if text and parsed is None else call


def _snapshot_list(snapshot: Mapping[str, Any] | None, key: str) -> list[Any]:
    value = snapshot.get(key) if snapshot else None
    return value if isinstance(value, list) else []


def _no_edit_format(tool: str) -> str:
    return ""


def _edit_format(edits: Sequence[Mapping[str, Any]], format_of: Callable[[str], str]) -> str:
    """The format most of the session's edits used ("" when none is known)."""
    counts: dict[str, int] = {}
    for call in edits:
        fmt = format_of(_s(call, "tool"))
        if fmt:
            counts[fmt] = counts.get(fmt, 0) + 1
    return max(sorted(counts), key=lambda f: counts[f]) if counts else ""


def _edits_by_format(edits: Sequence[Mapping[str, Any]],
                     format_of: Callable[[str], str]) -> list[dict[str, Any]]:
    """Each edit format's calls in the session, attempted and applied (what "a/b hunks" of an
    edit format counts: the calls of its tools, not every edit of a session it led)."""
    counts: dict[str, list[int]] = {}
    for call in edits:
        fmt = format_of(_s(call, "tool"))
        if fmt:
            row = counts.setdefault(fmt, [0, 0])
            row[0] += 1
            row[1] += call.get("ok") is True
    return [{"format": f, "attempted": n, "applied": ok} for f, (n, ok) in sorted(counts.items())]


def session_report(run_id: str, harness: str, entries: Sequence[Mapping[str, Any]],
                   snapshot: Mapping[str, Any] | None, transcript: TranscriptStats | None,
                   now: float, is_edit: Callable[[str], bool], *,
                   first_segment: bool = True,
                   edit_format_of: Callable[[str], str] = _no_edit_format) -> dict[str, Any]:
    """The `run.finish` report of one session (or, for a harness that only says `Stop`, of the
    part of it since the last report: `first_segment` False leaves out the daemon's counters,
    which cover the whole session; the transcript's figures are the segment's own).  `is_edit(tool)` says which
    tools edit files (the working memory's tool classes), `edit_format_of(tool)` which edit format a
    tool stands for (search_replace, apply_patch, whole_file; the harness rooms know)."""
    calls = [e for e in entries if e.get("e") == "call"]
    tools = list(dict.fromkeys(_s(c, "tool") for c in calls if _s(c, "tool")))
    edits = [c for c in calls if is_edit(_s(c, "tool"))]
    failures = pair_failures(entries)
    failed_edits = sum(1 for f in failures if not f.get("avoided") and is_edit(str(f.get("tool", ""))))
    edits_ok = sum(1 for c in edits if c.get("ok") is True)
    prompts = [_s(e, "text") for e in entries if e.get("e") == "prompt" and _s(e, "text").strip()]
    models = [_s(e, "model") for e in entries if _s(e, "model")]
    stamps = [_at(e) for e in entries if _at(e) > 0]
    report: dict[str, Any] = {
        "run_id": run_id,
        "query": prompts[0] if prompts else "",
        "model": models[-1] if models else "",
        "started_at": min(stamps) if stamps else 0.0,
        "ended_at": max([now, *stamps]),
        "tool_calls": len(calls),
        "tool_errors": sum(1 for c in calls if c.get("ok") is not True),
        "tools_used": tools[:MAX_LIST],
        "files_changed": list(dict.fromkeys(_s(c, "path") for c in edits
                                            if c.get("ok") is True and _s(c, "path")))[:MAX_LIST],
        # Failed commands (the ledger keeps no text of the others; the daemon's are added below).
        "commands": [{"cmd": _s(c, "command"), "ok": c.get("ok") is True}
                     for c in calls if _s(c, "command")][-MAX_LIST:],
        "edits_attempted": len(edits),
        "edits_applied": edits_ok,
        "edits_first_attempt": max(0, edits_ok - failed_edits),
        "failures": failures,
        "command_counts": command_counts(calls),
        "told": told_lines(entries),
        "deleted": deleted_paths(calls),
        "tags": ["hook", harness] if harness else ["hook"],
        # A hook session is one task: done when it did something (a call that worked) and left
        # no failure unresolved — what "✓" says of it in later sessions' memory.
        "planned_tasks": 1,
        "completed_tasks": int(any(c.get("ok") is True for c in calls)
                               and not any(not f.get("resolved_by") and not f.get("avoided")
                                           for f in failures)),
    }
    edit_format = _edit_format(edits, edit_format_of)
    formats = _edits_by_format(edits, edit_format_of)
    if formats:
        report["edit_formats"] = formats
    if edit_format:
        # The edit format the harness's tools imply, and how it fared: procedures learn which
        # format applies for this model, the bandit's posterior for the arm moves.
        report["edit_format"] = edit_format
        stuck = sum(1 for f in failures if not f.get("resolved_by") and is_edit(str(f.get("tool", ""))))
        report["decisions"] = [{"decision": "edit_format", "arm": edit_format, "outcome": {
            "applied": edits_ok > 0 and not stuck, "retries": failed_edits,
            "failed": edits_ok == 0}}]
    counters = snapshot.get("counters") if snapshot else None
    if first_segment and isinstance(counters, Mapping):
        # The daemon saw every call of the session (also those of hooks that could not write
        # the ledger) and knows which were redundant.
        report["tool_calls"] = max(report["tool_calls"], as_count(counters.get("calls")))
        report["tool_errors"] = max(report["tool_errors"], as_count(counters.get("errors")))
        report["redundant_calls"] = as_count(counters.get("redundant"))
        # A command the session's record shows failing failed, whatever a hook told the daemon
        # (a shell hook's payload may carry the output without its exit status).
        failed_cmds = {_s(c, "command") for c in calls if c.get("ok") is not True and _s(c, "command")}
        runs = [{"cmd": c["command"], "ok": c.get("status") != "failed" and c["command"] not in failed_cmds}
                for c in _snapshot_list(snapshot, "commands")
                if isinstance(c, Mapping) and isinstance(c.get("command"), str) and c["command"]]
        # Calls only the transcript saw never reached the daemon's working memory.
        runs += [{"cmd": _s(c, "command"), "ok": c.get("ok") is True} for c in calls
                 if c.get("only_transcript") is True and _s(c, "command")]
        if runs:
            report["commands"] = runs[-MAX_LIST:]
        edited = [p for p in _snapshot_list(snapshot, "files_edited") if isinstance(p, str)]
        report["files_changed"] = list(dict.fromkeys([*report["files_changed"], *edited]))[:MAX_LIST]
    if transcript is not None:  # already limited to this segment by its reader
        report["llm_calls"] = transcript.llm_calls
        report["tokens_in"] = transcript.tokens_in
        report["tokens_out"] = transcript.tokens_out
        report["model"] = report["model"] or transcript.model
        report["query"] = report["query"] or transcript.first_prompt
        if transcript.started_at:
            report["started_at"] = min(x for x in (report["started_at"], transcript.started_at) if x)
    return report
