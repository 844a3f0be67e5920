"""Harness hook dialects: turn a harness's hook JSON into slmactor requests, and back.

One command, `slmactor hook <format> <Event>`, serves every harness whose hooks are shell commands
fed JSON on stdin (clients/HOOKS.md): Claude Code and Codex CLI (the same schema), Gemini CLI,
and OpenHands. This module is the pure half — no I/O, no sockets — so each dialect is tested
with the payloads the harnesses really send; `slmactor/cli/hook.py` does the talking.

    tool events    (claude/codex PostToolUse, PostToolUseFailure; gemini AfterTool;
                    openhands PostToolUse)         → one `record_tool` for the session's run
    context events (SessionStart; claude/codex/openhands UserPromptSubmit; gemini BeforeAgent)
                                                   → a `memory.block` whose text goes back as
                                                     the harness's additionalContext
    anything else                                  → nothing; `{}` is printed

Output shapes: claude/codex/gemini `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`,
openhands top-level `{"additionalContext"}`; `{}` when there is nothing to add.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FORMATS = ("claude", "codex", "gemini", "openhands")

TOOL_EVENTS: dict[str, frozenset[str]] = {
    "claude": frozenset({"PostToolUse", "PostToolUseFailure"}),
    "codex": frozenset({"PostToolUse"}),
    "gemini": frozenset({"AfterTool"}),
    "openhands": frozenset({"PostToolUse"}),
}
CONTEXT_EVENTS: dict[str, frozenset[str]] = {
    "claude": frozenset({"SessionStart", "UserPromptSubmit"}),
    "codex": frozenset({"SessionStart", "UserPromptSubmit"}),
    "gemini": frozenset({"SessionStart", "BeforeAgent"}),
    "openhands": frozenset({"SessionStart", "UserPromptSubmit"}),
}
#: Where each harness says which project it works in (environment first: it is the root the
#: harness was started in, while the payload's cwd follows `cd`).
PROJECT_ENV = {
    "claude": "CLAUDE_PROJECT_DIR",
    "codex": "CODEX_PROJECT_DIR",
    "gemini": "GEMINI_PROJECT_DIR",
    "openhands": "OPENHANDS_PROJECT_DIR",
}

#: Caps below the wire caps of `record_tool` (args/error 16 KiB, command 4 KiB), in characters.
MAX_ARGS = 16_000
MAX_ERROR = 16_000
MAX_COMMAND = 4_000
MAX_QUERY = 4_000
_PATH_KEYS = ("file_path", "filePath", "absolute_path", "notebook_path", "path", "dir_path")
_EXIT_KEYS = ("exit_code", "exitCode", "returncode", "return_code")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One finished tool call, as `record_tool` wants it."""

    tool: str
    path: str = ""
    args: str = ""
    command: str = ""
    ok: bool = True
    error: str = ""


