"""The scripted model server on its own (no CLI needed): turns are consumed in order by main
requests only, a step sees the tool result the client sent back, each API's stream has the
events its clients wait for, and every request is logged."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.realcli import wire
from tests.realcli.models import Call, Seen, Step, Turn, serving


def post(url: str, body: dict[str, Any]) -> tuple[str, str]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["Content-Type"], response.read().decode()


def sse_data(text: str) -> list[Any]:
    out: list[Any] = []
    for line in text.splitlines():
        if line.startswith("data: "):
            payload = line[len("data: "):]
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def test_anthropic_turns_side_requests_and_the_log() -> None:
    seen: list[Seen] = []

    def second(s: Seen) -> Turn:
        seen.append(s)
        return Turn(text="saw " + s.last_result)

    steps: list[Step] = [Turn(text="run it", calls=(Call("Bash", {"command": "false"}),)), second]
    with serving("anthropic", steps, "m") as server:
        url = f"{server.base_url}/v1/messages?beta=true"
        kind, body = post(url, {"stream": True, "tools": TOOLS,
                                "messages": [{"role": "user", "content": "go"}]})
        events = sse_data(body)
        assert kind == "text/event-stream"
        assert [e["type"] for e in events] == [
            "message_start", "content_block_start", "content_block_delta", "content_block_stop",
            "content_block_start", "content_block_delta", "content_block_stop",
            "message_delta", "message_stop"]
        assert events[5]["delta"] == {"type": "input_json_delta",
                                      "partial_json": '{"command": "false"}'}
        assert events[7]["delta"]["stop_reason"] == "tool_use"
        # A title request (no tools) is answered and consumes no turn.
        _, side = post(url, {"messages": [{"role": "user", "content": "title?"}]})
        assert json.loads(side)["content"] == [{"type": "text", "text": wire.SIDE_TEXT}]
        tool_id = events[4]["content_block"]["id"]
        result = {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "is_error": True,
             "content": [{"type": "text", "text": "Exit code 1"}]}]}
        _, body = post(url, {"stream": True, "tools": TOOLS, "messages": [result]})
        assert sse_data(body)[2]["delta"]["text"] == "saw Exit code 1"
        # Past the script: the final text, no tool call.
        _, body = post(url, {"stream": True, "tools": TOOLS, "messages": []})
        assert sse_data(body)[-2]["delta"]["stop_reason"] == "end_turn"
    assert seen[0].turn == 1 and seen[0].last_result == "Exit code 1"
    assert [(e.main, e.turn) for e in server.log] == [(True, 0), (False, None), (True, 1), (True, 2)]
    assert server.results_sent() == ["Exit code 1"]


def test_responses_stream_items_and_models() -> None:
    steps = [Turn(text="t", calls=(Call("exec_command", {"cmd": "ls"}),
                                   Call("apply_patch", raw="*** Begin Patch\n")))]
    with serving("responses", steps, "gpt") as server:
        _, body = post(f"{server.base_url}/v1/responses", {"tools": [{"name": "x"}], "input": []})
        with urllib.request.urlopen(f"{server.base_url}/v1/models", timeout=10) as response:
            models = json.loads(response.read())
    events = sse_data(body)
    assert [e["type"] for e in events] == ["response.created"] + \
        ["response.output_item.done"] * 3 + ["response.completed"]
    items = [e["item"] for e in events[1:4]]
    assert [i["type"] for i in items] == ["message", "function_call", "custom_tool_call"]
    assert json.loads(items[1]["arguments"]) == {"cmd": "ls"} and items[2]["input"].startswith("***")
    assert events[-1]["response"]["usage"]["total_tokens"] > 0
    assert models["data"][0]["id"] == "gpt"


def test_gemini_main_turn_and_schema_side_request() -> None:
    steps = [Turn(calls=(Call("read_file", {"file_path": "a.py"}),))]
    with serving("gemini", steps, "g") as server:
        base = f"{server.base_url}/v1beta/models/g"
        _, body = post(f"{base}:streamGenerateContent?alt=sse",
                       {"tools": [{"functionDeclarations": []}], "contents": []})
        schema = {"type": "OBJECT", "properties": {"next_speaker": {"type": "STRING"},
                                                   "score": {"type": "INTEGER"}}}
        _, side = post(f"{base}:generateContent",
                       {"contents": [], "generationConfig": {"responseJsonSchema": schema}})
        _, count = post(f"{base}:countTokens", {"contents": []})
    parts = sse_data(body)[0]["candidates"][0]["content"]["parts"]
    assert parts == [{"functionCall": {"name": "read_file", "args": {"file_path": "a.py"}}}]
    answer = json.loads(json.loads(side)["candidates"][0]["content"]["parts"][0]["text"])
    assert answer == {"next_speaker": "user", "score": 1}
    assert json.loads(count)["totalTokens"] > 0
    assert server.scenario.consumed == 1


def test_chat_completions_stream_ends_with_done() -> None:
    steps = [Turn(calls=(Call("run_commands", {"commands": ["ls"]}),))]
    with serving("chat", steps, "c") as server:
        _, body = post(f"{server.base_url}/v1/chat/completions",
                       {"stream": True, "tools": [{"type": "function"}], "messages": []})
    chunks = sse_data(body)
    assert chunks[-1] == "[DONE]"
    calls = [c for c in chunks[:-1] if c["choices"] and c["choices"][0]["delta"].get("tool_calls")]
    assert calls[0]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "run_commands"
    finish = [c["choices"][0]["finish_reason"] for c in chunks[:-1] if c["choices"]]
    assert finish[-1] == "tool_calls"


def request_with_result(api: str, text: str) -> dict[str, Any]:
    """A request body of `api` whose last tool result is `text`, shaped as the CLI sends it."""
    if api == "anthropic":
        return {"messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": text}]}]}
    if api == "responses":
        return {"input": [{"type": "function_call_output", "call_id": "c", "output": text}]}
    if api == "gemini":
        return {"contents": [{"role": "user", "parts": [
            {"functionResponse": {"name": "f", "response": {"output": text}}}]}]}
    return {"messages": [{"role": "tool", "tool_call_id": "c", "content": text}]}


@settings(derandomize=True, max_examples=60)
@given(api=st.sampled_from(["anthropic", "responses", "gemini", "chat"]), text=st.text())
def test_last_tool_result_reads_back_what_was_sent(api: str, text: str) -> None:
    found = wire.last_tool_result(api, request_with_result(api, text))
    if api == "gemini":
        assert json.loads(found) == {"output": text}  # the whole response object
    else:
        assert found == text
