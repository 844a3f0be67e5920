"""A call that names a missing path is told, through the real hook command and daemon, where
that path probably is in the project on disk: the file of that name under another folder, the
one-letter slip, or what the nearest existing folder holds.

Payloads follow Claude Code's PostToolUseFailure input as in the fixture
tests/fixtures/hooks/claude/PostToolUseFailure-Bash.json (it names its source: the Claude Code
2.1.x hooks reference). The error texts are the tools' own: Claude Code's Read says `File does not
exist. Note: your current working directory is <cwd>.` (as in the real sessions of
tests/fixtures/real_failures/dev.jsonl), and coreutils' `cat` says `cat: <path>: No such file or
directory` after Claude's `Exit code N` line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from slmactor.testing import DaemonProcess
from tests.fixtures.hooks import load, output_problems


@pytest.fixture
def repo(daemon: DaemonProcess, request: pytest.FixtureRequest) -> Path:
    root = daemon.base / request.node.name
    (root / "src" / "calc").mkdir(parents=True)
    (root / "src" / "calc" / "parser.py").write_text("def parse(s): ...\n")
    (root / "src" / "calc" / "lexer.py").write_text("")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "parser.py").write_text("")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def failure(daemon: DaemonProcess, repo: Path, tool: str, tool_input: dict[str, Any], error: str) -> str:
    fixture = next(f for f in load("claude") if f.name == "PostToolUseFailure-Bash")
    payload = {**fixture.payload(str(repo)), "session_id": "s-path", "cwd": str(repo),
               "transcript_path": str(repo.parent / "s-path.jsonl"), "tool_name": tool,
               "tool_input": tool_input, "tool_use_id": f"toolu_{tool}", "error": error}
    proc = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "hook",
         "claude", "PostToolUseFailure"], input=json.dumps(payload).encode(), capture_output=True,
        timeout=60, env=daemon.env, check=False)
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    assert output_problems("claude", "PostToolUseFailure", out) == [], out
    return str(out.get("hookSpecificOutput", {}).get("additionalContext", ""))


def test_a_read_of_a_file_under_the_wrong_folder_is_told_where_it_is(daemon: DaemonProcess, repo: Path) -> None:
    context = failure(daemon, repo, "Read", {"file_path": str(repo / "calc" / "parser.py")},
                      f"File does not exist. Note: your current working directory is {repo}.")
    assert f"`{repo / 'src' / 'calc' / 'parser.py'}`" in context
    assert "node_modules" not in context  # what holds no sources is not walked


def test_a_mistyped_shell_path_is_told_the_one_that_exists(daemon: DaemonProcess, repo: Path) -> None:
    context = failure(daemon, repo, "Bash", {"command": "cat src/calc/parsr.py"},
                      "Exit code 1\ncat: src/calc/parsr.py: No such file or directory")
    assert "`src/calc/parser.py`" in context and "spelled differently" in context


def test_a_missing_file_with_no_namesake_gets_what_its_folder_holds(daemon: DaemonProcess, repo: Path) -> None:
    context = failure(daemon, repo, "Bash", {"command": "cat src/calc/evaluate.py"},
                      "Exit code 1\ncat: src/calc/evaluate.py: No such file or directory")
    assert "`src/calc` holds" in context
    assert "`src/calc/lexer.py`" in context and "`src/calc/parser.py`" in context


def test_a_failure_that_is_not_about_a_path_gets_no_path_hint(daemon: DaemonProcess, repo: Path) -> None:
    context = failure(daemon, repo, "Bash", {"command": "python -c 'import calc'"},
                      "Exit code 1\nTraceback (most recent call last):\nZeroDivisionError: division by zero")
    assert "is not there" not in context
