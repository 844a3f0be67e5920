"""The pre-flight gate (a POSIX shell script): Python starts only for a call a learned fix may
speak of, or a read over the harness's limit; every other call gets the neutral answer, and the
payload reaches `slmactor hook` byte for byte."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slmactor.hooks.gate import KEYS_FILE, TABLE_FILE, gate_args, gate_text
from slmactor.stores.environment import KEYS_NAME, TABLE_NAME

SH = shutil.which("sh")
pytestmark = pytest.mark.skipif(SH is None, reason="no POSIX sh")


def _world(tmp_path: Path, keys: str | None = "npm\npython3\n") -> tuple[Path, Path, Path]:
    """(gate, project, a file the fake `slmactor` writes what it was given to)."""
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True, exist_ok=True)
    if keys is not None:
        (project / KEYS_FILE).parent.mkdir(parents=True, exist_ok=True)
        (project / KEYS_FILE).write_text(keys)
    seen = tmp_path / "seen.txt"
    fake = tmp_path / "fake-slmactor"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" > {seen}\ncat >> {seen}\n'
                    "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\"}}'\n")
    fake.chmod(0o755)
    gate = tmp_path / "slmactor-gate"
    gate.write_text(gate_text(str(fake), ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")))
    gate.chmod(0o755)
    return gate, project, seen


def _run(gate: Path, cwd: Path, payload: str, read_key: str = "", read_limit: int = 0,
         env: dict[str, str] | None = None) -> str:
    line = gate_args("claude", "PreToolUse", "{}", read_key, read_limit)
    argv = [str(SH), "-c", f"exec {gate} {line}"]
    clean = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR",
                                                               "GEMINI_PROJECT_DIR")}
    done = subprocess.run(argv, cwd=cwd, input=payload, capture_output=True, text=True,
                          env={**clean, **(env or {})}, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _bash(command: str) -> str:
    return json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": command, "description": "d"}})


def test_a_command_a_fact_speaks_of_reaches_slmactor_whole(tmp_path: Path) -> None:
    gate, project, seen = _world(tmp_path)
    payload = _bash('npm test -- --grep "a \\"b\\" $HOME `x` \\\\n"')
    out = _run(gate, project / "src", payload)
    assert "hookSpecificOutput" in out
    args, given_payload = seen.read_text().split("\n", 1)
    assert args == "hook claude PreToolUse"
    assert json.loads(given_payload) == json.loads(payload)


def test_any_other_call_is_answered_neutrally_without_python(tmp_path: Path) -> None:
    gate, project, seen = _world(tmp_path)
    for command in ("ls -la", "echo npmish", "cat node_modules/x"):
        assert _run(gate, project, _bash(command)).strip() == "{}"
    assert not seen.exists()


def test_without_a_table_the_gate_only_drains_its_input(tmp_path: Path) -> None:
    gate, project, seen = _world(tmp_path, keys=None)
    assert _run(gate, project, _bash("npm test")).strip() == "{}"
    assert not seen.exists()


def test_the_harness_s_project_variable_is_looked_at_first(tmp_path: Path) -> None:
    gate, project, seen = _world(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert _run(gate, elsewhere, _bash("npm test")).strip() == "{}"
    _run(gate, elsewhere, _bash("npm test"), env={"CLAUDE_PROJECT_DIR": str(project)})
    assert seen.exists()


def test_a_read_over_the_limit_reaches_slmactor_and_a_small_one_does_not(tmp_path: Path) -> None:
    gate, project, seen = _world(tmp_path, keys=None)
    big, small = project / "big.log", project / "small.log"
    big.write_bytes(b"x" * 3000)
    small.write_bytes(b"x" * 10)

    def read(path: Path) -> str:
        return json.dumps({"tool_name": "Read", "tool_input": {"file_path": str(path)}})

    assert _run(gate, project, read(small), "file_path", 2048).strip() == "{}"
    assert _run(gate, project, read(tmp_path / "missing"), "file_path", 2048).strip() == "{}"
    assert not seen.exists()
    _run(gate, project, read(big), "file_path", 2048)
    assert json.loads(seen.read_text().split("\n", 1)[1])["tool_input"]["file_path"] == str(big)


def test_the_gate_s_file_names_are_the_store_s() -> None:
    assert f".slmcode/evolve/{KEYS_NAME}" == KEYS_FILE
    assert f".slmcode/evolve/{TABLE_NAME}" == TABLE_FILE


@settings(derandomize=True, max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=60))
def test_any_command_text_reaches_slmactor_unchanged(tmp_path: Path, tail: str) -> None:
    gate, project, seen = _world(tmp_path)
    seen.unlink(missing_ok=True)
    payload = _bash(f"python3 {tail}")
    _run(gate, project, payload)
    assert json.loads(seen.read_text().split("\n", 1)[1]) == json.loads(payload)
