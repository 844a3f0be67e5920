"""The self-improvement loop on the hook path: what a hook does beyond
recording a call and fetching the memory block.  Independent of how the command line was parsed
and how the daemon is reached: the caller passes the project root, the runtime directory and an
`ask(kind, fields)` that returns the daemon's reply or None (daemon down, timeout, error — it
never raises), so every step here fails open.

* pre-tool events (the room's `pre_event`): pre-flight repair of an edit
  (`slmactor.hooks.preflight`); a rewrite goes into the session's ledger;
* tool events: the call goes into the ledger and to the daemon (`record_tool`); a failed call
  also asks `evolve.on_failure` and gets the advice back as the harness's context for that tool
  event (`slmactor.hooks.advice`), in the harness's own tool names;
* prompt events: the prompt goes into the ledger (the session's query); the caller then fetches
  the memory block as before;
* end events (the room's `end_events`): the session becomes a run report and `run.finish`
  (`slmactor.hooks.session`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from slmactor import harnesses
from slmactor.hooks import session
from slmactor.logic.failures.call import ToolCall

#: (kind, raw fields) → the daemon's reply, or None when there is none (never raises).
Ask = Callable[[str, dict[str, Any]], Any]


def warn(text: str) -> None:
    try:
        print(f"slmactor hook: {text}", file=sys.stderr)
    except OSError:
        pass


def handle(hook: Any, payload: Mapping[str, Any], project: Path, runtime_dir: Path,
           ask: Ask, *, settle_until: float = 0.0, harness_pid: int = 0) -> dict[str, Any] | None:
    """The harness JSON to print for this event, or None when the caller's usual path applies
    (context events, and events the loop has nothing to do with). `settle_until`: for an end
    event reported by a detached child, how long (a `time.monotonic()` deadline) the `harness_pid`
    process may take to exit and its transcript to settle before it is read (`session.settle`)."""
    room = harnesses.get(hook.harness)
    event = hook.event
    pre = bool(room.pre_event) and room.pre_event == event
    pre_tool = hook.tool_call.tool if hook.tool_call is not None else None
    shell = room.preflight_shell and hook.tool_call is not None and hook.tool_call.family == "shell"
    read = bool(room.read_limit) and pre_tool in room.preflight_reads
    if pre and not room.is_preflight_tool(pre_tool) and not shell and not read:
        return {}  # pre-flight looks at edits (and shell calls and reads where allowed) only
    ending = event in room.end_events
    wants_context = _wants_context(hook)
    # A pre-tool event also carries its tool call (not yet run): only a finished one is recorded.
    tool_done = hook.tool_call is not None and getattr(hook, "action", "record") == "record"
    if not (pre or ending or tool_done or wants_context):
        return None
    ledger = session.ledger_path(runtime_dir, str(project), hook.run_id)
    raw_model = payload.get("model")
    model = raw_model if isinstance(raw_model, str) else ""
    if pre:
        return preflight(hook, payload, project, ledger, model, ask)
    if wants_context:
        if hook.query:
            told = session.told_lines(session.read_ledger(ledger))
            query = session.without_injected(hook.query, told) if told else hook.query
            if query:
                note(ledger, session.prompt_entry(query, time.time()))
        if event in room.start_events:
            session.recover(ask, ledger.parent, skip=ledger)  # sessions that ended unreported
        return None
    if ending:
        if finish(hook, payload, ledger, ask, project, settle_until, harness_pid):
            session.recover(ask, ledger.parent, skip=ledger)
        return {}
    return tool_event(hook, payload, project, ledger, model, ask)


def replay_spool(runtime_dir: Path, resolve_project: Callable[[str, str], Path]) -> int:
    """File the events spooled while the breaker was open into their sessions' ledgers: calls and
    prompts as entries, a session's end as a report pending (sent by `session.recover`). How
    many events were filed. `resolve_project(given, dir)` is the project root: the hook's
    `--project` when it had one, else that of the harness's dir."""
    import json

    from slmactor.hooks import dialects, spool

    filed = 0
    for item in spool.take(str(runtime_dir)):
        harness, event = str(item.get("fmt", "")), str(item.get("event", ""))
        room = harnesses.find(harness)
        if room is None:
            continue
        try:
            payload = json.loads(str(item.get("payload", "")) or "{}")
        except ValueError:
            continue
        if not isinstance(payload, dict):
            continue
        event = dialects.event_name(harness, event, payload)
        env = {room.project_env: str(item.get("project_env", ""))} if room.project_env else {}
        hook = dialects.parse(harness, event, payload, env, str(item.get("cwd", "")) or "/")
        project = resolve_project(str(item.get("project", "")), hook.project_dir)
        ledger = session.ledger_path(runtime_dir, str(project), hook.run_id)
        stamp = item.get("at")
        at = float(stamp) if isinstance(stamp, (int, float)) else time.time()
        if hook.action == "record" and hook.tool_call is not None:
            call = hook.tool_call
            edit = call.kind == "edit" or room.is_preflight_tool(call.tool)
            note(ledger, session.call_entry(call, relative(call.path, project), "", at, edit=edit))
        elif hook.action == "context" and hook.query:
            note(ledger, session.prompt_entry(hook.query, at))
        elif event in room.end_events:
            session.mark_pending(ledger, harness=harness, event=event, payload=payload, run_id=hook.run_id,
                                 project=str(project))
        filed += 1
    return filed


