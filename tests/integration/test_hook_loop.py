"""The loop through the harnesses' hooks, end to end (items 2–4 and its acceptance):
a real daemon, a real temporary git repository, the real `slmactor hook` command fed the payloads
each harness sends, and the real CLI to look at what was learned.

Session 1: the agent reads a file, an edit fails because `old_string` carries the read output's
line-number gutter, the clean edit succeeds, the session ends → `memory episodes` lists the
session and `evolve rules` shows the learned repair.  Session 2: the same kind of broken edit →
the pre-tool hook returns the rewritten input, applying it to the file succeeds, and
`metrics show` counts a failure avoided from memory.

Every payload starts from the common fields of hooks-dialects' fixture of the same harness
(tests/fixtures/hooks/<harness>/, each naming its source), and every answer is checked against the
harness's published output schema (`output_problems`).  Payload shapes, per harness:
* Claude Code — `PreToolUseHookInput`, `PostToolUseHookInput`, `PostToolUseFailureHookInput`
  (`error`), `BaseHookInput` (`session_id, transcript_path, cwd, permission_mode`) in
  anthropics/claude-agent-sdk-python 0.2.143 `src/claude_agent_sdk/types.py`; `SessionEnd`
  `reason`; Edit's not-found error `String to replace not found in file.\\nString: <old>`;
  the transcript lines of `claude_transcript` follow Claude Code 2.x's JSONL (see
  `slmactor/logic/loop/session_report.py`).
* Codex CLI — `pre-tool-use.command.input.schema.json` (and its output schema, whose
  `hookSpecificOutput` allows only the keys checked below) in openai/codex
  `codex-rs/hooks/schema/generated/`; `apply_patch` reaches hooks as `tool_input.command` (the
  patch) and a string `tool_response`; a patch that does not apply runs no `PostToolUse`, so it
  is known from the rollout (`transcript_path`, codex-rs `RolloutLine` JSONL).
* Gemini CLI — `BeforeToolInput` / `AfterToolInput` (`tool_response` with `error{message,
  type}`) and `SessionEndInput` in google-gemini/gemini-cli `packages/core/src/hooks/types.ts`;
  the `replace` tool's EDIT_NO_OCCURRENCE_FOUND text in `packages/core/src/tools/edit.ts`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from slmactor.protocol.messages import EpisodeGet, RunFinish, WorkingSnapshot
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly
from tests.fixtures.hooks import load, output_problems

SOURCE = (
    "def price(total, discount):\n"
    "    if discount > 100:\n"
    "        raise ValueError(discount)\n"
    "    return total - total * discount / 100\n"
    "\n"
    "\n"
    "def tax(amount):\n"
    "    return amount * 0.2\n"
)


def cat_n(start: int, lines: list[str]) -> str:
    """How `cat -n` / `nl -ba` print lines: six columns, a tab (Claude Code's Read: `N\\t`)."""
    return "\n".join(f"{start + i:>6}\t{line}" for i, line in enumerate(lines))


def arrow(start: int, lines: list[str]) -> str:
    """Claude Code's older Read output: six columns and `→`."""
    return "\n".join(f"{start + i:>6}\u2192{line}" for i, line in enumerate(lines))


@pytest.fixture(scope="module")
def daemon() -> Iterator[DaemonProcess]:
    proc = spawn_daemon()
    try:
        yield proc
    finally:
        stop_quietly(proc)


def _repo(daemon: DaemonProcess, name: str) -> Path:
    """A fresh git repository inside the daemon's project directory's parent."""
    repo = daemon.base / name
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "shop.py").write_text(SOURCE)
    return repo


def hook(daemon: DaemonProcess, fmt: str, event: str, payload: dict[str, Any]) -> tuple[Any, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "hook", fmt, event],
        input=json.dumps(payload).encode(), capture_output=True, timeout=60, env=daemon.env, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # Every answer in the shape the harness's published output schema allows for the event.
    assert output_problems(fmt, event, out) == [], out
    return out, proc.stderr.decode(errors="replace")


