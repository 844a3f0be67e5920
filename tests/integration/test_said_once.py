"""Said once, through the real hook command and daemon: the session start gets the memory block,
the next prompt of the same session only what is new; Gemini CLI's headless mode prepends the
session start's context to the prompt (REAL_HARNESSES.md, gemini-cli 0.61), and the episode's
query is still only what the user asked."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from slmactor.protocol.messages import RunFinish
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly


@pytest.fixture(scope="module")
def daemon() -> Iterator[DaemonProcess]:
    proc = spawn_daemon()
    try:
        yield proc
    finally:
        stop_quietly(proc)


def _hook(daemon: DaemonProcess, fmt: str, event: str, payload: dict[str, Any]) -> Any:
    proc = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
                           "hook", fmt, event], input=json.dumps(payload).encode(), capture_output=True,
                          timeout=60, env=daemon.env, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _repo(daemon: DaemonProcess, name: str) -> Path:
    repo = daemon.base / name
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    with daemon.client(project=repo) as client:
        client.remember("tests", "the tests run with make check")
    return repo


def _context(out: Any) -> str:
    specific = out.get("hookSpecificOutput", {}) if isinstance(out, dict) else {}
    return str(specific.get("additionalContext", ""))


def test_the_block_arrives_once_per_session(daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "once-claude")
    base = {"session_id": "once-1", "transcript_path": "", "cwd": str(repo)}
    start = _context(_hook(daemon, "claude", "SessionStart", {**base, "hook_event_name": "SessionStart",
                                                               "source": "startup"}))
    assert "make check" in start
    prompt = _context(_hook(daemon, "claude", "UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit",
                                                                    "prompt": "run the checks"}))
    assert "make check" not in prompt  # given at the session start already
    other = _context(_hook(daemon, "claude", "SessionStart", {**base, "session_id": "once-2",
                                                               "hook_event_name": "SessionStart", "source": "startup"}))
    assert "make check" in other  # another session is told again


def test_context_a_harness_echoes_into_the_prompt_is_not_stored_as_the_task(daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "once-gemini")
    base = {"session_id": "gm-once", "transcript_path": "", "cwd": str(repo)}
    out = _hook(daemon, "gemini", "SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"})
    given = _context(out)
    assert "make check" in given
    echoed = given.replace("<", "&lt;").replace(">", "&gt;") + "\n\nrename the config loader"
    _hook(daemon, "gemini", "BeforeAgent", {**base, "hook_event_name": "BeforeAgent", "prompt": echoed})
    _hook(daemon, "gemini", "AfterTool", {**base, "hook_event_name": "AfterTool", "tool_name": "read_file",
                                          "tool_input": {"file_path": "README.md"},
                                          "tool_response": {"llmContent": "x", "returnDisplay": "x"}})
    _hook(daemon, "gemini", "SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "exit"})
    scratch = daemon.base / "settle"
    scratch.mkdir(exist_ok=True)
    with daemon.client(project=scratch) as client:
        client.ask(RunFinish(report={"run_id": "settle-once"}, wait=True))
    proc = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "--project",
                           str(repo), "--json", "memory", "episodes"], capture_output=True, timeout=60,
                          env=daemon.env, check=True)
    listed = json.loads(proc.stdout)
    items = listed.get("episodes", listed) if isinstance(listed, dict) else listed
    assert [e["query"] for e in items] == ["rename the config loader"]
