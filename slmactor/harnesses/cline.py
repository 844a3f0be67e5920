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

Task history (what `import sessions` reads), from `apps/vscode/src/core/storage/disk.ts` and
`apps/vscode/src/sdk/legacy-state-reader.ts` (cline/cline commit 21cb8d25 of 2026-08): the data
directory is `$CLINE_DATA_DIR`, else `$CLINE_DIR/data`, else `~/.cline/data` (older extensions:
VS Code's `globalStorage/saoudrizwan.claude-dev`); each task is `tasks/<id>/` with
`api_conversation_history.json` (the Anthropic-shaped messages: a tool is an XML tag in the
assistant's text — `<execute_command><command>…` — answered by a user block `[execute_command
for '…'] Result:` and the result text, or, with native tool calls, `tool_use` / `tool_result`
blocks), `ui_messages.json` (`say: api_req_started` texts carry `tokensIn`, `tokensOut`) and
`task_metadata.json` (`model_usage[].model_id`); `state/taskHistory.json` names each task's
`cwdOnTaskInitialization`. A result is a failure by Cline's own wording
(`src/core/prompts/responses.ts`: `The tool execution failed with the following error:`,
`The user denied this operation.`, an `[ERROR]` notice). The SDK CLI (`@cline/core`,
`sdk/packages/core/docs/messages-contract-v1.md`) writes `sessions/<id>/<id>.messages.json`
(`tool_use` / `tool_result` with `is_error`, `modelInfo`, `metrics`) beside its manifest
`<id>.json` (`cwd`, `model`); a result there may be the CLI's JSON verdict text as above.
Fixtures: `tests/fixtures/sessions/cline/`.

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
    asked_range,
    text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from pathlib import Path
    from typing import Any

    from slmactor.logic.loop.recorded import SessionRecord


#: The VS Code extension's id (its globalStorage folder).
EXTENSION_ID = "saoudrizwan.claude-dev"
#: Files of a task directory read beside (or instead of being) its conversation.
_TASK_COMPANIONS = frozenset({"ui_messages.json", "task_metadata.json", "context_history.json",
                              "settings.json", "hooks.jsonl"})
#: How a Cline tool result opens when the call failed (`src/core/prompts/responses.ts`).
FAILED_RESULTS = ("The tool execution failed with the following error", "[ERROR]",
                  "The user denied this operation")
#: Longest companion file read (a task's UI log, metadata, the task history).
MAX_COMPANION_BYTES = 16 << 20
#: Cline caps a context modification at 50 KB (`.clinerules/hooks/README.md`).
CONTEXT_LIMIT = 50_000


#: Cline CLI 3.x's own tools' words (`editor {path, old_text, new_text}`, `read_files`,
#: `run_commands`), read-only: advice on those tools names them, not the extension's.
CLI3_WORDS: dict[str, str] = {
    "ws_read": "read_files", "ws_edit": "editor", "ws_write": "editor", "ws_patch": "editor",
    "ws_shell": "run_commands", "old_str": "old_text", "new_str": "new_text",
}


class Cline(Harness):
    name = "cline"
    title = "Cline"
    events = {
        "TaskStart": CONTEXT, "TaskResume": CONTEXT, "UserPromptSubmit": CONTEXT,
        "PreToolUse": PREFLIGHT, "PostToolUse": RECORD, "TaskComplete": END, "TaskCancel": END,
    }
    context_events = frozenset(events)
    #: Cline 3's `PreToolUse` (its `tool_call` hook) takes `overrideInput`, and the agent runs
    #: the tool with it before its own approval and policy checks (`@cline/core` hook output
    #: `overrideInput` → `input`; `@cline/agents` `beforeTool`: `if (c?.input !== void 0) n =
    #: c.input`, then `requestToolApproval`): a shell call may be rewritten, permissions stay
    #: Cline's.
    input_events = frozenset({"PreToolUse"})
    preflight_shell = True
    preflight_shells = frozenset({"run_commands", "execute_command"})
    tool_name_key = "toolName"
    end_events = frozenset({"TaskComplete", "TaskCancel"})
    start_events = frozenset({"TaskStart"})
    event_key = "hookName"
    tool_kinds = {"editor": EDIT, "write_to_file": EDIT, "replace_in_file": EDIT,
                  "read_files": READ, "execute_command": SHELL, "run_commands": SHELL}
    edit_keys = {"editor": ("old_text", "new_text", "")}
    #: `replace_in_file {path, diff}`: the SEARCH/REPLACE blocks are its patch.
    tool_words = {"replace_in_file": {"diff": "patch"}}
    payload_keys = frozenset({"postToolUse", "preToolUse", "toolName", "parameters", "taskId",
                              "workspaceRoots", "userPromptSubmit", "taskStart", "taskMetadata",
                              "initialTask", "hookName"})
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
    #: Cline CLI 3.x's own tools (`editor {path, old_text, new_text}`, `read_files`,
    #: `run_commands`): advice on them names them, not the extension's.
    tool_vocabulary = dict.fromkeys(("editor", "read_files", "run_commands"), CLI3_WORDS)
    #: Cline 3.0.65 runs every file of its hook folders (`~/Documents/Cline/Hooks`,
    #: `~/.cline/hooks`, `.clinerules/hooks`, `.cline/hooks`) whose name is an event, with or
    #: without an extension (`@cline/core` hook discovery, `resolveHooksConfigSearchPaths` of
    #: `@cline/shared/storage`): ours sits beside a user's own as `<Event>.sh`, and a project
    #: whose `.clinerules` is the legacy rules file gets its hooks in `.cline/hooks`.
    settings = ScriptPerEvent(project=(".clinerules", "hooks"), user=("Documents", "Cline", "Hooks"),
                              suffixes=("", ".sh"), fallback=(".cline", "hooks"))
    next_step = "In Cline's settings, Feature Settings → check \"Enable Hooks\" (hooks do not run on Windows)."

    #: Event names a payload may carry for a script's event (Cline CLI 3.0.65 runs the
    #: PostToolUse script with `hookName: "tool_result"`).
    payload_events = {"tool_result": "PostToolUse"}

    def event_of(self, payload: Mapping[str, Any]) -> str:
        named = text(payload.get(self.event_key))
        return self.payload_events.get(named, named)

    def session_roots(self, env: Mapping[str, str], home: Path) -> tuple[Path, ...]:
        from pathlib import Path as _Path

        if env.get("CLINE_DATA_DIR"):
            data = _Path(env["CLINE_DATA_DIR"])
        elif env.get("CLINE_DIR"):
            data = _Path(env["CLINE_DIR"]) / "data"
        else:
            data = home / ".cline" / "data"
        roots = [data / "tasks", data / "sessions"]
        config = _Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
        users = (config / "Code" / "User", config / "Code - Insiders" / "User", config / "VSCodium" / "User",
                 home / "Library" / "Application Support" / "Code" / "User")
        roots.extend(user / "globalStorage" / EXTENSION_ID / "tasks" for user in users)
        return tuple(roots)

    def sniff_session(self, name: str, head: str) -> str:
        from slmactor.harnesses.base import COMPANION, SESSION

        if name == "api_conversation_history.json" or name.endswith(".messages.json"):
            return SESSION if head.lstrip().startswith(("[", "{")) else ""
        if name in _TASK_COMPANIONS:
            return COMPANION
        if name.endswith(".json") and '"messages_path"' in head and '"session_id"' in head:
            return COMPANION  # an SDK session's manifest
        return ""

    def read_sessions(self, path: str, lines: Callable[[], Iterable[str]]) -> Iterator[Any]:
        record = read_task(path, lines)
        if record is not None:
            yield record

    def neutral_json(self) -> str:
        return '{"cancel": false}'

    def preflight_output(self, payload: Mapping[str, Any], updated: dict[str, Any],
                         reason: str) -> dict[str, Any]:
        # `run_commands` takes `commands` as a list (the hook saw it as a JSON text).
        commands = updated.get("commands")
        if isinstance(commands, str):
            import json

            try:
                parsed = json.loads(commands)
            except ValueError:
                parsed = None
            updated = {**updated, "commands": parsed if isinstance(parsed, list) else [commands]}
        return {"cancel": False, "overrideInput": updated, "contextModification": reason}

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

    def paths(self, tool: str, tool_input: Mapping[str, Any]) -> tuple[str, ...]:
        """Every file the call names: Cline 3's `read_files` names each in an entry of its
        `files` list (`{path, start_line?, end_line?}`), other tools by their path key."""
        entries = tool_input.get("files")
        if isinstance(entries, str) and entries.startswith("["):
            # The hook's `postToolUse.parameters` carries the list as JSON text.
            import json

            try:
                entries = json.loads(entries)
            except ValueError:
                entries = None
        if isinstance(entries, list):
            named = tuple(e["path"] for e in entries
                          if isinstance(e, dict) and isinstance(e.get("path"), str) and e["path"])
            if named:
                return named
        return super().paths(tool, tool_input)

    def truncation(self, tool: str, event: str, payload: Mapping[str, Any]) -> str:
        # read_files cuts a long file and says so ("[Showing lines 1-476 of 8000. Use
        # start_line/end_line to read more.]"), seen from the real 3.0.65 binary.
        import re

        if tool not in self.read_tools:
            return ""  # a command's output that quotes such a line is no cut read
        section = payload.get("postToolUse")
        result = text(section.get("result")) if isinstance(section, dict) else ""
        done = payload.get("tool_result")
        if asked_range(done.get("input") if isinstance(done, dict) else None) or asked_range(
                section.get("parameters") if isinstance(section, dict) else None):
            return ""  # a read of a range shows "lines A-B of N" too: it got what it asked
        found = re.search(r"\[Showing lines \d+-\d+ of \d+[^\]]*\]", result[:200000])
        return found.group(0) if found else ""

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

def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _xml_call(said: str) -> tuple[str, dict[str, str]] | None:
    """The first XML tool call of an assistant text (`<tool><param>v</param>…</tool>`)."""
    import re

    found = re.search(r"<([a-z_]+)>\s*\n?((?:<([a-z_]+)>.*?</\3>\s*)*)(?:</\1>|$)", said, re.DOTALL)
    while found is not None:
        tool, body = found.group(1), found.group(2)
        # Cline's tool names are snake_case words (`execute_command`); `<ul>` is markup.
        if "_" in tool and tool not in _NOT_TOOLS and body:
            params = {k: v.strip("\n") for k, v in re.findall(r"<([a-z_]+)>(.*?)</\1>", body, re.DOTALL)}
            return tool, params
        found = re.search(r"<([a-z_]+)>\s*\n?((?:<([a-z_]+)>.*?</\3>\s*)*)(?:</\1>|$)", said[found.end():],
                          re.DOTALL)
        said = said[found.start():] if found else said
    return None


#: Tags of Cline's prompt that are not tool calls.
_NOT_TOOLS = frozenset({"thinking", "task", "environment_details", "feedback", "answer", "error",
                        "file_content", "explanation", "user_message"})
_RESULT = r"\A\[([a-z_]+)(?: for '.*?')?\] Result:"


def _failed(result: str) -> bool:
    head = result.lstrip()[:300]
    return head.startswith(FAILED_RESULTS) or FAILED_RESULTS[0] in head


def _read_json(path: str) -> object:
    import json

    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_COMPANION_BYTES + 1)
        return None if len(data) > MAX_COMPANION_BYTES else json.loads(data)
    except (OSError, ValueError):
        return None


