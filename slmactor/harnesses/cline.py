"""Cline: its hook events and payloads, its tools, its hook scripts.

Follows Cline's hooks (cline/cline `.clinerules/hooks/README.md` and `src/core/hooks/`: one
executable per event named after it, JSON on stdin with `hookName`, `taskId`,
`workspaceRoots`, and a `preToolUse` / `postToolUse` / `taskStart` / `userPromptSubmit`
section; the answer `{cancel, contextModification}`, at most 50 KB of context), Cline 3.x CLI
and 4.x extension tool names (`editor`, `read_files`, `run_commands`, and the extension's
`replace_in_file`, `write_to_file`, `execute_command`). Fixtures: `tests/fixtures/hooks/cline/`.

* A call failed when `postToolUse.success` is false; `postToolUse.result` is the text. Cline CLI
  3.0.65 says `success: true` for every call that ran and reports the tool's own verdict inside
  `result`, a JSON text: `{"query", "result", "error", "success": false}` for an editor that
  replaced nothing, a list of those for `run_commands` / `read_files` (seen from the real binary:
  `"error": "Editor operation failed: No replacement performed: text not found in …"`,
  `"error": "Command exited with code 4"`).
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
    SEARCH,
    SHELL,
    TASK,
    WEB,
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
    #: Cline's tools (`src/core/prompts/system.ts`, `src/shared/tools.ts`).
    families = {"replace_in_file": EDIT, "write_to_file": EDIT, "editor": EDIT,
                "read_file": READ, "read_files": READ, "execute_command": SHELL,
                "run_commands": SHELL, "search_files": SEARCH, "list_files": SEARCH,
                "list_code_definition_names": SEARCH, "browser_action": WEB, "web_fetch": WEB,
                "attempt_completion": TASK, "ask_followup_question": TASK, "new_task": TASK,
                "plan_mode_respond": TASK}
    vocabulary = {
        "ws_read": "read_file", "ws_edit": "replace_in_file", "ws_write": "write_to_file",
        "ws_patch": "replace_in_file", "ws_glob": "list_files", "ws_list": "list_files",
        "ws_grep": "search_files", "ws_shell": "execute_command",
    }
    settings = ScriptPerEvent(project=(".clinerules", "hooks"), user=("Documents", "Cline", "Hooks"))
    context_limit = CONTEXT_LIMIT
    next_step = "In Cline's settings, Feature Settings → check \"Enable Hooks\" (hooks do not run on Windows)."

    #: Event names a payload may carry for a script's event (Cline CLI 3.0.65 runs the
    #: PostToolUse script with `hookName: "tool_result"`).
    payload_events = {"tool_result": "PostToolUse"}

    def event_of(self, payload: Mapping[str, Any]) -> str:
        named = text(payload.get(self.event_key))
        return self.payload_events.get(named, named)

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
        if not isinstance(section, dict):
            return True, ""
        if section.get("success") is False:
            return False, text(section.get("result")) or "the tool failed"
        return _result_verdict(text(section.get("result")))


    def output(self, event: str, context: str, new_input: Mapping[str, Any] | None) -> dict[str, Any]:
        if not context:
            return self.neutral()
        if len(context) > CONTEXT_LIMIT:
            context = context[: CONTEXT_LIMIT - 1] + "…"
        return {"cancel": False, "contextModification": context}


def _result_verdict(result: str) -> tuple[bool, str]:
    """(ok, error) of the tool results a `result` text carries (an object or a list of them)."""
    head = result.lstrip()[:1]
    if head not in ("{", "["):
        return True, ""
    import json

    try:
        parsed = json.loads(result)
    except ValueError:
        return True, ""
    items = parsed if isinstance(parsed, list) else [parsed]
    failed = [i for i in items if isinstance(i, dict) and i.get("success") is False]
    if not failed:
        return True, ""
    errors = []
    for item in failed:
        detail = text(item.get("error")) or text(item.get("result"))
        output = text(item.get("result"))
        if output and output != detail and detail:
            detail = f"{detail}\n{output}"
        errors.append(detail or "the tool failed")
    return False, "\n".join(errors)


HARNESS = Cline()
