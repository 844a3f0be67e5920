"""Codex CLI: its hook events and payloads, its tools, its rollout file, its settings.

Follows Codex CLI 0.1xx (openai/codex): the hook schemas `codex-rs/hooks/schema/generated/
*.schema.json` (events, `hookSpecificOutput`, `updatedInput` accepted only with
`permissionDecision: allow`), the exec summary of `codex-rs/core/src/tools/mod.rs`
(`format_exec_output_for_model_freeform`), the `apply_patch` envelope and its errors
(`codex-rs/apply-patch`), and the rollout lines of `codex-rs` `RolloutLine`
(`$CODEX_HOME/sessions/…/rollout-*.jsonl`). Fixtures: `tests/fixtures/hooks/codex/`.

Hooks are read per layer (`$CODEX_HOME` for the user, `.codex/` of a project) from both
`hooks.json` and the `[hooks]` table of `config.toml` beside it (`codex-rs/hooks/src/engine/
discovery.rs`: it warns "loading hooks from both" and runs both); a hook is turned off by
`[hooks.state."<hooks.json path>:<event_snake>:<group>:<handler>"] enabled = false` in the
user's `config.toml` (`codex-rs/config/src/hook_config.rs` `HooksToml.state`,
`codex-rs/hooks/src/config_rules.rs`).

* `tool_response` is a string for shell tools and `apply_patch`: the exec summary
  `Exit code: N\\nWall time: S seconds\\n[Total output lines: N\\n]Output:\\n<output>`, or the
  unified-exec `... Process exited with code N ... Output:\\n<output>`. The raw output of a
  one-shot `exec_command` carries no status at all: it is taken as a success (nothing says
  otherwise).
* Shell tools arrive as `Bash`. Codex has no end event: its `Stop` (end of a turn) ends a
  segment of the session.
"""

from __future__ import annotations