@dataclass(frozen=True, slots=True)
class HookInput:
    """What one hook invocation asks slmactor for."""

    format: str
    event: str
    project_dir: str
    run_id: str
    #: Set for tool events.
    tool_call: ToolCall | None = None
    #: True for context events; `query` is the user's prompt when there is one.
    wants_context: bool = False
    query: str = ""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _as_json(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def _command(tool_input: Mapping[str, Any]) -> str:
    command = tool_input.get("command")
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        # Codex's shell tool: ["bash", "-lc", "pytest -q"]; keep the script when it is a shell -c.
        if len(command) == 3 and command[1] in {"-c", "-lc"}:
            return str(command[2])
        return shlex.join(command)
    return _text(command)


def _path(tool_input: Mapping[str, Any]) -> str:
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _error_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in ("message", "error", "reason"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return _as_json(value) if value else ""


def _outcome(response: Any, metadata: Mapping[str, Any]) -> tuple[bool, str]:
    """(ok, error) from a tool response: explicit failure flags, an error, a non-zero exit."""
    sources = [m for m in (response, metadata) if isinstance(m, Mapping)]
    for src in sources:
        error = src.get("error")
        if error and _error_text(error):
            return False, _error_text(error)
        if src.get("success") is False or src.get("is_error") is True or src.get("isError") is True:
            text = _text(src.get("stderr")) or _text(src.get("message")) or _text(src.get("output"))
            return False, text or "the tool reported failure"
        for key in _EXIT_KEYS:
            code = src.get(key)
            if isinstance(code, int) and not isinstance(code, bool) and code != 0:
                stderr = _text(src.get("stderr")).strip()
                return False, stderr[-MAX_ERROR:] if stderr else f"exit status {code}"
        if src.get("interrupted") is True:
            return False, "interrupted"
    return True, ""


def _tool_call(fmt: str, event: str, payload: Mapping[str, Any]) -> ToolCall | None:
    tool = _text(payload.get("tool_name")).strip()
    if not tool:
        return None
    raw_input = payload.get("tool_input")
    tool_input: Mapping[str, Any] = raw_input if isinstance(raw_input, Mapping) else {}
    if fmt == "openhands":
        meta = payload.get("metadata")
        ok, error = _outcome(meta if isinstance(meta, Mapping) else {}, {})
    else:
        ok, error = _outcome(payload.get("tool_response"), {})
    if event == "PostToolUseFailure":
        ok, error = False, _error_text(payload.get("error")) or error or "the tool failed"
    args = _as_json(raw_input) if raw_input not in (None, "", {}) else ""
    return ToolCall(
        tool=_clip(tool, 200),
        path=_clip(_path(tool_input), 4000),
        args=_clip(args, MAX_ARGS),
        command=_clip(_command(tool_input), MAX_COMMAND),
        ok=ok,
        error=_clip(error.strip(), MAX_ERROR) if not ok else "",
    )


def event_name(fmt: str, given: str | None, payload: Mapping[str, Any]) -> str:
    """The event from the command line, else from the payload."""
    if given:
        return given
    key = "event_type" if fmt == "openhands" else "hook_event_name"
    return _text(payload.get(key))


def parse(fmt: str, event: str, payload: Mapping[str, Any], env: Mapping[str, str], cwd: str) -> HookInput:
    """Read one hook invocation. Never raises for odd payloads: unknown shapes ask for nothing."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown hook format {fmt!r}")
    project = (
        env.get(PROJECT_ENV[fmt], "")
        or _text(payload.get("working_dir" if fmt == "openhands" else "cwd"))
        or cwd
    )
    session = _text(payload.get("session_id")) or (env.get("OPENHANDS_SESSION_ID", "") if fmt == "openhands" else "")
    run_id = _clip(session.strip(), 200) or "default"
    if event in TOOL_EVENTS[fmt]:
        return HookInput(fmt, event, project, run_id, tool_call=_tool_call(fmt, event, payload))
    if event in CONTEXT_EVENTS[fmt]:
        prompt = _text(payload.get("message" if fmt == "openhands" else "prompt"))
        return HookInput(fmt, event, project, run_id, wants_context=True, query=_clip(prompt.strip(), MAX_QUERY))
    return HookInput(fmt, event, project, run_id)


def output(fmt: str, event: str, context: str) -> dict[str, Any]:
    """The JSON the harness expects on stdout; `{}` when there is nothing to add."""
    if not context.strip() or event not in CONTEXT_EVENTS.get(fmt, frozenset()):
        return {}
    if fmt == "openhands":
        return {"additionalContext": context}
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}


def settings_snippet(fmt: str, command: str, timeout_s: int = 10) -> dict[str, Any]:
    """The `hooks` block to merge into the harness's settings JSON, calling `command`.

    Same layout for all four (event → [{matcher, hooks: [{type, command, timeout}]}]); Gemini
    reads `timeout` in milliseconds and `matcher` as a regular expression.
    """
    gemini = fmt == "gemini"

    def entry(event: str, tool_event: bool) -> dict[str, Any]:
        hook = {
            "type": "command",
            "command": f"{command} hook {fmt} {event}",
            "timeout": timeout_s * 1000 if gemini else timeout_s,
        }
        block: dict[str, Any] = {"hooks": [hook]}
        if tool_event:
            block["matcher"] = ".*" if gemini else "*"
        return block

    tools = TOOL_EVENTS[fmt]
    return {"hooks": {e: [entry(e, e in tools)] for e in sorted(tools | CONTEXT_EVENTS[fmt])}}
