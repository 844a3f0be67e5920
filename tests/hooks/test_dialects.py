"""The dialects read each harness's real payloads (tests/fixtures/hooks) and answer in its shape."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor import harnesses
from slmactor.harnesses.base import MAX_CALL_ERROR, clip, patch_paths, shared_json
from slmactor.hooks import dialects
from slmactor.protocol import codec
from slmactor.protocol.messages import EvolveOnFailure, RecordTool
from tests.fixtures.hooks import Fixture, load, output_problems

PROJECT = "/home/u/repo"
FIXTURES = load()


def outcome(fmt: str, tool: str, payload: dict[str, Any]) -> tuple[bool, str]:
    """(ok, error) of a finished call, as the harness's room reads its tool response."""
    return harnesses.get(fmt).outcome(tool, "", payload)


def _parse(fx: Fixture, env: dict[str, str] | None = None) -> dialects.HookInput:
    payload = fx.payload(PROJECT)
    return dialects.parse(fx.fmt, dialects.event_name(fx.fmt, None, payload), payload, env or {}, "/elsewhere")


def test_every_event_named_in_issue_12_has_a_fixture() -> None:
    named = {
        "claude": {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop",
                   "SubagentStop", "SessionEnd"},
        "codex": {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"},
        "gemini": {"BeforeTool", "AfterTool", "BeforeAgent", "SessionStart", "SessionEnd"},
        "openhands": {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"},
        "cline": {"TaskStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "TaskComplete", "TaskCancel"},
    }
    for fmt, events in named.items():
        assert events <= {fx.event for fx in load(fmt)}, fmt
    assert all(fx.source for fx in FIXTURES)


@pytest.mark.parametrize("fx", FIXTURES, ids=lambda fx: fx.id)
def test_fixture_is_read_as_the_harness_means_it(fx: Fixture) -> None:
    hook = _parse(fx)
    expect = fx.expect
    assert hook.event == fx.event and hook.action == expect["action"]
    if "query" in expect:
        assert hook.query == expect["query"]
    if "tool" not in expect:
        assert hook.tool_call is None
        return
    call = hook.tool_call
    assert call is not None
    assert (call.tool, call.kind, call.ok) == (expect["tool"], expect["kind"], expect["ok"])
    if "paths" in expect:
        assert call.paths == tuple(f"{PROJECT}/{p}" if not p.startswith("/") else p for p in expect["paths"]) or \
            call.paths == tuple(expect["paths"])  # apply_patch headers are relative already
        assert call.path == call.paths[0]
    if "command" in expect:
        assert call.command == expect["command"]
    for text in expect.get("error_contains", []):
        assert text in call.error
    for text in expect.get("error_excludes", []):
        assert text not in call.error
    assert call.ok == (call.error == "")


def test_a_claude_bash_failure_keeps_the_whole_output() -> None:
    fx = next(f for f in FIXTURES if f.id == "claude/PostToolUseFailure-Bash")
    call = _parse(fx).tool_call
    assert call is not None and call.error == fx.payload(PROJECT)["error"]  # not just "Exit code 1"


def test_project_from_the_harness_environment_first() -> None:
    fx = next(f for f in FIXTURES if f.id == "claude/SessionStart")
    assert _parse(fx, {"CLAUDE_PROJECT_DIR": "/srv/proj"}).project_dir == "/srv/proj"
    assert _parse(fx).project_dir == PROJECT
    gem = next(f for f in FIXTURES if f.id == "gemini/SessionStart")
    assert _parse(gem, {"GEMINI_PROJECT_DIR": "/g"}).project_dir == "/g"
    cline = next(f for f in FIXTURES if f.id == "cline/TaskStart")
    assert _parse(cline).project_dir == PROJECT  # workspaceRoots[0]
    assert dialects.parse("codex", "SessionStart", {}, {"CLAUDE_PROJECT_DIR": "/x"}, "/cwd").project_dir == "/cwd"


def test_run_ids() -> None:
    assert {_parse(f).run_id for f in load("cline")} == {"cline-task-42"}
    assert {_parse(f).run_id for f in load("codex")} == {"019a0c6e-codex-sess"}
    oh = dict(next(f for f in FIXTURES if f.id == "openhands/SessionStart").payload(PROJECT), session_id=None)
    assert dialects.parse("openhands", "SessionStart", oh, {"OPENHANDS_SESSION_ID": "oh-9"}, "/").run_id == "oh-9"
    assert dialects.parse("claude", "Stop", {}, {}, "/").run_id == "default"


def test_apply_patch_paths_from_every_header_kind() -> None:
    patch = ("*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@\n-x\n+y\n*** Add File: new/c.py\n+z\n"
             "*** Delete File: old.py\n*** Update File: a.py\n*** End Patch")
    assert patch_paths(patch) == ("a.py", "b.py", "new/c.py", "old.py")
    call = dialects.parse("codex", "PostToolUse", {"tool_name": "apply_patch", "tool_input": {"command": patch},
                                                   "tool_response": "Exit code: 0\nOutput:\nSuccess."}, {}, "/").tool_call
    assert call is not None and call.paths == ("a.py", "b.py", "new/c.py", "old.py") and call.command == ""


@pytest.mark.parametrize(("response", "ok"), [
    ("Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n", True),
    ("Exit code: 2\nWall time: 0.1 seconds\nTotal output lines: 900\nOutput:\nboom\n", False),
    ("Chunk ID: 9f\nWall time: 1.0 seconds\nProcess exited with code 1\nOriginal token count: 3\nOutput:\nboom\n", False),
    ("plain output that mentions Exit code: 1 later\n" * 20, True),  # the status leads a summary
    ({"content": [{"type": "text", "text": "bad"}], "isError": True}, False),  # an MCP tool result
])
def test_codex_string_responses(response: Any, ok: bool) -> None:
    got_ok, error = outcome("codex", "Bash", {"tool_response": response})
    assert got_ok == ok and (ok or error in ("boom", "bad"))


def test_gemini_shell_signals_and_timeouts() -> None:
    killed = {"llmContent": "Output: (empty)\nSignal: SIGKILL\nProcess Group PGID: 9", "returnDisplay": ""}
    assert outcome("gemini", "run_shell_command", {"tool_response": killed}) == (False, "Signal: SIGKILL")
    timeout = {"llmContent": "Command was automatically cancelled because it exceeded the timeout of 5.0 minutes "
                             "without output. There was no output before it was cancelled."}
    assert outcome("gemini", "run_shell_command", {"tool_response": timeout})[0] is False
    parts = {"llmContent": [{"text": "Output: x\nExit Code: 3"}]}
    assert outcome("gemini", "run_shell_command", {"tool_response": parts}) == (False, "x")


def test_openhands_exit_code_minus_one_is_not_a_failure() -> None:
    running = {"content": [], "is_error": False, "exit_code": -1, "timeout": False, "metadata": {"exit_code": -1}}
    assert outcome("openhands", "terminal", {"tool_response": running}) == (True, "")
    timed_out = {**running, "timeout": True}
    assert outcome("openhands", "terminal", {"tool_response": timed_out}) == (False, "timeout")


def test_edit_calls_name_the_shared_words_in_each_harness_own_keys() -> None:
    for fx_id, keys in (("claude/PreToolUse-Edit", ("old_string", "new_string")),
                        ("gemini/BeforeTool-replace", ("old_string", "new_string")),
                        ("openhands/PreToolUse-file_editor", ("old_str", "new_str")),
                        ("cline/PreToolUse", ("old_text", "new_text"))):
        call = _parse(next(f for f in FIXTURES if f.id == fx_id)).tool_call
        assert call is not None and (call.words["old_str"], call.words["new_str"]) == keys
        shared = call.shared()
        assert call.path.endswith("src/parse.py") and "a+b" in shared["old_str"]
        assert not shared.get("replace_all")
        assert call.localized(shared) == dict(call.args)  # back in the harness's own keys
    for fx_id in ("codex/PreToolUse-Bash", "codex/PreToolUse-apply_patch", "claude/PostToolUse-Bash"):
        call = _parse(next(f for f in FIXTURES if f.id == fx_id)).tool_call
        assert call is not None and "old_str" not in call.words
    call = harnesses.get("claude").tool_call("Edit", {"file_path": "a.py", "old_string": "x",
                                                      "new_string": "y", "replace_all": True})
    assert call.shared() == {"path": "a.py", "old_str": "x", "new_str": "y", "replace_all": True}


@pytest.mark.parametrize("fmt", dialects.FORMATS)
def test_every_output_has_the_harness_shape(fmt: str) -> None:
    for event in dialects.EVENTS[fmt]:
        for out in (dialects.output(fmt, event), dialects.output(fmt, event, "remember X"),
                    dialects.output(fmt, event, "remember X", {"old_string": "a", "new_string": "b"}),
                    dialects.neutral(fmt)):
            assert output_problems(fmt, event, out) == [], (event, out)


def test_outputs_carry_context_and_input_where_accepted() -> None:
    assert dialects.output("claude", "PostToolUseFailure", "try Read first") == {
        "hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "try Read first"}}
    assert dialects.output("claude", "PreToolUse", "", {"old_string": "a"}) == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"old_string": "a"}}}
    assert dialects.output("gemini", "BeforeTool", "", {"old_string": "a"}) == {
        "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"old_string": "a"}}}
    assert dialects.output("openhands", "SessionStart", "ctx") == {"additionalContext": "ctx"}
    assert dialects.output("openhands", "PostToolUse", "ctx") == {}
    assert dialects.output("cline", "PostToolUse", "ctx") == {"cancel": False, "contextModification": "ctx"}
    assert dialects.output("cline", "TaskStart", "x" * 60_000)["contextModification"].__len__() <= 50_000
    assert dialects.output("claude", "Stop", "ctx") == {} and dialects.output("claude", "SessionStart", " \n") == {}


def test_huge_tool_calls_are_clipped_to_what_the_daemon_accepts() -> None:
    payload = {"tool_name": "Bash", "tool_input": {"command": "y" * 50_000, "x": "x" * 200_000},
               "tool_response": {"error": "e" * 100_000}}
    call = dialects.parse("claude", "PostToolUse", payload, {}, "/").tool_call
    assert call is not None and not call.ok
    msg = RecordTool(run_id="r", tool=call.tool, path=call.path,
                     args=clip(shared_json(call), MAX_CALL_ERROR), command=call.command,
                     ok=call.ok, error=call.error)
    assert codec.load(codec.dump(msg)) == msg  # within every wire cap
    ask = EvolveOnFailure(run_id="r", call=call.to_wire())
    back = codec.load(codec.dump(ask))
    assert isinstance(back, EvolveOnFailure) and back.call == ask.call
    assert "args" not in back.call and back.call["command"] == call.command  # too large to send


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
                     max_leaves=20)
_keys = st.sampled_from(["tool_name", "tool_input", "tool_response", "session_id", "cwd", "prompt", "error",
                         "postToolUse", "preToolUse", "workspaceRoots", "taskId", "message", "working_dir",
                         "userPromptSubmit", "taskStart", "is_interrupt", "transcript_path"])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(fmt=st.sampled_from(dialects.FORMATS), event=st.sampled_from(sorted({e for v in dialects.EVENTS.values() for e in v})),
       payload=st.dictionaries(_keys, _json, max_size=8))
def test_parse_never_raises_on_odd_payloads(fmt: str, event: str, payload: dict[str, Any]) -> None:
    hook = dialects.parse(fmt, event, payload, {}, "/")
    out = dialects.output(fmt, event, hook.query, dict(hook.raw_input) or None)
    json.dumps(out)
    if hook.tool_call is not None:
        assert hook.tool_call.ok == (hook.tool_call.error == "")