def settle(daemon: DaemonProcess) -> None:
    """Wait until the finish pipelines of the sessions reported so far have run: the reflector runs
    one pipeline at a time in arrival order, so a run finished after them with `wait: true` (in a
    scratch project, so the repositories' memory is not touched) returns only after them."""
    scratch = daemon.base / "settle"
    scratch.mkdir(exist_ok=True)
    with daemon.client(project=scratch) as client:
        client.ask(RunFinish(report={"run_id": f"settle-{time.monotonic_ns()}"}, wait=True))


def cli(daemon: DaemonProcess, repo: Path, *argv: str) -> Any:
    proc = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "--project",
         str(repo), "--json", *argv], capture_output=True, timeout=60, env=daemon.env, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def cli_text(daemon: DaemonProcess, repo: Path, *argv: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "--project",
         str(repo), *argv], capture_output=True, timeout=60, env=daemon.env, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode()


def apply_edit(path: Path, old: str, new: str) -> None:
    """What the harness's edit tool does with the (possibly rewritten) input."""
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not in the file exactly once"
    path.write_text(text.replace(old, new))


def claude_transcript(path: Path, session: str, prompt: str) -> None:
    """A Claude Code 2.x transcript: a prompt, then two model responses, the first streamed as
    two entries sharing one message id (its usage counts once)."""
    entries = [
        {"type": "user", "sessionId": session, "timestamp": "2026-12-01T09:00:00.000Z",
         "isSidechain": False, "message": {"role": "user", "content": prompt}},
        *[{"type": "assistant", "sessionId": session, "requestId": "req_1",
           "timestamp": f"2026-12-01T09:00:0{i}.000Z", "isSidechain": False,
           "message": {"id": "msg_1", "model": "claude-sonnet-4-5-20250929", "role": "assistant",
                       "content": [], "stop_reason": None,
                       "usage": {"input_tokens": 10, "cache_creation_input_tokens": 100,
                                 "cache_read_input_tokens": 1000, "output_tokens": 20}}}
          for i in (1, 2)],
        {"type": "assistant", "sessionId": session, "requestId": "req_2",
         "timestamp": "2026-12-01T09:00:05.000Z", "isSidechain": False,
         "message": {"id": "msg_2", "model": "claude-sonnet-4-5-20250929", "role": "assistant",
                     "content": [], "stop_reason": "end_turn",
                     "usage": {"input_tokens": 5, "cache_creation_input_tokens": 0,
                               "cache_read_input_tokens": 1110, "output_tokens": 40}}},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


# ------------------------------------------------------------------------------- Claude Code


def _common(fmt: str, name: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """The fields every event of a harness carries, from hooks-dialects' fixture of that event
    (tests/fixtures/hooks/<harness>/<name>.json, which names its source)."""
    fixture = next(f for f in load(fmt) if f.name == name)
    payload = fixture.payload("/unused")
    return {k: payload[k] for k in keys if k in payload}


CLAUDE_COMMON = ("session_id", "transcript_path", "cwd", "permission_mode")


def _claude(daemon: DaemonProcess, repo: Path, session: str) -> dict[str, Any]:
    transcript = repo.parent / f"{session}.jsonl"
    return {**_common("claude", "PreToolUse-Edit", CLAUDE_COMMON), "session_id": session,
            "transcript_path": str(transcript), "cwd": str(repo), "permission_mode": "acceptEdits"}


def test_claude_code_session_learns_then_repairs_before_the_call(daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "claude-repo")
    target = repo / "shop.py"
    lines = SOURCE.split("\n")
    # ---- session 1
    base = _claude(daemon, repo, "cc-1")
    claude_transcript(Path(base["transcript_path"]), "cc-1", "reject discounts over 100")
    hook(daemon, "claude", "UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit",
                                                "prompt": "reject discounts over 100"})
    hook(daemon, "claude", "PostToolUse", {
        **base, "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_use_id": "toolu_1",
        "tool_input": {"file_path": str(target)},
        "tool_response": {"type": "text", "file": {"filePath": str(target), "content": SOURCE,
                                                   "numLines": 8, "startLine": 1, "totalLines": 8}}})
    broken = {"file_path": str(target), "old_string": cat_n(2, lines[1:3]),
              "new_string": cat_n(2, ["    if discount < 0 or discount > 100:", lines[2]]),
              "replace_all": False}
    out, _ = hook(daemon, "claude", "PostToolUseFailure", {
        **base, "hook_event_name": "PostToolUseFailure", "tool_name": "Edit", "tool_use_id": "toolu_2",
        "tool_input": broken, "error": f"String to replace not found in file.\nString: {broken['old_string']}"})
    # Nothing learned yet: only the shipped read-again rule, said as a known fix, not a memory.
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "a known fix for this kind of Edit failure (not tried in this project yet)" in context
    assert "seen before" not in context and "updatedInput" not in out["hookSpecificOutput"]
    clean = {"file_path": str(target), "old_string": "\n".join(lines[1:3]),
             "new_string": "\n".join(["    if discount < 0 or discount > 100:", lines[2]]),
             "replace_all": False}
    apply_edit(target, clean["old_string"], clean["new_string"])
    hook(daemon, "claude", "PostToolUse", {
        **base, "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_use_id": "toolu_3",
        "tool_input": clean, "tool_response": {"filePath": str(target), "oldString": clean["old_string"],
                                               "newString": clean["new_string"], "replaceAll": False,
                                               "userModified": False, "structuredPatch": []}})
    with daemon.client(project=repo) as client:  # the fix shows in working memory at once
        snap = client.ask(WorkingSnapshot(run_id="cc-1"))["snapshot"]
    assert snap["open_failures"] == [] and [f["resolved_by"] for f in snap["resolved_failures"]] == ["llm"]
    out, err = hook(daemon, "claude", "SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "other"})
    assert out == {}, err
    settle(daemon)

    listed = _episodes(cli(daemon, repo, "memory", "episodes"))
    entry = next(e for e in listed if e["query"] == "reject discounts over 100")
    assert "hook" in entry["tags"] and "claude" in entry["tags"] and entry["files"] == ["shop.py"]
    with daemon.client(project=repo) as client:
        episode = client.ask(EpisodeGet(episode_id=entry["id"]))
    assert episode["run_id"] == "cc-1"
    assert episode["model"] == "claude-sonnet-4-5-20250929" and episode["llm_calls"] == 2
    assert episode["tokens_in"] == 1110 + 1115 and episode["tokens_out"] == 60
    assert episode["files_changed"] == ["shop.py"]
    assert [f["resolved_by"] for f in episode["failures"]] == ["llm"]
    rules = _learned(cli(daemon, repo, "evolve", "rules"))
    assert [r["repair"]["transform"] for r in rules] == ["strip_line_number_prefix"]
    assert rules[0]["trigger"]["tool"] == "edit"
    lessons = cli_text(daemon, repo, "memory", "lessons")
    assert "strip_line_number_prefix" in lessons, lessons  # a convention learned from the fix
    # The bandit saw the session's edit format (Claude's Edit: search/replace) for this model.
    why = cli(daemon, repo, "evolve", "why", "edit_format", "--model", "claude-sonnet-4-5-20250929")
    assert any(a["name"] == "search_replace" and a["pulls"] >= 1 for a in why["arms"]), why

    # ---- session 2: the same kind of broken edit, another place, the older arrow gutter
    base = _claude(daemon, repo, "cc-2")
    broken = {"file_path": str(target), "old_string": arrow(7, lines[6:8]),
              "new_string": arrow(7, ["def tax(amount, rate=0.2):", "    return amount * rate"]),
              "replace_all": False}
    out, err = hook(daemon, "claude", "PreToolUse", {
        **base, "hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_use_id": "toolu_9",
        "tool_input": broken})
    spec = out["hookSpecificOutput"]
    # No permission decision: the user's own rules decide (in -p mode `ask` would be a denial).
    assert spec["hookEventName"] == "PreToolUse" and "permissionDecision" not in spec
    assert "strip_line_number_prefix" in spec["additionalContext"]
    assert rules[0]["id"] not in spec["additionalContext"]  # no internal ids for the model
    updated = spec["updatedInput"]
    assert updated == {**broken, "old_string": "\n".join(lines[6:8]),
                       "new_string": "def tax(amount, rate=0.2):\n    return amount * rate"}
    apply_edit(target, updated["old_string"], updated["new_string"])
    assert "def tax(amount, rate=0.2):" in target.read_text()
    with daemon.client(project=repo) as client:  # working memory: fixed, not an open failure
        snap = client.ask(WorkingSnapshot(run_id="cc-2"))["snapshot"]
    assert snap["open_failures"] == [] and [f["resolved_by"] for f in snap["resolved_failures"]] == [
        f"rule:{rules[0]['id']}"]
    hook(daemon, "claude", "PostToolUse", {
        **base, "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_use_id": "toolu_9",
        "tool_input": updated, "tool_response": {"filePath": str(target), "structuredPatch": []}})
    hook(daemon, "claude", "SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "other"})
    settle(daemon)

    shown = cli(daemon, repo, "metrics", "show", "--last", "1")
    totals = _totals(shown)
    assert totals["failures_avoided"] == 1 and totals["resolved_from_memory"] == 1
    assert "failures avoided" in cli_text(daemon, repo, "metrics", "show", "--last", "1")
    rule = next(r for r in _learned(cli(daemon, repo, "evolve", "rules")) if r["id"] == rules[0]["id"])
    assert rule["successes"] == rules[0]["successes"] + 1  # the rewrite counted as the rule's success

    # Without a pre-tool hook, the same failure now comes back with its repair (item 3).
    base = _claude(daemon, repo, "cc-3")
    broken = {"file_path": str(target), "old_string": cat_n(1, lines[0:1]), "new_string": "def price(t, d):",
              "replace_all": False}
    out, err = hook(daemon, "claude", "PostToolUseFailure", {
        **base, "hook_event_name": "PostToolUseFailure", "tool_name": "Edit", "tool_use_id": "toolu_5",
        "tool_input": broken, "error": f"String to replace not found in file.\nString: {broken['old_string']}"})
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "strip_line_number_prefix" in context and '"old_string":"def price(total, discount):"' in context
    assert "old_str " not in context and "ws_" not in context, err


def test_claude_failure_advice_names_claudes_own_tools(daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "claude-advice")
    base = _claude(daemon, repo, "cc-advice")
    out, err = hook(daemon, "claude", "PostToolUseFailure", {
        **base, "hook_event_name": "PostToolUseFailure", "tool_name": "Edit", "tool_use_id": "toolu_1",
        "tool_input": {"file_path": str(repo / "shop.py"), "old_string": "x", "new_string": "y"},
        "error": "File has not been read yet. Read it first before writing to it."})
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure", err
    assert "(Read)" in context and "ws_" not in context


# ------------------------------------------------------------------------------- Gemini CLI


def _gemini(repo: Path, session: str, event: str) -> dict[str, Any]:
    common = _common("gemini", "BeforeTool-replace", ("session_id", "transcript_path", "cwd", "timestamp"))
    return {**common, "session_id": session, "transcript_path": str(repo.parent / f"{session}.json"),
            "cwd": str(repo), "hook_event_name": event}


def test_gemini_cli_session_learns_then_repairs_before_the_call(daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "gemini-repo")
    target = repo / "shop.py"
    lines = SOURCE.split("\n")
    hook(daemon, "gemini", "AfterTool", {
        **_gemini(repo, "gm-1", "AfterTool"), "tool_name": "run_shell_command",
        "tool_input": {"command": "cat -n shop.py"},
        "tool_response": {"llmContent": cat_n(1, lines), "returnDisplay": ""}})
    broken = {"file_path": str(target), "old_string": cat_n(2, lines[1:3]),
              "new_string": cat_n(2, ["    if discount < 0 or discount > 100:", lines[2]])}
    error = (f"Failed to edit, 0 occurrences found for old_string in {target}. Ensure you're not "
             "escaping content incorrectly and check whitespace, indentation, and context. Use "
             "read_file tool to verify.")
    hook(daemon, "gemini", "AfterTool", {
        **_gemini(repo, "gm-1", "AfterTool"), "tool_name": "replace", "tool_input": broken,
        "tool_response": {"llmContent": error, "returnDisplay": "Failed to edit, could not find the string to replace.",
                          "error": {"message": error, "type": "edit_no_occurrence_found"}}})
    clean = {"file_path": str(target), "old_string": "\n".join(lines[1:3]),
             "new_string": "\n".join(["    if discount < 0 or discount > 100:", lines[2]])}
    apply_edit(target, clean["old_string"], clean["new_string"])
    hook(daemon, "gemini", "AfterTool", {
        **_gemini(repo, "gm-1", "AfterTool"), "tool_name": "replace", "tool_input": clean,
        "tool_response": {"llmContent": f"Successfully modified file: {target} (1 replacements).",
                          "returnDisplay": ""}})
    hook(daemon, "gemini", "SessionEnd", {**_gemini(repo, "gm-1", "SessionEnd"), "reason": "exit"})
    settle(daemon)
    assert any("gemini" in e["tags"] for e in _episodes(cli(daemon, repo, "memory", "episodes")))
    rules = _learned(cli(daemon, repo, "evolve", "rules"))
    assert [(r["trigger"]["tool"], r["repair"]["transform"]) for r in rules] == [
        ("replace", "strip_line_number_prefix")]

    broken = {"file_path": str(target), "old_string": cat_n(7, lines[6:8]),
              "new_string": cat_n(7, ["def tax(amount, rate=0.2):", "    return amount * rate"])}
    out, _ = hook(daemon, "gemini", "BeforeTool", {
        **_gemini(repo, "gm-2", "BeforeTool"), "tool_name": "replace", "tool_input": broken})
    assert "a fix learned in this project" in out["systemMessage"] and rules[0]["id"] not in out["systemMessage"]
    assert out["hookSpecificOutput"]["hookEventName"] == "BeforeTool"
    updated = {**broken, **out["hookSpecificOutput"]["tool_input"]}  # Gemini merges it over the call
    apply_edit(target, updated["old_string"], updated["new_string"])
    hook(daemon, "gemini", "AfterTool", {
        **_gemini(repo, "gm-2", "AfterTool"), "tool_name": "replace", "tool_input": updated,
        "tool_response": {"llmContent": "Successfully modified file", "returnDisplay": ""}})
    hook(daemon, "gemini", "SessionEnd", {**_gemini(repo, "gm-2", "SessionEnd"), "reason": "exit"})
    settle(daemon)
    totals = _totals(cli(daemon, repo, "metrics", "show", "--last", "1"))
    assert totals["failures_avoided"] == 1 and totals["resolved_from_memory"] == 1


# ------------------------------------------------------------------------------- Codex CLI


def _codex(repo: Path, session: str, event: str, rollout: Path) -> dict[str, Any]:
    """Codex's common hook input (codex-rs/hooks/schema/generated/*.command.input.schema.json)."""
    common = _common("codex", "PreToolUse-apply_patch",
                     ("session_id", "turn_id", "transcript_path", "cwd", "model", "permission_mode"))
    return {**common, "session_id": session, "transcript_path": str(rollout), "cwd": str(repo),
            "hook_event_name": event, "model": "gpt-5-codex"}


def _stamp(seconds_ago: float) -> str:
    at = datetime.now(UTC) - timedelta(seconds=seconds_ago)
    return at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def codex_rollout(path: Path, broken: str, clean: str) -> None:
    """A Codex rollout (codex-rs `RolloutLine` {timestamp, type, payload}): the model's turn
    context, a read through the shell, a patch that did not apply, the clean patch, tokens."""
    lines = [
        ("turn_context", {"cwd": str(path.parent), "model": "gpt-5-codex"}),
        ("response_item", {"type": "function_call", "name": "shell_command", "call_id": "c1",
                           "arguments": json.dumps({"command": "nl -ba shop.py"})}),
        ("response_item", {"type": "function_call_output", "call_id": "c1",
                           "output": "Exit code: 0\nOutput:\n" + cat_n(1, SOURCE.split("\n"))}),
        ("event_msg", {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 900, "cached_input_tokens": 0, "output_tokens": 40, "total_tokens": 940},
            "last_token_usage": {"input_tokens": 900, "cached_input_tokens": 0, "output_tokens": 40, "total_tokens": 940}}}),
        ("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": "c2",
                           "name": "apply_patch", "input": broken}),
        ("response_item", {"type": "custom_tool_call_output", "call_id": "c2",
                           "output": "apply_patch verification failed: Failed to find expected lines in "
                                     "shop.py:\n     2\t    if discount > 100:"}),
        ("event_msg", {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 1900, "cached_input_tokens": 800, "output_tokens": 100, "total_tokens": 2000},
            "last_token_usage": {"input_tokens": 1000, "cached_input_tokens": 800, "output_tokens": 60, "total_tokens": 1060}}}),
        ("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": "c3",
                           "name": "apply_patch", "input": clean}),
    ]
    path.write_text("".join(json.dumps({"timestamp": _stamp(30 - i), "type": kind, "payload": body}) + "\n"
                            for i, (kind, body) in enumerate(lines)))


