"""`slmactor mcp` spoken to by the MCP SDK's own client, over stdio, against a real daemon.

The server is the real command in its own process (`python -m slmactor ... mcp`), exactly as an
agent starts it from its MCP settings; the client is `mcp.Client` with `StdioServerParameters`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import Any

import pytest

from slmactor.protocol.messages import EpisodeRecent, FactList, LessonsRender, MetricsShow
from slmactor.testing import DaemonProcess, wait_for

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

TOOLS = {"recall", "memory_block", "list", "forget", "remember", "repair", "repair_outcome",
         "report_outcome"}


def _server(daemon: DaemonProcess, *extra: str) -> Any:
    from mcp import StdioServerParameters

    env = {**os.environ, "SLMACTOR_HOME": str(daemon.home)}
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "slmactor", "mcp", "--runtime-dir", str(daemon.runtime_dir),
              "--project", str(daemon.project), *extra],
        env=env,
        cwd=str(daemon.project),
    )


async def _processed(c: Any, actor: str) -> int:
    rows = (await c.status())["actors"]
    row = rows[actor] if isinstance(rows, dict) else next(r for r in rows if r["name"] == actor)
    return int(row["processed"])


def _text(result: Any) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


async def test_tools_list_and_every_tool_through_the_sdk_client(daemon: DaemonProcess) -> None:
    async with mcp.Client(_server(daemon)) as client:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        schema = {tool.name: tool.input_schema for tool in listed.tools}
        assert schema["repair"]["required"] == ["tool", "error"]

        remembered = await client.call_tool(
            "remember", {"text": "Run make lint before every push", "kind": "convention",
                         "subject": "lint"})
        assert not remembered.is_error and "convention fact" in _text(remembered)
        lesson = await client.call_tool("remember", {"text": "The parser tests need UTC"})
        assert not lesson.is_error

        advice = json.loads(_text(await client.call_tool("repair", {
            "tool": "Edit",
            "error": "String to replace not found in file.",
            "arguments": json.dumps({"file_path": "app.py", "old_string": "x", "new_string": "y"}),
        })))
        assert set(advice) >= {"apply", "reason", "guidance"}

        reported = await client.call_tool("report_outcome", {
            "task": "fix the pagination off-by-one", "success": True,
            "files_changed": ["app/pagination.py"]})
        assert not reported.is_error and "Recorded the outcome" in _text(reported)
        # run.finish answers once the report is safe; the episode is stored by its pipeline.
        with daemon.client() as c:
            wait_for(lambda: bool(c.ask(EpisodeRecent(n=5))["episodes"]), "the episode stored")

        recalled = _text(await client.call_tool("recall", {"task": "pagination off-by-one"}))
        block = _text(await client.call_tool("memory_block", {"task": "pagination off-by-one"}))
        resource = await client.read_resource("slmactor://memory-block")

    # What the tools said was stored is in the daemon, read through the ordinary client.
    with daemon.client() as c:
        facts = c.ask(FactList())
        assert any("make lint" in f["text"] for f in facts["facts"])
        assert "UTC" in c.ask(LessonsRender(query="parser tests"))["text"]
        episodes = c.ask(EpisodeRecent(n=5))["episodes"]
        assert [e["query"] for e in episodes] == ["fix the pagination off-by-one"]
        wait_for(lambda: bool(c.ask(MetricsShow())["runs"]), "the run's metrics recorded")
    assert "[succeeded] fix the pagination off-by-one" in recalled
    assert "app/pagination.py" in recalled
    assert "pagination" in block
    assert "make lint" in "".join(getattr(c, "text", "") for c in resource.contents)


async def test_a_daemon_that_is_down_makes_tool_errors_not_a_dead_server(
    daemon: DaemonProcess, tmp_path: Any
) -> None:
    down = dataclasses.replace(daemon, runtime_dir=tmp_path / "nothing-here")
    async with mcp.Client(_server(down, "--no-autostart", "--timeout", "0.3")) as client:
        first = await client.call_tool("recall", {"task": "anything"})
        second = await client.call_tool("memory_block", {"task": "anything"})
        tools = await client.list_tools()
    assert first.is_error and "not reachable" in _text(first)
    assert second.is_error
    assert {tool.name for tool in tools.tools} == TOOLS


async def test_parallel_tool_calls_are_all_answered(daemon: DaemonProcess) -> None:
    """Agents issue tool calls in parallel; each gets the answer to its own call."""
    import asyncio

    async with mcp.Client(_server(daemon)) as client:
        subjects = [f"step{i}" for i in range(12)]
        remembered = await asyncio.gather(*(
            client.call_tool("remember", {"text": f"Run make {s} before a release", "kind": "command",
                                          "subject": s})
            for s in subjects))
        assert [r.is_error for r in remembered] == [False] * len(subjects)
        blocks, recalls, repairs = await asyncio.gather(
            asyncio.gather(*(client.call_tool("memory_block", {"task": f"make {s}"}) for s in subjects)),
            asyncio.gather(*(client.call_tool("recall", {"task": f"make {s}"}) for s in subjects)),
            asyncio.gather(*(client.call_tool("repair", {"tool": "Bash", "error": f"make: *** No rule to make target '{s}'"})
                             for s in subjects)),
        )
        listed = await client.list_tools()
    assert {tool.name for tool in listed.tools} == TOOLS  # the server is still alive
    for s, block in zip(subjects, blocks, strict=True):
        assert not block.is_error and f"make {s}" in _text(block)
    assert all(not r.is_error for r in recalls)
    assert all(set(json.loads(_text(r))) >= {"apply", "reason", "guidance"} for r in repairs)
    with daemon.client() as c:
        texts = {f["text"] for f in c.ask(FactList())["facts"]}
    assert {f"Run make {s} before a release" for s in subjects} <= texts


async def test_a_tool_call_the_agent_gives_up_on_does_not_disturb_the_others(
    daemon: DaemonProcess,
) -> None:
    """A call that times out on the agent's side is cancelled in the server (the SDK sends
    `notifications/cancelled`); the calls beside it and every later call are still answered."""
    import asyncio

    from slmactor.client import AsyncClient
    from slmactor.protocol.messages import DebugCrash

    async with AsyncClient(daemon.runtime_dir) as staller, mcp.Client(_server(daemon)) as client:
        assert not (await client.call_tool("recall", {"task": "warm up"})).is_error
        # Hold the distiller's mailbox: memory_block waits; recall (another actor) does not.
        before = await _processed(staller, "distiller")
        stall = asyncio.create_task(staller.ask(DebugCrash(actor="distiller", how="stall"),
                                                timeout=60, retries=1))
        for _ in range(2000):  # round trips, no sleeping: until the distiller holds the stall
            if await _processed(staller, "distiller") > before:
                break
        given_up, recalls = await asyncio.gather(
            asyncio.gather(*(client.call_tool("memory_block", {"task": f"t{i}"},
                                              read_timeout_seconds=0.5) for i in range(3)),
                           return_exceptions=True),
            asyncio.gather(*(client.call_tool("recall", {"task": f"q{i}"}) for i in range(6))),
        )
        assert all(isinstance(r, Exception) for r in given_up), given_up
        assert all(not r.is_error for r in recalls)
        await staller.ask(DebugCrash(actor="distiller", how="release"))
        assert await stall == {"stalled": "distiller"}
        after = await asyncio.gather(*(client.call_tool("memory_block", {"task": f"t{i}"})
                                       for i in range(4)))
        assert all(not r.is_error for r in after)
        assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS


async def test_a_model_lists_and_forgets_what_it_remembered(daemon: DaemonProcess) -> None:
    from slmactor.protocol.messages import MemoryBlock

    async with mcp.Client(_server(daemon)) as client:
        kept = await client.call_tool("remember", {"text": "Run make lint before every push",
                                                   "kind": "convention", "subject": "lint"})
        slip = await client.call_tool("remember", {"text": "Always use tabs in Python files",
                                                   "kind": "convention", "subject": "tabs"})
        slip_id = slip.structured_content["id"]
        listed = (await client.call_tool("list", {})).structured_content
        texts = {line["id"]: line["text"] for line in listed["lines"]}
        assert texts[slip_id] == "Always use tabs in Python files"
        assert texts[kept.structured_content["id"]] == "Run make lint before every push"
        line = next(ln for ln in listed["lines"] if ln["id"] == slip_id)
        assert line["evidence"] and line["evidence"][0].startswith("fact:")
        gone = await client.call_tool("forget", {"ids": [slip_id]})
        assert not gone.is_error and gone.structured_content["forgotten"] == [slip_id]
        again = await client.call_tool("forget", {"ids": [slip_id]})
        assert again.structured_content == {"forgotten": [], "already": [slip_id]}
        # memory_block({}) is the project's block: the line is gone from it, the other stays.
        block = await client.call_tool("memory_block", {})
        assert not block.is_error
        assert "make lint" in _text(block) and "tabs" not in _text(block)
    with daemon.client() as c:
        assert "tabs" not in c.ask(MemoryBlock())["text"]


async def test_unknown_arguments_are_refused_in_one_line(daemon: DaemonProcess) -> None:
    async with mcp.Client(_server(daemon)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert all(t.input_schema.get("additionalProperties") is False for t in tools.values())
        refused = await client.call_tool("memory_block", {"task": "x", "query": "x"})
        assert refused.is_error
        assert _text(refused) == ("memory_block: unknown argument(s) query; it takes files, "
                                  "role, task")
        bad = await client.call_tool("recall", {"task": "x", "n": 99})
        assert bad.is_error and "\n" not in _text(bad) and "pydantic" not in _text(bad)
        assert "n: " in _text(bad)
        with daemon.client() as c:
            assert c.ask(FactList())["facts"] == []  # nothing was stored by a refused call
