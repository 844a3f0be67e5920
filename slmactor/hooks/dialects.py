"""Harness hook dialects: each harness's hook JSON in, one small normalised event out, and back.

One command, `slmactor hook <format> <Event>`, serves every harness whose hooks are programs fed
JSON on stdin. This module is the pure half (no I/O, no clock, stdlib only, cheap to import: no
`dataclasses`), so each dialect is tested with the payloads the harnesses really send (fixtures
in `tests/fixtures/hooks/<format>/` name the version and source file they follow);
`slmactor/cli/hook/` does the talking. How a tool response says "failed" is in `responses.py`.

Formats and the events each one handles (`EVENTS[fmt][event]` is the action):

    claude    SessionStart, UserPromptSubmit → CONTEXT; PreToolUse → PREFLIGHT;
              PostToolUse, PostToolUseFailure → RECORD; Stop, SubagentStop → STOP; SessionEnd → END
    codex     SessionStart, UserPromptSubmit → CONTEXT; PreToolUse → PREFLIGHT;
              PostToolUse → RECORD; Stop → STOP                              (no end event)
    gemini    SessionStart, BeforeAgent → CONTEXT; BeforeTool → PREFLIGHT; AfterTool → RECORD;
              AfterAgent → STOP; SessionEnd → END
    openhands SessionStart, UserPromptSubmit → CONTEXT; PreToolUse → PREFLIGHT;
              PostToolUse → RECORD; Stop → STOP; SessionEnd → END
    cline     TaskStart, TaskResume, UserPromptSubmit → CONTEXT; PreToolUse → PREFLIGHT;
              PostToolUse → RECORD; TaskComplete, TaskCancel → END
    any other event → IGNORE (the neutral output is printed)

The normalised event, `HookInput` (a NamedTuple; every field always present):

    format, event      the dialect and the event name as the harness spells it
    action             RECORD | PREFLIGHT | CONTEXT | STOP | END | IGNORE (above)
    project_dir        the harness's project root (its env var first, else the payload's cwd)
    run_id             the session (claude/codex/gemini `session_id`, openhands `session_id` or
                       OPENHANDS_SESSION_ID, cline `taskId`); "default" when there is none
    tool_call          RECORD: the finished call; PREFLIGHT: the call about to run (ok=True);
                       else None — a `ToolCall` (below)
    tool_input         PREFLIGHT/RECORD: the raw tool input as the harness sent it ({} if none)
    query              CONTEXT: the user's prompt ("" when the event has none)
    transcript_path    the payload's `transcript_path` ("" when absent)

`ToolCall`: `tool` (the harness's own tool name: `Read`, `replace`, `apply_patch`, ...),
`kind` (EDIT / READ / SHELL / "" from `tool_kind`), `path` (first file, = `paths[0]`), `paths`
(every file the call names: all `*** Update/Add/Delete File:` headers of an apply_patch), `args`
(the input as compact JSON), `command` (shell tools only), `ok`, `error` (the whole error text
that matters: Claude's `Exit code 1\\n<output>` is kept entire), all clipped below the wire caps.

`edit_of(tool_call, tool_input)` gives the `EditRequest` of a string-replacing edit (path,
old/new text and the input keys they came from), so a pre-flight repair can rewrite the input
in the harness's own key names; `output(fmt, event, context, updated_input)` builds what the
harness reads on stdout; `neutral(fmt)` is the "nothing to add" answer (`{}`; cline
`{"cancel": false}`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from .events import (
    CONTEXT,
    CONTEXT_OUTPUT,
    END,
    EVENTS,
    FORMATS,
    IGNORE,
    INPUT_OUTPUT,
    PREFLIGHT,
    RECORD,
    STOP,
)
from .responses import outcome, patch_paths

__all__ = ["CONTEXT", "END", "EVENTS", "FORMATS", "IGNORE", "PREFLIGHT", "RECORD", "STOP", "EditRequest",
           "HookInput", "ToolCall", "edit_of", "event_name", "neutral", "output", "parse", "tool_kind"]

#: Where each harness names the project it works in (environment first: the root the harness
#: was started in, while a payload's cwd follows `cd`). Codex sets none: its payload `cwd`.
PROJECT_ENV = {
    "claude": "CLAUDE_PROJECT_DIR", "gemini": "GEMINI_PROJECT_DIR",
    "openhands": "OPENHANDS_PROJECT_DIR",
}
#: Payload key of the event name (the command line names it too; this is the fallback).
EVENT_KEY = {"claude": "hook_event_name", "codex": "hook_event_name", "gemini": "hook_event_name",
             "openhands": "event_type", "cline": "hookName"}
#: Cline caps a context modification at 50 KB (`.clinerules/hooks/README.md`).
CLINE_CONTEXT_LIMIT = 50_000

#: Caps below the wire caps of `record_tool` (args/error 16 KiB, command 4 KiB), in characters.
MAX_ARGS = 16_000
MAX_ERROR = 16_000
MAX_COMMAND = 4_000
MAX_QUERY = 4_000

EDIT = "edit"
READ = "read"
SHELL = "shell"
#: Tool names per kind, for every format (the harness's own spelling).
TOOL_KINDS: dict[str, str] = {
    # Claude Code
    "Edit": EDIT, "MultiEdit": EDIT, "Write": EDIT, "NotebookEdit": EDIT, "Read": READ, "Bash": SHELL,
    # Codex CLI (shell tools arrive as "Bash")
    "apply_patch": EDIT,
    # Gemini CLI
    "replace": EDIT, "write_file": EDIT, "read_file": READ, "read_many_files": READ,
    "run_shell_command": SHELL,
    # OpenHands SDK (file_editor is an edit unless its command is `view`)
    "file_editor": EDIT, "str_replace_editor": EDIT, "terminal": SHELL, "execute_bash": SHELL,
    # Cline (extension and SDK tool names)
    "editor": EDIT, "write_to_file": EDIT, "replace_in_file": EDIT, "read_files": READ,
    "execute_command": SHELL, "run_commands": SHELL,
}
_PATH_KEYS = ("file_path", "filePath", "absolute_path", "notebook_path", "path")
#: (old key, new key, replace-all key) of the string-replacing edit tools.
_EDIT_KEYS = {
    "Edit": ("old_string", "new_string", "replace_all"),
    "replace": ("old_string", "new_string", "allow_multiple"),
    "file_editor": ("old_str", "new_str", ""),
    "str_replace_editor": ("old_str", "new_str", ""),
    "editor": ("old_text", "new_text", ""),
}


class ToolCall(NamedTuple):
    """One tool call, as `record_tool` wants it (plus every path and its kind)."""

    tool: str
    kind: str = ""
    path: str = ""
    paths: tuple[str, ...] = ()
    args: str = ""
    command: str = ""
    ok: bool = True
    error: str = ""


class HookInput(NamedTuple):
    """One hook invocation, normalised (see the module docstring for each field)."""

    format: str
    event: str
    action: str
    project_dir: str
    run_id: str
    tool_call: ToolCall | None = None
    tool_input: Mapping[str, Any] = {}
    query: str = ""
    transcript_path: str = ""

    @property
    def wants_context(self) -> bool:
        return self.action == CONTEXT


class EditRequest(NamedTuple):
    """A string-replacing edit: which file, what to replace, and the input keys to rewrite."""

    path: str
    old: str
    new: str
    replace_all: bool
    old_key: str
    new_key: str


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _as_json(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def _command(tool_input: Mapping[str, Any]) -> str:
    command = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        # An argv (older Codex `shell`): keep the script when it is a shell -c.
        if len(command) == 3 and command[1] in {"-c", "-lc"}:
            return str(command[2])
        import shlex

        return shlex.join(command)
    commands = tool_input.get("commands")  # Cline SDK `run_commands`: a JSON list as a string
    if isinstance(commands, str) and commands.startswith("["):
        try:
            commands = json.loads(commands)
        except ValueError:
            pass
    if isinstance(commands, list):
        return " && ".join(c if isinstance(c, str) else _as_json(c) for c in commands)
    return _text(command) or _text(commands)


def _paths(tool: str, tool_input: Mapping[str, Any]) -> tuple[str, ...]:
    for key in ("command", "input", "patch"):
        text = tool_input.get(key)
        if isinstance(text, str) and "*** Begin Patch" in text:
            return patch_paths(text)
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return (value,)
    if tool in ("run_shell_command",):
        value = tool_input.get("dir_path")
        return (value,) if isinstance(value, str) and value else ()
    return ()


def tool_kind(tool: str, tool_input: Mapping[str, Any]) -> str:
    """EDIT / READ / SHELL / "" for a tool call (OpenHands' editor by its sub-command)."""
    kind = TOOL_KINDS.get(tool, "")
    if kind == EDIT and tool in ("file_editor", "str_replace_editor") and tool_input.get("command") == "view":
        return READ
    return kind


def _tool_call(fmt: str, event: str, tool: str, tool_input: Mapping[str, Any], raw_input: Any,
               payload: Mapping[str, Any]) -> ToolCall:
    kind = tool_kind(tool, tool_input)
    if event == "PostToolUseFailure":  # Claude: `error` is the whole failure (Exit code N\n<output>)
        ok, error = False, _text(payload.get("error")) or ("interrupted" if payload.get("is_interrupt") else "the tool failed")
    elif EVENTS[fmt].get(event) == RECORD:
        ok, error = outcome(fmt, tool, payload)
    else:
        ok, error = True, ""
    paths = tuple(clip(p, 4000) for p in _paths(tool, tool_input))
    args = _as_json(raw_input) if raw_input not in (None, "", {}) else ""
    return ToolCall(
        tool=clip(tool, 200), kind=kind, path=paths[0] if paths else "", paths=paths,
        args=clip(args, MAX_ARGS),
        command=clip(_command(tool_input), MAX_COMMAND) if kind == SHELL else "",
        ok=ok, error=clip(error.strip(), MAX_ERROR) if not ok else "",
    )


def event_name(fmt: str, given: str | None, payload: Mapping[str, Any]) -> str:
    """The event from the command line, else from the payload."""
    return given or _text(payload.get(EVENT_KEY.get(fmt, "hook_event_name")))


def _tool_fields(fmt: str, payload: Mapping[str, Any]) -> tuple[str, Any, Mapping[str, Any]]:
    """(tool name, raw input, input as a mapping) for a tool event."""
    if fmt == "cline":
        section = payload.get("postToolUse") or payload.get("preToolUse")
        section = section if isinstance(section, Mapping) else {}
        tool, raw = _text(section.get("toolName")), section.get("parameters")
    else:
        tool, raw = _text(payload.get("tool_name")), payload.get("tool_input")
    return tool.strip(), raw, raw if isinstance(raw, Mapping) else {}


def _project(fmt: str, payload: Mapping[str, Any], env: Mapping[str, str], cwd: str) -> str:
    from_env = env.get(PROJECT_ENV[fmt], "") if fmt in PROJECT_ENV else ""
    if from_env:
        return from_env
    if fmt == "cline":
        roots = payload.get("workspaceRoots")
        first = roots[0] if isinstance(roots, list) and roots else ""
        return _text(first) or cwd
    return _text(payload.get("working_dir" if fmt == "openhands" else "cwd")) or cwd


def _run_id(fmt: str, payload: Mapping[str, Any], env: Mapping[str, str]) -> str:
    if fmt == "cline":
        session = _text(payload.get("taskId"))
    else:
        session = _text(payload.get("session_id"))
        if not session and fmt == "openhands":
            session = env.get("OPENHANDS_SESSION_ID", "")
    return clip(session.strip(), 200) or "default"


def _prompt(fmt: str, payload: Mapping[str, Any]) -> str:
    if fmt == "openhands":
        return _text(payload.get("message"))
    if fmt == "cline":
        section = payload.get("userPromptSubmit")
        if isinstance(section, Mapping):
            return _text(section.get("prompt"))
        start = payload.get("taskStart")
        meta = start.get("taskMetadata") if isinstance(start, Mapping) else None
        return _text(meta.get("initialTask")) if isinstance(meta, Mapping) else ""
    return _text(payload.get("prompt"))


def parse(fmt: str, event: str, payload: Mapping[str, Any], env: Mapping[str, str], cwd: str) -> HookInput:
    """Read one hook invocation. Never raises for odd payloads: unknown shapes ask for nothing."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown hook format {fmt!r}")
    action = EVENTS[fmt].get(event, IGNORE)
    project = _project(fmt, payload, env, cwd)
    run_id = _run_id(fmt, payload, env)
    transcript = _text(payload.get("transcript_path"))
    if action in (RECORD, PREFLIGHT):
        tool, raw, tool_input = _tool_fields(fmt, payload)
        call = _tool_call(fmt, event, tool, tool_input, raw, payload) if tool else None
        return HookInput(fmt, event, action, project, run_id, tool_call=call, tool_input=tool_input,
                         transcript_path=transcript)
    query = clip(_prompt(fmt, payload).strip(), MAX_QUERY) if action == CONTEXT else ""
    return HookInput(fmt, event, action, project, run_id, query=query, transcript_path=transcript)


def edit_of(call: ToolCall | None, tool_input: Mapping[str, Any]) -> EditRequest | None:
    """The string-replacing edit a tool call asks for, or None (other tools, other sub-commands)."""
    if call is None or call.tool not in _EDIT_KEYS or not call.path:
        return None
    old_key, new_key, all_key = _EDIT_KEYS[call.tool]
    if call.tool in ("file_editor", "str_replace_editor") and tool_input.get("command") != "str_replace":
        return None
    old, new = tool_input.get(old_key), tool_input.get(new_key)
    if not isinstance(old, str) or not old or not isinstance(new, str):
        return None
    replace_all = tool_input.get(all_key) is True or tool_input.get(all_key) == "true" if all_key else False
    return EditRequest(call.path, old, new, replace_all, old_key, new_key)


def neutral(fmt: str) -> dict[str, Any]:
    """The output that changes nothing (Cline requires `cancel`)."""
    return {"cancel": False} if fmt == "cline" else {}


def output(fmt: str, event: str, context: str = "",
           updated_input: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON the harness expects on stdout; `neutral(fmt)` when there is nothing to add.

    `context` goes where the event accepts model-facing text, `updated_input` where it accepts a
    rewritten tool input; either is dropped silently where the harness would reject it.
    """
    text = context if context.strip() and event in CONTEXT_OUTPUT.get(fmt, frozenset()) else ""
    new_input = updated_input if updated_input and event in INPUT_OUTPUT.get(fmt, frozenset()) else None
    if fmt == "cline":
        return {"cancel": False, "contextModification": clip(text, CLINE_CONTEXT_LIMIT)} if text else neutral(fmt)
    if fmt == "openhands":
        return {"additionalContext": text} if text else {}
    if not text and new_input is None:
        return {}
    specific: dict[str, Any] = {"hookEventName": event}
    if new_input is not None:
        specific["tool_input" if fmt == "gemini" else "updatedInput"] = dict(new_input)
    if text:
        specific["additionalContext"] = text
    return {"hookSpecificOutput": specific}
