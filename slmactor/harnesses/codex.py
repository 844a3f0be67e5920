"""Codex CLI: its hook events and payloads, its tools, its rollout file, its settings.

Follows Codex CLI 0.1xx (openai/codex): the hook schemas `codex-rs/hooks/schema/generated/
*.schema.json` (events, `hookSpecificOutput`, `updatedInput` accepted only with
`permissionDecision: allow`), the exec summary of `codex-rs/core/src/tools/mod.rs`
(`format_exec_output_for_model_freeform`), the `apply_patch` envelope and its errors
(`codex-rs/apply-patch`), and the rollout lines of `codex-rs` `RolloutLine`
(`$CODEX_HOME/sessions/…/rollout-*.jsonl`). Fixtures: `tests/fixtures/hooks/codex/`.

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
    RECORD,
    SHELL,
    STOP,
    Harness,
    JsonSettings,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

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
    patch_error = "apply_patch verification failed: Failed to find expected lines in {path}:\n{old}"
    read_tools = ("list_dir", "grep_files")
    edit_tools = ("apply_patch",)
    shell_tools = ("local_shell", "exec_command", "unified_exec", "container.exec")
    edit_formats = {"apply_patch": "apply_patch"}
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

    def outcome(self, tool: str, event: str, payload: Mapping[str, Any]) -> tuple[bool, str]:
        response = payload.get("tool_response")
        if not isinstance(response, str):
            return super().outcome(tool, event, payload)
        import re

        match = re.search(_EXIT_LINE, response[:400])  # the status leads the summary
        if match is None or int(match.group(1)) == 0:
            return True, ""
        output = _after_output(response).strip()
        return False, output or f"exit status {match.group(1)}"

    def transcript_suffix(self) -> str:
        return ".jsonl"

    def transcript_stats(self, path: str, lines: Iterable[str], since: float) -> Any:
        return rollout(lines, since)


def _patch_failure(output: Any) -> str:
    """The error text of a failed apply_patch output, "" when it succeeded."""
    import re

    if isinstance(output, list):  # content items
        output = "\n".join(str(i.get("text", "")) for i in output if isinstance(i, dict))
    if not isinstance(output, str):
        return ""
    text = output.strip()
    match = re.match(_ROLLOUT_EXIT, text)
    if match and int(match.group(1)) != 0:
        return text
    return text if any(marker in text for marker in _PATCH_FAILED) else ""


def rollout(lines: Iterable[str], since: float = 0.0) -> Any:
    """Model use and failed `apply_patch` calls of a Codex CLI rollout, after `since` (a
    `TranscriptStats`).

    Format (codex-rs `RolloutLine`: `{timestamp, type, payload}`): `turn_context` payloads name
    the `model`; `event_msg` payloads of type `token_count` carry `info.last_token_usage`
    (`input_tokens`, `cached_input_tokens`, `output_tokens`) and a running
    `info.total_token_usage` — a repeated total is the same response reported again, counted
    once; `response_item` payloads `custom_tool_call{call_id, name, input}` /
    `function_call{call_id, name, arguments}` and their `custom_tool_call_output` /
    `function_call_output{call_id, output}`.  Tokens in are the input tokens (cached ones
    included, as Codex counts them).  Codex runs `PostToolUse` only after a tool produced an
    output, and a patch that does not apply is an error, so no hook ever sees it; the rollout does.
    """
    import json

    from slmactor.logic.evolve.preflight import patch_paths
    from slmactor.logic.loop.transcripts import TranscriptStats, as_count, json_objects
    from slmactor.logic.text.timefmt import parse_rfc3339

    models: dict[str, int] = {}
    calls: dict[str, tuple[float, str]] = {}
    failed: list[dict[str, Any]] = []
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
                and payload.get("name") == "apply_patch" and isinstance(payload.get("call_id"), str):
            patch = payload.get("input", payload.get("arguments"))
            if isinstance(patch, str):
                calls[payload["call_id"]] = (at, patch)
        elif kind == "response_item" and ptype in ("custom_tool_call_output", "function_call_output"):
            call = calls.pop(str(payload.get("call_id")), None)
            error = _patch_failure(payload.get("output")) if call else ""
            if call and error:
                paths = patch_paths(call[1])
                failed.append({"e": "call", "at": call[0] or at, "tool": "apply_patch", "ok": False,
                               "path": paths[0] if paths else "",
                               "args": json.dumps({"command": call[1]}, ensure_ascii=False,
                                                  sort_keys=True, separators=(",", ":")),
                               "command": call[1], "error": error[:16_000]})
    return TranscriptStats(
        model=max(models, key=lambda m: (models[m], m)) if models else "",
        llm_calls=llm_calls, tokens_in=tokens_in, tokens_out=tokens_out,
        started_at=started, ended_at=ended, calls=tuple(failed),
    )


HARNESS = Codex()
