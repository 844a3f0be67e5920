"""The third-party credential corpus (tests/fixtures/credential_corpus.py: 67 forms from
detect-secrets' and gitleaks' tests and providers' docs) through every entry point of a real
daemon: tells (run.start, record_tool, fail, resolve, decide, summarize), asks (facts,
failures, procedures, lessons), run reports (`run.finish`), `slmactor import lessons`,
`slmactor hook` (Claude Code payloads), and MCP `remember` / `repair` / `repair_outcome` /
`report_outcome` through the MCP SDK's client. Each value is also placed so that every cut the daemon and the
hook make (working memory's 200-byte arguments, 160-byte errors and 120-byte commands, the
hook's 4,000-character command) falls inside it. Afterwards no value, and no 6-character
prefix of one, is in any file under the store directories, in the daemon's log or in any
reply; the look-alikes came back intact where text is kept whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from slmactor.protocol.messages import (
    Decide,
    EpisodeRecent,
    EvolveFingerprint,
    EvolveOnFailure,
    EvolveResolved,
    EvolveRules,
    FactList,
    FactObserve,
    LessonAdd,
    LessonsRender,
    MemoryBlock,
    MemoryRecall,
    MetricsShow,
    ProcedureBest,
    ProcedureObserve,
    RunFinish,
    WorkingMirror,
    WorkingRender,
    WorkingSnapshot,
)
from slmactor.testing import DaemonProcess, wait_for
from tests.fixtures.credential_corpus import FORMS, LOOKALIKES, Form, all_text, leaks
from tests.fixtures.hooks import Fixture, load

#: Where the daemon's and the hook's cuts fall (working-memory caps, bytes; the hook's command).
CUTS = (120, 160, 200, 4000)
#: A kept prefix this long of a value is a leak (shorter ones are mostly the format's public
#: prefix, `xoxe.xoxb-`, `sq0csp-`, which a normaliser may keep when it replaces the rest).
PREFIX = 12


def _straddling(form: Form, cut: int) -> str:
    """`form.line` after padding that puts the cut `cut` characters in, inside the value."""
    into = max(len(form.value) // 2, 1)
    before = form.line.index(form.value)
    pad = max(cut - before - into, 0)
    return "p " * (pad // 2) + " " * (pad % 2) + form.line


def _prefix_leaks(text: str) -> list[str]:
    """Forms a prefix of whose value is in `text`, in any case (a store that lowercases a token
    before redacting it keeps it in lower case)."""
    low = text.lower()
    out = []
    for form in FORMS:
        prefix = form.value[: min(PREFIX, len(form.value) - 2)].lower()
        if prefix in low and prefix not in form.line.replace(form.value, "\0").lower():
            out.append(form.form)
    return out


def _files_text(*roots: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink() and not path.name.endswith(".sock"):
                out[str(path)] = path.read_bytes().decode("utf-8", "replace")
    return out


def _cli(daemon: DaemonProcess, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), *args],
        input=stdin, capture_output=True, env=daemon.env, timeout=120, check=False,
        cwd=str(daemon.project),
    )


def _report(run_id: str) -> dict[str, Any]:
    lines = [f.line for f in FORMS]
    return {
        "run_id": run_id, "query": all_text(), "summary": all_text(), "language": "python",
        "model": "qwen2.5-coder:7b", "planned_tasks": 1, "completed_tasks": 0,
        "files_changed": ["deploy/key.pem"], "tools_used": ["bash"], "tags": ["secrets"],
        "commands": [{"cmd": _straddling(f, 120), "ok": False} for f in FORMS],
        "failures": [{"tool": "bash", "message": line, "resolved_by": "llm",
                      "failed_args": json.dumps({"command": line}),
                      "fixed_args": json.dumps({"command": "make deploy"})} for line in lines],
        "decisions": [{"decision": "edit_format", "arm": "search_replace",
                       "outcome": {"applied": True, "gate_passed": False}}],
        "gates": [{"name": "deploy", "passed": False, "detail": all_text()}],
    }  # fmt: skip


def _tells_and_asks(daemon: DaemonProcess, replies: dict[str, Any]) -> None:
    text = all_text()
    run = "run-credentials"
    with daemon.client(timeout=60) as client:
        replies["run.start"] = client.run_start(run, task=text)
        for i, form in enumerate(FORMS):
            key = f"k{i}"
            for cut in CUTS[:3]:
                long = _straddling(form, cut)
                client.record_tool(run, "bash", path="deploy/run.sh", args=json.dumps({"command": long}),
                                   command=long, ok=False, error=long, key=f"{key}-{cut}")
            client.record_tool(run, "Write", path="deploy/key.pem", args=json.dumps({"content": form.line}))
            client.fail(run, key=key, tool="bash", path="deploy/run.sh", message=_straddling(form, 200))
            client.resolve(run, key, resolution=_straddling(form, 200), resolved_by="llm")
            client.decide(run, _straddling(form, 160))
        client.summarize(run, _straddling(FORMS[0], 600) + "\n" + text)
        wait_for(lambda: client.ask(WorkingSnapshot(run_id=run))["snapshot"]["counters"]["calls"]
                 >= 4 * len(FORMS), "every record_tool applied")  # fmt: skip
        replies["working.render"] = client.ask(WorkingRender(run_id=run, budget=4000))
        replies["working.snapshot"] = client.ask(WorkingSnapshot(run_id=run))
        replies["working.mirror"] = client.ask(WorkingMirror(run_id=run))
        for i, form in enumerate(FORMS):
            replies[f"fact.observe.{i}"] = client.ask(
                FactObserve(kind="convention", subject=form.line, text=_straddling(form, 200)))
            replies[f"evolve.on_failure.{i}"] = client.ask(EvolveOnFailure(
                run_id=run, tool="bash", message=form.line, args=json.dumps({"command": form.line})))
            replies[f"evolve.fingerprint.{i}"] = client.ask(EvolveFingerprint(tool="bash", message=form.line))
            replies[f"procedure.observe.{i}"] = client.ask(
                ProcedureObserve(topic="deploy", option=form.line, ok=True, note=form.line))
            replies[f"decide.{i}"] = client.ask(Decide(run_id=run, text=form.line))
        client.run_start("run-lookalikes", task="\n".join(LOOKALIKES))
        for look in LOOKALIKES:
            client.record_tool("run-lookalikes", "bash", args=look, command=look, ok=True)
            client.ask(FactObserve(kind="convention", subject=look, text=look))
        wait_for(lambda: client.ask(WorkingSnapshot(run_id="run-lookalikes"))["snapshot"]["counters"]["calls"]
                 == len(LOOKALIKES), "the look-alike calls applied")  # fmt: skip
        replies["lookalikes.snapshot"] = client.ask(WorkingSnapshot(run_id="run-lookalikes"))
        replies["evolve.resolved"] = client.ask(EvolveResolved(
            run_id=run, tool="bash", message=FORMS[0].line, resolution=text,
            failed_args=json.dumps({"command": FORMS[1].line}),
            fixed_args=json.dumps({"command": FORMS[2].line})))
        replies["lesson.add"] = client.ask(LessonAdd(lessons=[{"text": f.line} for f in FORMS]))
        replies["lesson.add.global"] = client.ask(
            LessonAdd(lessons=[{"text": f.line} for f in FORMS], scope="global", run_id=run))
        replies["run.finish"] = client.ask(RunFinish(report=_report(run), summary=text, wait=True))
        replies["run.finish.2"] = client.ask(
            RunFinish(report=_report("run-credentials-2"), summary=text, wait=True))


def _lessons_import(daemon: DaemonProcess, tmp_path: Path, replies: dict[str, Any]) -> None:
    corpus = tmp_path / "lessons.jsonl"
    rows = [{"ts": i, "type": "error_pattern", "trigger": form.line, "fix": _straddling(form, 200),
             "tags": ["deploy"], "source_task": form.line} for i, form in enumerate(FORMS)]
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = _cli(daemon, "--no-autostart", "--project", str(daemon.project), "import", "lessons",
                str(corpus), "--json")
    assert done.returncode == 0, done.stderr
    replies["import.lessons"] = json.loads(done.stdout)
    assert replies["import.lessons"]["imported"] >= len(FORMS) // 2
    corpus.unlink()  # the input file is ours, not a store


def _hooks(daemon: DaemonProcess, replies: dict[str, Any]) -> None:
    fixtures = {fx.id: fx for fx in load("claude")}
    project = str(daemon.project.resolve())
    long_command = " && ".join(_straddling(f, 4000) for f in FORMS[:20])
    events: list[tuple[str, Fixture, dict[str, Any]]] = [
        ("PostToolUseFailure", fixtures["claude/PostToolUseFailure-Bash"],
         {"tool_input": {"command": long_command, "description": "deploy"}, "error": "Exit code 1\n" + all_text()}),
        ("PostToolUse", fixtures["claude/PostToolUse-Write"],
         {"tool_input": {"file_path": f"{project}/deploy/key.pem", "content": all_text()}}),
        ("UserPromptSubmit", fixtures["claude/UserPromptSubmit"], {"prompt": all_text()}),
    ]
    for i, form in enumerate(FORMS[20:40]):
        events.append(("PostToolUseFailure", fixtures["claude/PostToolUseFailure-Bash"],
                       {"tool_input": {"command": _straddling(form, 4000)}, "error": f"Exit code {i}\n{form.line}"}))
    for index, (event, fixture, change) in enumerate(events):
        payload = {**fixture.payload(project), **change, "session_id": "cc-credentials"}
        done = _cli(daemon, "hook", "claude", event, stdin=json.dumps(payload).encode())
        assert done.returncode == 0, done.stderr
        replies[f"hook.{index}.{event}"] = done.stdout.decode()


async def _mcp(daemon: DaemonProcess, replies: dict[str, Any]) -> None:
    mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from mcp import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "slmactor", "mcp", "--runtime-dir", str(daemon.runtime_dir), "--project", str(daemon.project)],
        env={**os.environ, "SLMACTOR_HOME": str(daemon.home)}, cwd=str(daemon.project),
    )  # fmt: skip
    async with mcp.Client(params) as client:
        for i, form in enumerate(FORMS):
            kind = "convention" if i % 2 else "lesson"
            result = await client.call_tool("remember", {"text": form.line, "kind": kind, "subject": "deploy"})
            replies[f"mcp.remember.{i}"] = [getattr(p, "text", "") for p in result.content]
        for i, form in enumerate(FORMS[:20]):
            result = await client.call_tool("repair", {"tool": "bash", "error": form.line,
                                                       "arguments": json.dumps({"command": form.line})})
            replies[f"mcp.repair.{i}"] = [getattr(p, "text", "") for p in result.content]
            # Its outcome carries the value too: into the rules learned and the run's report.
            closed = await client.call_tool("repair_outcome", {
                "fingerprint": result.structured_content["fingerprint"], "worked": i % 2 == 0,
                "fixed_arguments": {"command": f"{form.line} --retry"}, "how": form.line})
            assert not closed.is_error, closed.content
            replies[f"mcp.repair_outcome.{i}"] = [getattr(p, "text", "") for p in closed.content]
        result = await client.call_tool("report_outcome", {
            "task": all_text(), "success": False, "summary": all_text(), "files_changed": ["deploy/key.pem"]})
        replies["mcp.report"] = [getattr(p, "text", "") for p in result.content]
        result = await client.call_tool("memory_block", {"task": all_text()})
        replies["mcp.memory_block"] = [getattr(p, "text", "") for p in result.content]


@pytest.mark.anyio
async def test_the_credential_corpus_leaves_through_no_file_log_or_reply(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    replies: dict[str, Any] = {}
    _tells_and_asks(daemon, replies)
    _lessons_import(daemon, tmp_path, replies)
    _hooks(daemon, replies)
    await _mcp(daemon, replies)
    text = all_text()
    with daemon.client(timeout=60) as client:
        for name, message in {
            "memory.block": MemoryBlock(query=text, run_id="run-credentials", budget=4000),
            "memory.block.hook": MemoryBlock(query=text, run_id="cc-credentials", budget=4000),
            "memory.recall": MemoryRecall(query=text, n=5),
            "fact.list": FactList(),
            "lessons.render": LessonsRender(query=text, max_bytes=64_000),
            "episode.recent": EpisodeRecent(n=10),
            "metrics.show": MetricsShow(last=0),
            "evolve.rules": EvolveRules(),
            "procedure.best": ProcedureBest(topic="deploy"),
        }.items():
            replies[name] = client.ask(message)
        replies["status"] = client.status()
        wait_for(lambda: len(client.ask(EpisodeRecent(n=10))["episodes"]) >= 2, "the episodes stored")
    assert daemon.stop() == 0

    leaked = {k: leaks(json.dumps(v, ensure_ascii=False)) for k, v in replies.items()}
    assert {k: v for k, v in leaked.items() if v} == {}
    prefixes = {k: _prefix_leaks(json.dumps(v, ensure_ascii=False)) for k, v in replies.items()}
    assert {k: v for k, v in prefixes.items() if v} == {}
    files = _files_text(daemon.project / ".slmcode", daemon.home, daemon.runtime_dir)
    assert len(files) >= 8, sorted(files)
    assert {path: leaks(body) for path, body in files.items() if leaks(body)} == {}
    assert {path: _prefix_leaks(body) for path, body in files.items() if _prefix_leaks(body)} == {}
    log = daemon.log()
    assert leaks(log) == [] and _prefix_leaks(log) == []
    # What went in whole came back whole: the look-alikes in a run's task and its tool calls'
    # arguments, and as facts; and markers are on disk.
    looks = replies["lookalikes.snapshot"]["snapshot"]
    assert looks["task"] == "\n".join(LOOKALIKES)
    args = json.dumps(looks, ensure_ascii=False)
    assert [look for look in LOOKALIKES if json.dumps(look)[1:-1][:200] not in args] == []
    facts = json.dumps(replies["fact.list"], ensure_ascii=False)
    assert [look for look in LOOKALIKES if json.dumps(look)[1:-1] not in facts] == []
    stored = "".join(files.values())
    kinds = {f"«redacted:{k}»" for k in ("stripe_key", "slack_token", "private_key", "jwt", "password")}
    assert {k for k in kinds if k not in stored} == set()
