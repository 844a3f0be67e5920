"""Claude Code: its hook events and payloads, its tools, its transcript, its settings.

Follows Claude Code 2.1.x: the hooks reference (docs.anthropic.com/en/docs/claude-code/hooks —
events, `hookSpecificOutput`, `permissionDecision`, `updatedInput`, `additionalContext`,
`async`), the settings reference (`.claude/settings.json`, `~/.claude/settings.json`,
`CLAUDE_CONFIG_DIR`, `disableAllHooks`: "disable all hooks"; 2.1.328 lists it among its settings
keys), and the session transcript it writes
(`~/.claude/projects/<project>/<session>.jsonl`); what the real binary does with them is in
`tests/fixtures/hooks/claude/` (each fixture names its version).

* Failures arrive on `PostToolUseFailure` (`error`, kept whole: for Bash it is
  `Exit code N\\n<output>`, and the output *is* the error); a `PostToolUse` response is a dict
  (`{stdout, stderr, interrupted}` for Bash, `{filePath, success}` for Write, ...).
* Its `Read` shows a `N\\t` gutter; its `Edit` says `String to replace not found in file.`
* Pre-flight answers with `updatedInput` and no permission decision: Claude Code then applies
  the rewritten input under the user's own permission rules (a prompt the user would have seen
  still comes). `ask` is no middle ground: in `-p` mode Claude Code turns it into a denial, even
  for a tool the user allowed, and hands the model our reason as the error (seen with 2.1.328).
  Why the call was rewritten goes to the model as the event's `additionalContext`.
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
    text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from pathlib import Path
    from typing import Any

    from slmactor.logic.loop.recorded import SessionRecord
    from slmactor.logic.loop.transcripts import TranscriptStats


#: Entry types a Claude Code transcript opens with (a session, a resumed one's summary, ...).
_ENTRY_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot",
                          "progress", "queue-operation"})


class Claude(Harness):
    name = "claude"
    title = "Claude Code"
    events = {
        "SessionStart": CONTEXT, "UserPromptSubmit": CONTEXT, "PreToolUse": PREFLIGHT,
        "PostToolUse": RECORD, "PostToolUseFailure": RECORD, "Stop": STOP, "SubagentStop": STOP,
        "SessionEnd": END,
    }
    context_events = frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                                "PostToolUseFailure"})
    input_events = frozenset({"PreToolUse"})
    end_events = frozenset({"SessionEnd"})
    # "SessionEnd hooks cannot block session termination" (the hooks reference): the CLI only
    # waits for the process (`-p` exits after it).
    background_events = frozenset({"SessionEnd"})
    start_events = frozenset({"SessionStart"})
    project_env = "CLAUDE_PROJECT_DIR"
    tool_kinds = {"Edit": EDIT, "MultiEdit": EDIT, "Write": EDIT, "NotebookEdit": EDIT,
                  "Read": READ, "Bash": SHELL}
    edit_keys = {"Edit": ("old_string", "new_string", "replace_all")}
    #: The file of Read, Edit, Write (`file_path`) and NotebookEdit (`notebook_path`).
    arg_words = {"file_path": "path", "notebook_path": "path", **SHARED_ARG_WORDS}
    preflight_edits = {"Edit": EditTool("String to replace not found in file.\nString: {old}")}
    # Read, Edit, Write and Bash are slmcode's own names too (SPEC S-1.2, compared lower-case).
    read_tools = ("glob", "grep", "ls", "notebookread")
    edit_tools = ("multiedit", "notebookedit")
    shell_tools = ("bashoutput",)
    edit_formats = {"edit": "search_replace", "multiedit": "search_replace", "write": "whole_file"}
    #: Claude Code's built-in tools (docs.anthropic.com, Claude Code settings: "Tools available to
    #: Claude"; names as the transcripts of tests/fixtures/real_failures record them).
    families = {"Edit": EDIT, "MultiEdit": EDIT, "Write": EDIT, "NotebookEdit": EDIT,
                "Read": READ, "NotebookRead": READ, "Bash": SHELL, "BashOutput": SHELL,
                "KillShell": SHELL, "KillBash": SHELL, "Grep": SEARCH, "Glob": SEARCH,
                "LS": SEARCH, "WebFetch": WEB, "WebSearch": WEB, "Task": TASK, "Agent": TASK,
                "TodoWrite": TASK, "ExitPlanMode": TASK, "AskUserQuestion": TASK, "Skill": TASK,
                "SlashCommand": TASK}
    vocabulary = {
        "ws_read": "Read", "ws_edit": "Edit", "ws_write": "Write", "ws_patch": "Edit",
        "ws_glob": "Glob", "ws_list": "Glob", "ws_grep": "Grep", "ws_shell": "Bash",
        "old_str": "old_string", "new_str": "new_string",
    }
    settings = JsonSettings(".claude", "settings.json", user_env="CLAUDE_CONFIG_DIR")
    async_events = frozenset({"PostToolUse"})
    next_step = "Restart Claude Code (or run /hooks to review): it reads hooks when a session starts."

    def settings_notes(self, doc: Mapping[str, Any], path: Path, ours: Callable[[Any], bool],
                       home: Path, env: Mapping[str, str]) -> tuple[str, ...]:
        # `disableAllHooks` in this file, in the project's personal settings beside it, or in
        # the user's own settings (which turn off every project's hooks too).
        import json

        user = self.settings_path("user", path.parent, home, env)
        for where, settings in ((path, doc), (path.with_name("settings.local.json"), None), (user, None)):
            if settings is None:
                try:
                    settings = json.loads(where.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
            if isinstance(settings, dict) and settings.get("disableAllHooks") is True:
                return ((f"hooks are turned off in {where} (\"disableAllHooks\": true): left as you "
                         "set it; slmactor's hooks run once you set it to false"),)
        return ()

    def package(self, folder: str, hooks: dict[str, Any], server: dict[str, Any],
                about: Mapping[str, str]) -> dict[str, Any]:
        # A plugin (code.claude.com/docs/en/plugins-reference: `.claude-plugin/plugin.json`, its
        # hooks in `hooks/hooks.json` as `{"description", "hooks"}`, MCP servers in `.mcp.json`
        # at the plugin root) listed by a marketplace index at the output root
        # (docs/en/plugin-marketplaces: `.claude-plugin/marketplace.json` with `name`, `owner`,
        # `plugins[].source` a relative path), as anthropics/claude-code's own repository lays
        # them out; `claude plugin validate` of 2.1.328 accepts both.
        name = about["name"]
        plugin = {"name": name, "version": about["version"], "description": about["description"],
                  "author": {"name": about["author"]}, "license": about["license"]}
        return {
            ".claude-plugin/marketplace.json": {
                "name": name, "owner": {"name": about["author"]},
                "description": about["description"],
                "plugins": [{"name": name, "source": f"./{folder}",
                             "description": about["description"], "version": about["version"]}],
            },
            f"{folder}/.claude-plugin/plugin.json": plugin,
            f"{folder}/hooks/hooks.json": {"description": about["description"], "hooks": hooks},
            f"{folder}/.mcp.json": {"mcpServers": {name: server}},
        }

    def outcome(self, tool: str, event: str, payload: Mapping[str, Any]) -> tuple[bool, str]:
        if event == "PostToolUseFailure":
            return False, text(payload.get("error")) or (
                "interrupted" if payload.get("is_interrupt") else "the tool failed")
        return super().outcome(tool, event, payload)

    #: `updatedInput` without a permission decision: Claude Code still applies its own
    #: permission rules to the rewritten command (an `ask` would be a denial in `-p` mode).
    preflight_shell = True
    preflight_shells = frozenset({"Bash"})
    preflight_reads = frozenset({"Read"})
    #: Read refuses a file over 256 KB whole ("File content (…) exceeds maximum allowed size
    #: (256KB). Please use offset and limit parameters …"), as the 2.1 bundle's size check does.
    read_limit = 256 * 1024
    read_path_key = "file_path"

    def bounded_read(self, args: Mapping[str, Any], lines: int) -> dict[str, Any] | None:
        if args.get("offset") is not None or args.get("limit") is not None or lines < 1:
            return None
        return {**args, "offset": 1, "limit": lines}

    def outlived(self, tool: str, event: str, payload: Mapping[str, Any]) -> str:
        return _moved(tool, payload.get("tool_response"))

    def preflight_output(self, payload: Mapping[str, Any], updated: dict[str, Any],
                         reason: str) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": updated,
                                       "additionalContext": reason}}

    def transcript_suffix(self) -> str:
        return ".jsonl"

    def session_roots(self, env: Mapping[str, str], home: Path) -> tuple[Path, ...]:
        # `CLAUDE_CONFIG_DIR` moves the whole `~/.claude` folder (settings reference).
        from pathlib import Path as _Path

        base = _Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
        return (base / "projects",)

    def sniff_session(self, name: str, head: str) -> str:
        from slmactor.harnesses.base import SESSION, first_json_line

        if not name.endswith(".jsonl"):
            return ""
        first = first_json_line(head)
        if first is None:  # a first line longer than the head: its opening keys decide
            line = head.lstrip()[:4096]
            return SESSION if line.startswith('{"') and '"sessionId":' in line \
                and '"payload":' not in line and '"projectHash":' not in line else ""
        if "payload" in first or "projectHash" in first:  # a rollout, a Gemini CLI chat
            return ""
        kind = first.get("type")
        return SESSION if isinstance(first.get("sessionId"), str) or kind in _ENTRY_TYPES else ""

    def read_sessions(self, path: str, lines: Callable[[], Iterable[str]]) -> Iterator[Any]:
        yield read_session(path, lines)

    def transcript_stats(self, path: str, lines: Iterable[str], since: float) -> TranscriptStats | None:
        # The whole session is read once, at its end (no segments).
        return transcript_stats(lines) if not since else None


def _prompt_text(message: Any) -> str:
    """A user entry's typed text (a string, or its text blocks); "" for tool results."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(t for t in texts if isinstance(t, str))
    return ""


