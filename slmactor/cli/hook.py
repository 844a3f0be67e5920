"""`slmactor hook <format> [Event]`: the command a harness's hook configuration runs.

Reads the harness's hook JSON on stdin, records a finished tool call (`record_tool`, sent as an
acknowledged ask on ctl.sock: a one-shot process that exits right after a PUSH send could lose
it) or fetches the memory block for a session start / prompt, and prints the harness's JSON.

Fail-open, always: whatever happens — daemon down or slow, bad stdin, an error reply — it prints
valid JSON (`{}` when there is nothing to add) and exits 0, so a memory problem never blocks the
agent. What went wrong goes to stderr in one line. Only SessionStart may start the daemon (unless
`--no-autostart`); tool events never wait for a start.

`slmactor hook config <format>` prints the hooks block to merge into the harness's settings.
"""

from __future__ import annotations

import sys
from typing import Any

from slmactor.cli.context import EXIT_OK, CliContext

#: Longest hook payload read from stdin (a tool response can be large; the rest is ignored).
MAX_STDIN = 4 << 20
#: Seconds a hook waits for the daemon at most (per attempt; one attempt).
HOOK_TIMEOUT = 2.0


def register(sub: Any) -> None:
    from slmactor.hooks.dialects import FORMATS

    for fmt in FORMATS:
        p = sub.add_parser(fmt, help=f"handle a {fmt} hook event (JSON on stdin, JSON on stdout)")
        p.add_argument("event", nargs="?", help="the hook event (default: read from the payload)")
        p.add_argument("--role", default="worker", help="memory block role (default: worker)")
        p.add_argument("--budget", type=int, default=0, help="memory block tokens (0 = daemon default)")
        p.set_defaults(func=cmd_hook, hook_format=fmt)
    p = sub.add_parser("config", help="print the hooks block for a harness's settings file")
    p.add_argument("format", choices=FORMATS, help="the harness")
    p.set_defaults(func=cmd_config)


def _read_payload() -> dict[str, Any]:
    import json

    try:
        raw = sys.stdin.buffer.read(MAX_STDIN) if sys.stdin is not None else b""
        data = json.loads(raw.decode("utf-8", errors="replace")) if raw.strip() else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _say(data: dict[str, Any]) -> None:
    import json

    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _warn(text: str) -> None:
    try:
        print(f"slmactor hook: {text}", file=sys.stderr)
    except OSError:
        pass


def cmd_hook(ctx: CliContext) -> int:
    """Always exit 0 with valid JSON on stdout."""
    fmt: str = ctx.args.hook_format
    event = ""
    try:
        import os

        from slmactor.hooks import dialects as hooks

        payload = _read_payload()
        event = hooks.event_name(fmt, ctx.args.event, payload)
        hook = hooks.parse(fmt, event, payload, os.environ, os.getcwd())
        from slmactor.cli.hook_loop import handle

        # Pre-flight repair, the session ledger, advice on failures, the session's end.
        out = handle(ctx, hook, payload, min(ctx.args.timeout, HOOK_TIMEOUT))
        _say(out if out is not None else hooks.output(fmt, event, _act(ctx, hook)))
    except Exception as exc:  # noqa: BLE001 - fail open: the harness must never be blocked by us
        _warn(f"{type(exc).__name__}: {exc}")
        _say({})
    return EXIT_OK


def _act(ctx: CliContext, hook: Any) -> str:
    """Talk to the daemon; returns the context text ("" for tool events or on any failure)."""
    import dataclasses
    import os
    from pathlib import Path

    from slmactor.cli.context import find_project_root
    from slmactor.client import Client, DaemonUnavailable, RequestFailed, listener_alive

    if hook.tool_call is None and not hook.wants_context:
        return ""
    project = Path(ctx.args.project).resolve() if ctx.args.project else find_project_root(Path(hook.project_dir))
    runtime_dir = ctx.runtime_dir
    if (hook.event == "SessionStart" and not ctx.args.no_autostart
            and not listener_alive(runtime_dir / "ctl.sock")):
        from slmactor.cli.autostart import start_daemon

        try:
            start_daemon(runtime_dir, quiet=True)
        except RuntimeError as exc:
            _warn(str(exc))
            return ""
    timeout = min(ctx.args.timeout, HOOK_TIMEOUT)
    try:
        with Client(runtime_dir, project=project, timeout=timeout, retries=1) as client:
            if hook.tool_call is not None:
                call = hook.tool_call
                if os.path.isabs(call.path) and Path(call.path).is_relative_to(project):
                    # Episodes and rules name files relative to the project root.
                    call = dataclasses.replace(call, path=str(Path(call.path).relative_to(project)))
                # Raw asks: building the message classes would cost this one-shot process more
                # than the round trip. Defaults are left out, as the codec would.
                client.ask_raw("record_tool", without_defaults({
                    "run_id": hook.run_id, "tool": call.tool, "path": call.path, "args": call.args,
                    "command": call.command, "ok": call.ok, "error": call.error,
                }, RECORD_TOOL_DEFAULTS))
                return ""
            result = client.ask_raw("memory.block", without_defaults({
                "role": ctx.args.role, "budget": max(ctx.args.budget, 0), "query": hook.query,
                "run_id": hook.run_id,
            }, MEMORY_BLOCK_DEFAULTS))
    except (DaemonUnavailable, RequestFailed) as exc:
        _warn(str(exc))
        return ""
    text = result.get("text", "") if isinstance(result, dict) else ""
    return text if isinstance(text, str) else ""


#: The defaults of `RecordTool` / `MemoryBlock` for the fields a hook sends (a test keeps them
#: equal to the message classes).
RECORD_TOOL_DEFAULTS: dict[str, Any] = {
    "run_id": "", "tool": "", "path": "", "args": "", "command": "", "ok": True, "error": "",
}
MEMORY_BLOCK_DEFAULTS: dict[str, Any] = {"role": "", "budget": 0, "query": "", "run_id": ""}


def without_defaults(fields: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """Drop the fields equal to their default, as `codec.dump` does."""
    return {
        k: v for k, v in fields.items() if not (type(v) is type(defaults[k]) and v == defaults[k])
    }


def cmd_config(ctx: CliContext) -> int:
    from slmactor.cli.service import shell_join, slmactor_command
    from slmactor.hooks.dialects import settings_snippet

    ctx.emit(settings_snippet(ctx.args.format, shell_join(slmactor_command())), None)
    return EXIT_OK
