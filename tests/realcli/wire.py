"""The wire shapes of the four model APIs the real CLIs speak, for the scripted model server.

Owns: telling a main turn from a side request, pulling the last tool result out of a request,
and rendering a scripted turn as the API's (streamed) answer. Shapes follow the providers'
published API references, and only as much of them as the pinned CLIs read:

- Anthropic Messages, streaming: https://docs.anthropic.com/en/api/messages-streaming —
  `message_start`, `content_block_start` / `content_block_delta` (`text_delta`,
  `input_json_delta`) / `content_block_stop`, `message_delta` (stop_reason, usage),
  `message_stop`; the request's tool results are `tool_result` blocks
  (https://docs.anthropic.com/en/docs/build-with-claude/tool-use).
- OpenAI Responses, streaming: https://platform.openai.com/docs/api-reference/responses-streaming
  — `response.created`, `response.output_item.done` (items `message`, `function_call`,
  `custom_tool_call`), `response.completed` with `usage`; Codex CLI reads exactly these
  (codex-rs/codex-api/src/sse/responses.rs) and lists models with `GET /v1/models`.
  Tool results come back as `function_call_output` / `custom_tool_call_output` input items.
- Gemini: https://ai.google.dev/api/generate-content — `streamGenerateContent?alt=sse` sends one
  `GenerateContentResponse` per `data:` line, `generateContent` one JSON body, `countTokens`
  `{"totalTokens"}`; calls are `functionCall` parts, results `functionResponse` parts.
- OpenAI Chat Completions, streaming: https://platform.openai.com/docs/api-reference/chat-streaming
  — `chat.completion.chunk` objects with `delta.content` / `delta.tool_calls`, a final chunk with
  `finish_reason`, then `data: [DONE]`; tool results are `role: "tool"` messages.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.realcli.models import Turn

_ids = itertools.count(1)

SIDE_TEXT = "OK."


@dataclass(frozen=True)
class Reply:
    """A JSON body, or a list of SSE events (name or None, data) to stream."""

    status: int = 200
    json: Any = None
    events: list[tuple[str | None, Any]] | None = None


def _id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):06d}"


def sse_chunks(events: Iterable[tuple[str | None, Any]]) -> Iterable[bytes]:
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {name}\n" if name else ""
        yield f"{head}data: {payload}\n\n".encode()


def _text_of(content: Any) -> str:
    """Flatten a tool result's content (a string, a list of text parts, or a JSON value)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part.get("text", part)) if isinstance(part, dict) else _text_of(part)
                         for part in content)
    return json.dumps(content)


# -- main turn or side request -----------------------------------------------------------------
def is_main(api: str, route: str, body: dict[str, Any]) -> bool:
    if api == "anthropic":
        return route.endswith("/v1/messages") and bool(body.get("tools"))
    if api == "responses":
        return route.endswith("/responses") and bool(body.get("tools"))
    if api == "gemini":
        # Gemini CLI streams its main turns with tool declarations; next-speaker and loop
        # checks carry a response schema instead.
        return ":streamGenerateContent" in route and bool(body.get("tools"))
    if api == "chat":
        return route.endswith("/chat/completions") and bool(body.get("tools"))
    raise ValueError(api)


def last_tool_result(api: str, body: dict[str, Any]) -> str:
    """The last tool result the CLI sent back, as text ("" when the request carries none)."""
    if api == "anthropic":
        for message in reversed(body.get("messages") or []):
            content = message.get("content")
            if message.get("role") != "user" or not isinstance(content, list):
                continue
            results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if results:
                return _text_of(results[-1].get("content", ""))
        return ""
    if api == "responses":
        items = body.get("input") or []
        for item in reversed(items if isinstance(items, list) else []):
            if isinstance(item, dict) and item.get("type") in (
                "function_call_output", "custom_tool_call_output"
            ):
                return _text_of(item.get("output", ""))
        return ""
    if api == "gemini":
        for content in reversed(body.get("contents") or []):
            for part in reversed(content.get("parts") or []):
                if isinstance(part, dict) and "functionResponse" in part:
                    return _text_of(part["functionResponse"].get("response", {}))
        return ""
    if api == "chat":
        for message in reversed(body.get("messages") or []):
            if message.get("role") == "tool":
                return _text_of(message.get("content", ""))
        return ""
    raise ValueError(api)


# -- answers -----------------------------------------------------------------------------------
def render(
    api: str, model: str, method: str, route: str, body: dict[str, Any], turn: Turn | None
) -> Reply:
    """The answer to one request: `turn` for a main request, plain text for a side request."""
    if api == "anthropic":
        if route.endswith("/count_tokens"):
            return Reply(json={"input_tokens": 100})
        if route.endswith("/v1/messages"):
            return _anthropic(model, body, turn)
    elif api == "responses":
        if method == "GET" and route.endswith("/models"):
            return Reply(json={"object": "list", "data": [{"id": model, "object": "model"}],
                               "models": []})
        if route.endswith("/responses"):
            return _responses(model, turn)
    elif api == "gemini":
        if route.endswith(":countTokens"):
            return Reply(json={"totalTokens": 100})
        if ":streamGenerateContent" in route or ":generateContent" in route:
            return _gemini(model, route, body, turn)
    elif api == "chat":
        if method == "GET" and route.endswith("/models"):
            return Reply(json={"object": "list", "data": [{"id": model, "object": "model"}]})
        if route.endswith("/chat/completions"):
            return _chat(model, body, turn)
    return Reply(status=404, json={"error": {"message": f"scripted server: no route {route}"}})


