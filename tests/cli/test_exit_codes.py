"""Exit codes mean one thing each, and every failure a user can cause is one line.

0 healthy / ok, 1 unreachable, 2 usage error, 150 degraded, 151 bad project — each case against
a real daemon (or a runtime dir where none runs), through the real `python -m slmactor`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from slmactor.cli.context import (
    EXIT_BAD_PROJECT,
    EXIT_DEGRADED,
    EXIT_OK,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    exit_code_for,
)
from slmactor.client import RequestFailed
from slmactor.protocol.errors import ErrorCode
from slmactor.protocol.messages import DebugCrash
from slmactor.testing import DaemonProcess, wait_for


def _env(daemon: DaemonProcess | None, tmp_path: Path) -> dict[str, str]:
    env = dict(daemon.env) if daemon is not None else dict(os.environ)
    env.pop("NOTIFY_SOCKET", None)
    env["XDG_STATE_HOME"] = str(tmp_path / "state")  # an autostarted daemon's log
    return env


def _cli(env: dict[str, str], *argv: str, stdout: int | None = subprocess.PIPE
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "slmactor", *argv], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, env=env, timeout=60, check=False)


def _one_line(stderr: str) -> str:
    assert "Traceback" not in stderr and "Error:" not in stderr.split(": ", 1)[0], stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def test_the_codes_are_distinct() -> None:
    codes = [EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE, EXIT_DEGRADED, EXIT_BAD_PROJECT]
    assert len(set(codes)) == 5 and EXIT_OK == 0 and EXIT_UNREACHABLE == 1 and EXIT_USAGE == 2


def test_healthy_is_0(daemon: DaemonProcess, tmp_path: Path) -> None:
    done = _cli(_env(daemon, tmp_path), "status")
    assert done.returncode == EXIT_OK and " — healthy — " in done.stdout


def test_degraded_is_150(daemon: DaemonProcess, tmp_path: Path) -> None:
    with daemon.client() as client:
        client.ask(DebugCrash(actor="graph", how="tell"))
        wait_for(lambda: client.status()["health"] == "degraded", "graph restarted")
    done = _cli(_env(daemon, tmp_path), "status", "--json")
    assert done.returncode == EXIT_DEGRADED and '"health": "degraded"' in done.stdout


def test_unreachable_is_1_in_one_line(tmp_path: Path) -> None:
    env = _env(None, tmp_path)
    nobody = str(tmp_path / "rt")
    done = _cli(env, "status", "--runtime-dir", nobody)
    assert done.returncode == EXIT_UNREACHABLE and "not running" in done.stdout
    refused = _cli(env, "memory", "facts", "--runtime-dir", nobody, "--no-autostart")
    assert refused.returncode == EXIT_UNREACHABLE
    assert "not reachable" in _one_line(refused.stderr)


@pytest.mark.parametrize("argv", [["status", "--bogus"], ["nonsense"], ["memory", "episodes", "0"],
                                  ["memory", "forget", "everything", "--yes"]])
def test_usage_error_is_2(daemon: DaemonProcess, tmp_path: Path, argv: list[str]) -> None:
    done = _cli(_env(daemon, tmp_path), *argv)
    assert done.returncode == EXIT_USAGE
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("project,reason", [("/etc/passwd", "is not a directory"),
                                            ("/nonexistent/project", "does not exist")])
def test_bad_project_is_151_in_one_line(daemon: DaemonProcess, tmp_path: Path, project: str,
                                        reason: str) -> None:
    done = _cli(_env(daemon, tmp_path), "memory", "facts", "--project", project)
    assert done.returncode == EXIT_BAD_PROJECT
    assert _one_line(done.stderr) == f"slmactor: project {project} {reason}"
    as_json = _cli(_env(daemon, tmp_path), "--json", "evolve", "rules", "--project", project)
    assert as_json.returncode == EXIT_BAD_PROJECT and reason in as_json.stdout


def test_error_replies_map_to_usage_or_failure() -> None:
    assert exit_code_for(RequestFailed(ErrorCode.BAD_FIELD, "x")) == EXIT_USAGE
    assert exit_code_for(RequestFailed(ErrorCode.INVALID, "x")) == EXIT_USAGE
    assert exit_code_for(RequestFailed(ErrorCode.BAD_PROJECT, "x")) == EXIT_BAD_PROJECT
    assert exit_code_for(RequestFailed(ErrorCode.STORE_ERROR, "x")) == EXIT_UNREACHABLE
    assert exit_code_for(RequestFailed(ErrorCode.INTERNAL, "x")) == EXIT_UNREACHABLE


def test_status_into_a_closed_pipe_prints_no_traceback(daemon: DaemonProcess,
                                                       tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write: every write is EPIPE
    try:
        done = _cli(_env(daemon, tmp_path), "status", stdout=write_end)
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == EXIT_OK  # the health, not the pipe's fate


def test_status_piped_into_head_prints_one_line_and_no_traceback(daemon: DaemonProcess,
                                                                 tmp_path: Path) -> None:
    env = _env(daemon, tmp_path)
    for argv in ("status", "status --json", "evolve rules --all", "--help"):
        done = subprocess.run(
            f"{sys.executable} -m slmactor {argv} | head -c 1", shell=True,
            capture_output=True, text=True, env=env, timeout=60, check=False)
        assert len(done.stdout) == 1 and done.stderr == "", (argv, done.stderr)


def test_failed_autostart_is_one_line_with_the_reason(daemon: DaemonProcess,
                                                      tmp_path: Path) -> None:
    # Another runtime dir, the same user store: the new daemon finds the store locked.
    done = _cli(_env(daemon, tmp_path), "memory", "facts", "--runtime-dir", str(tmp_path / "rt2"))
    assert done.returncode == EXIT_UNREACHABLE
    line = _one_line(done.stderr)
    assert f"already running as pid {daemon.pid}" in line and line.startswith("slmactor: ")


@pytest.mark.parametrize("argv", [["--help"], ["status", "--help"]])
def test_the_table_is_in_the_help(tmp_path: Path, argv: list[str]) -> None:
    done = _cli(_env(None, tmp_path), *argv)
    text = " ".join(done.stdout.split())
    assert done.returncode == 0
    for code in ("0 ok", "1 daemon unreachable", "2 usage error", "150 not healthy", "151 bad"):
        assert code in text
