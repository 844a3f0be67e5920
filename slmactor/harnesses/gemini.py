"""Gemini CLI: its hook events and payloads, its tools, its settings.

Follows Gemini CLI 0.5x–0.6x (google-gemini/gemini-cli): hook types and outputs in
`packages/core/src/hooks/types.ts` (`hookSpecificOutput.tool_input` merged over the model's
arguments, `additionalContext`), the shell tool's result in `packages/core/src/tools/shell.ts`,
the edit tool's errors in `packages/core/src/tools/edit.ts`, settings in
`docs/get-started/configuration.md` (`.gemini/settings.json`, timeouts in milliseconds).
Fixtures: `tests/fixtures/hooks/gemini/`.

* After a failed call, `AfterTool`'s `additionalContext` never reaches the model (0.61 appends
  it only to successful results; a failed call's response is `{"error": message}`). What does
  is a blocking answer: `decision: "deny"` with a `reason`, which replaces the tool result sent
  to the model (docs/hooks/reference.md, "AfterTool"); the reason carries the tool's own error
  first, so the model loses nothing, then the advice.
* A tool response is `{llmContent, returnDisplay, error?}`. `error` is set for failed edits and
  spawn errors; a shell command that exits non-zero has none — the status is only a line
  `Exit Code: N` inside `llmContent`, wrapped in `<untrusted_context>` tags.
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
    STOP,
    TASK,
    WEB,
    EditTool,
    Harness,
    JsonSettings,
    content_text,
    error_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

_EXIT = r"(?m)^(?:Exit Code: (-?\d+)|Signal: (\S+))\s*$"
_STATUS = r"(?m)^(?:Error|Exit Code|Signal|Background PIDs|Process Group PGID): "
_UNTRUSTED = r"^\s*<untrusted_context>\n?|\n?</untrusted_context>\s*$"


class Gemini(Harness):
    name = "gemini"
    title = "Gemini CLI"
    events = {
        "SessionStart": CONTEXT, "BeforeAgent": CONTEXT, "BeforeTool": PREFLIGHT,
        "AfterTool": RECORD, "AfterAgent": STOP, "SessionEnd": END,
    }
    context_events = frozenset({"SessionStart", "BeforeAgent", "AfterTool"})
    input_events = frozenset({"BeforeTool"})
    end_events = frozenset({"SessionEnd"})
    start_events = frozenset({"SessionStart"})
    project_env = "GEMINI_PROJECT_DIR"
    tool_kinds = {"replace": EDIT, "write_file": EDIT, "read_file": READ, "read_many_files": READ,
                  "run_shell_command": SHELL}
    edit_keys = {"replace": ("old_string", "new_string", "allow_multiple")}
    preflight_edits = {"replace": EditTool(
        "Failed to edit, 0 occurrences found for old_string in {path}. Ensure you're not escaping "
        "content incorrectly and check whitespace, indentation, and context. Use read_file tool to "
        "verify.", replace_all="allow_multiple", expected="expected_replacements")}
    read_tools = ("read_file", "read_many_files", "list_directory", "search_file_content")
    edit_tools = ("write_file", "replace")
    shell_tools = ("run_shell_command",)
    edit_formats = {"replace": "search_replace", "write_file": "whole_file"}
    #: Gemini CLI's tools (`packages/core/src/tools/*.ts`, each tool's `Name`).
    families = {"replace": EDIT, "write_file": EDIT, "edit": EDIT, "read_file": READ,
                "read_many_files": READ, "run_shell_command": SHELL,
                "search_file_content": SEARCH, "grep_search": SEARCH, "glob": SEARCH,
                "list_directory": SEARCH, "web_fetch": WEB, "google_web_search": WEB,
                "save_memory": TASK, "write_todos": TASK}
    vocabulary = {
        "ws_read": "read_file", "ws_edit": "replace", "ws_write": "write_file",
        "ws_patch": "replace", "ws_glob": "glob", "ws_list": "list_directory",
        "ws_grep": "search_file_content", "ws_shell": "run_shell_command",
        "old_str": "old_string", "new_str": "new_string",
    }
    settings = JsonSettings(".gemini", "settings.json")
    tool_matcher = ".*"
    next_step = ("Start gemini and accept the new hooks when it warns about them (project hooks are "
                 "fingerprinted); /hooks panel lists them.")

    def paths(self, tool: str, tool_input: Mapping[str, Any]) -> tuple[str, ...]:
        found = super().paths(tool, tool_input)
        if found or tool != "run_shell_command":
            return found
        value = tool_input.get("dir_path")
        return (value,) if isinstance(value, str) and value else ()

    def outcome(self, tool: str, event: str, payload: Mapping[str, Any]) -> tuple[bool, str]:
        import re

        response = payload.get("tool_response")
        if not isinstance(response, dict):
            return True, ""
        error = response.get("error")
        if error and error_text(error):
            return False, error_text(error)
        content = re.sub(_UNTRUSTED, "", content_text(response.get("llmContent")))
        match = re.search(_EXIT, content)
        if match is None or match.group(1) == "0":
            if content.startswith("Command was automatically cancelled"):
                return False, content
            return True, ""
        body = content[: m.start()] if (m := re.search(_STATUS, content)) else content
        output = body.removeprefix("Output: ").strip()
        return False, output if output and output != "(empty)" else match.group(0).strip()

    def output(self, event: str, context: str, new_input: Mapping[str, Any] | None) -> dict[str, Any]:
        if not context and new_input is None:
            return {}
        specific: dict[str, Any] = {"hookEventName": event}
        if new_input is not None:
            specific["tool_input"] = dict(new_input)
        if context:
            specific["additionalContext"] = context
        return {"hookSpecificOutput": specific}

    def failure_output(self, event: str, error: str, advice: str) -> dict[str, Any] | None:
        if event != "AfterTool" or not advice:
            return None
        return {"decision": "deny", "reason": f"{error.strip()}\n\n{advice}" if error.strip() else advice}

    def preflight_output(self, payload: Mapping[str, Any], updated: dict[str, Any],
                         reason: str) -> dict[str, Any]:
        return {"systemMessage": reason,
                "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": updated}}

    def handler(self, line: str, event: str, timeout_s: int) -> dict[str, Any]:
        return {"name": f"slmactor-{event}", "type": "command", "command": line,
                "timeout": timeout_s * 1000}


HARNESS = Gemini()
