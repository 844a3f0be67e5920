"""A fix learned with its content, through the real hook command and daemon: a Bash failure
fixed by a corrected command in session 1 gets advice naming that command when it repeats in
session 2; after three successes of the same substitution the failed call comes back rewritten.

Payloads follow Claude Code's PostToolUse / PostToolUseFailure inputs as in the fixtures
tests/fixtures/hooks/claude/PostToolUse-Bash.json and PostToolUseFailure-Bash.json (each names
its source: the Claude Code 2.1.x hooks reference; a Bash failure's error is `Exit code N` then
the command's output). `No module named pytest` is CPython's `-m` error for a missing module
(`python -m pytest` on an interpreter without it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly
from tests.fixtures.hooks import load, output_problems

MISSING = "Exit code 1\n/usr/bin/python: No module named pytest"


@pytest.fixture(scope="module")
def daemon() -> Iterator[DaemonProcess]:
    proc = spawn_daemon()
    try:
        yield proc
    finally:
        stop_quietly(proc)


def hook(daemon: DaemonProcess, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "hook",
         "claude", event], input=json.dumps(payload).encode(), capture_output=True, timeout=60,
        env=daemon.env, check=False)
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    assert output_problems("claude", event, out) == [], out
    return out


def _base(repo: Path, session: str, name: str) -> dict[str, Any]:
    fixture = next(f for f in load("claude") if f.name == name)
    payload = fixture.payload(str(repo))
    return {**payload, "session_id": session, "cwd": str(repo),
            "transcript_path": str(repo.parent / f"{session}.jsonl")}


def fail(daemon: DaemonProcess, repo: Path, session: str, command: str, n: int) -> str:
    out = hook(daemon, "PostToolUseFailure", {
        **_base(repo, session, "PostToolUseFailure-Bash"), "tool_input": {"command": command},
        "tool_use_id": f"toolu_f{n}", "error": MISSING})
    context = out.get("hookSpecificOutput", {}).get("additionalContext", "")
    return str(context)


def succeed(daemon: DaemonProcess, repo: Path, session: str, command: str, n: int) -> None:
    hook(daemon, "PostToolUse", {
        **_base(repo, session, "PostToolUse-Bash"), "tool_input": {"command": command},
        "tool_use_id": f"toolu_s{n}",
        "tool_response": {"stdout": "3 passed in 0.12s", "stderr": "", "interrupted": False,
                          "isImage": False}})


def test_a_bash_fix_learned_in_one_session_is_named_in_the_next(daemon: DaemonProcess) -> None:
    repo = daemon.base / "typed-bash"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    first = fail(daemon, repo, "s1", "python -m pytest -q tests/test_a.py", 1)
    # A first occurrence: no memory of it is claimed.
    assert "seen before" not in first and "worked" not in first
    succeed(daemon, repo, "s1", ".venv/bin/python -m pytest -q tests/test_a.py", 1)

    second = fail(daemon, repo, "s2", "python -m pytest -q tests/test_b.py", 2)
    assert "`.venv/bin/python`" in second and "1 of 1 time" in second, second
    assert "other arguments" not in second

    # Two more fixes the same way: three successes, no failure → the call comes back rewritten.
    succeed(daemon, repo, "s2", ".venv/bin/python -m pytest -q tests/test_b.py", 2)
    fail(daemon, repo, "s3", "python -m pytest tests/test_c.py", 3)
    succeed(daemon, repo, "s3", ".venv/bin/python -m pytest tests/test_c.py", 3)
    fourth = fail(daemon, repo, "s4", "python -m pytest tests/test_d.py", 4)
    assert "3 of 3 times" in fourth, fourth
    assert "The repaired call: Bash" in fourth and ".venv/bin/python -m pytest tests/test_d.py" in fourth


def test_a_substitution_that_always_worked_rewrites_the_command_before_it_runs(
        daemon: DaemonProcess) -> None:
    repo = daemon.base / "typed-preflight"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)

    def pre(session: str, command: str, n: int) -> dict[str, Any]:
        fixture = next(f for f in load("claude") if f.name == "PreToolUse-Edit")
        payload = {**fixture.payload(str(repo)), "session_id": session, "cwd": str(repo),
                   "transcript_path": str(repo.parent / f"{session}.jsonl"),
                   "hook_event_name": "PreToolUse", "tool_name": "Bash",
                   "tool_input": {"command": command, "description": "run the tests"},
                   "tool_use_id": f"toolu_p{n}"}
        return hook(daemon, "PreToolUse", payload)

    # Before anything was learned, and after one or two fixes: the command runs as written.
    assert pre("p0", "python -m pytest tests/test_a.py", 0) == {}
    for n in range(1, 4):
        fail(daemon, repo, f"p{n}", f"python -m pytest tests/test_{n}.py", n)
        succeed(daemon, repo, f"p{n}", f".venv/bin/python -m pytest tests/test_{n}.py", n)
        if n < 3:
            assert pre(f"p{n}", "python -m pytest tests/test_x.py", 10 + n) == {}
    out = pre("p9", "python -m pytest tests/test_x.py -q", 20)
    spec = out["hookSpecificOutput"]
    assert spec["updatedInput"]["command"] == ".venv/bin/python -m pytest tests/test_x.py -q"
    assert spec["updatedInput"]["description"] == "run the tests"
    # Claude Code's own permission rules still apply to the rewritten command.
    assert "permissionDecision" not in spec
    # Another command of the same interpreter was never seen failing: left alone.
    assert pre("p9", "python scripts/gen.py", 21) == {}