def _wants_context(hook: Any) -> bool:
    """A context event (session start, prompt), in either shape of the normalised event."""
    action = getattr(hook, "action", None)
    return action == "context" if action is not None else bool(getattr(hook, "wants_context", False))


def note(ledger: Path, entry: dict[str, Any]) -> None:
    try:
        session.append(ledger, entry)
    except OSError as exc:
        warn(f"session ledger: {exc}")


def relative(path: str, project: Path) -> str:
    """A path inside the project relative to its root (episodes and rules name files so)."""
    if path and os.path.isabs(path) and Path(path).is_relative_to(project):
        return str(Path(path).relative_to(project))
    return path


def tool_event(hook: Any, payload: Mapping[str, Any], project: Path, ledger: Path, model: str,
               ask: Ask) -> dict[str, Any]:
    """Ledger, advice on a failure, `record_tool`; the harness JSON carrying the advice."""
    from slmactor.harnesses.base import MAX_CALL_ERROR, clip, shared_json
    from slmactor.hooks.advice import advice_text
    from slmactor.hooks.dialects import output

    room = harnesses.get(hook.harness)
    call = hook.tool_call
    path = relative(call.path, project)
    edit = call.kind == "edit" or room.is_preflight_tool(call.tool)
    text, key = "", ""
    # A read the harness cut (its own notice): the call succeeded, its output was too large to
    # show. It is recorded as that failure of the output (advice names the bounded read; the
    # next bounded read of the same file is learned as its fix), never opened in working memory.
    notice = room.truncation(call.tool, hook.event, payload) if call.ok else ""
    # A command the harness moved to the background when it outlived its time limit: it did
    # not return (a server in the foreground), recorded as that; the harness keeps it running.
    outlived = room.outlived(call.tool, hook.event, payload) if call.ok and not notice else ""
    recorded_ok = call.ok
    if notice or outlived:
        from dataclasses import replace

        call = replace(call, ok=False, error=f"output too large: {notice}" if notice else
                       f"timed out: {outlived}")
        notice = notice or outlived
    advice: Any = None
    if not call.ok:
        # The call crosses as the map its room built: the daemon parses none of it again.
        advice = ask("evolve.on_failure", {"run_id": hook.run_id, "call": call.to_wire(),
                                           "model": model, **({"open": False} if notice else {})})
        if isinstance(advice, dict):
            text = advice_text(hook.harness, call.tool, advice)
            fp = advice.get("fingerprint")
            # No failure at all (an empty search, a probe's "no"): nothing was opened to key.
            key = "" if advice.get("benign") is True or not isinstance(fp, dict) else str(
                fp.get("id", ""))
            # `path_hints.MISSING_CLASSES`, not imported for it: most failures name no path,
            # and the module (its patterns, dataclasses) costs ~20 ms of hook start-up.
            if isinstance(fp, dict) and fp.get("class") in ("file_not_found", "path_not_found"):
                text = _with_path_hint(text, call, project)
            if outlived and (not isinstance(fp, dict) or fp.get("class") != "server_no_return"):
                # A long build or test run the harness kept running is no failure: only a
                # command that serves (its words, or its output saying it listens) is.
                from dataclasses import replace

                call, text, key = replace(call, ok=True, error=""), "", ""
    if call.ok:
        before = session.read_ledger(ledger)  # read once: both look back at this session's calls
        if edit and path:
            _resolve_fixed(hook, call.tool, path, before, ask)
        _learn_fix(hook, call, path, before, ledger, ask)
        if room.says_rewrite_after:
            text = _rewrite_said(call, path, before)
    entry = session.call_entry(call, path, model, time.time(), edit=edit)
    note(ledger, {**entry, "key": key} if key else entry)
    if text:
        # What reached the model, with the records it rests on: `memory audit` checks it.
        rule = advice.get("rule_id", "") if isinstance(advice, dict) else ""
        claim = advice.get("claim") if isinstance(advice, dict) else None
        records = claim.get("evidence") if isinstance(claim, dict) else None
        note(ledger, session.told_entry(text, time.time(), channel="advice", evidence=list(
            dict.fromkeys(e for e in (str(rule or ""), key, *(
                records if isinstance(records, list) else ())) if isinstance(e, str) and e))))
    # One key for the failure the call opens and the one evolve.on_failure opened; raw, and
    # without the fields at their default, as the codec would send it.
    fields = {"run_id": hook.run_id, "tool": call.tool, "path": path,
              "args": clip(shared_json(call), MAX_CALL_ERROR), "command": call.command,
              "error": "" if recorded_ok else call.error, "key": "" if recorded_ok else key}
    ask("record_tool", {**{k: v for k, v in fields.items() if v},
                        **({} if recorded_ok else {"ok": False})})
    if not call.ok and text and not notice:
        carried = room.failure_output(hook.event, call.error, text, hook.payload)
        if carried is not None:
            return carried
    return output(hook.harness, hook.event, text)


