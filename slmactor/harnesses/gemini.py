"""Gemini CLI: its hook events and payloads, its tools, its settings.

Follows Gemini CLI 0.5x–0.6x (google-gemini/gemini-cli): hook types and outputs in
`packages/core/src/hooks/types.ts` (`hookSpecificOutput.tool_input` merged over the model's
arguments, `additionalContext`), the shell tool's result in `packages/core/src/tools/shell.ts`,
the edit tool's errors in `packages/core/src/tools/edit.ts`, settings in
`docs/get-started/configuration.md` (`.gemini/settings.json`, timeouts in milliseconds). Its
settings files may carry comments: 0.61's `packages/cli/src/config/settings.ts` reads each as
`JSON.parse(stripJsonComments(content))` (strip-json-comments, default options: `//` and
`/* */` comments, no trailing commas); the user's folder is `$GEMINI_CLI_HOME/.gemini`, else
`~/.gemini` (`homedir()` in `packages/core/src/utils/paths.ts`). Hooks are turned off by
`hooksConfig.enabled: false`, one hook by its name (else its command) in `hooksConfig.disabled`
(`settingsSchema.ts`; `hookRegistry.ts` `getHookName`).
Fixtures: `tests/fixtures/hooks/gemini/`.

* After a failed call, `AfterTool`'s `additionalContext` never reaches the model (0.61 appends
  it only to successful results; a failed call's response is `{"error": message}`). What does
  is a blocking answer: `decision: "deny"` with a `reason`, which replaces the tool result sent
  to the model (docs/hooks/reference.md, "AfterTool"); the reason carries the tool's own error
  first, so the model loses nothing, then the advice.

Recorded chats (what `import sessions` reads), from `packages/core/src/services/
chatRecordingService.ts` and `chatRecordingTypes.ts` (0.5x, commit 5411f113 of 2026-08) and the
older whole-file writer (0.1x–0.2x): `<GEMINI_CLI_HOME or ~>/.gemini/tmp/<project>/chats/
session-<time>-<id8>.json` — one `ConversationRecord` (`sessionId`, `projectHash`, `startTime`,
`lastUpdated`, `messages`) rewritten whole — or, since the JSONL writer, `….jsonl`: a metadata
line, then each message record appended again every time it changes (the last copy of an id
wins), `{"$set": {...}}` metadata patches (a `messages` list there is a checkpoint of the
model's context) and `{"$rewindTo": id}` markers. A `gemini` message carries `toolCalls`
(`{id, name, args, result: [{functionResponse: {response: {output | error}}}], status,
timestamp, resultDisplay}`; `status` `success` / `error` / `cancelled`), `model` and `tokens`
(`input`, `output`, `cached`, ...). `<project>` was the SHA-256 of the project root and is now a
slug from `~/.gemini/projects.json` (`packages/core/src/config/projectRegistry.ts`), whose folder
holds the root in `.project_root`. Fixtures: `tests/fixtures/sessions/gemini/`.

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
    SHARED_ARG_WORDS,
    SHELL,
    STOP,
    TASK,
    WEB,
    EditTool,
    Harness,
    JsonSettings,
    asked_range,
    content_text,
    error_text,
    text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from pathlib import Path
    from typing import Any

    from slmactor.logic.loop.recorded import SessionRecord


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
    # SessionEnd's output is advisory only (docs/hooks/reference.md): nothing to wait for.
    background_events = frozenset({"SessionEnd"})
    start_events = frozenset({"SessionStart"})
    project_env = "GEMINI_PROJECT_DIR"
    tool_kinds = {"replace": EDIT, "write_file": EDIT, "read_file": READ, "read_many_files": READ,
                  "run_shell_command": SHELL}
    edit_keys = {"replace": ("old_string", "new_string", "allow_multiple")}
    #: `file_path` of read_file/write_file/replace (`absolute_path` before 0.3), `dir_path` of
    #: list_directory (run_shell_command's `dir_path` is where it runs, not what it works on).
    arg_words = {"file_path": "path", "absolute_path": "path", **SHARED_ARG_WORDS,
                 "expected_replacements": "expected"}
    tool_words = {"list_directory": {"dir_path": "path"}}
    payload_keys = Harness.payload_keys | {"llmContent", "returnDisplay"}
    preflight_edits = {"replace": EditTool(
        "Failed to edit, 0 occurrences found for old_string in {path}. Ensure you're not escaping "
        "content incorrectly and check whitespace, indentation, and context. Use read_file tool to "
        "verify.", replace_all="allow_multiple", expected="expected_replacements")}
    #: `BeforeTool` `hookSpecificOutput.tool_input` is merged over the model's arguments and
    #: carries no permission decision (`packages/core/src/hooks`): a shell call may be rewritten.
    preflight_shell = True
    preflight_shells = frozenset({"run_shell_command"})
    #: `BeforeTool` has no text for the model: 0.61 appends "[System] Tool input parameters
    #: (…) were modified by a hook before execution." to the result, and `AfterTool`'s
    #: `additionalContext` (a successful call's) says what the rewrite was and why.
    says_rewrite_after = True
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
    settings = JsonSettings(".gemini", "settings.json", comments=True)
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

    def truncation(self, tool: str, event: str, payload: Mapping[str, Any]) -> str:
        # read_file's own notice (`packages/core/src/tools/read-file.ts`: "IMPORTANT: The file
        # content has been truncated. Status: Showing lines A-B of N total lines. Action: …").
        response = payload.get("tool_response")
        if tool not in self.read_tools or not isinstance(response, dict) or asked_range(
                payload.get("tool_input")):
            return ""  # a read of a range says "truncated" of the rest too: it got what it asked
        content = content_text(response.get("llmContent"))
        marker = "IMPORTANT: The file content has been truncated."
        at = content.find(marker, 0, 4000)
        if at < 0:
            return ""
        # Through its first Action sentence, which names the tool's own range words.
        end = content.find("Action:", at)
        stop = content.find(". ", end) if end > 0 else -1
        return " ".join(content[at: stop + 1 if stop > 0 else at + 300].split())

    def output(self, event: str, context: str, new_input: Mapping[str, Any] | None) -> dict[str, Any]:
        if not context and new_input is None:
            return {}
        specific: dict[str, Any] = {"hookEventName": event}
        if new_input is not None:
            specific["tool_input"] = dict(new_input)
        if context:
            specific["additionalContext"] = context
        return {"hookSpecificOutput": specific}

    def failure_output(self, event: str, error: str, advice: str,
                       payload: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        if event != "AfterTool" or not advice:
            return None
        # The reason replaces the tool's result: a shell command's result goes back as Gemini
        # gave it (its output inside `<untrusted_context>`, its `Exit Code:` line), the advice
        # after it, outside the wrapper — the model reads the same result and what memory says.
        response = (payload or {}).get("tool_response")
        said = content_text(response.get("llmContent")) if isinstance(response, dict) else ""
        shown = said.strip() if "<untrusted_context>" in said else error.strip()
        return {"decision": "deny", "reason": f"{shown}\n\n{advice}" if shown else advice}

    def preflight_output(self, payload: Mapping[str, Any], updated: dict[str, Any],
                         reason: str) -> dict[str, Any]:
        return {"systemMessage": reason,
                "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": updated}}

    def session_roots(self, env: Mapping[str, str], home: Path) -> tuple[Path, ...]:
        from pathlib import Path as _Path

        base = _Path(env["GEMINI_CLI_HOME"]) if env.get("GEMINI_CLI_HOME") else home
        return (base / ".gemini" / "tmp",)

    def sniff_session(self, name: str, head: str) -> str:
        from slmactor.harnesses.base import SESSION

        if not name.endswith((".json", ".jsonl")):
            return ""
        opening = head.lstrip()[:2000]
        # The metadata record (one line of JSONL, or the top of a whole-file record).
        return SESSION if opening.startswith("{") and '"sessionId"' in opening \
            and '"projectHash"' in opening else ""

    def read_sessions(self, path: str, lines: Callable[[], Iterable[str]]) -> Iterator[Any]:
        record = read_chat(path, lines)
        if record is not None:
            yield record

    def package(self, folder: str, hooks: dict[str, Any], server: dict[str, Any],
                about: Mapping[str, str]) -> dict[str, Any]:
        # An extension (docs/extensions/reference.md: `gemini-extension.json` with `name`,
        # `version`, `description`, `mcpServers`; hooks only in `hooks/hooks.json` under a
        # `"hooks"` object — 0.61.0's `loadExtensionHooks` ignores any other shape). Installed
        # with `gemini extensions install|link <folder>`.
        name = about["name"]
        return {
            f"{folder}/gemini-extension.json": {
                "name": name, "version": about["version"], "description": about["description"],
                "mcpServers": {name: server},
            },
            f"{folder}/hooks/hooks.json": {"hooks": hooks},
        }

    def handler(self, line: str, event: str, timeout_s: int) -> dict[str, Any]:
        return {"name": f"slmactor-{event}", "type": "command", "command": line,
                "timeout": timeout_s * 1000}

    def settings_path(self, scope: str, project: Path, home: Path, env: Mapping[str, str]) -> Path:
        from pathlib import Path as _Path

        if scope == "user" and env.get("GEMINI_CLI_HOME"):
            return _Path(env["GEMINI_CLI_HOME"]) / ".gemini" / "settings.json"
        return super().settings_path(scope, project, home, env)

    def settings_notes(self, doc: Mapping[str, Any], path: Path, ours: Callable[[Any], bool],
                       home: Path, env: Mapping[str, str]) -> tuple[str, ...]:
        config = doc.get("hooksConfig")
        if not isinstance(config, dict):
            return ()
        if config.get("enabled") is False:
            return ((f"hooks are turned off in {path} (hooksConfig.enabled: false): left as you set "
                     "it; slmactor's hooks run once you turn them on"),)
        disabled = config.get("disabled")
        names = {str(h.get("name") or h.get("command")) for groups in _groups(doc) for g in groups
                 for h in g.get("hooks", []) if isinstance(h, dict) and ours(h)}
        off = sorted(n for n in names if isinstance(disabled, list) and n in disabled)
        if off:
            return (f"{', '.join(off)} stay disabled (hooksConfig.disabled in {path}), as you set them",)
        return ()


def _groups(doc: Mapping[str, Any]) -> list[list[dict[str, Any]]]:
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return []
    return [[g for g in groups if isinstance(g, dict)] for groups in hooks.values() if isinstance(groups, list)]


#: Tool-call states of a call that ran to its end (`packages/core/src/scheduler/types.ts`).
_DONE = frozenset({"success", "error", "cancelled"})


def _response(call: Mapping[str, Any]) -> Mapping[str, Any]:
    """The `functionResponse.response` of a recorded call ({} when none)."""
    result = call.get("result")
    for part in result if isinstance(result, list) else ():
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
            response = part["functionResponse"].get("response")
            if isinstance(response, dict):
                return response
    return {}


def _shell_output(output: str) -> str:
    """The command's own output of a shell result (`Output: ...` up to the status lines)."""
    import re

    output = re.sub(_UNTRUSTED, "", output)
    start = re.search(r"(?m)^Output: ", output)
    body = output[start.end():] if start else output
    end = re.search(_STATUS, body)
    body = (body[: end.start()] if end else body).strip()
    return "" if body == "(empty)" else body


