"""`slmactor hook <format> <Event>`: harness hook payloads in, harness JSON out, fail-open always.

The payloads are the shapes the harnesses document (clients/HOOKS.md): Claude Code / Codex
(`session_id, cwd, hook_event_name, tool_name, tool_input, tool_response`, `prompt`), Gemini CLI
(`tool_response: {llmContent, returnDisplay, error}`, BeforeAgent `prompt`), OpenHands
(`event_type, tool_name, tool_input, tool_output, message, session_id, working_dir, metadata`).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from slmactor.hooks import dialects as hooks
from slmactor.protocol import codec
from slmactor.protocol.messages import RecordTool, WorkingSnapshot
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

CLAUDE_BASE = {"session_id": "sess-1", "transcript_path": "/home/u/.claude/t.jsonl",
               "cwd": "/home/u/repo", "permission_mode": "default"}


def _hook(runtime_dir: Path, fmt: str, event: str | None, payload: Any, *flags: str,
          env: dict[str, str] | None = None) -> tuple[int, Any, str, float]:
    """Run the hook as a harness does; returns (exit status, parsed stdout, stderr, seconds)."""
    stdin = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    args = [sys.executable, "-m", "slmactor", "--runtime-dir", str(runtime_dir), *flags, "hook", fmt]
    if event:
        args.append(event)
    started = time.monotonic()
    proc = subprocess.run(args, input=stdin, capture_output=True, timeout=60,
                          env=env or dict(os.environ), check=False)
    elapsed = time.monotonic() - started
    return proc.returncode, json.loads(proc.stdout), proc.stderr.decode(errors="replace"), elapsed


# ---------------------------------------------------------------- the dialects (pure)


def test_claude_bash_post_tool_use() -> None:
    payload = {**CLAUDE_BASE, "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": "pytest -q", "description": "run tests"},
               "tool_response": {"stdout": "3 passed", "stderr": "", "interrupted": False, "isImage": False}}
    hook = hooks.parse("claude", "PostToolUse", payload, {}, "/elsewhere")
    assert hook.run_id == "sess-1" and hook.project_dir == "/home/u/repo"
    assert hook.tool_call == hooks.ToolCall(
        tool="Bash", command="pytest -q", args='{"command":"pytest -q","description":"run tests"}')


def test_claude_failures_from_every_signal() -> None:
    write_failed = {**CLAUDE_BASE, "tool_name": "Write", "tool_input": {"file_path": "/home/u/repo/a.py", "content": "x"},
                    "tool_response": {"filePath": "/home/u/repo/a.py", "success": False}}
    call = hooks.parse("claude", "PostToolUse", write_failed, {}, "/").tool_call
    assert call is not None and (call.ok, call.path) == (False, "/home/u/repo/a.py")
    interrupted = {**CLAUDE_BASE, "tool_name": "Bash", "tool_input": {"command": "sleep 99"},
                   "tool_response": {"stdout": "", "stderr": "", "interrupted": True}}
    call = hooks.parse("claude", "PostToolUse", interrupted, {}, "/").tool_call
    assert call is not None and (call.ok, call.error) == (False, "interrupted")
    failure = {**CLAUDE_BASE, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
               "tool_input": {"command": "make"}, "error": "Command failed with exit code 2"}
    call = hooks.parse("claude", "PostToolUseFailure", failure, {}, "/").tool_call
    assert call is not None and (call.ok, call.error) == (False, "Command failed with exit code 2")


def test_codex_shell_command_as_argv_and_exit_code() -> None:
    payload = {"session_id": "c-9", "cwd": "/w", "hook_event_name": "PostToolUse", "tool_name": "shell",
               "tool_input": {"command": ["bash", "-lc", "cargo test"], "workdir": "/w"},
               "tool_response": {"exit_code": 101, "stdout": "", "stderr": "test failed: parse::x"}}
    call = hooks.parse("codex", "PostToolUse", payload, {}, "/").tool_call
    assert call is not None
    assert (call.command, call.ok, call.error) == ("cargo test", False, "test failed: parse::x")
    argv = {**payload, "tool_input": {"command": ["git", "status", "--short"]}, "tool_response": {"exit_code": 0}}
    call = hooks.parse("codex", "PostToolUse", argv, {}, "/").tool_call
    assert call is not None and (call.command, call.ok) == ("git status --short", True)


def test_gemini_after_tool_error_and_before_agent() -> None:
    payload = {"session_id": "g-1", "cwd": "/g", "hook_event_name": "AfterTool", "timestamp": "2026-11-29T10:00:00Z",
               "tool_name": "run_shell_command", "tool_input": {"command": "npm test", "dir_path": "web"},
               "tool_response": {"llmContent": "...", "returnDisplay": "...",
                                 "error": {"message": "Command exited with code 1"}}}
    call = hooks.parse("gemini", "AfterTool", payload, {}, "/").tool_call
    assert call is not None and (call.tool, call.command, call.path) == ("run_shell_command", "npm test", "web")
    assert (call.ok, call.error) == (False, "Command exited with code 1")
    ok = {**payload, "tool_response": {"llmContent": "fine", "returnDisplay": "fine"}}
    call = hooks.parse("gemini", "AfterTool", ok, {}, "/").tool_call
    assert call is not None and call.ok
    ask = hooks.parse("gemini", "BeforeAgent", {"session_id": "g-1", "prompt": "add a --json flag"}, {}, "/")
    assert ask.wants_context and ask.query == "add a --json flag"


def test_openhands_shapes() -> None:
    payload = {"event_type": "PostToolUse", "tool_name": "terminal", "tool_input": {"command": "ls -la"},
               "tool_output": "total 0", "message": None, "session_id": None, "working_dir": "/workspace",
               "metadata": {}}
    hook = hooks.parse("openhands", hooks.event_name("openhands", None, payload), payload,
                       {"OPENHANDS_SESSION_ID": "oh-7"}, "/")
    assert (hook.event, hook.project_dir, hook.run_id) == ("PostToolUse", "/workspace", "oh-7")
    assert hook.tool_call is not None and hook.tool_call.ok
    failed = {**payload, "metadata": {"exit_code": 2}}
    call = hooks.parse("openhands", "PostToolUse", failed, {}, "/").tool_call
    assert call is not None and (call.ok, call.error) == (False, "exit status 2")
    prompt = hooks.parse("openhands", "UserPromptSubmit", {"event_type": "UserPromptSubmit", "message": "fix CI"}, {}, "/")
    assert prompt.wants_context and prompt.query == "fix CI" and prompt.run_id == "default"


def test_project_from_the_harness_environment_first() -> None:
    payload = {**CLAUDE_BASE, "cwd": "/home/u/repo/sub"}
    hook = hooks.parse("claude", "SessionStart", payload, {"CLAUDE_PROJECT_DIR": "/home/u/repo"}, "/x")
    assert hook.project_dir == "/home/u/repo"
    assert hooks.parse("claude", "SessionStart", {}, {}, "/x").project_dir == "/x"


def test_other_events_ask_for_nothing_and_print_empty_json() -> None:
    for fmt, event in (("claude", "PreToolUse"), ("claude", "Stop"), ("gemini", "BeforeTool"), ("openhands", "SessionEnd")):
        hook = hooks.parse(fmt, event, {**CLAUDE_BASE, "tool_name": "Bash"}, {}, "/")
        assert hook.tool_call is None and not hook.wants_context
        assert hooks.output(fmt, event, "some text") == {}


def test_output_shapes() -> None:
    for fmt in ("claude", "codex"):
        assert hooks.output(fmt, "UserPromptSubmit", "ctx") == {
            "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ctx"}}
    assert hooks.output("gemini", "BeforeAgent", "ctx") == {
        "hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "ctx"}}
    assert hooks.output("openhands", "SessionStart", "ctx") == {"additionalContext": "ctx"}
    assert hooks.output("claude", "SessionStart", "  \n") == {}


def test_huge_tool_calls_are_clipped_to_what_the_daemon_accepts() -> None:
    payload = {**CLAUDE_BASE, "tool_name": "Write",
               "tool_input": {"file_path": "a.py", "content": "x" * 200_000, "command": "y" * 50_000},
               "tool_response": {"error": "e" * 100_000}}
    call = hooks.parse("claude", "PostToolUse", payload, {}, "/").tool_call
    assert call is not None
    msg = RecordTool(run_id="r", tool=call.tool, path=call.path, args=call.args, command=call.command,
                     ok=call.ok, error=call.error)
    assert codec.load(codec.dump(msg)) == msg  # within every wire cap


def test_settings_snippet_calls_this_command_for_each_event() -> None:
    snippet = hooks.settings_snippet("claude", "/opt/venv/bin/slmactor")
    assert set(snippet["hooks"]) == {"PostToolUse", "PostToolUseFailure", "SessionStart", "UserPromptSubmit"}
    post = snippet["hooks"]["PostToolUse"][0]
    assert post["matcher"] == "*"
    assert post["hooks"] == [{"type": "command", "command": "/opt/venv/bin/slmactor hook claude PostToolUse", "timeout": 10}]
    gemini = hooks.settings_snippet("gemini", "slmactor")["hooks"]["AfterTool"][0]
    assert gemini["matcher"] == ".*" and gemini["hooks"][0]["timeout"] == 10_000


def test_raw_hook_fields_are_what_the_codec_would_send() -> None:
    from slmactor.cli.hook import MEMORY_BLOCK_DEFAULTS, RECORD_TOOL_DEFAULTS, without_defaults
    from slmactor.protocol.messages import MemoryBlock

    tool_cases: list[dict[str, Any]] = [
        {"run_id": "s", "tool": "Bash", "path": "", "args": "{}", "command": "ls", "ok": False, "error": "e"},
        {"run_id": "s", "tool": "Read", "path": "a.py", "args": "", "command": "", "ok": True, "error": ""},
    ]
    for fields in tool_cases:
        assert without_defaults(fields, RECORD_TOOL_DEFAULTS) == codec.wire_fields(RecordTool(**fields))
    block_cases: list[dict[str, Any]] = [
        {"role": "worker", "budget": 0, "query": "", "run_id": "s"},
        {"role": "", "budget": 300, "query": "fix it", "run_id": ""},
    ]
    for fields in block_cases:
        assert without_defaults(fields, MEMORY_BLOCK_DEFAULTS) == codec.wire_fields(MemoryBlock(**fields))


def test_the_hook_path_does_not_build_the_message_classes(tmp_path: Path) -> None:
    # A hook is one process per tool call: the ~60 message dataclasses would be most of its cost.
    code = (
        "import io, sys\n"
        "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{\"tool_name\": \"Bash\"}'))\n"
        "from slmactor.cli.main import main\n"
        f"rc = main(['--runtime-dir', {str(tmp_path)!r}, '--no-autostart', 'hook', 'claude', 'PostToolUse'])\n"
        "assert rc == 0 and 'slmactor.protocol.messages' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {}


# ---------------------------------------------------------------- fail-open, daemon down
# In-process (the same `main` a harness's subprocess runs), so the many cases stay fast.


def _hook_in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], runtime_dir: Path,
                     stdin: bytes, *argv: str) -> tuple[int, Any, str]:
    from slmactor.cli.main import main

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    rc = main(["--runtime-dir", str(runtime_dir), "--no-autostart", "hook", *argv])
    captured = capsys.readouterr()
    return rc, json.loads(captured.out), captured.err


@pytest.mark.parametrize("fmt", hooks.FORMATS)
def test_daemon_down_every_format_exits_0_with_json(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    payload = {**CLAUDE_BASE, "tool_name": "Bash", "tool_input": {"command": "ls"}, "prompt": "hi"}
    for event in (min(hooks.TOOL_EVENTS[fmt]), min(hooks.CONTEXT_EVENTS[fmt])):
        rc, out, err = _hook_in_process(monkeypatch, capsys, tmp_path / "rt", json.dumps(payload).encode(), fmt, event)
        assert (rc, out) == (0, {})
        assert "not reachable" in err


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2]", b'{"tool_name": 5}', b"\xff\xfe{", b'{"a":' * 5000])
def test_bad_stdin_still_exits_0_with_json(
    stdin: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, _ = _hook_in_process(monkeypatch, capsys, tmp_path / "rt", stdin, "claude", "PostToolUse")
    assert (rc, out) == (0, {})


def test_a_hook_process_prints_only_json_when_the_daemon_is_down(tmp_path: Path) -> None:
    # The real process once: stdout must be exactly one JSON document (Gemini/Codex reject more).
    rc, out, err, _ = _hook(tmp_path / "rt", "gemini", "SessionStart", {"session_id": "g"}, "--no-autostart")
    assert (rc, out) == (0, {}) and "not reachable" in err


# ---------------------------------------------------------------- with a real daemon


@pytest.fixture(scope="module")
def shared_daemon() -> Iterator[DaemonProcess]:
    """One daemon for the round trips below (each uses its own session id)."""
    proc = spawn_daemon()
    try:
        yield proc
    finally:
        stop_quietly(proc)


def test_claude_session_records_tools_and_gets_its_memory_back(shared_daemon: DaemonProcess) -> None:
    daemon = shared_daemon
    base = {**CLAUDE_BASE, "cwd": str(daemon.project)}
    rt = daemon.runtime_dir
    rc, out, err, _ = _hook(rt, "claude", "PostToolUseFailure", {
        **base, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
        "tool_input": {"command": "pytest -q tests/test_parse.py"},
        "error": "Command failed with exit code 1: AssertionError: 3 != 2"}, env=daemon.env)
    assert (rc, out) == (0, {}), err
    rc, out, err, _ = _hook(rt, "claude", "PostToolUse", {
        **base, "hook_event_name": "PostToolUse", "tool_name": "Edit",
        "tool_input": {"file_path": str(daemon.project / "src" / "parse.py"), "old_string": "a", "new_string": "b"},
        "tool_response": {"filePath": str(daemon.project / "src" / "parse.py"), "success": True}}, env=daemon.env)
    assert (rc, out) == (0, {}), err
    with daemon.client() as client:
        snap = client.ask(WorkingSnapshot(run_id="sess-1"))["snapshot"]
    assert snap["counters"]["calls"] == 2 and snap["counters"]["errors"] == 1
    assert snap["files_edited"] == ["src/parse.py"]  # made relative to the project root
    rc, out, err, _ = _hook(rt, "claude", "UserPromptSubmit", {
        **base, "hook_event_name": "UserPromptSubmit", "prompt": "fix the failing parser test"}, env=daemon.env)
    assert rc == 0, err
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "pytest -q tests/test_parse.py" in context and "src/parse.py" in context


def test_openhands_and_gemini_round_trips(shared_daemon: DaemonProcess) -> None:
    daemon = shared_daemon
    rt = daemon.runtime_dir
    oh = {"event_type": "PostToolUse", "tool_name": "terminal", "tool_input": {"command": "make lint"},
          "tool_output": "", "session_id": "oh-1", "working_dir": str(daemon.project), "metadata": {"exit_code": 2}}
    assert _hook(rt, "openhands", None, oh, env=daemon.env)[:2] == (0, {})
    rc, out, _, _ = _hook(rt, "openhands", None, {**oh, "event_type": "SessionStart"}, env=daemon.env)
    assert rc == 0 and "make lint" in out["additionalContext"]
    gem = {"session_id": "g-1", "cwd": str(daemon.project), "hook_event_name": "AfterTool",
           "tool_name": "run_shell_command", "tool_input": {"command": "npm test"},
           "tool_response": {"llmContent": "", "returnDisplay": "", "error": "exit code 1"}}
    assert _hook(rt, "gemini", "AfterTool", gem, env=daemon.env)[:2] == (0, {})
    rc, out, _, _ = _hook(rt, "gemini", "BeforeAgent", {**gem, "hook_event_name": "BeforeAgent", "prompt": "fix npm test"},
                          env=daemon.env)
    assert rc == 0 and "npm test" in out["hookSpecificOutput"]["additionalContext"]


def test_a_wedged_daemon_does_not_block_the_harness(shared_daemon: DaemonProcess) -> None:
    daemon = shared_daemon
    payload = {**CLAUDE_BASE, "cwd": str(daemon.project), "tool_name": "Bash", "tool_input": {"command": "ls"},
               "tool_response": {"stdout": "", "stderr": "", "interrupted": False}}
    os.kill(daemon.pid, signal.SIGSTOP)
    try:
        rc, out, err, elapsed = _hook(daemon.runtime_dir, "claude", "PostToolUse", payload, "--timeout", "1",
                                      env=daemon.env)
    finally:
        os.kill(daemon.pid, signal.SIGCONT)
    assert (rc, out) == (0, {}) and "no reply" in err
    assert elapsed < 10


def test_session_start_starts_the_daemon(tmp_path: Path) -> None:
    runtime = Path(f"/tmp/sa-hook-{os.getpid()}")
    env = {**os.environ, "HOME": str(tmp_path), "SLMACTOR_HOME": str(tmp_path / "store"),
           "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("NOTIFY_SOCKET", None)
    project = tmp_path / "repo"
    project.mkdir()
    try:
        rc, out, err, _ = _hook(runtime, "claude", "SessionStart",
                                {**CLAUDE_BASE, "cwd": str(project), "source": "startup"}, env=env)
        assert (rc, out) == (0, {}), err  # a new store has nothing to say yet, but the daemon runs
        assert (runtime / "ctl.sock").exists()
    finally:
        stop = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(runtime), "stop"],
                              capture_output=True, text=True, timeout=60, env=env, check=False)
        shutil.rmtree(runtime, ignore_errors=True)
    assert stop.returncode == 0, stop.stderr


def test_hook_config_prints_settings_for_this_installation(capsys: pytest.CaptureFixture[str]) -> None:
    from slmactor.cli.main import main
    from slmactor.cli.service import shell_join, slmactor_command

    assert main(["hook", "config", "claude"]) == 0
    snippet = json.loads(capsys.readouterr().out)
    command = snippet["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command == f"{shell_join(slmactor_command())} hook claude UserPromptSubmit"
    assert os.path.isabs(slmactor_command()[0])
