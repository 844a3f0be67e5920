"""The carrier corpus (tests/fixtures/carrier_corpus.py: 100+ forms, 30+ carriers, values drawn
fresh this run) through every entry point of a real daemon — tells (`run.start`, `record_tool`
arguments, commands and errors, `fail`, `resolve`, `decide`, `summarize`), asks (`fact.observe`,
`evolve.on_failure`, `evolve.resolved`, `lesson.add` project and global, `episode.append`,
`procedure.observe`), run reports (`run.finish`), `slmactor import lessons`, `slmactor hook` of
every harness (failed shell calls and prompts, payloads from tests/fixtures/hooks/<harness>), and
the MCP tools — then every reply, every file under the stores and the runtime directory, and the
daemon's log hold no value and no 12-character prefix of one. The seed is printed on failure;
`SLMACTOR_CORPUS_SEED=N` replays it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from slmactor.protocol.messages import (
    Decide,
    EpisodeAppend,
    EpisodeRecent,
    EvolveOnFailure,
    EvolveResolved,
    EvolveRules,
    FactList,
    FactObserve,
    LessonAdd,
    LessonsRender,
    MemoryBlock,
    MemoryRecall,
    ProcedureObserve,
    RunFinish,
    WorkingRender,
    WorkingSnapshot,
)
from slmactor.testing import DaemonProcess, wait_for
from tests.fixtures.carrier_corpus import LOOKALIKES, corpus, leaks, seed_of_run
from tests.fixtures.hooks import load
from tests.integration.test_credential_exits import _cli, _files_text

SEED = seed_of_run()
FORMS = corpus(SEED)


def _all() -> str:
    return "\n".join(f.line for f in FORMS)


def _tells_and_asks(daemon: DaemonProcess, replies: dict[str, Any]) -> None:
    run = "run-carriers"
    with daemon.client(timeout=60) as client:
        client.run_start(run, task=_all())
        for i, form in enumerate(FORMS):
            client.record_tool(run, "bash", path="deploy/run.sh",
                               args=json.dumps({"command": form.line}), command=form.line,
                               ok=False, error=form.line, key=f"k{i}")
            client.fail(run, key=f"k{i}", tool="bash", path="deploy/run.sh", message=form.line)
            client.resolve(run, f"k{i}", resolution=form.line, resolved_by="llm")
            client.decide(run, form.line)
        client.summarize(run, _all())
        wait_for(lambda: client.ask(WorkingSnapshot(run_id=run))["snapshot"]["counters"]["calls"]
                 >= len(FORMS), "every record_tool applied")
        replies["working.render"] = client.ask(WorkingRender(run_id=run, budget=8000))
        replies["working.snapshot"] = client.ask(WorkingSnapshot(run_id=run))
        for i, form in enumerate(FORMS):
            replies[f"fact.{i}"] = client.ask(FactObserve(kind="command", subject=form.name,
                                                          text=form.line))
            replies[f"on_failure.{i}"] = client.ask(EvolveOnFailure(
                run_id=run, tool="bash", message=form.line,
                args=json.dumps({"command": form.line})))
            replies[f"resolved.{i}"] = client.ask(EvolveResolved(
                run_id=run, tool="bash", message=f"bash: deploy: failed\n{form.line}",
                resolution=form.line, failed_args=json.dumps({"command": form.line}),
                fixed_args=json.dumps({"command": f"{form.line} --retry"})))
            replies[f"decide.{i}"] = client.ask(Decide(run_id=run, text=form.line))
            replies[f"procedure.{i}"] = client.ask(
                ProcedureObserve(topic="deploy", option=form.line, ok=True, note=form.line))
        replies["lesson.add"] = client.ask(LessonAdd(lessons=[{"text": f.line} for f in FORMS]))
        replies["lesson.global"] = client.ask(LessonAdd(
            lessons=[{"text": f.line} for f in FORMS], scope="global", run_id=run))
        replies["episode.append"] = client.ask(EpisodeAppend(episode={
            "run_id": "run-carriers-direct", "query": _all(), "summary": _all(),
            "commands": [{"cmd": f.line, "ok": False} for f in FORMS]}))
        report = {"run_id": run, "query": _all(), "summary": _all(), "planned_tasks": 1,
                  "files_changed": ["deploy/run.sh"], "tools_used": ["bash"],
                  "commands": [{"cmd": f.line, "ok": False} for f in FORMS],
                  "failures": [{"tool": "bash", "message": f.line, "resolved_by": "llm",
                                "resolution": f.line,
                                "failed_args": json.dumps({"command": f.line}),
                                "fixed_args": json.dumps({"command": "make deploy"})}
                               for f in FORMS],
                  "gates": [{"name": "deploy", "passed": False, "detail": _all()}]}
        replies["run.finish"] = client.ask(RunFinish(report=report, summary=_all(), wait=True))
        client.run_start("run-lookalikes", task="\n".join(LOOKALIKES))
        for look in LOOKALIKES:
            client.record_tool("run-lookalikes", "bash", args=look, command=look, ok=True)
        wait_for(lambda: client.ask(WorkingSnapshot(run_id="run-lookalikes"))["snapshot"][
            "counters"]["calls"] == len(LOOKALIKES), "the look-alike calls applied")
        replies["lookalikes"] = client.ask(WorkingSnapshot(run_id="run-lookalikes"))


def _hook_payloads(project: str) -> list[tuple[str, str, dict[str, Any]]]:
    """Failed shell calls carrying every form, and prompts carrying them, in each harness."""
    fixtures = {f.id: f for f in load()}
    out: list[tuple[str, str, dict[str, Any]]] = []
    for i, form in enumerate(FORMS):
        which = i % 5
        if which == 0:
            p = fixtures["claude/PostToolUseFailure-Bash"].payload(project)
            p.update(tool_input={"command": form.line}, error=f"Exit code 1\n{form.line}")
            out.append(("claude", "PostToolUseFailure", p))
        elif which == 1:
            p = fixtures["codex/PostToolUse-Bash-failed"].payload(project)
            p.update(tool_input={"command": form.line},
                     tool_response=f"Exit code: 1\nWall time: 0.1 seconds\nOutput:\n{form.line}\n")
            out.append(("codex", "PostToolUse", p))
        elif which == 2:
            p = fixtures["gemini/AfterTool-run_shell_command-failed"].payload(project)
            p["tool_input"] = {**p["tool_input"], "command": form.line}
            text = f"Command: {form.line}\nDirectory: (root)\nOutput: {form.line}\nExit Code: 1"
            p["tool_response"] = {**p["tool_response"], "llmContent": text, "returnDisplay": text}
            out.append(("gemini", "AfterTool", p))
        elif which == 3:
            p = fixtures["openhands/PostToolUse-terminal-failed"].payload(project)
            p["tool_input"] = {**p["tool_input"], "command": form.line}
            out.append(("openhands", "PostToolUse", p))
        else:
            p = fixtures["claude/PostToolUse-Write"].payload(project)
            p["tool_input"] = {**p["tool_input"], "content": form.line}
            out.append(("claude", "PostToolUse", p))
    for fid in ("claude/UserPromptSubmit", "codex/UserPromptSubmit", "gemini/BeforeAgent",
                "openhands/UserPromptSubmit", "cline/UserPromptSubmit"):
        fixture = fixtures[fid]
        p = fixture.payload(project)
        for key in ("prompt", "user_prompt"):
            if key in p:
                p[key] = _all()
        out.append((fixture.fmt, fixture.event, p))
    return out


def _hooks(daemon: DaemonProcess, replies: dict[str, Any]) -> None:
    project = str(daemon.project.resolve())
    for index, (fmt, event, payload) in enumerate(_hook_payloads(project)):
        done = _cli(daemon, "hook", fmt, event, stdin=json.dumps(payload).encode())
        assert done.returncode == 0, done.stderr
        replies[f"hook.{index}.{fmt}.{event}"] = done.stdout.decode() + done.stderr.decode()


def _import_lessons(daemon: DaemonProcess, tmp_path: Path, replies: dict[str, Any]) -> None:
    source = tmp_path / "lessons.jsonl"
    source.write_text("".join(json.dumps({"ts": i, "type": "error_pattern", "trigger": f.line,
                                          "fix": f.line, "tags": ["deploy"]}) + "\n"
                              for i, f in enumerate(FORMS)))
    done = _cli(daemon, "--no-autostart", "--project", str(daemon.project), "import", "lessons",
                str(source), "--json")
    assert done.returncode == 0, done.stderr
    replies["import.lessons"] = done.stdout.decode()
    source.unlink()


async def _mcp(daemon: DaemonProcess, replies: dict[str, Any]) -> None:
    mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from mcp import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "slmactor", "mcp", "--runtime-dir",
                                      str(daemon.runtime_dir), "--project", str(daemon.project)],
        env={**os.environ, "SLMACTOR_HOME": str(daemon.home)}, cwd=str(daemon.project))
    async with mcp.Client(params) as client:
        for i, form in enumerate(FORMS[::3]):
            result = await client.call_tool("remember", {"text": form.line, "kind": "lesson"})
            replies[f"mcp.remember.{i}"] = [getattr(p, "text", "") for p in result.content]
            result = await client.call_tool("repair", {"tool": "bash", "error": form.line,
                                                       "arguments": {"command": form.line}})
            replies[f"mcp.repair.{i}"] = [getattr(p, "text", "") for p in result.content]
        result = await client.call_tool("report_outcome", {"task": _all(), "success": False,
                                                           "summary": _all()})
        replies["mcp.report"] = [getattr(p, "text", "") for p in result.content]
        result = await client.call_tool("memory_block", {"task": _all()})
        replies["mcp.block"] = [getattr(p, "text", "") for p in result.content]


@pytest.mark.anyio
async def test_no_carrier_leaks_through_any_entry_point(daemon: DaemonProcess,
                                                        tmp_path: Path) -> None:
    replies: dict[str, Any] = {}
    _tells_and_asks(daemon, replies)
    _import_lessons(daemon, tmp_path, replies)
    _hooks(daemon, replies)
    await _mcp(daemon, replies)
    with daemon.client(timeout=60) as client:
        for name, message in {
            "memory.block": MemoryBlock(query=_all(), run_id="run-carriers", budget=8000),
            "memory.recall": MemoryRecall(query=_all(), n=5),
            "fact.list": FactList(),
            "lessons.render": LessonsRender(query=_all(), max_bytes=64_000),
            "episode.recent": EpisodeRecent(n=10),
            "evolve.rules": EvolveRules(include_all=True),
        }.items():
            replies[name] = client.ask(message)
        replies["status"] = client.status()
    assert daemon.stop() == 0
    where = f"(seed {SEED}: SLMACTOR_CORPUS_SEED={SEED} replays it)"
    leaked = {k: leaks(json.dumps(v, ensure_ascii=False), FORMS) for k, v in replies.items()}
    assert {k: v for k, v in leaked.items() if v} == {}, where
    files = _files_text(daemon.project / ".slmcode", daemon.home, daemon.runtime_dir)
    assert len(files) >= 8, sorted(files)
    assert {p: leaks(b, FORMS) for p, b in files.items() if leaks(b, FORMS)} == {}, where
    assert leaks(daemon.log(), FORMS) == [], where
    looks = json.dumps(replies["lookalikes"], ensure_ascii=False)
    assert [x for x in LOOKALIKES if json.dumps(x)[1:-1][:120] not in looks] == []