def call_outcome(call: Mapping[str, Any]) -> tuple[bool, str, int | None]:
    """(ok, error, exit code) of a recorded tool call, by Gemini CLI's rules: `status` error or
    cancelled (the response's `error`), or a shell result whose `Exit Code:` is not 0."""
    import re

    response = _response(call)
    error = error_text(response.get("error")) or content_text(response.get("error"))
    if call.get("status") in ("error", "cancelled"):
        display = call.get("resultDisplay")
        return False, error or (display if isinstance(display, str) else "") or str(call["status"]), None
    output = content_text(response.get("output")) or content_text(response.get("llmContent"))
    match = re.search(_EXIT, output)
    if match and match.group(1) is not None and match.group(1) != "0":
        code = int(match.group(1))
        return False, _shell_output(output) or match.group(0).strip(), code
    if match and match.group(2) and match.group(2) != "(none)":
        return False, _shell_output(output) or match.group(0).strip(), None
    if error:
        return False, error, None
    return True, "", (0 if match and match.group(1) == "0" else None)


def _project_root(path: str, project_hash: str) -> str:
    """The project a chat file belongs to: its folder's `.project_root`, else the registry
    `projects.json` (slug or, for an old hash folder, the root whose SHA-256 it is)."""
    import contextlib
    import hashlib
    import json
    import os

    chats = os.path.dirname(os.path.abspath(path))
    folder = os.path.dirname(chats)
    if os.path.basename(chats) != "chats":  # a subagent's chat: chats/<parent>/<id>.jsonl
        folder = os.path.dirname(folder)
    root = ""
    # No marker file: the registry says it, below.
    with contextlib.suppress(OSError), open(os.path.join(folder, ".project_root"),
                                            encoding="utf-8") as fh:
        root = fh.read(4096).strip()
    if root:
        return root
    gemini_dir = os.path.dirname(os.path.dirname(folder))
    try:
        with open(os.path.join(gemini_dir, "projects.json"), encoding="utf-8") as fh:
            projects = json.loads(fh.read(1 << 20)).get("projects")
    except (OSError, ValueError, AttributeError):
        return ""
    slug = os.path.basename(folder)
    for root, short in (projects.items() if isinstance(projects, dict) else ()):
        if isinstance(root, str) and (short == slug or hashlib.sha256(root.encode()).hexdigest()
                                      in (slug, project_hash)):
            return root
    return ""