_ERROR_TAGS = ("<tool_use_error>", "</tool_use_error>")


def _moved(tool: str, response: Any) -> str:
    """Claude Code 2.1's word that a Bash command outlived its `timeout` and was moved to the
    background ("Command did not complete within its 4s timeout and was moved to the
    background"): its tool_response (the transcript's `toolUseResult`) carries
    `timedOutAfterMs` and the `backgroundTaskId`; with the output it had printed. "" when the
    command returned, or the model sent it to the background itself."""
    if tool != "Bash" or not isinstance(response, dict):
        return ""
    after, task = response.get("timedOutAfterMs"), response.get("backgroundTaskId")
    if not isinstance(after, (int, float)) or isinstance(after, bool) or not task:
        return ""
    said = text(response.get("stdout"))[:2000].strip()
    notice = (f"Command did not complete within its {after / 1000:g}s timeout and was moved "
              "to the background")
    return f"{notice}\n{said}" if said else notice


def _result_text(block: Mapping[str, Any]) -> str:
    """A `tool_result` block's text without Claude Code's `<tool_use_error>` wrapper."""
    from slmactor.harnesses.base import content_text

    found = content_text(block.get("content")).strip()
    for tag in _ERROR_TAGS:
        found = found.replace(tag, "")
    return found.strip()