def _rewrite_said(call: ToolCall, path: str, before: list[dict[str, Any]]) -> str:
    """The announcement of the pre-flight rewrite this call ran as ("" when it was none): the
    session's last ledger entry, a rewrite into this very command (or read of this file)."""
    pre = before[-1] if before else {}
    if pre.get("e") != "preflight" or not isinstance(pre.get("said"), str):
        return ""
    if call.command and not path:
        return pre["said"] if pre.get("cmd") == session.command_digest(call.command) else ""
    return pre["said"] if path and pre.get("path") == path else ""


def _with_path_hint(text: str, call: Any, project: Path) -> str:
    """The advice, with where the missing path probably is, read from the project on disk
    (memory's advice says what to do; the disk says what exists now)."""
    from slmactor.hooks.path_search import hint

    found = hint(call.error, call.path, project)
    if not found:
        return text
    return f"{text}\n{found}" if text else f"slmactor: {found}"


def _resolve_fixed(hook: Any, tool: str, path: str, entries: list[dict[str, Any]], ask: Ask) -> None:
    """A successful edit of a file whose last edit by the same tool failed fixes that failure:
    working memory shows it as already fixed from now on (the session's report pairs them).
    `entries`: the session's ledger before this call."""
    last: dict[str, Any] | None = None
    for entry in entries:
        if entry.get("e") == "call" and entry.get("tool") == tool and entry.get("path") == path:
            last = entry
    key = last.get("key") if last is not None and last.get("ok") is False else None
    if isinstance(key, str) and key:
        ask("resolve", {"run_id": hook.run_id, "key": key, "resolved_by": "llm",
                        "resolution": f"the next {tool} call on {path} succeeded"})


#: How many ledger calls back a successful call may be the fix of a failure.
FIX_WINDOW = 12