def apply_patch(repo: Path, patch: str) -> None:
    """What Codex's apply_patch does with one `*** Update File:` hunk (enough for this test)."""
    body = [line for line in patch.split("\n") if line[:1] in (" ", "-", "+")]
    old = "\n".join(line[1:] for line in body if line[:1] in (" ", "-"))
    new = "\n".join(line[1:] for line in body if line[:1] in (" ", "+"))
    apply_edit(repo / "shop.py", old, new)


def test_codex_cli_session_learns_from_its_rollout_then_repairs_the_patch(daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "codex-repo")
    lines = SOURCE.split("\n")
    rollout = repo.parent / "rollout-codex-1.jsonl"

    def patch(start: int, old: list[str], new: list[str], gutter: bool) -> str:
        number = (lambda i, text: f"{start + i:>6}\t{text}") if gutter else (lambda i, text: text)
        body = [f"-{number(i, t)}" for i, t in enumerate(old)] + [f"+{number(i, t)}" for i, t in enumerate(new)]
        return "\n".join(["*** Begin Patch", "*** Update File: shop.py", "@@", *body, "*** End Patch"])

    new_check = ["    if discount < 0 or discount > 100:"]
    broken, clean = patch(2, lines[1:2], new_check, True), patch(2, lines[1:2], new_check, False)
    codex_rollout(rollout, broken, clean)
    hook(daemon, "codex", "UserPromptSubmit", {**_codex(repo, "cx-1", "UserPromptSubmit", rollout),
                                               "prompt": "reject negative discounts"})
    hook(daemon, "codex", "PostToolUse", {
        **_codex(repo, "cx-1", "PostToolUse", rollout), "tool_name": "Bash", "tool_use_id": "c1",
        "tool_input": {"command": "nl -ba shop.py"}, "tool_response": cat_n(1, lines)})
    # Codex versions that run apply_patch as an exec report the failure to PostToolUse too (an
    # exec summary: tests/fixtures/hooks/codex/PostToolUse-apply_patch-failed.json); the rollout
    # has it as well, and it counts once.
    out, err = hook(daemon, "codex", "PostToolUse", {
        **_codex(repo, "cx-1", "PostToolUse", rollout), "tool_name": "apply_patch", "tool_use_id": "c2",
        "tool_input": {"command": broken},
        "tool_response": "Exit code: 1\nWall time: 0 seconds\nOutput:\nFailed to find expected lines in "
                         "shop.py:\n     2\t    if discount > 100:\n"})
    advice = out["hookSpecificOutput"]["additionalContext"]  # the shipped patch_failed rule
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUse" and "ws_" not in advice, err
    apply_patch(repo, clean)
    hook(daemon, "codex", "PostToolUse", {
        **_codex(repo, "cx-1", "PostToolUse", rollout), "tool_name": "apply_patch", "tool_use_id": "c3",
        "tool_input": {"command": clean},
        "tool_response": "Exit code: 0\nOutput:\nSuccess. Updated the following files:\nM shop.py\n"})
    out, err = hook(daemon, "codex", "Stop", {**_codex(repo, "cx-1", "Stop", rollout),
                                             "stop_hook_active": False, "last_assistant_message": "done"})
    assert out == {}, err
    settle(daemon)
    listed = _episodes(cli(daemon, repo, "memory", "episodes"))
    entry = next(e for e in listed if e["query"] == "reject negative discounts")
    with daemon.client(project=repo) as client:
        episode = client.ask(EpisodeGet(episode_id=entry["id"]))
    assert (episode["model"], episode["llm_calls"], episode["tokens_in"], episode["tokens_out"]) == (
        "gpt-5-codex", 2, 1900, 100)
    assert [(f["resolved_by"], f["attempts"]) for f in episode["failures"]] == [("llm", 1)]
    rules = _learned(cli(daemon, repo, "evolve", "rules"))
    assert [(r["trigger"]["tool"], r["repair"]["transform"]) for r in rules] == [
        ("apply_patch", "strip_line_number_prefix")]
    # A second Stop of the same turn has nothing new: no second report.
    assert hook(daemon, "codex", "Stop", {**_codex(repo, "cx-1", "Stop", rollout),
                                          "stop_hook_active": False})[0] == {}
    settle(daemon)
    assert len([e for e in _episodes(cli(daemon, repo, "memory", "episodes")) if "codex" in e["tags"]]) == 1

    # ---- session 2: the same kind of broken patch elsewhere in the file
    broken = patch(8, lines[7:8], ["    return amount * 0.25"], True)
    out, err = hook(daemon, "codex", "PreToolUse", {
        **_codex(repo, "cx-2", "PreToolUse", repo.parent / "rollout-codex-2.jsonl"),
        "tool_name": "apply_patch", "tool_use_id": "c9", "tool_input": {"command": broken}})
    spec = out["hookSpecificOutput"]
    assert set(spec) <= {"hookEventName", "permissionDecision", "permissionDecisionReason",
                         "updatedInput", "additionalContext"}, spec  # Codex's output schema
    assert (spec["hookEventName"], spec["permissionDecision"]) == ("PreToolUse", "allow")
    assert "a fix learned in this project" in spec["permissionDecisionReason"], err
    assert rules[0]["id"] not in spec["permissionDecisionReason"]
    fixed = spec["updatedInput"]["command"]
    assert fixed == patch(8, lines[7:8], ["    return amount * 0.25"], False)
    apply_patch(repo, fixed)
    hook(daemon, "codex", "PostToolUse", {
        **_codex(repo, "cx-2", "PostToolUse", repo.parent / "rollout-codex-2.jsonl"),
        "tool_name": "apply_patch", "tool_use_id": "c9", "tool_input": {"command": fixed},
        "tool_response": "Exit code: 0\nOutput:\nSuccess. Updated the following files:\nM shop.py\n"})
    hook(daemon, "codex", "Stop", {**_codex(repo, "cx-2", "Stop", repo.parent / "rollout-codex-2.jsonl"),
                                   "stop_hook_active": False})
    settle(daemon)
    totals = _totals(cli(daemon, repo, "metrics", "show", "--last", "1"))
    assert totals["failures_avoided"] == 1 and totals["resolved_from_memory"] == 1


