"""What a harness's own session transcript says that its hooks do not (issue 12, item 2).

* **Claude Code** (`claude_transcript_stats`): model, LLM calls, tokens, the first prompt.
* **Codex CLI** (`codex_rollout`): model, LLM calls and tokens, and the `apply_patch` calls that
  failed — Codex runs `PostToolUse` only after a tool produced an output, and a patch that does
  not apply is an error, so no hook ever sees it; the rollout does.

Pure: the caller reads the file (bounded) and passes its lines.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from slmactor.logic.evolve.preflight import patch_paths
from slmactor.logic.text.timefmt import parse_rfc3339

#: A transcript line longer than this is a tool result, never an assistant message's usage.
MAX_TRANSCRIPT_LINE = 1 << 20


@dataclass(frozen=True, slots=True)
class TranscriptStats:
    """What a Claude Code transcript says about the session's model use."""

    model: str = ""
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    started_at: float = 0.0
    ended_at: float = 0.0
    first_prompt: str = ""
    #: Tool calls only the transcript knows (ledger entries: `{"e": "call", ...}`).
    calls: tuple[dict[str, Any], ...] = field(default=())


def as_count(value: Any) -> int:
    """A non-negative whole count from a JSON number (0 for anything else)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value) if math.isfinite(value) and value > 0 else 0


def _prompt_text(message: Any) -> str:
    """A user entry's typed text (a string, or its text blocks); "" for tool results."""
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content
                 if isinstance(b, Mapping) and b.get("type") == "text"]
        return "\n".join(t for t in texts if isinstance(t, str))
    return ""


def _json_objects(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL text; a cut, blank, oversized or non-object line is skipped
    (a transcript being written while it is read ends in a partial line)."""
    for line in lines:
        if len(line) > MAX_TRANSCRIPT_LINE or not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            yield entry


def claude_transcript_stats(lines: Iterable[str]) -> TranscriptStats:
    """Model, LLM calls and tokens of a Claude Code JSONL transcript.

    Format (Claude Code 2.x, `~/.claude/projects/<project>/<session>.jsonl`): one entry per line
    with `type` (`user`, `assistant`, `system`, `summary`, …), `timestamp`, `isSidechain`,
    `isMeta`; an assistant entry's `message` is the Messages API response (`id`, `model`,
    `usage` with `input_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`,
    `output_tokens`, `stop_reason`).  A streamed response is written as several entries sharing
    one `message.id`, each repeating the usage: the last entry of an id counts, once.  Tokens in
    are all input tokens the model processed (cached or not); `<synthetic>` entries (written by
    Claude Code itself, not a model) are skipped.
    """
    usage_by_id: dict[str, tuple[int, int]] = {}
    models: dict[str, int] = {}
    started = ended = 0.0
    prompt = ""
    for entry in _json_objects(lines):
        stamp = entry.get("timestamp")
        at = parse_rfc3339(stamp) if isinstance(stamp, str) else None
        if at:
            started = at if not started else min(started, at)
            ended = max(ended, at)
        kind, message = entry.get("type"), entry.get("message")
        if kind == "user" and not prompt and not entry.get("isMeta") and not entry.get("isSidechain"):
            prompt = _prompt_text(message).strip()
        if kind != "assistant" or not isinstance(message, Mapping):
            continue
        model = message.get("model")
        if not isinstance(model, str) or not model or model == "<synthetic>":
            continue
        mid = message.get("id")
        key = mid if isinstance(mid, str) and mid else f"line-{len(usage_by_id)}"
        usage = message.get("usage")
        usage = usage if isinstance(usage, Mapping) else {}
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
    )




# ---------------------------------------------------------------------------------- Codex CLI

_EXIT = re.compile(r"\A\s*(?:Exit code|exit_code|Process exited with code):?\s*(-?\d+)")
#: What Codex's apply_patch answers when the patch does not apply (codex-rs/apply-patch).
_PATCH_FAILED = ("apply_patch verification failed", "Failed to find expected lines",
                 "Invalid patch", "invalid hunk")


def _patch_failure(output: Any) -> str:
    """The error text of a failed apply_patch output, "" when it succeeded."""
    if isinstance(output, list):  # content items
        output = "\n".join(str(i.get("text", "")) for i in output if isinstance(i, Mapping))
    if not isinstance(output, str):
        return ""
    text = output.strip()
    match = _EXIT.match(text)
    if match and int(match.group(1)) != 0:
        return text
    return text if any(marker in text for marker in _PATCH_FAILED) else ""


def codex_rollout(lines: Iterable[str], since: float = 0.0) -> TranscriptStats:
    """Model use and failed `apply_patch` calls of a Codex CLI rollout, after `since`.

    Format (codex-rs `RolloutLine`: `{timestamp, type, payload}`): `turn_context` payloads name
    the `model`; `event_msg` payloads of type `token_count` carry `info.last_token_usage`
    (`input_tokens`, `cached_input_tokens`, `output_tokens`) and a running
    `info.total_token_usage` — a repeated total is the same response reported again, counted
    once; `response_item` payloads `custom_tool_call{call_id, name, input}` /
    `function_call{call_id, name, arguments}` and their `custom_tool_call_output` /
    `function_call_output{call_id, output}`.  Tokens in are the input tokens (cached ones
    included, as Codex counts them).
    """
    models: dict[str, int] = {}
    calls: dict[str, tuple[float, str]] = {}
    failed: list[dict[str, Any]] = []
    llm_calls = tokens_in = tokens_out = 0
    last_total = -1
    started = ended = 0.0
    for entry in _json_objects(lines):
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
        elif kind == "event_msg" and ptype == "token_count" and isinstance(payload.get("info"), Mapping):
            info = payload["info"]
            total = info.get("total_token_usage")
            total_n = as_count(total.get("total_tokens")) if isinstance(total, Mapping) else -2
            last = info.get("last_token_usage")
            if total_n == last_total or not isinstance(last, Mapping):
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
