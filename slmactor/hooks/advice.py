"""Repairs delivered to the harness (issue 12, item 3): the advice `evolve.on_failure` gives for a
failed tool call, worded in the harness's own vocabulary and shaped as that harness's additional
context for a tool event.  Pure: no I/O.

Rules are written in slmcode's vocabulary (`ws_read`, `ws_edit`, `old_str`); a Claude Code user's
model has `Read`, `Edit` and `old_string`, a Gemini CLI model `read_file`, `replace`, a Codex
model a shell and `apply_patch`.  `localize` rewrites those names (whole words only).

The text goes out through `dialects.output`, where each harness takes context on a tool event
(Claude Code `PostToolUse`/`PostToolUseFailure`, Codex CLI `PostToolUse`, Gemini CLI `AfterTool`:
`hookSpecificOutput.additionalContext`; Cline: `contextModification`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: slmcode's names → the harness's names.
VOCABULARY: dict[str, dict[str, str]] = {
    "claude": {
        "ws_read": "Read", "ws_edit": "Edit", "ws_write": "Write", "ws_patch": "Edit",
        "ws_glob": "Glob", "ws_list": "Glob", "ws_grep": "Grep", "ws_shell": "Bash",
        "old_str": "old_string", "new_str": "new_string",
    },
    "gemini": {
        "ws_read": "read_file", "ws_edit": "replace", "ws_write": "write_file",
        "ws_patch": "replace", "ws_glob": "glob", "ws_list": "list_directory",
        "ws_grep": "search_file_content", "ws_shell": "run_shell_command",
        "old_str": "old_string", "new_str": "new_string",
    },
    "codex": {
        "ws_read": "a shell read (sed -n / cat)", "ws_edit": "apply_patch",
        "ws_write": "apply_patch", "ws_patch": "apply_patch", "ws_glob": "rg --files",
        "ws_list": "ls", "ws_grep": "rg", "ws_shell": "the shell",
        "old_str": "the patch's context and removed lines",
        "new_str": "the patch's added lines",
    },
    "cline": {
        "ws_read": "read_file", "ws_edit": "replace_in_file", "ws_write": "write_to_file",
        "ws_patch": "replace_in_file", "ws_glob": "list_files", "ws_list": "list_files",
        "ws_grep": "search_files", "ws_shell": "execute_command",
    },
    "openhands": {
        "ws_read": "str_replace_editor view", "ws_edit": "str_replace_editor str_replace",
        "ws_write": "str_replace_editor create", "ws_patch": "str_replace_editor str_replace",
        "ws_glob": "find", "ws_list": "ls", "ws_grep": "grep", "ws_shell": "execute_bash",
    },
}
_WORD = re.compile(r"\b(ws_[a-z]+|old_str|new_str)\b")
MAX_ADVICE = 1200


def localize(fmt: str, text: str) -> str:
    """`text` with slmcode's tool and field names replaced by the harness's own."""
    names = VOCABULARY.get(fmt)
    if not names:
        return text
    return _WORD.sub(lambda m: names.get(m.group(1), m.group(1)), text)


def advice_text(fmt: str, tool: str, advice: Mapping[str, Any]) -> str:
    """One short paragraph for the model, or "" when memory knows nothing useful."""
    if advice.get("found") is not True:
        return ""
    guidance = advice.get("guidance")
    guidance = guidance.strip() if isinstance(guidance, str) else ""
    if not guidance:
        return ""
    confidence = advice.get("confidence")
    pct = f"{round(100 * confidence)}%" if isinstance(confidence, (int, float)) else "?"
    head = f"slmactor memory: this {tool} failure was seen before (confidence {pct})."
    lines = [f"{head} {localize(fmt, guidance)}"]
    repair = advice.get("repair")
    new_args = advice.get("new_args")
    if (advice.get("apply") is True and isinstance(repair, Mapping)
            and repair.get("kind") == "transform_args" and isinstance(new_args, str) and new_args):
        lines.append(f"The repaired arguments ({repair.get('transform')}): {new_args}")
    text = "\n".join(lines)
    return text if len(text) <= MAX_ADVICE else text[: MAX_ADVICE - 1] + "…"
