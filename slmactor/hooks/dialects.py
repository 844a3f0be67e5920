"""Hook dialects: each harness's hook JSON in, one small normalised event out, and back.

One command, `slmactor hook <format> <Event>`, serves every harness whose hooks are programs fed
JSON on stdin. This module is the pure, generic half (no I/O, no clock, stdlib only): what a
harness calls its events, where its payload keeps the tool, the session and the prompt, how a
response says "failed" and what JSON it reads back are asked of its room
(`slmactor.harnesses.get(format)`), so each dialect is tested with the payloads the harnesses
really send (fixtures in `tests/fixtures/hooks/<format>/` name the version and source file they
follow); `slmactor/cli/hook/` does the talking.

The normalised event, `HookInput` (a NamedTuple; every field always present):

    format, event      the dialect and the event name as the harness spells it
    action             RECORD | PREFLIGHT | CONTEXT | STOP | END | IGNORE (the room's table)
    project_dir        the harness's project root (its env var first, else the payload's)
    run_id             the session; "default" when there is none
    tool_call          RECORD: the finished call; PREFLIGHT: the call about to run (ok=True);
                       else None — a `ToolCall` (below)
    tool_input         PREFLIGHT/RECORD: the raw tool input as the harness sent it ({} if none)
    query              CONTEXT: the user's prompt ("" when the event has none)
    transcript_path    the session transcript the payload names ("" when absent)
    call_id            PREFLIGHT/RECORD: the call's id as the transcript names it ("" if none)

`ToolCall`: `tool` (the harness's own tool name), `kind` (EDIT / READ / SHELL / "" from the
room's `tool_kind`), `path` (first file, = `paths[0]`), `paths` (every file the call names: all
headers of a patch envelope), `args` (the input as compact JSON), `command` (shell tools only),
`ok`, `error` (the whole error text that matters), all clipped below the wire caps.

`edit_of(tool_call, tool_input, format)` gives the `EditRequest` of a string-replacing edit
(path, old/new text and the input keys they came from), so a pre-flight repair can rewrite the
input in the harness's own key names; `output(fmt, event, context, updated_input)` builds what
the harness reads on stdout; `neutral(fmt)` is the "nothing to add" answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from slmactor import harnesses
from slmactor.harnesses.base import EDIT, READ, SHELL, command_of, compact_json

from .events import CONTEXT, END, IGNORE, PREFLIGHT, RECORD, STOP, formats

__all__ = [
    "CONTEXT",
    "EDIT",
    "END",
    "IGNORE",
    "PREFLIGHT",
    "READ",
    "RECORD",
    "SHELL",
    "STOP",
    "EditRequest",
    "HookInput",
    "ToolCall",
    "edit_of",
    "event_name",
    "neutral",
    "output",
    "parse",
    "tool_kind",
]

#: Caps below the wire caps of `record_tool` (args/error 16 KiB, command 4 KiB), in characters.
MAX_ARGS = 16_000
MAX_ERROR = 16_000
MAX_COMMAND = 4_000
MAX_QUERY = 4_000


def __getattr__(name: str) -> Any:
    """`FORMATS` (every harness with hook events) and `EVENTS` (format → event → action), read
    from the registry when first asked for (importing every room costs a hook that needs one)."""
    if name == "FORMATS":
        return formats()
    if name == "EVENTS":
        return {fmt: dict(harnesses.get(fmt).events) for fmt in formats()}
    raise AttributeError(name)


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
    call_id: str = ""

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
    if len(text) <= limit:
        return text
    # The daemon redacts what it is sent; a cut through a secret would leave it unrecognisable.
    from slmactor.logic.text.safecut import cut_chars

    return cut_chars(text, limit - 1) + "…"


def tool_kind(fmt: str, tool: str, tool_input: Mapping[str, Any]) -> str:
    """EDIT / READ / SHELL / "" for a tool call of harness `fmt`."""
    return harnesses.get(fmt).tool_kind(tool, tool_input)


def _tool_call(fmt: str, event: str, tool: str, tool_input: Mapping[str, Any], raw_input: Any,
               payload: Mapping[str, Any]) -> ToolCall:
    room = harnesses.get(fmt)
    kind = room.tool_kind(tool, tool_input)
    if room.events.get(event) == RECORD:
        ok, error = room.outcome(tool, event, payload)
    else:
        ok, error = True, ""
    paths = tuple(clip(p, 4000) for p in room.paths(tool, tool_input))
    args = compact_json(raw_input) if raw_input not in (None, "", {}) else ""
    return ToolCall(
        tool=clip(tool, 200), kind=kind, path=paths[0] if paths else "", paths=paths,
        args=clip(args, MAX_ARGS),
        command=clip(command_of(tool_input), MAX_COMMAND) if kind == SHELL else "",
        ok=ok, error=clip(error.strip(), MAX_ERROR) if not ok else "",
    )


def event_name(fmt: str, given: str | None, payload: Mapping[str, Any]) -> str:
    """The event from the command line, else from the payload."""
    return given or harnesses.get(fmt).event_of(payload)


def parse(fmt: str, event: str, payload: Mapping[str, Any], env: Mapping[str, str], cwd: str) -> HookInput:
    """Read one hook invocation. Never raises for odd payloads: unknown shapes ask for nothing."""
    room = harnesses.find(fmt)
    if room is None or not room.events:
        raise ValueError(f"unknown hook format {fmt!r}")
    action = room.events.get(event, IGNORE)
    project = room.project(payload, env, cwd)
    run_id = clip(room.run_id(payload, env).strip(), 200) or "default"
    transcript = room.transcript_path(payload)
    if action in (RECORD, PREFLIGHT):
        tool, raw, tool_input = room.tool_fields(payload)
        call = _tool_call(fmt, event, tool, tool_input, raw, payload) if tool else None
        return HookInput(fmt, event, action, project, run_id, tool_call=call, tool_input=tool_input,
                         transcript_path=transcript, call_id=clip(room.call_id(payload), 200))
    query = clip(room.prompt(payload).strip(), MAX_QUERY) if action == CONTEXT else ""
    return HookInput(fmt, event, action, project, run_id, query=query, transcript_path=transcript)


def edit_of(call: ToolCall | None, tool_input: Mapping[str, Any], fmt: str = "") -> EditRequest | None:
    """The string-replacing edit a tool call asks for, or None (other tools, other sub-commands).
    The tool's room is `fmt`'s, else the first whose edit tools include it."""
    if call is None or not call.path:
        return None
    rooms = [harnesses.get(fmt)] if fmt else harnesses.every()
    room = next((r for r in rooms if call.tool in r.edit_keys), None)
    if room is None:
        return None
    old_key, new_key, all_key = room.edit_keys[call.tool]
    if not room.is_search_replace(call.tool, tool_input):
        return None
    old, new = tool_input.get(old_key), tool_input.get(new_key)
    if not isinstance(old, str) or not old or not isinstance(new, str):
        return None
    replace_all = tool_input.get(all_key) is True or tool_input.get(all_key) == "true" if all_key else False
    return EditRequest(call.path, old, new, replace_all, old_key, new_key)


def neutral(fmt: str) -> dict[str, Any]:
    """The output that changes nothing."""
    return harnesses.get(fmt).neutral()


def output(fmt: str, event: str, context: str = "",
           updated_input: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON the harness expects on stdout; `neutral(fmt)` when there is nothing to add.

    `context` goes where the event accepts model-facing text, `updated_input` where it accepts a
    rewritten tool input; either is dropped silently where the harness would reject it.
    """
    room = harnesses.get(fmt)
    text = context if context.strip() and event in room.context_events else ""
    new_input = updated_input if updated_input and event in room.input_events else None
    return room.output(event, text, new_input)
