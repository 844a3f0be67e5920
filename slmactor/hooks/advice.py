"""Repairs delivered to the harness: the advice `evolve.on_failure` gives for a failed tool call,
worded in the harness's own vocabulary and shaped as that harness's additional context for a
tool event.  Pure: no I/O.

Rules are written in slmcode's vocabulary (`ws_read`, `ws_edit`, `old_str`); each harness's
model knows other names for the same tools and fields (its room's `vocabulary`, in
`slmactor.harnesses`).  `localize` rewrites those names (whole words only).  The text goes out
through `dialects.output`, to the tool events where the harness takes context.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from slmactor import harnesses

_WORD = re.compile(r"\b(ws_[a-z]+|old_str|new_str)\b")
_SAME_TWICE = re.compile(r"\b([\w.-]+(?: [\w.-]+)?) / \1\b")
MAX_ADVICE = 1200


def localize(harness: str, text: str, tool: str = "") -> str:
    """`text` with slmcode's tool and field names replaced by the harness's own (those of the
    failed `tool`'s tool set, where the harness has more than one)."""
    room = harnesses.find(harness)
    names = {**room.vocabulary, **room.tool_vocabulary.get(tool, {})} if room is not None else None
    if not names:
        return text
    shown = _WORD.sub(lambda m: names.get(m.group(1), m.group(1)), text)
    # Two of slmcode's tools may be one of the harness's (`ws_glob / ws_list` → `Glob`): named once.
    return _SAME_TWICE.sub(r"\1", shown)


def shown_guidance(harness: str, tool: str, cls: str, guidance: str, *, seeded: bool) -> str:
    """A rule's guidance as this harness's model should read it: in its own names; and for a
    shipped rule on a shell call its own sandbox refused, what the harness lets that call ask
    for instead (its room's `sandbox_escape`), when it has such a request. A learned rule's
    text names its own fix and stays as it is."""
    from slmactor.harnesses.base import SHELL

    room = harnesses.find(harness) if seeded else None
    if (room is not None and room.sandbox_escape and cls == "permission_denied"
            and room.families.get(tool) == SHELL):
        return room.sandbox_escape
    return localize(harness, guidance, tool)


def _head(tool: str, advice: Mapping[str, Any]) -> str:
    """What memory can truthfully say of this advice: "seen before" only for a failure this
    project met before, with the outcomes behind it; a shipped rule is a known fix, not a memory."""
    outcomes = advice.get("outcomes")
    count = outcomes if isinstance(outcomes, int) and not isinstance(outcomes, bool) else 0
    if advice.get("seeded") is True and count == 0:
        return f"slmactor: a known fix for this kind of {tool} failure (not tried in this project yet)."
    confidence = advice.get("confidence")
    pct = f"{round(100 * confidence)}%" if isinstance(confidence, (int, float)) else "?"
    seen = "this exact failure was seen before" if advice.get("exact") is True else "a failure like this was seen before"
    worked = f"; {pct} confidence over {count} outcome{'' if count == 1 else 's'}" if count else ""
    return f"slmactor memory: {seen} with {tool}{worked}."


def advice_text(harness: str, tool: str, advice: Mapping[str, Any]) -> str:
    """One short paragraph for the model, or "" when memory knows nothing useful."""
    if advice.get("found") is not True:
        return ""
    guidance = advice.get("guidance")
    guidance = guidance.strip() if isinstance(guidance, str) else ""
    if not guidance:
        return ""
    if advice.get("verified") is False:
        # A rule a cloned repository brought: not this user's experience, never "seen before"
        # or "worked"; the daemon sent its text labelled, quoted, its commands withheld.
        return (f"slmactor: this repository's committed memory has a note on this {tool} failure "
                f"that was not learned here (review it with `slmactor trust`): {guidance}"
                )[:MAX_ADVICE]
    repair = advice.get("repair")
    new_args = advice.get("new_args")
    if isinstance(repair, Mapping) and repair.get("spec"):
        # A repair learned from the call that got past this failure: its text already names
        # the failed call, the fix (in the calls' own tool and argument names) and its record.
        lines = [f"slmactor memory: {guidance}"]
        if advice.get("apply") is True and isinstance(new_args, str) and new_args:
            lines.append(f"The repaired call: {advice.get('new_tool') or tool} {new_args}")
        text = "\n".join(lines)
        return text if len(text) <= MAX_ADVICE else text[: MAX_ADVICE - 1] + "…"
    head = _head(tool, advice)
    fingerprint = advice.get("fingerprint")
    cls = fingerprint.get("class") if isinstance(fingerprint, Mapping) else ""
    shown = shown_guidance(harness, tool, str(cls), guidance, seeded=advice.get("seeded") is True)
    lines = [f"{head} {shown}"]
    if (advice.get("apply") is True and isinstance(repair, Mapping)
            and repair.get("kind") == "transform_args" and isinstance(new_args, str) and new_args):
        lines.append(f"The repaired arguments ({repair.get('transform')}): {new_args}")
    text = "\n".join(lines)
    return text if len(text) <= MAX_ADVICE else text[: MAX_ADVICE - 1] + "…"