def transcript_stats(lines: Iterable[str]) -> TranscriptStats:
    """Model, LLM calls, tokens and every tool call of a Claude Code JSONL transcript (a
    `TranscriptStats`).

    Format (Claude Code 2.x, `~/.claude/projects/<project>/<session>.jsonl`): one entry per line
    with `type` (`user`, `assistant`, `system`, `summary`, …), `timestamp`, `isSidechain`,
    `isMeta`; an assistant entry's `message` is the Messages API response (`id`, `model`,
    `usage` with `input_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`,
    `output_tokens`, `stop_reason`).  A streamed response is written as several entries sharing
    one `message.id`, each repeating the usage: the last entry of an id counts, once.  Tokens in
    are all input tokens the model processed (cached or not); `<synthetic>` entries (written by
    Claude Code itself, not a model) are skipped.

    Tool calls: an assistant message's `tool_use` blocks (`id`, `name`, `input`) and the
    `tool_result` block (`tool_use_id`, `content`, `is_error`) of a later user entry. A call
    whose input failed Claude Code's own validation (an `Edit` whose `old_string` is not in the
    file) reaches no hook at all — the transcript is the only witness: `is_error: true`, content
    `<tool_use_error>String to replace not found in file.…</tool_use_error>`.
    """
    from slmactor.harnesses.base import call_entry, serves
    from slmactor.logic.loop.transcripts import TranscriptStats, as_count, json_objects
    from slmactor.logic.text.timefmt import parse_rfc3339

    uses: dict[str, tuple[float, str, Any]] = {}
    calls: list[dict[str, Any]] = []
    usage_by_id: dict[str, tuple[int, int]] = {}
    models: dict[str, int] = {}
    started = ended = 0.0
    prompt = ""
    for entry in json_objects(lines):
        stamp = entry.get("timestamp")
        at = parse_rfc3339(stamp) if isinstance(stamp, str) else None
        if at:
            started = at if not started else min(started, at)
            ended = max(ended, at)
        kind, message = entry.get("type"), entry.get("message")
        if kind == "user" and not prompt and not entry.get("isMeta") and not entry.get("isSidechain"):
            prompt = _prompt_text(message).strip()
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                uses[block["id"]] = (at or 0.0, text(block.get("name")), block.get("input"))
            elif block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                use = uses.pop(block["tool_use_id"], None)
                if use is not None and use[1]:
                    failed = block.get("is_error") is True
                    error = _result_text(block) if failed else ""
                    moved = "" if failed else _moved(use[1], entry.get("toolUseResult"))
                    if moved and serves(use[2], moved):
                        # A server Claude Code moved to the background: it did not return
                        # (what the hook records of it, had its PostToolUse run).
                        failed, error = True, f"timed out: {moved}"
                    calls.append(call_entry(HARNESS, at=use[0] or at or 0.0, call_id=block["tool_use_id"],
                                            tool=use[1], tool_input=use[2], ok=not failed,
                                            error=error))
        if kind != "assistant" or not isinstance(message, dict):
            continue
        model = message.get("model")
        if not isinstance(model, str) or not model or model == "<synthetic>":
            continue
        mid = message.get("id")
        key = mid if isinstance(mid, str) and mid else f"line-{len(usage_by_id)}"
        usage = message.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        tokens_in = (as_count(usage.get("input_tokens")) + as_count(usage.get("cache_creation_input_tokens"))
                     + as_count(usage.get("cache_read_input_tokens")))
        if key not in usage_by_id:
            models[model] = models.get(model, 0) + 1
        usage_by_id[key] = (tokens_in, as_count(usage.get("output_tokens")))
    main_model = max(models, key=lambda m: (models[m], m)) if models else ""
    return TranscriptStats(
        model=main_model,
        llm_calls=len(usage_by_id),
        tokens_in=sum(i for i, _ in usage_by_id.values()),
        tokens_out=sum(o for _, o in usage_by_id.values()),
        started_at=started,
        ended_at=ended,
        first_prompt=prompt,
        calls=tuple(calls),
    )


def read_session(path: str, lines: Callable[[], Iterable[str]]) -> SessionRecord:
    """The `SessionRecord` of a transcript file: its `sessionId` and `cwd` (every entry carries
    them; the first that does counts), and `transcript_stats` of the whole file. A subagent's
    transcript (`agent-<id>.jsonl`, entries `isSidechain`) shares its parent's session id, so it
    is named `<session>:<file stem>`, a session of its own."""
    import os

    from slmactor.logic.loop.recorded import SessionRecord
    from slmactor.logic.loop.transcripts import json_objects

    session_id = cwd = ""
    for count, entry in enumerate(json_objects(lines())):
        session_id = session_id or text(entry.get("sessionId"))
        cwd = cwd or text(entry.get("cwd"))
        if (session_id and cwd) or count > 200:
            break
    stem = os.path.basename(path).removesuffix(".jsonl")
    if not session_id:
        session_id = stem
    elif stem.startswith("agent-"):
        session_id = f"{session_id}:{stem}"
    return SessionRecord(session_id=session_id, cwd=cwd, stats=transcript_stats(lines()))


HARNESS = Claude()
