"""A session end the harness only waits on (`--background`, what `hook install` writes for Claude
Code's and Gemini CLI's `SessionEnd`): the hook answers at once and a detached child reports the
session, so the harness's exit never waits on the daemon.

Real daemon, real hook processes. The daemon is stopped (SIGSTOP) while the session ends: the
answer still comes, from a hook whose report is then still pending in a detached process (its
own session, none of the harness's pipes); once the daemon runs again, that child reports the
session and the episode is stored — once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil

from slmactor.protocol.messages import EpisodeRecent
from slmactor.testing import DaemonProcess, wait_for


def _hook(daemon: DaemonProcess, args: list[str], payload: dict[str, Any]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
                           "hook", *args], input=json.dumps(payload).encode(), capture_output=True,
                          timeout=60, env=daemon.env, check=False)


def _episodes(daemon: DaemonProcess, repo: Path) -> list[Any]:
    with daemon.client(project=repo) as client:
        reply = client.ask(EpisodeRecent(n=0))
    return list(reply.get("episodes", []))


def _detached_reporters() -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        line = proc.info.get("cmdline") or []
        if "SessionEnd" in line and "--background" in line and proc.pid != os.getpid():
            try:
                if os.getsid(proc.pid) == proc.pid:  # leads a session of its own
                    found.append(proc)
            except OSError:
                continue
    return found


def test_the_session_end_answers_at_once_and_the_detached_child_reports_the_session(
        daemon: DaemonProcess) -> None:
    repo = daemon.base / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    base = {"session_id": "bg-1", "transcript_path": str(daemon.base / "none.jsonl"), "cwd": str(repo)}
    prompt = _hook(daemon, ["claude", "UserPromptSubmit"],
                   {**base, "hook_event_name": "UserPromptSubmit", "prompt": "print the greeting"})
    assert prompt.returncode == 0, prompt.stderr
    call = _hook(daemon, ["claude", "PostToolUse"], {
        **base, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1",
        "tool_input": {"command": "python3 greet.py"},
        "tool_response": {"stdout": "hello", "stderr": "", "interrupted": False}})
    assert call.returncode == 0, call.stderr

    os.kill(daemon.pid, signal.SIGSTOP)
    try:
        ended = _hook(daemon, ["claude", "SessionEnd", "--background", "--timeout", "2"],
                      {**base, "hook_event_name": "SessionEnd", "reason": "other"})
        # Answered (the harness's neutral JSON, exit 0) while the daemon could not take anything:
        # the report is still to be made, by a child that holds none of the hook's pipes.
        assert (ended.returncode, ended.stdout) == (0, b"{}\n"), ended.stderr
        assert _detached_reporters(), "no detached child is reporting the session"
    finally:
        os.kill(daemon.pid, signal.SIGCONT)
    stored = wait_for(lambda: _episodes(daemon, repo), "the session's episode", timeout=30, pause=0.1)
    assert [e["query"] for e in stored] == ["print the greeting"]
    wait_for(lambda: not _detached_reporters(), "the detached child to finish", pause=0.1)
    assert len(_episodes(daemon, repo)) == 1


def test_without_the_flag_the_session_end_reports_before_it_answers(daemon: DaemonProcess) -> None:
    repo = daemon.base / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    base = {"session_id": "fg-1", "transcript_path": str(daemon.base / "none.jsonl"), "cwd": str(repo)}
    _hook(daemon, ["claude", "UserPromptSubmit"],
          {**base, "hook_event_name": "UserPromptSubmit", "prompt": "print the greeting"})
    _hook(daemon, ["claude", "PostToolUse"], {
        **base, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1",
        "tool_input": {"command": "python3 greet.py"},
        "tool_response": {"stdout": "hello", "stderr": "", "interrupted": False}})
    ended = _hook(daemon, ["claude", "SessionEnd"], {**base, "hook_event_name": "SessionEnd", "reason": "other"})
    assert (ended.returncode, ended.stdout) == (0, b"{}\n"), ended.stderr
    # The report was taken before the hook answered (journalled, then stored off the hook path).
    stored = wait_for(lambda: _episodes(daemon, repo), "the session's episode", timeout=30, pause=0.1)
    assert [e["query"] for e in stored] == ["print the greeting"]
