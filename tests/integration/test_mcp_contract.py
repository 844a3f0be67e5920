"""What a model sees of `slmactor mcp`, through the MCP SDK's own client over stdio, real daemon.

The published tool list (every parameter described, closed sets as enums, behaviour hints, output
schemas), model-shaped calls with object arguments, refusals of unknown values, a repaired
failure's loop closed through `repair_outcome`, and `recall` naming each task once.

The Edit error text is Claude Code's (2.1.x), as recorded from real sessions in
`tests/fixtures/real_failures/heldout.jsonl` (its `source` fields name repository, commit and
harness version).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest

from slmactor.protocol.messages import (
    EpisodeRecent,
    EvolveRules,
    FactList,
    LessonsRecall,
    LessonsRender,
)
from slmactor.testing import DaemonProcess, wait_for

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

NOT_FOUND = ("<tool_use_error>String to replace not found in file.\n"
                "String: \t\t\treturn undefined;  </tool_use_error>")
FAILED = {"file_path": "src/parse.ts", "old_string": "\t\t\treturn undefined;  ",
          "new_string": "\t\t\treturn null;", "replace_all": False}
FIXED = {**FAILED, "old_string": "\t\t\treturn undefined;"}


def _server(daemon: DaemonProcess) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "slmactor", "mcp", "--runtime-dir", str(daemon.runtime_dir),
              "--project", str(daemon.project)],
        env={**os.environ, "SLMACTOR_HOME": str(daemon.home)},
        cwd=str(daemon.project),
    )


def _text(result: Any) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


async def test_the_tool_list_describes_every_parameter_and_hints_every_tool(
    daemon: DaemonProcess,
) -> None:
    async with mcp.Client(_server(daemon)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    undescribed = [f"{name}.{param}" for name, tool in tools.items()
                   for param, spec in tool.input_schema["properties"].items()
                   if not spec.get("description")]
    assert undescribed == []
    assert sum(len(t.input_schema["properties"]) for t in tools.values()) >= 17
    for name, tool in tools.items():
        hints = tool.annotations
        assert hints is not None, name
        assert None not in (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint,
                            hints.open_world_hint), name
        assert hints.open_world_hint is False, name
        # Only forget takes anything away (lines, by id); everything else only adds.
        assert hints.destructive_hint is (name == "forget"), name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
        assert "result" not in tool.output_schema["properties"], name  # not a wrapped string
    assert {n for n, t in tools.items() if t.annotations.read_only_hint} == {
        "recall", "memory_block", "list"}
    kind = tools["remember"].input_schema["properties"]["kind"]
    assert kind["enum"] == ["command", "layout", "convention", "gotcha", "file", "dependency",
                            "lesson"]
    assert "enum" in tools["memory_block"].input_schema["properties"]["role"]
    arguments = tools["repair"].input_schema["properties"]["arguments"]
    assert {"type": "object"} in [{k: v for k, v in option.items() if k == "type"}
                                  for option in arguments["anyOf"]]
    assert tools["repair"].input_schema["required"] == ["tool", "error"]
    assert tools["repair_outcome"].input_schema["required"] == ["fingerprint", "worked"]


async def test_unknown_values_are_refused_with_a_reason_and_nothing_is_stored(
    daemon: DaemonProcess,
) -> None:
    async with mcp.Client(_server(daemon)) as client:
        kind = await client.call_tool("remember", {"text": "Deploys go through make ship",
                                                   "kind": "instruction"})
        role = await client.call_tool("memory_block", {"task": "x", "role": "wizard"})
        count = await client.call_tool("recall", {"task": "x", "n": 0})
        not_json = await client.call_tool("repair", {"tool": "Bash", "error": "boom",
                                                     "arguments": "pytest -q"})
        stranger = await client.call_tool("repair_outcome", {"fingerprint": "fp_000000000000",
                                                             "worked": True})
        folded = await client.call_tool("remember", {"text": "Run make lint before a push",
                                                     "kind": " Command ", "subject": "lint"})
    assert kind.is_error and "kind" in _text(kind) and "'lesson'" in _text(kind)
    assert role.is_error and "'worker'" in _text(role)
    assert count.is_error and "n" in _text(count)
    assert not_json.is_error and "JSON object" in _text(not_json)
    assert stranger.is_error and "call repair with the failed call first" in _text(stranger)
    assert not folded.is_error and folded.structured_content["kind"] == "command"
    with daemon.client() as c:
        assert "make ship" not in c.ask(LessonsRender(query="deploys make ship"))["text"]
        assert not any("make ship" in f["text"] for f in c.ask(FactList())["facts"])


async def test_a_repaired_failure_is_recorded_fixed_learned_and_offered_next_time(
    daemon: DaemonProcess,
) -> None:
    async with mcp.Client(_server(daemon)) as client:
        # A model-shaped call: the arguments are an object, as the model produced them.
        advice = await client.call_tool("repair", {"tool": "Edit", "error": NOT_FOUND,
                                                   "arguments": FAILED})
        assert not advice.is_error
        first = advice.structured_content
        assert json.loads(_text(advice)) == first  # the text is the JSON, encoded once
        assert first["apply"] is False and "new_arguments" not in first
        fingerprint = first["fingerprint"]
        assert fingerprint.startswith("fp_")
        closed = await client.call_tool("repair_outcome", {
            "fingerprint": fingerprint, "worked": True, "fixed_arguments": FIXED,
            "how": "dropped the trailing spaces of old_string"})
        assert not closed.is_error and closed.structured_content["resolved"] is True
        assert closed.structured_content["learned"]
        reported = await client.call_tool("report_outcome", {
            "task": "return null from parse", "success": True,
            "summary": "every return undefined now returns null", "files_changed": ["src/parse.ts"]})
        assert not reported.is_error
        with daemon.client() as c:
            wait_for(lambda: bool(c.ask(EpisodeRecent(n=5))["episodes"]), "the episode stored")
        recalled = await client.call_tool("recall", {"task": "return null from parse"})

    with daemon.client() as c:
        lessons = c.ask(LessonsRender(query="Edit string to replace not found parse.ts"))["text"]
        polar = c.ask(LessonsRecall(task="Edit string to replace not found parse.ts"))
    # A failure the session fixed is a convention with its fix, never an unresolved failure or a
    # don't-lesson.
    assert "stayed unresolved" not in lessons
    assert "fixed by trim_trailing_whitespace" in lessons  # the transform between the two calls
    assert not [le for le in polar["lessons"] if le["polarity"] == "dont"]
    hit = recalled.structured_content["tasks"][0]
    assert hit["summary"] == "every return undefined now returns null"
    assert [f["fix"] for f in hit["failures"]] == ["dropped the trailing spaces of old_string"]
    assert "→ dropped the trailing spaces of old_string" in _text(recalled)

    # The next session meets the same failure, its arguments in the old JSON-text form: memory
    # offers the call that worked, as an object.
    async with mcp.Client(_server(daemon)) as client:
        again = await client.call_tool("repair", {"tool": "Edit", "error": NOT_FOUND,
                                                  "arguments": json.dumps(FAILED)})
    offered = again.structured_content
    assert offered["fingerprint"] == fingerprint and offered["rule_id"]
    assert offered["apply"] is True and offered["new_arguments"] == FIXED


async def test_a_repair_that_did_not_work_leaves_the_failure_open_and_blames_its_rule(
    daemon: DaemonProcess,
) -> None:
    async with mcp.Client(_server(daemon)) as client:  # a session that learns the repair
        first = (await client.call_tool("repair", {"tool": "Edit", "error": NOT_FOUND,
                                                   "arguments": FAILED})).structured_content
        await client.call_tool("repair_outcome", {"fingerprint": first["fingerprint"],
                                                  "worked": True, "fixed_arguments": FIXED})
        await client.call_tool("report_outcome", {"task": "return null from parse",
                                                  "success": True})
    with daemon.client() as c:
        wait_for(lambda: bool(c.ask(EpisodeRecent(n=5))["episodes"]), "the episode stored")
    async with mcp.Client(_server(daemon)) as client:  # one where following it does not help
        advice = (await client.call_tool("repair", {"tool": "Edit", "error": NOT_FOUND,
                                                    "arguments": FAILED})).structured_content
        assert advice["apply"] is True
        with daemon.client() as c:
            rule = next(r for r in c.ask(EvolveRules())["rules"] if r["id"] == advice["rule_id"])
        outcome = await client.call_tool("repair_outcome", {
            "fingerprint": advice["fingerprint"], "worked": False, "used_repair": True})
        await client.call_tool("report_outcome", {"task": "return null from parse, again",
                                                  "success": False})
        with daemon.client() as c:
            wait_for(lambda: len(c.ask(EpisodeRecent(n=5))["episodes"]) == 2, "episode stored")

            def blamed() -> bool:
                now = next(r for r in c.ask(EvolveRules())["rules"] if r["id"] == rule["id"])
                return bool(now["failures"] == rule["failures"] + 1)

            wait_for(blamed, "the rule blamed for the repair that did not work")
        recalled = await client.call_tool("recall", {"task": "return null from parse, again"})
    assert outcome.structured_content == {"fingerprint": advice["fingerprint"], "resolved": False,
                                          "learned": ""}
    again = next(t for t in recalled.structured_content["tasks"]
                 if t["task"] == "return null from parse, again")
    assert [f["fix"] for f in again["failures"]] == [""]
    assert "→ unresolved" in _text(recalled)


async def test_recall_names_each_task_once_however_often_it_ran(daemon: DaemonProcess) -> None:
    async with mcp.Client(_server(daemon)) as client:
        for success, summary in [(True, "first pass"), (False, "tests still red"),
                                 (True, "green again")]:
            await client.call_tool("report_outcome", {"task": "fix the failing tests",
                                                      "success": success, "summary": summary})
        repeated = await client.call_tool("report_outcome", {
            "task": "fix the failing tests", "success": True, "summary": "green again"})
        await client.call_tool("report_outcome", {"task": "fix the failing lint",
                                                  "success": True, "summary": "ruff clean"})
        with daemon.client() as c:
            wait_for(lambda: len(c.ask(EpisodeRecent(n=10))["episodes"]) >= 4, "episodes stored")
        recalled = await client.call_tool("recall", {"task": "fix the failing tests", "n": 5})
    assert repeated.structured_content["duplicate"] is True  # the same report, not a 4th run
    with daemon.client() as c:
        assert len(c.ask(EpisodeRecent(n=10))["episodes"]) == 4
    lines = [line for line in _text(recalled).splitlines() if line.strip()]
    assert len(lines) == len(set(lines)), lines
    tasks = {t["task"]: t for t in recalled.structured_content["tasks"]}
    assert len(recalled.structured_content["tasks"]) == len(tasks)
    tests = tasks["fix the failing tests"]
    assert (tests["runs"], tests["successes"], tests["succeeded"]) == (3, 2, True)
    assert tests["summary"] == "green again"
    assert "3 runs, 2 succeeded" in _text(recalled)
