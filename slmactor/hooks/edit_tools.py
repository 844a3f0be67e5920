"""Which harness events may rewrite a tool's input, and which tools pre-flight repairs there
(issue 12, item 4).  Its own tiny module so a pre-tool hook for any other tool decides that
without importing the repair logic.
"""

from __future__ import annotations

#: The pre-tool event of each harness whose output can replace the tool's input.
PRE_EVENTS: dict[str, str] = {"claude": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"}
#: The search/replace edit tools of each (Claude Code `Edit`, Gemini CLI `replace`) and Codex's
#: patch tool; everything else (Write, Bash, Read, MultiEdit, ...) is never rewritten.
EDIT_TOOLS: dict[str, frozenset[str]] = {
    "claude": frozenset({"Edit"}),
    "gemini": frozenset({"replace"}),
    "codex": frozenset({"apply_patch"}),
}


def is_edit_tool(fmt: str, tool: object) -> bool:
    return isinstance(tool, str) and tool in EDIT_TOOLS.get(fmt, frozenset())
