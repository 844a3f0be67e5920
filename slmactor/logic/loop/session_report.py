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

Failures are paired with their fix: a failed call is resolved by the next successful call of the
same tool on the same file (or, for a call without a file, with the same command — or, within the
next `FIX_WINDOW` calls, a corrected command a typed repair can be learned from: another
interpreter, wrapper, option or path for the same program or arguments), and reported
with the succeeding arguments as `fixed_args` — so the reflector can recognise the named transform
that turned one into the other and learn it.  Consecutive failures of one call count as attempts
of one failure.  A pre-flight rewrite followed by a successful call is a failure *avoided*:
resolved by the rule that produced the rewrite (`rule:<id>`, fixed from memory) or, for a generic
transform, by `preflight` (the reflector then learns it as a rule).  Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from slmactor.logic.failures.call import ToolCall
from slmactor.logic.loop.transcripts import TranscriptStats, as_count

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


#: A corrected command fixes a failed one only among the calls that follow it this closely.
FIX_WINDOW = 12


def _corrects(failed: Mapping[str, Any], ok: Mapping[str, Any]) -> bool:
    """Whether the successful command `ok` is `failed` corrected: the same tool, the same
    program or the same arguments, and a difference a typed repair names (so an unrelated
    command that merely came next never counts as the fix)."""
    if _s(failed, "tool").lower() != _s(ok, "tool").lower():
        return False
    if _s(failed, "path") or _s(ok, "path") or not _s(failed, "command") or not _s(ok, "command"):
        return False  # not two commands
    key = (_s(failed, "tool"), _s(failed, "command"), _s(ok, "tool"), _s(ok, "command"))
    if len(key[1]) + len(key[3]) > MAX_MEMO_COMMANDS:
        return _commands_correct(*key)
    return _commands_correct_memo(*key)


#: Pairs of commands up to this long together are judged once per process: a history repeats
#: its commands, and a failure is weighed against each of the calls that follow it.
MAX_MEMO_COMMANDS = 4096


def _commands_correct(failed_tool: str, failed: str, ok_tool: str, ok: str) -> bool:
    """`_corrects` of two shell calls, by their tools and commands."""
    from slmactor.logic.evolve import typed_repairs

    a = typed_repairs.Call(failed_tool, {"command": failed}, "shell")
    b = typed_repairs.Call(ok_tool, {"command": ok}, "shell")
    if typed_repairs.norm_command(a.command) == typed_repairs.norm_command(b.command):
        return False
    last_a, last_b = a.command.split()[-1:], b.command.split()[-1:]
    shares = typed_repairs.same_target(a, b) or (last_a == last_b and not last_a[0].startswith("-"))
    return shares and typed_repairs.infer(a, b, "") is not None


_commands_correct_memo = lru_cache(maxsize=1024)(_commands_correct)


@dataclass
class _Open:
    """A failure waiting for its fix."""

    call: Mapping[str, Any]
    attempts: int = 1
    rule_id: str = ""
    preflight: Mapping[str, Any] | None = None
    #: Index of the call among the session's calls (the window of a corrected command).
    index: int = 0


def _failure(open_: _Open, fix: Mapping[str, Any] | None) -> dict[str, Any]:
    call = open_.call
    out: dict[str, Any] = {"tool": _s(call, "tool"), "message": _s(call, "error"),
                           "attempts": open_.attempts}
    # The hook's fingerprint of it, and what any other path fingerprints it by: one id.
    for key, name in (("key", "fingerprint"), ("family", "family"), ("command", "command")):
        if _s(call, key):
            out[name] = _s(call, key)
    code = call.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        out["exit_code"] = code
    if _s(call, "args"):
        out["failed_args"] = _s(call, "args")
    if _s(call, "model"):
        out["model"] = _s(call, "model")
    if open_.rule_id:
        out["rule_id"] = open_.rule_id
    if fix is None:
        return out
    fixed_args = _s(fix, "args")
    if fixed_args:
        out["fixed_args"] = fixed_args
    if (fixed_args and fixed_args != _s(call, "args")) or _s(fix, "tool") != _s(call, "tool"):
        out["resolved_by"] = "llm"
        out["resolution"] = _what_fixed(call, fix)
    else:
        out["resolved_by"] = "retry"
        where = _s(call, "path") or _s(call, "command")
        out["resolution"] = f"the same {_s(fix, 'tool')} call on {where} succeeded when run again"
    return out


#: What a transform between the failed and the fixing arguments did, in words for a model.
_TRANSFORM_WORDS = {
    "strip_line_number_prefix": "the same edit without the read tool's line-number gutter",
    "trim_trailing_whitespace": "the same edit without the trailing whitespace",
    "unfence_code": "the same content without the Markdown code fence",
    "shrink_old_str": "the same edit with a shorter old text",
    "set_replace_all": "the same edit with replace_all set",
}