def _side(turn: Turn | None) -> Turn:
    from tests.realcli.models import Turn

    return turn if turn is not None else Turn(text=SIDE_TEXT)


def _anthropic(model: str, body: dict[str, Any], turn: Turn | None) -> Reply:
    turn = _side(turn)
    blocks: list[dict[str, Any]] = []
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    blocks.extend({"type": "tool_use", "id": _id("toolu"), "name": call.name,
                   "input": call.args or {}} for call in turn.calls)
    stop = "tool_use" if turn.calls else "end_turn"
    usage = {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    message = {"id": _id("msg"), "type": "message", "role": "assistant", "model": model,
               "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage}
    if not body.get("stream"):
        return Reply(json=message)
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start",
                           "message": {**message, "content": [], "stop_reason": None,
                                       "usage": {**usage, "output_tokens": 1}}}),
    ]
    for index, block in enumerate(blocks):
        start: dict[str, Any]
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index,
                                     "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 20}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return Reply(events=events)


def _responses(model: str, turn: Turn | None) -> Reply:
    turn = _side(turn)
    response_id = _id("resp")
    items: list[dict[str, Any]] = []
    if turn.text:
        items.append({"type": "message", "id": _id("msg"), "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": turn.text, "annotations": []}]})
    for call in turn.calls:
        if call.raw is not None:
            items.append({"type": "custom_tool_call", "id": _id("ctc"), "call_id": _id("call"),
                          "name": call.name, "input": call.raw, "status": "completed"})
        else:
            items.append({"type": "function_call", "id": _id("fc"), "call_id": _id("call"),
                          "name": call.name, "arguments": json.dumps(call.args or {}),
                          "status": "completed"})
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 120}
    base = {"id": response_id, "object": "response", "model": model}
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created",
                              "response": {**base, "status": "in_progress", "output": []}}),
    ]
    for index, item in enumerate(items):
        events.append(("response.output_item.done",
                       {"type": "response.output_item.done", "output_index": index, "item": item}))
    events.append(("response.completed", {
        "type": "response.completed",
        "response": {**base, "status": "completed", "output": items, "usage": usage}}))
    return Reply(events=events)


_SCHEMA_KEYS = ("responseJsonSchema", "responseSchema")


def _gemini_side_json(body: dict[str, Any]) -> str | None:
    """A JSON answer for a side request that asks for one (next-speaker check, loop check, ...):
    the schema's required fields, each a plausible "nothing to do" value."""
    config = body.get("generationConfig") or {}
    schema = next((config[k] for k in _SCHEMA_KEYS if isinstance(config.get(k), dict)), None)
    if schema is None:
        return None
    answer: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        kind = str(prop.get("type", "string")).lower()
        if name == "next_speaker":
            answer[name] = "user"
        elif "enum" in prop:
            answer[name] = prop["enum"][0]
        elif kind == "boolean":
            answer[name] = False
        elif kind in ("number", "integer"):
            answer[name] = prop.get("minimum", 1)  # scores are 1-based where it matters
        elif kind == "array":
            answer[name] = []
        elif kind == "object":
            answer[name] = {}
        else:
            answer[name] = "none"
    return json.dumps(answer)


def _gemini(model: str, route: str, body: dict[str, Any], turn: Turn | None) -> Reply:
    parts: list[dict[str, Any]] = []
    if turn is None:
        parts.append({"text": _gemini_side_json(body) or SIDE_TEXT})
    else:
        if turn.text:
            parts.append({"text": turn.text})
        parts.extend({"functionCall": {"name": c.name, "args": c.args or {}}} for c in turn.calls)
    response = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                        "index": 0}],
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20,
                          "totalTokenCount": 120},
        "modelVersion": re.sub(r"^.*/models/([^:]+):.*$", r"\1", route) or model,
    }
    if ":streamGenerateContent" in route:
        return Reply(events=[(None, response)])
    return Reply(json=response)


def _chat(model: str, body: dict[str, Any], turn: Turn | None) -> Reply:
    turn = _side(turn)
    chunk_id = _id("chatcmpl")

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": chunk_id, "object": "chat.completion.chunk", "created": 0, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    finish = "tool_calls" if turn.calls else "stop"
    calls = [{"index": i, "id": _id("call"), "type": "function",
              "function": {"name": c.name, "arguments": json.dumps(c.args or {})}}
             for i, c in enumerate(turn.calls)]
    usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if calls:
            message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
        return Reply(json={"id": chunk_id, "object": "chat.completion", "created": 0,
                           "model": model, "usage": usage,
                           "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
    events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": ""}))]
    if turn.text:
        events.append((None, chunk({"content": turn.text})))
    if calls:
        events.append((None, chunk({"tool_calls": calls})))
    events.append((None, chunk({}, finish)))
    events.append((None, {**chunk({}), "choices": [], "usage": usage}))
    events.append((None, "[DONE]"))
    return Reply(events=events)