# ------------------------------------------------------------------------------- no rewrite


@pytest.mark.parametrize(("old", "why"), [
    (cat_n(40, ["    return amount * 0.3"]), "no repair matches"),       # zero places
    (cat_n(1, ["x = 1"]), "several places"),                              # two places
])
def test_no_rewrite_when_the_repair_matches_zero_or_several_places(
        daemon: DaemonProcess, old: str, why: str) -> None:
    repo = _repo(daemon, f"norewrite-{why[:2].strip()}")
    (repo / "dup.py").write_text("x = 1\ny = 2\nx = 1\n")
    out, err = hook(daemon, "claude", "PreToolUse", {
        **_claude(daemon, repo, "cc-none"), "hook_event_name": "PreToolUse", "tool_name": "Edit",
        "tool_use_id": "toolu_1",
        "tool_input": {"file_path": str(repo / "dup.py"), "old_string": old, "new_string": "z"}})
    assert out == {}, err


def test_no_rewrite_for_other_tools_or_a_matching_edit(daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "norewrite-tools")
    base = {**_claude(daemon, repo, "cc-tools"), "hook_event_name": "PreToolUse", "tool_use_id": "t"}
    numbered = cat_n(2, SOURCE.split("\n")[1:3])
    for tool, tool_input in (
        ("Write", {"file_path": str(repo / "shop.py"), "content": numbered}),
        ("Bash", {"command": f"printf '{numbered}'"}),
        ("Read", {"file_path": str(repo / "shop.py")}),
        ("Edit", {"file_path": str(repo / "shop.py"), "old_string": "def tax(amount):", "new_string": "def tax(a):"}),
    ):
        out, err = hook(daemon, "claude", "PreToolUse", {**base, "tool_name": tool, "tool_input": tool_input})
        assert out == {}, (tool, err)
    out, _ = hook(daemon, "gemini", "BeforeTool", {
        **_gemini(repo, "gm-tools", "BeforeTool"), "tool_name": "write_file",
        "tool_input": {"file_path": str(repo / "shop.py"), "content": numbered}})
    assert out == {}
    rollout = repo.parent / "rollout-tools.jsonl"
    applies = "*** Begin Patch\n*** Update File: shop.py\n@@\n-def tax(amount):\n+def tax(a):\n*** End Patch"
    for tool, tool_input in (("Bash", {"command": f"printf '{numbered}'"}), ("apply_patch", {"command": applies})):
        out, err = hook(daemon, "codex", "PreToolUse", {
            **_codex(repo, "cx-tools", "PreToolUse", rollout), "tool_name": tool, "tool_use_id": "t",
            "tool_input": tool_input})
        assert out == {}, (tool, err)


def _episodes(data: Any) -> list[dict[str, Any]]:
    items = data.get("episodes", data) if isinstance(data, dict) else data
    return [e for e in items if isinstance(e, dict)]


def _learned(data: Any) -> list[dict[str, Any]]:
    items = data.get("rules", data) if isinstance(data, dict) else data
    return [r for r in items if isinstance(r, dict) and r.get("scope") != "builtin"]


def _totals(data: Any) -> dict[str, Any]:
    summary = data.get("summary", data) if isinstance(data, dict) else {}
    totals = summary.get("totals", {}) if isinstance(summary, dict) else {}
    assert isinstance(totals, dict), data
    return totals


# Keep the hook subprocesses from picking up a harness's project variables of the developer.
for _var in ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CODEX_PROJECT_DIR"):
    os.environ.pop(_var, None)
