"""The hook events each harness sends, what slmactor does with each, and where output may go.

Its own module, stdlib-only and free of `typing`, so a hook for an event with nothing to do (or
while the breaker is open) decides that without importing the dialects, `json` or `typing`.
The table is explained in `dialects.py`'s docstring.
"""

from __future__ import annotations

FORMATS = ("claude", "codex", "gemini", "openhands", "cline")

RECORD = "record"
PREFLIGHT = "preflight"
CONTEXT = "context"
STOP = "stop"
END = "end"
IGNORE = ""

EVENTS: dict[str, dict[str, str]] = {
    "claude": {
        "SessionStart": CONTEXT, "UserPromptSubmit": CONTEXT, "PreToolUse": PREFLIGHT,
        "PostToolUse": RECORD, "PostToolUseFailure": RECORD, "Stop": STOP, "SubagentStop": STOP,
        "SessionEnd": END,
    },
    "codex": {
        "SessionStart": CONTEXT, "UserPromptSubmit": CONTEXT, "PreToolUse": PREFLIGHT,
        "PostToolUse": RECORD, "Stop": STOP,
    },
    "gemini": {
        "SessionStart": CONTEXT, "BeforeAgent": CONTEXT, "BeforeTool": PREFLIGHT,
        "AfterTool": RECORD, "AfterAgent": STOP, "SessionEnd": END,
    },
    "openhands": {
        "SessionStart": CONTEXT, "UserPromptSubmit": CONTEXT, "PreToolUse": PREFLIGHT,
        "PostToolUse": RECORD, "Stop": STOP, "SessionEnd": END,
    },
    "cline": {
        "TaskStart": CONTEXT, "TaskResume": CONTEXT, "UserPromptSubmit": CONTEXT,
        "PreToolUse": PREFLIGHT, "PostToolUse": RECORD, "TaskComplete": END, "TaskCancel": END,
    },
}
#: Events whose output may carry text for the model (claude/codex/gemini `additionalContext`
#: under `hookSpecificOutput`, openhands top-level `additionalContext`, cline
#: `contextModification` on any hook). Codex: `codex-rs/hooks/schema/generated/*.output.schema.json`.
CONTEXT_OUTPUT: dict[str, frozenset[str]] = {
    "claude": frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure"}),
    "codex": frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"}),
    "gemini": frozenset({"SessionStart", "BeforeAgent", "AfterTool"}),
    "openhands": frozenset({"SessionStart", "UserPromptSubmit"}),
    "cline": frozenset(EVENTS["cline"]),
}
#: Events whose output may replace the tool's input (claude/codex `updatedInput`, gemini
#: `tool_input` merged over the model's arguments). OpenHands and Cline cannot.
INPUT_OUTPUT: dict[str, frozenset[str]] = {
    "claude": frozenset({"PreToolUse"}), "codex": frozenset({"PreToolUse"}),
    "gemini": frozenset({"BeforeTool"}), "openhands": frozenset(), "cline": frozenset(),
}


def neutral_json(fmt: str) -> str:
    """The output that changes nothing, as text (Cline requires `cancel`)."""
    return '{"cancel": false}' if fmt == "cline" else "{}"


def has_work(fmt: str, event: str) -> bool:
    """Whether slmactor does anything for this event (else the hook answers neutrally at once,
    and `hook install` does not register it): a STOP only where the harness has no END event
    (Codex: its Stop ends a segment of the session), a PREFLIGHT only where the harness accepts a
    rewritten input."""
    action = EVENTS.get(fmt, {}).get(event, IGNORE)
    if action == STOP:
        return END not in EVENTS[fmt].values()
    if action == PREFLIGHT:
        return event in INPUT_OUTPUT[fmt]
    return action != IGNORE
