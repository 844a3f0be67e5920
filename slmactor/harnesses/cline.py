"""Cline: its hook events and payloads, its tools, its hook scripts.

Follows Cline's hooks (cline/cline `.clinerules/hooks/README.md` and `src/core/hooks/`: one
executable per event named after it, JSON on stdin with `hookName`, `taskId`,
`workspaceRoots`, and a `preToolUse` / `postToolUse` / `taskStart` / `userPromptSubmit`
section; the answer `{cancel, contextModification}`, at most 50 KB of context), Cline 3.x CLI
and 4.x extension tool names (`editor`, `read_files`, `run_commands`, and the extension's
`replace_in_file`, `write_to_file`, `execute_command`). Fixtures: `tests/fixtures/hooks/cline/`.

* A call failed when `postToolUse.success` is false; `postToolUse.result` is the text.
* Hooks cannot replace a tool's input; any event may carry context.
"""

from __future__ import annotations

from slmactor.harnesses.base import (
    CONTEXT,
    EDIT,
    END,
    PREFLIGHT,
    READ,
    RECORD,
    SHELL,
    Harness,
    ScriptPerEvent,
    text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

#: Cline caps a context modification at 50 KB (`.clinerules/hooks/README.md`).
CONTEXT_LIMIT = 50_000


class Cline(Harness):
    name = "cline"
    title = "Cline"
    events = {
        "TaskStart": CONTEXT, "TaskResume": CONTEXT, "UserPromptSubmit": CONTEXT,
        "PreToolUse": PREFLIGHT, "PostToolUse": RECORD, "TaskComplete": END, "TaskCancel": END,
    }
    context_events = frozenset(events)
    end_events = frozenset({"TaskComplete", "TaskCancel"})
    start_events = frozenset({"TaskStart"})
    event_key = "hookName"
    tool_kinds = {"editor": EDIT, "write_to_file": EDIT, "replace_in_file": EDIT,
                  "read_files": READ, "execute_command": SHELL, "run_commands": SHELL}
    edit_keys = {"editor": ("old_text", "new_text", "")}
    read_tools = ("list_files", "search_files", "read_files")
    edit_tools = ("write_to_file", "replace_in_file", "editor")
    shell_tools = ("execute_command", "run_commands")
    edit_formats = {"replace_in_file": "search_replace", "write_to_file": "whole_file"}
    vocabulary = {
        "ws_read": "read_file", "ws_edit": "replace_in_file", "ws_write": "write_to_file",
        "ws_patch": "replace_in_file", "ws_glob": "list_files", "ws_list": "list_files",
        "ws_grep": "search_files", "ws_shell": "execute_command",
    }
    settings = ScriptPerEvent(project=(".clinerules", "hooks"), user=("Documents", "Cline", "Hooks"))
    context_limit = CONTEXT_LIMIT
    next_step = "In Cline's settings, Feature Settings → check \"Enable Hooks\" (hooks do not run on Windows)."

    def neutral_json(self) -> str:
        return '{"cancel": false}'

    def neutral(self) -> dict[str, Any]:
        return {"cancel": False}

    def tool_fields(self, payload: Mapping[str, Any]) -> tuple[str, Any, Mapping[str, Any]]:
        section = payload.get("postToolUse") or payload.get("preToolUse")
        section = section if isinstance(section, dict) else {}
        tool, raw = text(section.get("toolName")), section.get("parameters")
        return tool.strip(), raw, raw if isinstance(raw, dict) else {}

    def project(self, payload: Mapping[str, Any], env: Mapping[str, str], cwd: str) -> str:
        roots = payload.get("workspaceRoots")
        first = roots[0] if isinstance(roots, list) and roots else ""
        return text(first) or cwd

    def run_id(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> str:
        return text(payload.get("taskId"))

    def prompt(self, payload: Mapping[str, Any]) -> str:
        section = payload.get("userPromptSubmit")
        if isinstance(section, dict):
            return text(section.get("prompt"))
        start = payload.get("taskStart")
        meta = start.get("taskMetadata") if isinstance(start, dict) else None
        return text(meta.get("initialTask")) if isinstance(meta, dict) else ""

    def outcome(self, tool: str, event: str, payload: Mapping[str, Any]) -> tuple[bool, str]:
        section = payload.get("postToolUse")
        if not isinstance(section, dict) or section.get("success") is not False:
            return True, ""
        return False, text(section.get("result")) or "the tool failed"

    def output(self, event: str, context: str, new_input: Mapping[str, Any] | None) -> dict[str, Any]:
        if not context:
            return self.neutral()
        if len(context) > CONTEXT_LIMIT:
            context = context[: CONTEXT_LIMIT - 1] + "…"
        return {"cancel": False, "contextModification": context}


HARNESS = Cline()