def _records(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The records of a chat file: a whole-file `ConversationRecord` (one JSON document,
    pretty-printed or not) as itself, else each JSON line."""
    import json

    from slmactor.logic.loop.transcripts import json_objects

    it = iter(lines)
    first = next(it, "")
    if first.strip() == "{":  # the whole-file writer's `JSON.stringify(record, null, 2)`
        try:
            doc = json.loads(first + "".join(it))
        except ValueError:
            return
        if isinstance(doc, dict):
            yield doc
        return
    yield from json_objects([first])
    yield from json_objects(it)


def read_chat(path: str, lines: Callable[[], Iterable[str]]) -> SessionRecord | None:
    """The `SessionRecord` of a recorded chat (either writer), None when it is none. Every tool
    call that ran is kept once (by id, its last recorded state): a rewind or a context
    checkpoint changes what the model sees next, not what the tools did."""
    from slmactor.harnesses.base import call_entry
    from slmactor.logic.loop.recorded import SessionRecord
    from slmactor.logic.loop.transcripts import TranscriptStats, as_count
    from slmactor.logic.text.safecut import cut_chars
    from slmactor.logic.text.timefmt import parse_rfc3339

    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}  # id → the message's last copy (order: first seen)

    def keep(message: Any) -> None:
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            slim = {k: message.get(k) for k in ("type", "timestamp", "model", "tokens", "toolCalls")}
            if message.get("type") == "user":
                slim["content"] = cut_chars(content_text(message.get("content")), 4000)
            messages[message["id"]] = slim

    for record in _records(lines()):
        if isinstance(record.get("$rewindTo"), str):
            continue
        if isinstance(record.get("$set"), dict):
            patch = record["$set"]
            for message in patch.get("messages") or () if isinstance(patch.get("messages"), list) else ():
                if isinstance(message, dict) and message.get("id") not in messages:
                    keep(message)
            meta.update({k: v for k, v in patch.items() if k != "messages"})
        elif isinstance(record.get("sessionId"), str) and "projectHash" in record:
            meta.update({k: v for k, v in record.items() if k != "messages"})
            for message in record.get("messages") or () if isinstance(record.get("messages"), list) else ():
                keep(message)
        elif isinstance(record.get("id"), str):
            keep(record)
    session_id = meta.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        return None
    models: dict[str, int] = {}
    calls: list[dict[str, Any]] = []
    seen: set[str] = set()
    prompt = ""
    llm_calls = tokens_in = tokens_out = 0
    stamps: list[float] = []
    for message in messages.values():
        at = parse_rfc3339(message["timestamp"]) if isinstance(message.get("timestamp"), str) else None
        if at:
            stamps.append(at)
        if message.get("type") == "user" and not prompt:
            said = str(message.get("content") or "").strip()
            prompt = "" if said.startswith("/") else said  # a slash command is no task
        if message.get("type") != "gemini":
            continue
        if isinstance(message.get("model"), str) and message["model"]:
            models[message["model"]] = models.get(message["model"], 0) + 1
        tokens = message.get("tokens")
        if isinstance(tokens, dict):
            llm_calls += 1
            tokens_in += as_count(tokens.get("input"))
            tokens_out += as_count(tokens.get("output"))
        for call in message.get("toolCalls") or () if isinstance(message.get("toolCalls"), list) else ():
            if not isinstance(call, dict) or call.get("status") not in _DONE:
                continue
            call_id = text(call.get("id"))
            if call_id in seen:
                continue
            seen.add(call_id)
            ok, error, code = call_outcome(call)
            when = parse_rfc3339(call["timestamp"]) if isinstance(call.get("timestamp"), str) else None
            calls.append(call_entry(HARNESS, at=when or at or 0.0, call_id=call_id,
                                    tool=text(call.get("name")), tool_input=call.get("args"),
                                    ok=ok, error=error, exit_code=code))
    for key in ("startTime", "lastUpdated"):
        at = parse_rfc3339(meta[key]) if isinstance(meta.get(key), str) else None
        if at:
            stamps.append(at)
    cwd = _project_root(path, text(meta.get("projectHash")))
    directories = meta.get("directories")
    if not cwd and isinstance(directories, list) and directories and isinstance(directories[0], str):
        cwd = directories[0]
    stats = TranscriptStats(
        model=max(models, key=lambda m: (models[m], m)) if models else "", llm_calls=llm_calls,
        tokens_in=tokens_in, tokens_out=tokens_out, started_at=min(stamps) if stamps else 0.0,
        ended_at=max(stamps) if stamps else 0.0, first_prompt=prompt, calls=tuple(calls))
    return SessionRecord(session_id=session_id, cwd=cwd, stats=stats)


HARNESS = Gemini()