def _task_cwd(task_dir: str, task_id: str) -> str:
    """`cwdOnTaskInitialization` of the task in `<data>/state/taskHistory.json` ("" if unknown)."""
    import os

    data_dir = os.path.dirname(os.path.dirname(task_dir))
    for candidate in (os.path.join(data_dir, "state", "taskHistory.json"),
                      os.path.join(data_dir, "tasks", "taskHistory.json")):
        history = _read_json(candidate)
        for item in history if isinstance(history, list) else ():
            if isinstance(item, dict) and str(item.get("id")) == task_id:
                return text(item.get("cwdOnTaskInitialization"))
    return ""


def read_task(path: str, lines: Callable[[], Iterable[str]]) -> SessionRecord | None:
    """The `SessionRecord` of a Cline task's conversation (classic task directory, or an SDK
    session's messages file), None when the file is none."""
    import json
    import os
    import re

    from slmactor.harnesses.base import call_entry, content_text
    from slmactor.logic.loop.recorded import SessionRecord
    from slmactor.logic.loop.transcripts import TranscriptStats, as_count
    from slmactor.logic.text.safecut import cut_chars

    try:
        doc = json.loads("".join(lines()))
    except ValueError:
        return None
    sdk = isinstance(doc, dict)
    messages = doc.get("messages") if isinstance(doc, dict) else doc
    if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m for m in messages):
        return None
    task_dir = os.path.dirname(os.path.abspath(path))
    task_id = text(doc.get("sessionId")) if isinstance(doc, dict) else ""
    task_id = task_id or os.path.basename(task_dir)
    calls: list[dict[str, Any]] = []
    uses: dict[str, tuple[float, str, Any]] = {}
    pending: tuple[float, str, dict[str, str]] | None = None
    prompt = cwd = ""
    models: dict[str, int] = {}
    llm_calls = tokens_in = tokens_out = 0
    stamps: list[float] = []
    for index, message in enumerate(messages):
        ts = message.get("ts")
        at = ts / 1000.0 if isinstance(ts, (int, float)) and not isinstance(ts, bool) and ts > 0 else 0.0
        if at:
            stamps.append(at)
        blocks = _blocks(message.get("content"))
        if message.get("role") == "assistant":
            info = message.get("modelInfo")
            if isinstance(info, dict) and text(info.get("id")):
                models[info["id"]] = models.get(info["id"], 0) + 1
            metrics = message.get("metrics")
            if isinstance(metrics, dict):
                llm_calls += 1
                tokens_in += as_count(metrics.get("inputTokens")) + as_count(metrics.get("cacheReadTokens"))
                tokens_out += as_count(metrics.get("outputTokens"))
            said = "\n".join(text(b.get("text")) for b in blocks if b.get("type") == "text")
            found = _xml_call(said) if said else None
            if found is not None:
                pending = (at, found[0], found[1])
            for block in blocks:
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    uses[block["id"]] = (at, text(block.get("name")), block.get("input"))
            continue
        texts = [text(b.get("text")) for b in blocks if b.get("type") == "text"]
        if not prompt:
            joined = "\n".join(texts)
            task = re.search(r"<task>\n?(.*?)\n?</task>", joined, re.DOTALL)
            prompt = (task.group(1) if task else joined.split("<environment_details>")[0]).strip()
        if not cwd:
            where = re.search(r"# Current Working Directory \((.+?)\) Files", "\n".join(texts))
            cwd = where.group(1) if where else ""
        for block in blocks:
            if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                use = uses.pop(block["tool_use_id"], None)
                if use is None or not use[1]:
                    continue
                result = content_text(block.get("content")).strip()
                verdict_ok, verdict = _result_verdict(result)
                failed = block.get("is_error") is True or _failed(result) or not verdict_ok
                calls.append(call_entry(HARNESS, at=use[0] or at, call_id=block["tool_use_id"], tool=use[1],
                                        tool_input=use[2], ok=not failed,
                                        error=(verdict or result) if failed else ""))
        if pending is not None:
            for i, said in enumerate(texts):
                if re.match(_RESULT, said):
                    result = "\n".join(texts[i + 1:i + 2]) or said
                    failed = _failed(result) or _failed(said.split("Result:", 1)[1])
                    calls.append(call_entry(HARNESS, at=pending[0] or at, call_id=f"{task_id}:{index}",
                                            tool=pending[1], tool_input=pending[2], ok=not failed,
                                            error=result if failed else ""))
                    pending = None
                    break
    model = max(models, key=lambda m: (models[m], m)) if models else ""
    if sdk:
        manifest = _read_json(os.path.join(task_dir, f"{task_id}.json"))
        if isinstance(manifest, dict):
            cwd = text(manifest.get("cwd")) or text(manifest.get("workspace_root")) or cwd
            model = model or text(manifest.get("model"))
    else:
        cwd = _task_cwd(task_dir, task_id) or cwd
        meta = _read_json(os.path.join(task_dir, "task_metadata.json"))
        usage = meta.get("model_usage") if isinstance(meta, dict) else None
        if isinstance(usage, list) and usage and isinstance(usage[-1], dict):
            model = model or text(usage[-1].get("model_id"))
        ui = _read_json(os.path.join(task_dir, "ui_messages.json"))
        for item in ui if isinstance(ui, list) else ():
            if not isinstance(item, dict):
                continue
            ts = item.get("ts")
            if isinstance(ts, (int, float)) and not isinstance(ts, bool) and ts > 0:
                stamps.append(ts / 1000.0)
            if item.get("say") == "api_req_started" and isinstance(item.get("text"), str):
                try:
                    request = json.loads(item["text"])
                except ValueError:
                    continue
                if isinstance(request, dict) and "tokensIn" in request:
                    llm_calls += 1
                    tokens_in += as_count(request.get("tokensIn")) + as_count(request.get("cacheReads"))
                    tokens_out += as_count(request.get("tokensOut"))
    stats = TranscriptStats(model=model, llm_calls=llm_calls, tokens_in=tokens_in, tokens_out=tokens_out,
                            started_at=min(stamps) if stamps else 0.0, ended_at=max(stamps) if stamps else 0.0,
                            first_prompt=cut_chars(prompt, 4000), calls=tuple(calls))
    return SessionRecord(session_id=task_id, cwd=cwd, stats=stats)


HARNESS = Cline()
