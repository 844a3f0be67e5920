"""Hook dialects: each harness's hook JSON in, one small normalised event out, and back.

One command, `slmactor hook <format> <Event>`, serves every harness whose hooks are programs fed
JSON on stdin. This module is the pure, generic half (no I/O, no clock, stdlib only): what a
harness calls its events, where its payload keeps the tool, the session and the prompt, how a
response says "failed" and what JSON it reads back are asked of its room
(`slmactor.harnesses.get(format)`), so each dialect is tested with the payloads the harnesses
really send (fixtures in `tests/fixtures/hooks/<format>/` name the version and source file they
follow); `slmactor/cli/hook/` does the talking.

The normalised event, `HookInput` (a NamedTuple; every field always present):

    harness, event     the harness (its room's name) and the event name as it spells it
    action             RECORD | PREFLIGHT | CONTEXT | STOP | END | IGNORE (the room's table)
    project_dir        the harness's project root (its env var first, else the payload's)
    run_id             the session; "default" when there is none
    tool_call          RECORD: the finished call; PREFLIGHT: the call about to run (ok=True);
                       else None — a `ToolCall` (below)
    raw_input          PREFLIGHT/RECORD: the tool input as the harness sent it ({} if none)
    query              CONTEXT: the user's prompt ("" when the event has none)
    transcript         the session transcript the payload names ("" when absent)
    call_id            PREFLIGHT/RECORD: the call's id as the transcript names it ("" if none)

`ToolCall` is the house's one record of a call (`slmactor.logic.failures.call`), built by the
room (`Harness.normalize`): tool, family, kind, arguments as a map (and which keys carry the
shared words), command, paths, outcome, error, exit code and call id, clipped below the wire caps.

`output(harness, event, context, updated_input)` builds what
the harness reads on stdout; `neutral(harness)` is the "nothing to add" answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from slmactor import harnesses
from slmactor.harnesses.base import EDIT, READ, SHELL
from slmactor.logic.failures.call import ToolCall

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
    "HookInput",
    "ToolCall",
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
        return {harness: dict(harnesses.get(harness).events) for harness in formats()}
    raise AttributeError(name)


class HookInput(NamedTuple):
    """One hook invocation, normalised (see the module docstring for each field)."""

    harness: str
    event: str
    action: str
    project_dir: str
    run_id: str
    tool_call: ToolCall | None = None
    raw_input: Mapping[str, Any] = {}
    query: str = ""
    transcript: str = ""
    call_id: str = ""
    #: The harness's payload as it came (what a failure's answer may have to give back whole).
    payload: Mapping[str, Any] = {}

    @property
    def wants_context(self) -> bool:
        return self.action == CONTEXT


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    # The daemon redacts what it is sent; a cut through a secret would leave it unrecognisable.
    from slmactor.logic.text.safecut import cut_chars

    return cut_chars(text, limit - 1) + "…"


def tool_kind(harness: str, tool: str, tool_input: Mapping[str, Any]) -> str:
    """EDIT / READ / SHELL / "" for a tool call of harness `harness`."""
    return harnesses.get(harness).tool_kind(tool, tool_input)


def event_name(harness: str, given: str | None, payload: Mapping[str, Any]) -> str:
    """The event from the command line, else from the payload."""
    return given or harnesses.get(harness).event_of(payload)


def parse(harness: str, event: str, payload: Mapping[str, Any], env: Mapping[str, str], cwd: str) -> HookInput:
    """Read one hook invocation. Never raises for odd payloads: unknown shapes ask for nothing."""
    room = harnesses.find(harness)
    if room is None or not room.events:
        raise ValueError(f"unknown hook format {harness!r}")
    action = room.events.get(event, IGNORE)
    project = room.project(payload, env, cwd)
    run_id = clip(room.run_id(payload, env).strip(), 200) or "default"
    transcript = room.transcript_path(payload)
    if action in (RECORD, PREFLIGHT):
        _, _, tool_input = room.tool_fields(payload)
        call = room.normalize(event, payload)
        return HookInput(harness, event, action, project, run_id, tool_call=call, raw_input=tool_input,
                         transcript=transcript, call_id=call.call_id if call else "",
                         payload=payload)
    query = clip(room.prompt(payload).strip(), MAX_QUERY) if action == CONTEXT else ""
    return HookInput(harness, event, action, project, run_id, query=query, transcript=transcript)


def neutral(harness: str) -> dict[str, Any]:
    """The output that changes nothing."""
    return harnesses.get(harness).neutral()


def output(harness: str, event: str, context: str = "",
           updated_input: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON the harness expects on stdout; `neutral(harness)` when there is nothing to add.

    `context` goes where the event accepts model-facing text, `updated_input` where it accepts a
    rewritten tool input; either is dropped silently where the harness would reject it.
    """
    room = harnesses.get(harness)
    text = context if context.strip() and event in room.context_events else ""
    new_input = updated_input if updated_input and event in room.input_events else None
    return room.output(event, text, new_input)