from slmactor.harnesses.base import (
    CONTEXT,
    EDIT,
    PREFLIGHT,
    READ,
    RECORD,
    SEARCH,
    SHARED_ARG_WORDS,
    SHELL,
    STOP,
    TASK,
    WEB,
    Harness,
    JsonSettings,
    read_regular_file,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from pathlib import Path
    from typing import Any

    from slmactor.logic.loop.recorded import SessionRecord
    from slmactor.logic.loop.transcripts import TranscriptStats


#: `RolloutLine` types (codex-rs `protocol/src/protocol.rs` `RolloutItem`).
_ROLLOUT_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
_EXIT_LINE = r"(?m)^(?:Exit code: |Process exited with code )(-?\d+)\s*$"
_ROLLOUT_EXIT = r"\A\s*(?:Exit code|exit_code|Process exited with code):?\s*(-?\d+)"
#: What Codex's apply_patch answers when the patch does not apply (codex-rs/apply-patch).
_PATCH_FAILED = ("apply_patch verification failed", "Failed to find expected lines",
                 "Invalid patch", "invalid hunk")


def _after_output(text: str) -> str:
    """The `<output>` of an exec summary (everything after its `Output:` line), else the text."""
    _, sep, tail = text.partition("\nOutput:\n")
    if sep:
        return tail
    return text.split("Output:", 1)[1] if text.startswith("Output:") else text


class Codex(Harness):
    name = "codex"
    title = "Codex CLI"
    events = {
        "SessionStart": CONTEXT, "UserPromptSubmit": CONTEXT, "PreToolUse": PREFLIGHT,
        "PostToolUse": RECORD, "Stop": STOP,
    }
    context_events = frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"})
    input_events = frozenset({"PreToolUse"})
    end_events = frozenset({"Stop"})
    start_events = frozenset({"SessionStart"})
    tool_kinds = {"apply_patch": EDIT, "Bash": SHELL}
    preflight_patches = frozenset({"apply_patch"})
    #: A shell call rewritten before it runs: Codex takes `updatedInput` only beside
    #: `permissionDecision: "allow"`, and an `allow` without one is refused as unsupported
    #: (`codex-rs/hooks/src/engine/output_parser.rs`, `parse_pre_tool_use`): the word is the
    #: form of a rewrite, not an approval; the sandbox and the approval policy still decide.
    preflight_shell = True
    preflight_shells = frozenset({"Bash", "shell", "exec_command", "local_shell"})
    #: `read_file {file_path}`; `shell {command: argv}`, `exec_command {cmd}`; the patch of
    #: `apply_patch` (as a shell argv's script, or the freeform tool's `input`).
    arg_words = {"file_path": "path", **SHARED_ARG_WORDS}
    tool_words = {"apply_patch": {"command": "patch", "input": "patch"}}
    patch_error = "apply_patch verification failed: Failed to find expected lines in {path}:\n{old}"
    #: What Codex tells its own model to do when the sandbox refused a command
    #: (codex-rs/protocol/src/prompts/permissions/approval_policy/on_request_rule.md): rerun it
    #: with `sandbox_permissions: "require_escalated"`, a `justification` and a `prefix_rule`.
    sandbox_escape = ("If Codex's sandbox refused it (a write outside the workspace, the "
                      "network), resend the same command with `sandbox_permissions: "
                      "\"require_escalated\"`, a one-line `justification` and a `prefix_rule` "
                      "for the command's prefix: the user is asked to approve it. Otherwise use "
                      "an allowed equivalent.")
    read_tools = ("list_dir", "grep_files")
    edit_tools = ("apply_patch",)
    shell_tools = ("local_shell", "exec_command", "unified_exec", "container.exec")
    edit_formats = {"apply_patch": "apply_patch"}
    #: Codex CLI's tools (`codex-rs/core/src/tools/spec.rs`; names as its rollouts record them).
    families = {"apply_patch": EDIT, "shell": SHELL, "local_shell": SHELL, "exec_command": SHELL,
                "write_stdin": SHELL, "unified_exec": SHELL, "container.exec": SHELL, "Bash": SHELL,
                "read_file": READ, "view_image": READ, "list_dir": SEARCH, "grep_files": SEARCH,
                "web_search": WEB, "update_plan": TASK}
    vocabulary = {
        "ws_read": "a shell read (sed -n / cat)", "ws_edit": "apply_patch",
        "ws_write": "apply_patch", "ws_patch": "apply_patch", "ws_glob": "rg --files",
        "ws_list": "ls", "ws_grep": "rg", "ws_shell": "the shell",
        "old_str": "the patch's context and removed lines",
        "new_str": "the patch's added lines",
    }
    settings = JsonSettings(".codex", "hooks.json", user_env="CODEX_HOME")
    next_step = ("Start codex and trust the new hooks when it asks (it lists hooks that are new or "
                 "changed and runs none of them until you accept). An older codex also needs "
                 "[features] codex_hooks = true in ~/.codex/config.toml.")

    def hooks_elsewhere(self, path: Path, home: Path, env: Mapping[str, str]) -> tuple[tuple[Path, Any], ...]:
        # Without our own block (an install put it there): what is left is the user's.
        config = path.with_name("config.toml")
        try:
            text = _without_block(config.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            return ()
        events = {k: v for k, v in _toml_hooks_of(text).items() if k != "state"}
        return ((config, events),) if events else ()

    def inline_file(self, path: Path) -> Path | None:
        return path.with_name("config.toml")

    def inline_render(self, text: str, groups: Mapping[str, Any]) -> str | None:
        import json

        base = _without_block(text)
        if not groups:
            return base
        lines = [_BLOCK_START]
        for event, group in groups.items():
            lines.append(f"[[hooks.{event}]]")
            if "matcher" in group:
                lines.append(f"matcher = {_toml(group['matcher'])}")
            for handler in group["hooks"]:
                lines.append(f"[[hooks.{event}.hooks]]")
                lines.extend(f"{key} = {_toml(value)}" for key, value in handler.items())
        new = base + "\n" + "\n".join(lines) + "\n" + _BLOCK_END + "\n"
        # Appending array-of-tables extends the user's `[[hooks.X]]` lists; it cannot extend an
        # inline `X = [...]` or `hooks = {...}`: then the file is not ours to change.
        expected = {k: list(v) for k, v in _toml_hooks_of(base).items()}
        for event, group in groups.items():
            expected.setdefault(event, []).append(json.loads(json.dumps(group)))
        found = _toml_hooks_of(new)
        return new if found and found == expected else None

    def settings_notes(self, doc: Mapping[str, Any], path: Path, ours: Callable[[Any], bool],
                       home: Path, env: Mapping[str, str]) -> tuple[str, ...]:
        import re
        from pathlib import Path as _Path

        user = (_Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex") / "config.toml"
        state = _toml_hooks(user).get("state")
        hooks = doc.get("hooks")
        if not isinstance(state, dict) or not isinstance(hooks, dict):
            return ()
        off = []
        for event, groups in hooks.items():
            snake = re.sub(r"(?<!^)(?=[A-Z])", "_", str(event)).lower()
            for gi, group in enumerate(groups if isinstance(groups, list) else []):
                for hi, handler in enumerate(group.get("hooks", []) if isinstance(group, dict) else []):
                    entry = state.get(f"{path.absolute()}:{snake}:{gi}:{hi}")
                    if ours(handler) and isinstance(entry, dict) and entry.get("enabled") is False:
                        off.append(str(event))
        if off:
            return ((f"slmactor's {', '.join(off)} hook(s) stay disabled ([hooks.state] in {user}), "
                     "as you set them"),)
        return ()

    def outcome(self, tool: str, event: str, payload: Mapping[str, Any]) -> tuple[bool, str]:
        response = payload.get("tool_response")
        if not isinstance(response, str):
            return super().outcome(tool, event, payload)
        import re

        match = re.search(_EXIT_LINE, response[:400])  # the status leads the summary
        if match is None:
            # A one-shot command's PostToolUse carries its output alone; the rollout already
            # holds the command's end (`item_completed` with its `exit_code`) when hooks run.
            code = _rollout_exit_code(self.transcript_path(payload), self.call_id(payload))
            if code is None or code == 0:
                return True, ""
            return False, response.strip() or f"exit status {code}"
        if int(match.group(1)) == 0:
            return True, ""
        output = _after_output(response).strip()
        return False, output or f"exit status {match.group(1)}"

    def truncation(self, tool: str, event: str, payload: Mapping[str, Any]) -> str:
        # The unified exec cuts what it shows the model to its token budget and says so in the
        # output's first line (`codex-rs/core/src/unified_exec`, "Warning: truncated output
        # (original token count: N)"), as seen from the real 0.169 binary.
        response = payload.get("tool_response")
        return _cut(response) if isinstance(response, str) else ""

    def outlived(self, tool: str, event: str, payload: Mapping[str, Any]) -> str:
        # 0.169 fires no PostToolUse for a command its unified exec yielded (seen from the real
        # binary); a later one may: the rollout's reader says it either way (`_outlived`).
        response = payload.get("tool_response")
        return _outlived(response) if isinstance(response, str) else ""

    def transcript_suffix(self) -> str:
        return ".jsonl"

    def transcript_stats(self, path: str, lines: Iterable[str], since: float) -> TranscriptStats | None:
        return rollout(lines, since)

    def session_roots(self, env: Mapping[str, str], home: Path) -> tuple[Path, ...]:
        # `$CODEX_HOME` (default `~/.codex`): live rollouts under `sessions/YYYY/MM/DD/`,
        # archived ones in `archived_sessions/`.
        from pathlib import Path as _Path

        base = _Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        return (base / "sessions", base / "archived_sessions")

    def sniff_session(self, name: str, head: str) -> str:
        from slmactor.harnesses.base import SESSION

        if not name.endswith(".jsonl"):
            return ""
        # `{"timestamp": ..., "type": ..., "payload": ...}`; the first line (session_meta,
        # with the base instructions) may be longer than the head: its opening decides.
        line = head.lstrip()[:400]
        return SESSION if line.startswith('{"timestamp":') and '"payload":' in line \
            and any(f'"type":"{t}"' in line for t in _ROLLOUT_TYPES) else ""

    def read_sessions(self, path: str, lines: Callable[[], Iterable[str]]) -> Iterator[Any]:
        yield read_session(path, lines)


def _output_text(output: Any) -> str:
    """A tool output as text: a string, content items, or `{"output": ...}` (older rollouts)."""
    if isinstance(output, list):  # content items
        return "\n".join(str(i.get("text", "")) for i in output if isinstance(i, dict))
    if isinstance(output, dict):
        return str(output.get("output", output.get("content", "")))
    if isinstance(output, str) and output.startswith('{"output"'):
        import json

        try:
            parsed = json.loads(output)
        except ValueError:
            return output
        if isinstance(parsed, dict):
            return str(parsed.get("output", ""))
    return output if isinstance(output, str) else ""


#: How much of a rollout's end a hook reads for one call's exit code (the call just ended).
_ROLLOUT_TAIL = 256 << 10


def _rollout_exit_code(path: str, call_id: str) -> int | None:
    """The exit code the rollout at `path` records for `call_id` (its `event_msg`
    `item_completed` of a `CommandExecution`), None when its end does not say."""
    if not path.endswith(".jsonl") or not call_id:
        return None
    import json

    data = read_regular_file(path, _ROLLOUT_TAIL, tail=True)
    if data is None:
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    needle = f'"id":"{call_id}"'
    for line in reversed(lines):
        if needle not in line.replace(" ", "") or "item_completed" not in line:
            continue
        try:
            item = json.loads(line).get("payload", {}).get("item", {})
        except (ValueError, AttributeError):
            continue
        code = item.get("exit_code") if isinstance(item, dict) and item.get("id") == call_id else None
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return None


def _cut(output: str) -> str:
    """The unified exec's notice that it cut what the model sees ("Warning: truncated output
    (original token count: N)" among the output's first lines), "" when it did not."""
    head = output[:2000]
    if "Warning: truncated output" not in head:
        return ""
    return next((ln for ln in head.splitlines() if "Warning: truncated output" in ln), "").strip()


def _outlived(output: str) -> str:
    """The unified exec's word that a command was still running after its `yield_time_ms`, kept
    as a session of its own ("Process running with session ID N", where an ended one says
    "Process exited with code N": `codex-rs/core/src/unified_exec`, as the real 0.169 binary
    answers), with the output it had printed; "" when it returned."""
    import re

    match = re.search(r"^Process running with session ID \d+", output[:400], re.MULTILINE)
    if match is None:
        return ""
    wall = re.search(r"^Wall time: ([\d.]+) seconds", output[:400], re.MULTILINE)
    said = _after_output(output).strip()[:2000]
    notice = f"{match.group(0)}: the command had not returned after " \
             f"{wall.group(1) if wall else 'its yield time'} seconds"
    return f"{notice}\n{said}" if said else notice


def _exit_code(output: Any) -> int | None:
    """The exit code a tool output reports (the exec summary's line, or older rollouts'
    `{"metadata": {"exit_code"}}`), None when it names none."""
    import re

    if isinstance(output, str) and output.startswith('{"output"'):
        import json

        try:
            parsed = json.loads(output)
        except ValueError:
            parsed = None
        output = parsed if isinstance(parsed, dict) else output
    if isinstance(output, dict):
        meta = output.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None
    found = re.search(_EXIT_LINE, _output_text(output)[:600])
    return int(found.group(1)) if found else None


def _patch_failure(output: Any) -> str:
    """The error text of a failed apply_patch output, "" when it succeeded."""
    import re

    text = _output_text(output).strip()
    match = re.match(_ROLLOUT_EXIT, text)
    if match and int(match.group(1)) != 0:
        return text
    return text if any(marker in text for marker in _PATCH_FAILED) else ""


#: A patch run through the shell: `apply_patch <<'EOF'` … `EOF` (what Codex has a model without
#: a freeform patch tool do).
_HEREDOC = r"\A\s*apply_patch\s+<<\s*['\"]?(\w+)['\"]?\s*\n(.*?)\n\1\s*\Z"
_SHELL_TOOLS = frozenset({"exec_command", "shell", "local_shell", "container.exec", "unified_exec"})


def shell_patch(command: str) -> str:
    """The patch of a shell command that only runs `apply_patch` on a heredoc, else ""."""
    import re

    found = re.match(_HEREDOC, command, re.DOTALL)
    return found.group(2) if found and "*** Begin Patch" in found.group(2) else ""


def _call(name: str, raw: Any) -> tuple[str, Any]:
    """(tool as the hooks name it, tool input) of a rollout call."""
    if name == "apply_patch":
        return "apply_patch", {"command": raw} if isinstance(raw, str) else raw
    if name not in _SHELL_TOOLS:
        return name, raw
    args = raw
    if isinstance(raw, str):
        import json

        try:
            args = json.loads(raw)
        except ValueError:
            args = {"command": raw}
    from slmactor.harnesses.base import command_of

    command = command_of(args) if isinstance(args, dict) else ""
    patch = shell_patch(command)
    if patch:
        return "apply_patch", {"command": patch}
    return "Bash", {"command": command} if command else args


def rollout(lines: Iterable[str], since: float = 0.0) -> TranscriptStats:
    """Model use and every tool call, with its exit code, of a Codex CLI rollout after `since`
    (a `TranscriptStats`).

    Format (codex-rs `RolloutLine`: `{timestamp, type, payload}`): `turn_context` payloads name
    the `model`; `event_msg` payloads of type `token_count` carry `info.last_token_usage`
    (`input_tokens`, `cached_input_tokens`, `output_tokens`) and a running
    `info.total_token_usage` — a repeated total is the same response reported again, counted
    once; `response_item` payloads `custom_tool_call{call_id, name, input}` /
    `function_call{call_id, name, arguments}` and their `custom_tool_call_output` /
    `function_call_output{call_id, output}`, whose text leads with the exec summary
    (`Exit code: N`, or `Process exited with code N` after a chunk header).  Tokens in are the
    input tokens (cached ones included, as Codex counts them).  The hooks miss what only the
    rollout has: a shell command's exit code (the shell tool's `PostToolUse` carries the raw
    output), a patch that did not apply (no `PostToolUse` at all), and a patch run through the
    shell (`apply_patch <<'EOF'`, which a hook sees as `Bash`; named `apply_patch` here).
    """
    from slmactor.harnesses.base import call_entry, serves
    from slmactor.logic.loop.transcripts import TranscriptStats, as_count, json_objects
    from slmactor.logic.text.timefmt import parse_rfc3339

    models: dict[str, int] = {}
    pending: dict[str, tuple[float, str, Any]] = {}
    calls: list[dict[str, Any]] = []
    llm_calls = tokens_in = tokens_out = 0
    last_total = -1
    started = ended = 0.0
    for entry in json_objects(lines):
        if not isinstance(entry.get("payload"), dict):
            continue
        stamp = entry.get("timestamp")
        at = (parse_rfc3339(stamp) if isinstance(stamp, str) else None) or 0.0
        if since and at and at <= since:
            continue
        if at:
            started = at if not started else min(started, at)
            ended = max(ended, at)
        kind, payload = entry.get("type"), entry["payload"]
        ptype = payload.get("type")
        if kind == "turn_context" and isinstance(payload.get("model"), str) and payload["model"]:
            models[payload["model"]] = models.get(payload["model"], 0) + 1
        elif kind == "event_msg" and ptype == "token_count" and isinstance(payload.get("info"), dict):
            info = payload["info"]
            total = info.get("total_token_usage")
            total_n = as_count(total.get("total_tokens")) if isinstance(total, dict) else -2
            last = info.get("last_token_usage")
            if total_n == last_total or not isinstance(last, dict):
                continue
            last_total = total_n
            llm_calls += 1
            tokens_in += as_count(last.get("input_tokens"))
            tokens_out += as_count(last.get("output_tokens"))
        elif kind == "response_item" and ptype in ("custom_tool_call", "function_call") \
                and isinstance(payload.get("call_id"), str) and isinstance(payload.get("name"), str):
            pending[payload["call_id"]] = (at, payload["name"], payload.get("input", payload.get("arguments")))
        elif kind == "response_item" and ptype in ("custom_tool_call_output", "function_call_output"):
            call_id = str(payload.get("call_id"))
            call = pending.pop(call_id, None)
            if call is None:
                continue
            tool, tool_input = _call(call[1], call[2])
            output = payload.get("output")
            code = _exit_code(output)
            if tool == "apply_patch":
                error = _patch_failure(output)
                ok = not error
            else:
                ok = code is None or code == 0
                error = "" if ok else _after_output(_output_text(output)).strip()
                outlived = _outlived(_output_text(output)) if ok and code is None else ""
                cut = _cut(_output_text(output)) if ok else ""
                if outlived and serves(tool_input, outlived):
                    # A server the exec kept running: it did not return (what the hook would
                    # have recorded, had the harness fired one).
                    ok, error = False, f"timed out: {outlived}"
                elif cut:
                    # Output cut to the model's budget: too large (as the hook records it).
                    ok, error = False, f"output too large: {cut}"
            calls.append(call_entry(HARNESS, at=call[0] or at, call_id=call_id, tool=tool,
                                    tool_input=tool_input, ok=ok, error=error, exit_code=code))
    return TranscriptStats(
        model=max(models, key=lambda m: (models[m], m)) if models else "",
        llm_calls=llm_calls, tokens_in=tokens_in, tokens_out=tokens_out,
        started_at=started, ended_at=ended, calls=tuple(calls),
    )


def read_session(path: str, lines: Callable[[], Iterable[str]]) -> SessionRecord:
    """The `SessionRecord` of a rollout file: the `session_meta` payload's `id` and `cwd` (a
    `turn_context`'s `cwd` when there is no meta line), the first user message, and
    `rollout` of the whole file."""
    import os
    import re

    from slmactor.harnesses.base import content_text, text
    from slmactor.logic.loop.recorded import SessionRecord
    from slmactor.logic.loop.transcripts import json_objects

    session_id = cwd = prompt = ""
    for count, entry in enumerate(json_objects(lines())):
        payload = entry.get("payload")
        if not isinstance(payload, dict):
            continue
        if entry.get("type") == "session_meta":
            session_id = session_id or text(payload.get("id"))
            cwd = cwd or text(payload.get("cwd"))
        elif entry.get("type") == "turn_context":
            cwd = cwd or text(payload.get("cwd"))
        elif entry.get("type") == "event_msg" and payload.get("type") == "user_message" and not prompt:
            prompt = text(payload.get("message")).strip()
        elif entry.get("type") == "response_item" and payload.get("role") == "user" and not prompt:
            said = content_text(payload.get("content")).strip()
            # Codex's own context blocks (`<environment_context>`, AGENTS.md) are no prompt.
            if said and not said.startswith(("<environment_context>", "<user_instructions>", "# AGENTS.md")):
                prompt = said
        if (session_id and cwd and prompt) or count > 400:
            break
    if not session_id:  # `rollout-<date>-<uuid>.jsonl`
        found = re.search(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", path)
        session_id = found.group(1) if found else os.path.basename(path).removesuffix(".jsonl")
    stats = rollout(lines(), 0.0)
    from dataclasses import replace

    return SessionRecord(session_id=session_id, cwd=cwd, stats=replace(stats, first_prompt=prompt))


HARNESS = Codex()


def _toml_hooks(path: Path) -> dict[str, Any]:
    """The `[hooks]` table of a `config.toml` ({} when there is none or it does not parse)."""
    try:
        return _toml_hooks_of(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return {}


#: The lines around the hooks `slmactor hook install` puts in a `config.toml`.
_BLOCK_START = "# >>> slmactor hooks (`slmactor hook install` added them; `slmactor hook uninstall` removes them)"
_BLOCK_END = "# <<< slmactor hooks"


def _without_block(text: str) -> str:
    start = text.find("\n" + _BLOCK_START)
    end = text.find(_BLOCK_END + "\n", start)
    if start < 0 or end < 0:
        return text
    return text[:start] + text[end + len(_BLOCK_END) + 1:]


def _toml(value: Any) -> str:
    # TOML's basic strings take JSON's escapes; booleans and integers are spelled alike.
    import json

    return json.dumps(value, ensure_ascii=False)


def _toml_hooks_of(text: str) -> dict[str, Any]:
    import tomllib

    try:
        hooks = tomllib.loads(text).get("hooks")
    except tomllib.TOMLDecodeError:
        return {}
    return hooks if isinstance(hooks, dict) else {}