def _learn_fix(hook: Any, call: ToolCall, path: str, before: list[dict[str, Any]], ledger: Path,
               ask: Ask) -> None:
    """A successful call that got past a recent failure by an exact typed difference on the
    same target (`logic.evolve.fixes`: what a fix is) — `evolve.resolved` with both calls, so
    the rules actor learns the repair between them (once per failure: a `learned` entry marks
    it). The same call run again, another target, other content: nothing is learned here (the
    session's report says what happened between). `before`: the session's ledger before this
    call."""
    entries = [e for e in before if e.get("e") in ("call", "learned")]
    learned = {e.get("key") for e in entries if e.get("e") == "learned"}
    calls = [e for e in entries if e.get("e") == "call"][-FIX_WINDOW:]
    open_failures = [e for e in calls if e.get("ok") is False and isinstance(e.get("key"), str)
                     and e["key"] and e["key"] not in learned]
    if not open_failures:
        return  # most successful calls follow no failure: no repair logic to load (hook start-up)
    from slmactor.logic.evolve import fixes
    from slmactor.logic.loop.session_report import ledger_call

    records = [ledger_call(e, harnesses.tool_family) for e in calls]
    records.append(call)
    last = len(records) - 1
    for outcome in reversed(fixes.outcomes(records)):
        entry = calls[outcome.index]
        key = entry.get("key")
        if outcome.fixed_at != last or not isinstance(key, str) or key not in {
                e["key"] for e in open_failures}:
            continue
        note(ledger, {"e": "learned", "key": key, "at": time.time()})
        failed = records[outcome.index]
        if outcome.fix is not None and outcome.fix.kind in ("typed", "transform", "switch"):
            resolution = outcome.fix.text
        elif fixes.prepared_otherwise(failed, call):
            # Other steps before the same goal (a runtime activated first): what the project's
            # environment needed, learned as its environment fact.
            resolution = f"`{call.command}` got past it"
        else:
            return  # resolved, but no repair in the difference
        ask("evolve.resolved", {"run_id": hook.run_id, "fingerprint": key,
                                "failed": failed.to_wire(), "fixed": call.to_wire(),
                                "resolution": resolution})
        return


def preflight(hook: Any, payload: Mapping[str, Any], project: Path, ledger: Path, model: str,
              ask: Ask) -> dict[str, Any]:
    """Pre-flight repair of an edit; the harness JSON with the rewritten input, or `{}`."""
    from slmactor.hooks.preflight import run

    foreseen: list[tuple[str, str, str]] = []

    def advise(call: ToolCall) -> dict[str, Any] | None:
        # A failure foreseen, not had: looked up without opening it in working memory (the
        # call may still run unchanged, and fail on its own terms, which its tool event records).
        answer = ask("evolve.on_failure", {"run_id": hook.run_id, "call": call.to_wire(),
                                           "model": model, "open": False})
        if not isinstance(answer, dict):
            return None
        fp = answer.get("fingerprint")
        if isinstance(fp, dict) and isinstance(fp.get("id"), str) and fp["id"]:
            foreseen.append((fp["id"], call.tool, call.error))
        return answer

    def rewrite(call: ToolCall) -> dict[str, Any] | None:
        answer = ask("evolve.preflight", {"run_id": hook.run_id, "call": call.to_wire()})
        return answer if isinstance(answer, dict) else None

    outcome = run(hook.harness, hook.tool_call, payload, project, advise, rewrite)
    if outcome.entry is not None:
        entry = outcome.entry
        if foreseen:
            entry = {**entry, "key": foreseen[0][0]}  # the failure avoided, by its one id
        note(ledger, {**entry, "at": time.time(), "path": relative(entry["path"], project),
                      **({"said": outcome.reason} if harnesses.get(hook.harness).says_rewrite_after
                         else {})})
        warn(outcome.reason)
        for key, tool, message in foreseen:
            # The rewrite avoided it: working memory shows it as fixed before it happened.
            ask("fail", {"run_id": hook.run_id, "key": key, "tool": tool, "message": message})
            ask("resolve", {"run_id": hook.run_id, "key": key,
                            "resolution": f"rewritten before the call ({entry['transform']})",
                            "resolved_by": f"rule:{entry['rule_id']}" if entry["rule_id"] else "preflight"})
    return outcome.output


def finish(hook: Any, payload: Mapping[str, Any], ledger: Path, ask: Ask, project: Path | None = None,
           settle_until: float = 0.0, harness_pid: int = 0) -> bool:
    """The session's (or segment's) `run.finish`; kept for a later hook event if unsent.
    Whether the daemon took it."""
    reply = session.finish(ask, harness=hook.harness, event=hook.event, payload=payload, path=ledger,
                           run_id=hook.run_id, project=str(project) if project is not None else "",
                           settle_until=settle_until, harness_pid=harness_pid)
    if reply is None and ledger.exists():
        warn("the session was not reported (the daemon did not answer); a later hook event will")
    return reply is not None
