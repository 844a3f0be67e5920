"""Hooks a team commits work for everyone: a project's settings run each user's own entry point
(`~/.local/share/slmactor/bin/slmactor`, written by `hook install`), so the same committed file
works for the user who installed it, for a teammate whose slmactor lives elsewhere, and answers
neutrally (exit 0, valid JSON, nothing on stderr) for one without slmactor. The command is run as
Claude Code, Gemini CLI and Codex CLI run hook commands: `sh -c`, the payload on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from slmactor.testing import spawn_daemon, stop_quietly


def _install(project: Path, home: Path, harness: str) -> dict[str, Any]:
    env = {**os.environ, "HOME": str(home)}
    proc = subprocess.run([sys.executable, "-m", "slmactor", "--project", str(project), "--json", "hook",
                           "install", "--harness", harness], capture_output=True, timeout=60, env=env, check=True)
    return dict(json.loads(proc.stdout))


def _run_hook(command: str, home: Path, payload: dict[str, Any], extra: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), **extra}
    return subprocess.run(["sh", "-c", command], input=json.dumps(payload).encode(), capture_output=True,
                          timeout=60, env=env, check=False)


def test_a_committed_hook_runs_for_the_installer_a_teammate_and_one_without_slmactor(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    first, teammate, stranger = tmp_path / "first", tmp_path / "second", tmp_path / "third"
    for home in (first, teammate, stranger):
        home.mkdir()
    out = _install(project, first, "claude")
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert str(sys.executable) not in command and ".venv" not in command  # no machine path in a team file
    # The teammate's slmactor lives elsewhere: their own install writes their entry point.
    other = tmp_path / "elsewhere" / "slmactor"
    other.parent.mkdir()
    other.write_text(f"#!/bin/sh\nexec {sys.executable} -m slmactor \"$@\"\n")
    other.chmod(0o755)
    entry = teammate / ".local/share/slmactor/bin/slmactor"
    entry.parent.mkdir(parents=True)
    entry.write_text(f"#!/bin/sh\nexec {other} \"$@\"\n")
    entry.chmod(0o755)
    daemon = spawn_daemon()
    try:
        with daemon.client(project=project) as client:
            client.remember("tests", "the tests run with make check")
        payload = {"session_id": "team-1", "transcript_path": "", "cwd": str(project),
                   "hook_event_name": "SessionStart", "source": "startup"}
        env = {"SLMACTOR_RUNTIME_DIR": str(daemon.runtime_dir), "SLMACTOR_HOME": str(daemon.env["SLMACTOR_HOME"]),
               "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        for home in (first, teammate):
            done = _run_hook(command, home, payload, env)
            assert done.returncode == 0, done.stderr
            context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
            assert "make check" in context
            payload["session_id"] += "-next"  # another session is told again
        done = _run_hook(command, stranger, payload, env)
        assert (done.returncode, json.loads(done.stdout), done.stderr) == (0, {}, b"")
    finally:
        stop_quietly(daemon)
    assert out["changed"] is True


def test_a_clines_committed_script_answers_cline_neutrally_without_slmactor(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    _install(project, tmp_path / "first", "cline")
    script = project / ".clinerules" / "hooks" / "PostToolUse"
    done = subprocess.run([str(script)], input=b"{}", capture_output=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "nobody")}, check=False)
    assert (done.returncode, json.loads(done.stdout)) == (0, {"cancel": False})
