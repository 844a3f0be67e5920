"""The transcript is the record: calls a harness's hooks never reported reach the loop from the
session's transcript at its end, each call counted once (by its id), and the transcript's verdict
wins where a hook's payload lacked one.

* Claude Code checks an `Edit`'s input before any hook runs: an `old_string` that is not in the
  file fails validation, no `PreToolUse`/`PostToolUseFailure` fires, and only the transcript
  (`transcript_path` of every payload) has the call — `is_error: true`,
  `<tool_use_error>String to replace not found in file.…</tool_use_error>`.
* Codex CLI's shell `PostToolUse` carries the raw output without an exit code; the rollout has it.

Transcript lines follow the entry shape of Claude Code 2.1.x transcripts as users committed them
(github.com/Beep206/CyberVPN at 89efea0, `*/full.jsonl`: `parentUuid`, `isSidechain`, `cwd`,
`sessionId`, `version`, `type`, `message`, `uuid`, `timestamp`, `toolUseResult`) and of Codex CLI
rollouts (github.com/blackgirlbytes/entire-token-costs-benchmark-tests, `*/full.jsonl`:
`response_item` `function_call{name: exec_command, arguments, call_id}` /
`function_call_output{call_id, output: "Chunk ID: …\\nWall time: …\\nProcess exited with code N\\n…"}`),
with the error texts REAL_HARNESSES.md records of the real binaries.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from slmactor.protocol.messages import EpisodeGet, RunFinish
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

SOURCE = "def price(total, discount):\n    if discount < 0:\n        raise ValueError(discount)\n    return total - discount\n"


@pytest.fixture(scope="module")
def daemon() -> Iterator[DaemonProcess]:
    proc = spawn_daemon()
    try:
        yield proc
    finally:
        stop_quietly(proc)


def _repo(daemon: DaemonProcess, name: str) -> Path:
    repo = daemon.base / name
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "shop.py").write_text(SOURCE)
    return repo


def _run(daemon: DaemonProcess, argv: list[str], stdin: Any = None) -> Any:
    proc = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), *argv],
                          input=json.dumps(stdin).encode() if stdin is not None else b"",
                          capture_output=True, timeout=60, env=daemon.env, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _settle(daemon: DaemonProcess) -> None:
    scratch = daemon.base / "settle"
    scratch.mkdir(exist_ok=True)
    with daemon.client(project=scratch) as client:
        client.ask(RunFinish(report={"run_id": f"settle-{id(client)}"}, wait=True))


def _claude_line(session: str, cwd: Path, n: int, kind: str, message: dict[str, Any], **extra: Any) -> str:
    return json.dumps({"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": str(cwd),
                       "sessionId": session, "version": "2.1.328", "type": kind, "message": message,
                       "uuid": f"u-{n}", "timestamp": f"2026-12-01T09:00:{n:02d}.000Z", **extra})


def _claude_transcript(path: Path, session: str, repo: Path, calls: list[tuple[str, str, dict[str, Any], str, bool]]) -> None:
    """A prompt, then per call an assistant `tool_use` and the user entry with its `tool_result`."""
    lines = [_claude_line(session, repo, 0, "user", {"role": "user", "content": "reject discounts over 100"})]
    for n, (call_id, tool, tool_input, result, failed) in enumerate(calls, start=1):
        lines.append(_claude_line(session, repo, 2 * n - 1, "assistant", {
            "id": f"msg_{n}", "model": "claude-sonnet-4-5-20250929", "role": "assistant", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": call_id, "name": tool, "input": tool_input}],
            "usage": {"input_tokens": 10, "output_tokens": 5}}))
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id,
                                 "content": f"<tool_use_error>{result}</tool_use_error>" if failed else result}
        if failed:
            block["is_error"] = True
        lines.append(_claude_line(session, repo, 2 * n, "user", {"role": "user", "content": [block]},
                                  toolUseResult=f"Error: {result}" if failed else {"type": "text"}))
    path.write_text("".join(line + "\n" for line in lines))


def _end_session(daemon: DaemonProcess, repo: Path, base: dict[str, Any]) -> Any:
    """Claude Code's SessionEnd, then the stored episode of the session's prompt."""
    _run(daemon, ["hook", "claude", "SessionEnd"], {**base, "hook_event_name": "SessionEnd", "reason": "other"})
    _settle(daemon)
    listed = _run(daemon, ["--project", str(repo), "--json", "memory", "episodes"])
    items = listed.get("episodes", listed) if isinstance(listed, dict) else listed
    entry = next(e for e in items if e["query"] == "reject discounts over 100")
    with daemon.client(project=repo) as client:
        return client.ask(EpisodeGet(episode_id=entry["id"]))


def test_an_edit_only_the_claude_transcript_saw_is_a_failure_and_its_fix_is_learned(daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "claude-validation")
    target = repo / "shop.py"
    transcript = daemon.base / "cc-v.jsonl"
    base = {"session_id": "cc-v", "transcript_path": str(transcript), "cwd": str(repo),
            "permission_mode": "acceptEdits"}
    gutter = {"file_path": str(target), "old_string": "2\t    if discount < 0:\n3\t        raise ValueError(discount)",
              "new_string": "2\t    if discount < 0 or discount > 100:\n3\t        raise ValueError(discount)",
              "replace_all": False}
    clean = {"file_path": str(target), "old_string": "    if discount < 0:\n        raise ValueError(discount)",
             "new_string": "    if discount < 0 or discount > 100:\n        raise ValueError(discount)",
             "replace_all": False}
    not_found = f"String to replace not found in file.\nString: {gutter['old_string']}"
    _run(daemon, ["hook", "claude", "UserPromptSubmit"],
         {**base, "hook_event_name": "UserPromptSubmit", "prompt": "reject discounts over 100"})
    # The broken Edit fails Claude Code's validation: no hook runs for it. The clean one runs.
    target.write_text(SOURCE.replace(clean["old_string"], clean["new_string"]))
    _run(daemon, ["hook", "claude", "PostToolUse"], {
        **base, "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_use_id": "toolu_3",
        "tool_input": clean, "tool_response": {"filePath": str(target), "oldString": clean["old_string"],
                                               "newString": clean["new_string"], "replaceAll": False}})
    _claude_transcript(transcript, "cc-v", repo, [
        ("toolu_2", "Edit", gutter, not_found, True),
        ("toolu_3", "Edit", clean, f"The file {target} has been updated.", False)])
    episode = _end_session(daemon, repo, base)
    (failure,) = episode["failures"]
    assert failure["tool"].lower() == "edit" and "String to replace not found in file." in failure["message"]
    assert "<tool_use_error>" not in failure["message"]
    assert episode["edits_attempted"] == 2 and episode["edits_applied"] == 1  # each call once
    metrics = _run(daemon, ["--project", str(repo), "--json", "metrics", "show", "--last", "1"])
    totals = metrics["summary"]["totals"]
    assert totals["edits_attempted"] == 2 and totals["edits_first_attempt"] == 0, totals
    rules = _run(daemon, ["--project", str(repo), "--json", "evolve", "rules"])
    learned = [r for r in rules.get("rules", rules) if r.get("scope") != "builtin"]
    assert [r["repair"]["transform"] for r in learned] == ["strip_line_number_prefix"]


def test_a_session_whose_only_call_lost_its_hook_is_still_an_episode(daemon: DaemonProcess) -> None:
    # `claude -p` exits as its one call ends, cancelling that call's async PostToolUse: the
    # ledger holds the prompt alone; the transcript holds the call.
    repo = _repo(daemon, "claude-one-call")
    transcript = daemon.base / "cc-one.jsonl"
    base = {"session_id": "cc-one", "transcript_path": str(transcript), "cwd": str(repo),
            "permission_mode": "default"}
    _run(daemon, ["hook", "claude", "UserPromptSubmit"],
         {**base, "hook_event_name": "UserPromptSubmit", "prompt": "reject discounts over 100"})
    _claude_transcript(transcript, "cc-one", repo, [
        ("toolu_1", "Bash", {"command": "python3 -m pytest -q", "description": "run the tests"},
         "1 passed in 0.01s", False)])
    episode = _end_session(daemon, repo, base)
    assert {"cmd": "python3 -m pytest -q", "ok": True} in episode["commands"]
    assert episode["success"] is True


def _codex_rollout(path: Path, calls: list[tuple[str, str, int, str]]) -> None:
    lines = [json.dumps({"timestamp": "2026-12-01T09:00:00.000Z", "type": "turn_context",
                         "payload": {"model": "gpt-5.1-codex", "cwd": "/w"}})]
    for n, (call_id, cmd, code, output) in enumerate(calls, start=1):
        lines.append(json.dumps({"timestamp": f"2026-12-01T09:00:{n:02d}.000Z", "type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": call_id,
            "arguments": json.dumps({"cmd": cmd, "workdir": "/w", "yield_time_ms": 10000})}}))
        lines.append(json.dumps({"timestamp": f"2026-12-01T09:00:{n:02d}.500Z", "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": call_id,
            "output": f"Chunk ID: a{n}\nWall time: 0.1 seconds\nProcess exited with code {code}\n"
                      f"Original token count: 9\nOutput:\n{output}"}}))
    path.write_text("".join(line + "\n" for line in lines))


def test_a_codex_shell_failure_is_recorded_failed_with_its_exit_code(daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "codex-exit")
    rollout = daemon.base / "rollout-cx-e.jsonl"
    base = {"session_id": "cx-e", "transcript_path": str(rollout), "cwd": str(repo), "model": "gpt-5.1-codex",
            "permission_mode": "default", "turn_id": "t1"}
    bad = "python3 -c 'import shop; assert shop.price(10, 1) == 8'"
    _run(daemon, ["hook", "codex", "UserPromptSubmit"], {**base, "hook_event_name": "UserPromptSubmit",
                                                        "prompt": "check the price"})
    # Codex 0.169's shell PostToolUse: the raw output, no exit code.
    _run(daemon, ["hook", "codex", "PostToolUse"], {
        **base, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "call_1",
        "tool_input": {"command": bad}, "tool_response": "Traceback (most recent call last):\nAssertionError\n"})
    _codex_rollout(rollout, [("call_1", bad, 1, "Traceback (most recent call last):\nAssertionError\n")])
    _run(daemon, ["hook", "codex", "Stop"], {**base, "hook_event_name": "Stop", "stop_hook_active": False})
    _settle(daemon)
    listed = _run(daemon, ["--project", str(repo), "--json", "memory", "episodes"])
    items = listed.get("episodes", listed) if isinstance(listed, dict) else listed
    entry = next(e for e in items if e["query"] == "check the price")
    with daemon.client(project=repo) as client:
        episode = client.ask(EpisodeGet(episode_id=entry["id"]))
    (failure,) = episode["failures"]
    assert failure["tool"].lower() == "bash" and "AssertionError" in failure["message"]
    assert episode["success"] is False
    # Never "a command that works": the run's commands show it failed.
    ran = [c for c in episode["commands"] if "import shop" in c.get("cmd", "")]
    assert ran and all(c["ok"] is False for c in ran), episode["commands"]


def test_a_daemon_stopped_during_a_session_loses_neither_that_session_nor_the_next(tmp_path: Path) -> None:
    import os
    import signal

    proc = spawn_daemon()
    try:
        repo = tmp_path / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)

        def hook(event: str, session: str, fields: dict[str, Any], timeout: str = "0.5") -> None:
            payload = {"session_id": session, "transcript_path": "", "cwd": str(repo),
                       "hook_event_name": event, **fields}
            done = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(proc.runtime_dir), "hook",
                                   "claude", event, "--timeout", timeout], input=json.dumps(payload).encode(),
                                  capture_output=True, timeout=60, env=proc.env, check=False)
            assert done.returncode == 0 and json.loads(done.stdout) is not None

        failing = {"tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "make tset"},
                   "error": "Exit code 2\nmake: *** No rule to make target 'tset'.  Stop."}
        hook("UserPromptSubmit", "stop-a", {"prompt": "run the tests (a)"})
        os.kill(proc.proc.pid, signal.SIGSTOP)
        try:
            hook("PostToolUseFailure", "stop-a", failing)  # times out: the breaker opens
            hook("PostToolUse", "stop-a", {"tool_name": "Bash", "tool_use_id": "t2",
                                            "tool_input": {"command": "make test"},
                                            "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False}})
            hook("SessionEnd", "stop-a", {"reason": "other"})
        finally:
            os.kill(proc.proc.pid, signal.SIGCONT)
        # The next session starts while the breaker is still open.
        hook("SessionStart", "stop-b", {"source": "startup"})
        hook("UserPromptSubmit", "stop-b", {"prompt": "run the tests (b)"})
        hook("PostToolUseFailure", "stop-b", {**failing, "tool_use_id": "t3"})
        hook("SessionEnd", "stop-b", {"reason": "other"}, timeout="2")  # the harnesses' usual deadline
        _settle(proc)
        listed = _run(proc, ["--project", str(repo), "--json", "memory", "episodes"])
        items = listed.get("episodes", listed) if isinstance(listed, dict) else listed
        queries = sorted(e["query"] for e in items)
        assert queries == ["run the tests (a)", "run the tests (b)"], queries
        by_query = {e["query"]: e for e in items}
        assert by_query["run the tests (a)"]["failures"] == 1 and by_query["run the tests (b)"]["failures"] == 1
    finally:
        stop_quietly(proc)
