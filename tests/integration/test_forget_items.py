"""Forgetting what a user names, against a real daemon: a block line retired is gone from the
next `memory.block` (and back with undo), a session's episode goes and the others stay, a rule
retired is never advised again, `--query` finds before it forgets; `memory show` without a task
shows the project's block and says what it left out."""

from __future__ import annotations

import json
import subprocess
import sys

from slmactor.protocol.messages import (
    EpisodeDrop,
    EpisodeRecent,
    EvolveRetire,
    EvolveRules,
    FactObserve,
    MemoryBlock,
    MemoryLines,
    MemoryRetire,
    RunFinish,
)
from slmactor.testing import DaemonProcess
from tests.integration.test_loop import _report


def _cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", *args],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=60)


def _facts(client: object) -> None:
    for subject, text in (("tests", "run the tests with `pytest -q` (7/8 runs)"),
                          ("lint", "lint with `ruff check .`")):
        client.ask(FactObserve(kind="command", subject=subject, text=text, sources=["run-a"]))  # type: ignore[attr-defined]


def test_a_retired_line_is_gone_from_the_next_block_and_undo_brings_it_back(
        daemon: DaemonProcess) -> None:
    with daemon.client(timeout=30) as client:
        _facts(client)
        lines = client.ask(MemoryLines())["lines"]
        pytest_line = next(ln for ln in lines if "pytest -q" in ln["text"])
        fact = pytest_line["evidence"][0]
        assert fact["kind"] == "fact" and fact["sources"] == ["run-a"] and fact["verified"]
        assert pytest_line["verdict"] == "unchecked"
        assert client.ask(MemoryRetire(ids=[pytest_line["id"]]))["retired"] == [pytest_line["id"]]
        block = client.ask(MemoryBlock())["text"]
        assert "pytest -q" not in block and "ruff check" in block
        # The count moving does not bring it back: the id leaves numbers out.
        client.ask(FactObserve(kind="command", subject="tests",
                               text="run the tests with `pytest -q` (9/10 runs)"))
        assert "pytest -q" not in client.ask(MemoryBlock())["text"]
        retired = client.ask(MemoryLines())["retired"]
        assert [r["id"] for r in retired] == [pytest_line["id"]]
        client.ask(MemoryRetire(ids=[pytest_line["id"]], undo=True))
        assert "pytest -q" in client.ask(MemoryBlock())["text"]
    # The CLI's form: the same ask.
    out = _cli(daemon, "memory", "show", "--lines", "--json")
    ids = [ln["id"] for ln in json.loads(out.stdout)["lines"] if "ruff" in ln["text"]]
    done = _cli(daemon, "memory", "forget", "--line", ids[0], "--yes")
    assert done.returncode == 0 and "lines retired: 1" in done.stdout
    assert "ruff check" not in _cli(daemon, "memory", "show").stdout


def test_a_session_rule_and_query_are_forgotten_alone(daemon: DaemonProcess) -> None:
    with daemon.client(timeout=30) as client:
        for run, query in (("run-1", "fix x in a.py"), ("run-2", "add the upload retry")):
            client.ask(RunFinish(report=_report(run, query=query), wait=True))
        assert client.ask(EpisodeRecent(n=0, ids_only=True))["total"] == 2
        gone = client.ask(EpisodeDrop(ids=["run-1"]))
        assert gone["episodes_removed"] == 1 and gone["episodes"] == 1
        left = client.ask(EpisodeRecent(n=0))["episodes"]
        assert [e["query"] for e in left] == ["add the upload retry"]
        rules = client.ask(EvolveRules())["rules"]
        assert rules, "the report's fix was learned as a rule"
        rid = rules[0]["id"]
        assert client.ask(EvolveRetire(ids=[rid, "rule_nope"])) == {
            "retired": [rid], "unknown": ["rule_nope"]}
        shown = {r["id"]: r for r in client.ask(EvolveRules(include_all=True))["rules"]}
        assert shown[rid]["retired"] is True
    found = _cli(daemon, "memory", "forget", "--query", "upload retry", "--yes", "--json")
    assert found.returncode == 0, found.stderr
    data = json.loads(found.stdout)
    assert [s["query"] for s in data["found"]["sessions"]] == ["add the upload retry"]
    with daemon.client(timeout=30) as client:
        assert client.ask(EpisodeRecent(n=0, ids_only=True))["total"] == 0


def test_memory_show_without_a_task_says_what_it_left_out(daemon: DaemonProcess) -> None:
    with daemon.client(timeout=30) as client:
        _facts(client)
        client.ask(RunFinish(report=_report("run-1"), wait=True))
    out = _cli(daemon, "memory", "show")
    assert out.returncode == 0
    assert "pytest -q" in out.stdout
    assert "left out: similar past work — 1 session(s) remembered" in out.stdout
    assert "--task TEXT" in out.stdout
    with_task = _cli(daemon, "memory", "show", "--task", "fix x in a.py")
    assert "Similar work" in with_task.stdout and "left out: similar" not in with_task.stdout
    assert _cli(daemon, "memory", "show", "--query", "fix x in a.py").stdout == with_task.stdout
