"""The self-improvement loop on the hook path (issue 12, items 2–4): what `slmactor hook` does
beyond recording a call and fetching the memory block.

* pre-tool events (`PreToolUse`, `BeforeTool`): pre-flight repair of an edit
  (`slmactor.hooks.preflight`); a rewrite goes into the session's ledger;
* tool events: the call goes into the session's ledger and to the daemon (`record_tool`); a
  failed call also asks `evolve.on_failure` and returns the advice as the harness's context for
  that tool event (`slmactor.hooks.advice`), in the harness's own tool names;
* prompt events: the prompt goes into the ledger (the session's query), then the memory block as
  before;
* end events (`SessionEnd`; Codex `Stop`): the session becomes a run report and `run.finish`
  (`slmactor.hooks.session`).

`handle` returns the JSON to print, or None to let `cli/hook.py` do its usual work.  Fail-open
like the rest of the hook: a ledger or daemon problem is one line on stderr and `{}`.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slmactor.cli.context import CliContext, find_project_root
from slmactor.hooks import session


def _warn(text: str) -> None:
    try:
        print(f"slmactor hook: {text}", file=sys.stderr)
    except OSError:
        pass


def handle(ctx: CliContext, hook: Any, payload: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """The JSON to print for this event, or None when `cli/hook.py`'s usual path applies.
    `timeout`: seconds to wait for the daemon per ask."""
    from slmactor.hooks.preflight import PRE_EVENTS

    fmt, event = hook.format, hook.event
    pre = PRE_EVENTS.get(fmt) == event
    ending = event in session.END_EVENTS.get(fmt, frozenset())
    if not (pre or ending or hook.tool_call is not None or hook.wants_context):
        return None
    project = Path(ctx.args.project).resolve() if ctx.args.project else find_project_root(Path(hook.project_dir))
    ledger = session.ledger_path(ctx.runtime_dir, str(project), hook.run_id)
    raw_model = payload.get("model")
    model = raw_model if isinstance(raw_model, str) else ""
    connect = _connector(ctx, project, timeout)
    if pre:
        return _preflight(connect, hook, payload, project, ledger, model)
    if hook.wants_context:
        if hook.query:
            _note(ledger, session.prompt_entry(hook.query, time.time()))
        return None
    if ending:
        _finish(connect, hook, payload, ledger)
        return {}
    return _tool(connect, hook, project, ledger, model)


def _note(ledger: Path, entry: dict[str, Any]) -> None:
    try:
        session.append(ledger, entry)
    except OSError as exc:
        _warn(f"session ledger: {exc}")


def _relative(path: str, project: Path) -> str:
    # Episodes and rules name files relative to the project root.
    if path and os.path.isabs(path) and Path(path).is_relative_to(project):
        return str(Path(path).relative_to(project))
    return path


def _connector(ctx: CliContext, project: Path, timeout: float) -> Callable[[], Any]:
    def connect() -> Any:
        from slmactor.client import Client

        return Client(ctx.runtime_dir, project=project, timeout=timeout, retries=1)

    return connect


def _tool(connect: Callable[[], Any], hook: Any, project: Path, ledger: Path,
          model: str) -> dict[str, Any]:
    from slmactor.client import DaemonUnavailable, RequestFailed
    from slmactor.hooks.advice import advice_text, tool_event_output

    call = hook.tool_call
    call = dataclasses.replace(call, path=_relative(call.path, project))
    if not call.path and call.tool == "apply_patch" and call.command:
        from slmactor.logic.evolve.preflight import patch_paths

        paths = patch_paths(call.command)
        call = dataclasses.replace(call, path=_relative(paths[0], project) if paths else "")
    _note(ledger, session.call_entry(call, model, time.time()))
    text, key = "", ""
    try:
        with connect() as client:
            if not call.ok:
                advice = client.ask_raw("evolve.on_failure", {
                    "run_id": hook.run_id, "tool": call.tool, "message": call.error,
                    "args": call.args, "model": model})
                if isinstance(advice, dict):
                    text = advice_text(hook.format, call.tool, advice)
                    fp = advice.get("fingerprint")
                    key = str(fp.get("id", "")) if isinstance(fp, dict) else ""
            # One key for the failure the call opens and the one evolve.on_failure opened.
            fields = {"run_id": hook.run_id, "tool": call.tool, "path": call.path,
                      "args": call.args, "command": call.command, "error": call.error, "key": key}
            # Raw, and without the fields at their default, as the codec would send it.
            client.ask_raw("record_tool", {**{k: v for k, v in fields.items() if v},
                                           **({} if call.ok else {"ok": False})})
    except (DaemonUnavailable, RequestFailed) as exc:
        _warn(str(exc))
    return tool_event_output(hook.format, hook.event, text)


def _preflight(connect: Callable[[], Any], hook: Any, payload: dict[str, Any], project: Path,
               ledger: Path, model: str) -> dict[str, Any]:
    from slmactor.client import DaemonUnavailable, RequestFailed
    from slmactor.hooks.preflight import run

    def ask(tool: str, message: str, args: str) -> dict[str, Any] | None:
        try:
            with connect() as client:
                answer = client.ask_raw("evolve.on_failure", {
                    "run_id": hook.run_id, "tool": tool, "message": message, "args": args,
                    "model": model})
        except (DaemonUnavailable, RequestFailed) as exc:
            _warn(str(exc))
            return None
        return answer if isinstance(answer, dict) else None

    outcome = run(hook.format, hook.event, payload, project, ask)
    if outcome.entry is not None:
        entry = {**outcome.entry, "at": time.time(), "path": _relative(outcome.entry["path"], project)}
        _note(ledger, entry)
        _warn(outcome.reason)
    return outcome.output


def _finish(connect: Callable[[], Any], hook: Any, payload: dict[str, Any], ledger: Path) -> None:
    from slmactor.client import DaemonUnavailable, RequestFailed

    try:
        with connect() as client:
            session.finish(client, fmt=hook.format, event=hook.event, payload=payload,
                           path=ledger, run_id=hook.run_id)
    except (DaemonUnavailable, RequestFailed) as exc:
        _warn(f"the session was not reported: {exc}")
