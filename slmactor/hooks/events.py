"""What slmactor does with a harness's hook event, decided before anything heavy is loaded.

Its own module, stdlib-only and free of `typing`, so a hook for an event with nothing to do (or
while the breaker is open) decides that from the harness's room (`slmactor.harnesses`) without
importing the dialects, `json` or `typing`. The actions are the rooms' (`harnesses.base`).
"""

from __future__ import annotations

from slmactor import harnesses
from slmactor.harnesses.base import CONTEXT, END, IGNORE, PREFLIGHT, RECORD, STOP

__all__ = ["CONTEXT", "END", "IGNORE", "PREFLIGHT", "RECORD", "STOP", "formats", "has_work",
           "is_end", "is_format", "is_pre_tool", "neutral_json"]


def formats() -> tuple[str, ...]:
    """Every harness with hook events (`slmactor hook <format>`)."""
    return harnesses.names(hooks_only=True)


def is_format(harness: str) -> bool:
    """Whether `harness` names a harness with hook events."""
    found = harnesses.find(harness)
    return found is not None and bool(found.events)


def neutral_json(harness: str) -> str:
    """The output that changes nothing, as text ("{}" for a harness we do not know)."""
    found = harnesses.find(harness)
    return found.neutral_json() if found is not None else "{}"


def is_pre_tool(harness: str, event: str) -> bool:
    """Whether `event` is the harness's pre-tool event (or unnamed yet: decided later)."""
    found = harnesses.find(harness)
    return found is not None and bool(event) and found.events.get(event) == PREFLIGHT


def is_end(harness: str, event: str) -> bool:
    """Whether `event` ends a session of harness `harness`."""
    found = harnesses.find(harness)
    return found is not None and event in found.end_events


def has_work(harness: str, event: str) -> bool:
    """Whether slmactor does anything for this event (else the hook answers neutrally at once,
    and `hook install` does not register it)."""
    found = harnesses.find(harness)
    return found is not None and found.has_work(event)