def _what_fixed(call: Mapping[str, Any], fix: Mapping[str, Any]) -> str:
    """The fix in words with its content: the corrected command, the changed setting, the other
    tool, the reading first — never "another call succeeded with other arguments"."""
    from slmactor.logic.evolve import typed_repairs
    from slmactor.logic.evolve.transforms import infer_transform
    from slmactor.logic.failures.fingerprint import fingerprint

    tool, fix_tool = _s(call, "tool"), _s(fix, "tool")
    where = _s(call, "path") or _s(call, "command")
    if fix_tool.lower() == tool.lower() and _s(call, "args") and _s(fix, "args"):
        name = infer_transform(_s(call, "args"), _s(fix, "args"))
        if name in _TRANSFORM_WORDS:
            return f"{_TRANSFORM_WORDS[name]} ({tool} on {where})"
    swap = (f"`{typed_repairs.norm_command(_s(fix, 'command'))}` instead of "
            f"`{typed_repairs.norm_command(_s(call, 'command'))}`")
    reread = f"reading {where} again, then {tool} again with its text copied from what it holds"
    cls = fingerprint(ledger_call(call)).cls
    failed_args = typed_repairs.parse_args(_s(call, "args"))
    fixed_args = typed_repairs.parse_args(_s(fix, "args"))
    if failed_args is not None and fixed_args is not None:
        failed = typed_repairs.Call(tool, failed_args)
        repair = typed_repairs.infer(failed, typed_repairs.Call(fix_tool, fixed_args), cls)
        if repair is not None and repair.kind == "substitute_command":
            return swap
        if repair is not None and repair.kind == "precondition" and "Read the file" in repair.guidance:
            return reread
        if repair is not None:
            return typed_repairs.named_fix(repair, failed)
    if _s(fix, "command") and not _s(call, "path"):
        return swap
    if fix_tool.lower() != tool.lower():
        return f"{fix_tool} instead of {tool} on {where}"
    if cls in typed_repairs.REREAD_EDIT:
        # Arguments the ledger could not parse (a freeform patch): the fix was still its text
        # taken anew from the file.
        return reread
    return f"a corrected {tool} on {where}"


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
    """The session's failures as run-report failure events, each paired with its fix if any."""
    pending: list[_Open] = []
    rewritten: list[Mapping[str, Any]] = []
    done: list[dict[str, Any]] = []
    index = 0
    for entry in entries:
        kind = entry.get("e")
        if kind == "preflight":
            rewritten.append(entry)
            continue
        if kind != "call":
            continue
        index += 1
        pre = next((p for p in rewritten if _rewritten_as(p, entry)), None)
        if pre is not None:
            rewritten.remove(pre)
            if entry.get("ok") is True:
                done.append(_avoided(pre, ok=True))
                continue
        if entry.get("ok") is True:
            fixed = [o for o in pending if _same_call(o.call, entry)]
            if not fixed:
                fixed = [o for o in pending
                         if index - o.index <= FIX_WINDOW and _corrects(o.call, entry)][:1]
            for open_ in fixed:
                pending.remove(open_)
                done.append(_failure(open_, entry))
            continue
        same = next((o for o in pending if _same_call(o.call, entry)), None)
        if same is not None:
            # Another attempt of the same call: the newest arguments are the ones to compare
            # with the fix.
            same.call, same.attempts = entry, same.attempts + 1
        else:
            pending.append(_Open(entry, rule_id=_s(pre, "rule_id") if pre else "", preflight=pre,
                                 index=index))
    done.extend(_failure(o, None) for o in pending)
    done.extend(_avoided(p, ok=False) for p in rewritten if _s(p, "rule_id"))
    return done[:MAX_FAILURES]


def ledger_call(entry: Mapping[str, Any], family_of: Callable[[str], str] | None = None) -> ToolCall:
    """The call a ledger `call` entry keeps: its arguments are in the shared words already, so
    each names itself (`words` is the identity on the shared words it holds). `family_of` names
    the family of an entry written before entries kept it."""
    from slmactor.logic.evolve.typed_repairs import parse_args

    tool = _s(entry, "tool")
    family = _s(entry, "family") or (family_of(tool) if family_of is not None else "")
    code = entry.get("exit_code")
    return ToolCall.in_shared_words(
        tool, family or tool.lower(), parse_args(_s(entry, "args")) or {},
        command=_s(entry, "command"), path=_s(entry, "path"), ok=entry.get("ok") is not False,
        error=_s(entry, "error"), call_id=_s(entry, "id"),
        exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None)


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
        "tags": ["hook", harness] if harness else ["hook"],
        # A hook session is one task: done when it did something (a call that worked) and left
        # no failure unresolved — what "✓" says of it in later sessions' memory.
        "planned_tasks": 1,
        "completed_tasks": int(any(c.get("ok") is True for c in calls)
                               and not any(not f.get("resolved_by") and not f.get("avoided")
                                           for f in failures)),
    }
    edit_format = _edit_format(edits, edit_format_of)
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
