"""The run report of a hook-driven session: failures paired with their fix, failures avoided
before the call, the daemon's counters and a Claude Code transcript's model use."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor import harnesses
from slmactor.harnesses.claude import transcript_stats as claude_transcript_stats
from slmactor.harnesses.codex import rollout as codex_rollout
from slmactor.logic.evolve.transforms import infer_transform
from slmactor.logic.loop.reflect import reflect
from slmactor.logic.loop.run_report import RunReport
from slmactor.logic.loop.session_report import pair_failures, session_report
from slmactor.logic.text.timefmt import parse_rfc3339

EDITS = {"edit", "replace", "apply_patch", "write"}


def is_edit(tool: str) -> bool:
    return tool.lower() in EDITS


def call(tool: str, ok: bool, path: str = "", args: dict[str, Any] | None = None,
         error: str = "", command: str = "", at: float = 100.0) -> dict[str, Any]:
    entry: dict[str, Any] = {"e": "call", "at": at, "tool": tool, "ok": ok}
    if path:
        entry["path"] = path
    if args is not None:
        entry["args"] = json.dumps(args, sort_keys=True, separators=(",", ":"))
    if error:
        entry["error"] = error
    if command:
        entry["command"] = command
    return entry


# A ledger keeps a call's arguments in the shared words its room renamed them to.
BROKEN = {"path": "/r/a.py", "old_str": "     3\tx = 1", "new_str": "     3\tx = 2"}
CLEAN = {"path": "/r/a.py", "old_str": "x = 1", "new_str": "x = 2"}
NOT_FOUND = "String to replace not found in file.\nString:      3\tx = 1"


def test_a_failed_edit_is_resolved_by_the_next_success_on_the_same_file() -> None:
    entries = [
        call("Read", True, "a.py"),
        call("Edit", False, "a.py", BROKEN, NOT_FOUND),
        call("Edit", True, "b.py", CLEAN),          # another file: not the fix
        call("Edit", False, "a.py", BROKEN, NOT_FOUND),  # the same failure again: an attempt
        call("Edit", True, "a.py", CLEAN),
    ]
    [failure] = pair_failures(entries)
    assert failure["resolved_by"] == "llm" and failure["attempts"] == 2
    assert infer_transform(failure["failed_args"], failure["fixed_args"]) == "strip_line_number_prefix"


def test_commands_pair_by_command_and_unresolved_failures_stay_open() -> None:
    entries = [
        call("Bash", False, command="pytest -q", error="1 failed"),
        call("Bash", False, command="make lint", error="E501"),
        call("Bash", True, command="pytest -q"),
    ]
    failures = pair_failures(entries)
    assert [(f["message"], f.get("resolved_by", "")) for f in failures] == [
        ("1 failed", "retry"), ("E501", "")]


def shell(ok: bool, command: str, error: str = "") -> dict[str, Any]:
    return call("Bash", ok, args={"command": command}, error=error, command=command)


def test_a_corrected_command_is_the_fix_and_teaches_its_substitution() -> None:
    from slmactor.logic.evolve import typed_repairs as tr
    from slmactor.logic.failures.fingerprint import analyze

    missing = "sh: 1: .venv/bin/python: not found"
    entries = [
        shell(False, ".venv/bin/python check.py", missing),
        shell(True, "ls"),                                     # unrelated: not the fix
        shell(False, "git status", "fatal: not a git repository"),
        shell(True, "git log"),                                # same program, nothing learnable
        shell(True, "python3 check.py"),
    ]
    venv, git = pair_failures(entries)
    assert venv["resolved_by"] == "llm"
    assert venv["resolution"] == "`python3` instead of `.venv/bin/python` (`python3 check.py`)"
    assert "git" not in venv["fixed_args"] and "resolved_by" not in git
    failed = tr.Call("Bash", json.loads(venv["failed_args"]), "shell")
    fixed = tr.Call("Bash", json.loads(venv["fixed_args"]), "shell")
    repair = tr.infer(failed, fixed, analyze("Bash", missing).cls)
    assert repair is not None and repair.kind == "substitute_command"
    assert tr.named_fix(repair, failed).startswith("`python3` instead of `.venv/bin/python`")


def test_a_corrected_command_is_a_repair_only_when_nothing_else_changed_in_between() -> None:
    quiet = [shell(False, "python check.py", "python: not found"),
             *(shell(True, f"echo {i}") for i in range(20)),
             shell(True, "python3 check.py")]
    [failure] = pair_failures(quiet)
    assert failure["resolution"] == "`python3` instead of `python` (`python3 check.py`)"
    edited = [shell(False, "python check.py", "python: not found"),
              call("Edit", True, "check.py", CLEAN),
              shell(True, "python3 check.py")]
    [failure] = pair_failures(edited)
    # Got past it, but the code changed too: which of the two did it, the calls cannot say.
    assert failure["resolved_by"] == "llm" and "resolution" not in failure
    assert "fixed_args" not in failure


def test_a_preflight_rewrite_followed_by_success_is_a_failure_avoided_from_memory() -> None:
    pre = {"e": "preflight", "tool": "Edit", "path": "a.py", "message": NOT_FOUND,
           "failed_args": json.dumps(BROKEN), "fixed_args": json.dumps(CLEAN),
           "transform": "strip_line_number_prefix", "rule_id": "rule_abc"}
    [avoided] = pair_failures([pre, call("Edit", True, "a.py", CLEAN)])
    assert avoided["resolved_by"] == "rule:rule_abc" and avoided["avoided"] is True
    generic = {**pre, "rule_id": ""}
    [learned] = pair_failures([generic, call("Edit", True, "a.py", CLEAN)])
    assert learned["resolved_by"] == "preflight"  # the reflector learns a rule from it
    # The rewritten call failed anyway: the rule did not fix it (its outcome is a failure).
    [failed] = pair_failures([pre, call("Edit", False, "a.py", CLEAN, NOT_FOUND)])
    assert failed["rule_id"] == "rule_abc" and "resolved_by" not in failed


def test_session_report_reflects_into_episode_rule_and_metrics() -> None:
    entries = [
        {"e": "prompt", "at": 90.0, "text": "fix the discount"},
        call("Read", True, "a.py", at=95.0),
        call("Edit", False, "a.py", BROKEN, NOT_FOUND, at=96.0),
        call("Edit", True, "a.py", CLEAN, at=97.0),
    ]
    snapshot = {"counters": {"calls": 5, "errors": 1, "redundant": 1}, "files_edited": ["a.py"]}
    report = session_report("s-1", "claude", entries, snapshot, None, 120.0, is_edit,
                            edit_format_of=harnesses.edit_format)
    assert report["query"] == "fix the discount" and report["tags"] == ["hook", "claude"]
    assert (report["tool_calls"], report["tool_errors"], report["redundant_calls"]) == (5, 1, 1)
    assert report["files_changed"] == ["a.py"]
    assert (report["edits_attempted"], report["edits_applied"], report["edits_first_attempt"]) == (2, 1, 0)
    assert (report["started_at"], report["ended_at"]) == (90.0, 120.0)
    reflection = reflect(RunReport.from_dict(report), 120.0)
    assert reflection.episode["run_id"] == "s-1" and reflection.episode["success"] is True
    [candidate] = reflection.candidates
    assert candidate.repair["transform"] == "strip_line_number_prefix"
    assert reflection.metrics.failures == 1 and reflection.metrics.resolved_from_llm == 1
    # The edit format Claude's Edit stands for: a procedure observation and a bandit reward.
    assert report["edit_format"] == "search_replace"
    assert reflection.procedure is not None and reflection.procedure["option"] == "search_replace"
    [rewarded] = reflection.rewards
    assert (rewarded.decision, rewarded.arm) == ("edit_format", "search_replace")
    assert rewarded.outcome["applied"] is True and rewarded.outcome["retries"] == 1
    assert 0.5 < rewarded.reward < 1.0  # applied in the end, after a retry


def test_a_session_is_done_when_nothing_it_met_stayed_unresolved() -> None:
    def episode(*entries: dict[str, Any]) -> dict[str, Any]:
        report = session_report("s", "claude", [{"e": "prompt", "at": 1.0, "text": "run it"},
                                                *entries], None, None, 9.0, is_edit)
        return reflect(RunReport.from_dict(report), 9.0).episode

    # Only commands, the failed one corrected: done, though no file changed.
    fixed = episode(shell(False, "python greet.py", "python: not found"),
                    shell(True, "python3 greet.py"))
    assert fixed["success"] is True
    # A failure nothing fixed: not done, whatever else worked.
    stuck = episode(shell(True, "ls"), shell(False, "make", "make: *** [all] Error 2"))
    assert stuck["success"] is False


def test_a_later_segment_leaves_out_the_sessions_cumulative_counts() -> None:
    entries = [call("Bash", True, command="ls")]
    snapshot = {"counters": {"calls": 40, "errors": 3, "redundant": 7}}
    report = session_report("s-1#2", "codex", entries, snapshot, None, 1.0, is_edit,
                            first_segment=False)
    assert report["tool_calls"] == 1 and "redundant_calls" not in report


def test_avoided_failures_are_counted_in_metrics() -> None:
    pre = {"e": "preflight", "tool": "Edit", "path": "a.py", "message": NOT_FOUND,
           "failed_args": json.dumps(BROKEN), "fixed_args": json.dumps(CLEAN),
           "transform": "strip_line_number_prefix", "rule_id": "rule_abc"}
    report = session_report("s-2", "claude", [pre, call("Edit", True, "a.py", CLEAN)], None, None,
                            5.0, is_edit)
    metrics = reflect(RunReport.from_dict(report), 5.0).metrics
    assert (metrics.failures_avoided, metrics.resolved_from_memory) == (1, 1)
    assert metrics.tool_errors == 0


# ------------------------------------------------------------------------ Claude Code transcript


def _assistant(mid: str, model: str, tin: int, tout: int, stamp: str = "2026-12-01T10:00:00Z") -> str:
    return json.dumps({"type": "assistant", "timestamp": stamp, "isSidechain": False,
                       "message": {"id": mid, "model": model, "role": "assistant", "content": [],
                                   "usage": {"input_tokens": tin, "cache_creation_input_tokens": 1,
                                             "cache_read_input_tokens": 2, "output_tokens": tout}}})


def test_transcript_counts_each_response_once_and_skips_synthetic_ones() -> None:
    lines = [
        json.dumps({"type": "user", "timestamp": "2026-12-01T09:59:00Z",
                    "message": {"role": "user", "content": [{"type": "text", "text": "add tax"}]}}),
        json.dumps({"type": "user", "isMeta": True, "message": {"role": "user", "content": "meta"}}),
        _assistant("msg_1", "claude-opus-4-5", 10, 1),
        _assistant("msg_1", "claude-opus-4-5", 10, 7),  # the same response, streamed further
        _assistant("msg_2", "claude-opus-4-5", 20, 3, "2026-12-01T10:01:00Z"),
        _assistant("msg_3", "<synthetic>", 0, 0),
        "not json", "", json.dumps([1, 2]),
    ]
    stats = claude_transcript_stats(lines)
    assert (stats.model, stats.llm_calls, stats.tokens_in, stats.tokens_out) == (
        "claude-opus-4-5", 2, 13 + 23, 7 + 3)
    assert stats.first_prompt == "add tax" and stats.ended_at - stats.started_at == 120.0


@settings(derandomize=True, max_examples=100)
@given(st.lists(st.one_of(st.text(max_size=40), st.builds(json.dumps, st.dictionaries(
    st.sampled_from(["type", "message", "timestamp", "isMeta"]),
    st.one_of(st.none(), st.integers(), st.text(max_size=10), st.just("assistant"),
              st.dictionaries(st.sampled_from(["id", "model", "usage", "content"]),
                              st.one_of(st.integers(), st.text(max_size=5),
                                        st.dictionaries(st.text(max_size=20), st.integers()))))))),
    max_size=20))
def test_transcript_reader_never_raises_and_never_counts_negative(lines: list[str]) -> None:
    stats = claude_transcript_stats(lines)
    assert stats.llm_calls >= 0 and stats.tokens_in >= 0 and stats.tokens_out >= 0


# ------------------------------------------------------------------------ Codex CLI rollout


def _line(kind: str, payload: dict[str, Any], stamp: str = "2026-12-01T10:00:00.000Z") -> str:
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload})


def test_codex_rollout_gives_every_call_with_its_exit_code_and_model_use_after_a_time() -> None:
    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-     3\tx = 1\n+x = 2\n*** End Patch"
    usage = {"input_tokens": 100, "cached_input_tokens": 40, "output_tokens": 7, "total_tokens": 107}
    lines = [
        _line("turn_context", {"model": "gpt-5-codex"}),
        _line("event_msg", {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}}),
        _line("event_msg", {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}}),
        _line("response_item", {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": patch}),
        _line("response_item", {"type": "custom_tool_call_output", "call_id": "c1",
                                "output": "apply_patch verification failed: Failed to find expected lines"}),
        _line("response_item", {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": patch}),
        _line("response_item", {"type": "custom_tool_call_output", "call_id": "c2",
                                "output": "Exit code: 0\nOutput:\nSuccess. Updated the following files:"}),
        _line("response_item", {"type": "function_call", "call_id": "c3", "name": "shell", "arguments": "{}"}),
        _line("response_item", {"type": "function_call_output", "call_id": "c3", "output": "Exit code: 1"}),
        "{broken", "",
    ]
    stats = codex_rollout(lines)
    assert (stats.model, stats.llm_calls, stats.tokens_in, stats.tokens_out) == ("gpt-5-codex", 1, 100, 7)
    failed, applied, shell = stats.calls
    assert (failed["tool"], failed["path"], failed["ok"], failed["id"]) == ("apply_patch", "src/a.py", False, "c1")
    assert json.loads(failed["args"]) == {"patch": patch}  # the ledger's shared words
    assert (applied["ok"], applied["exit_code"]) == (True, 0)
    # A shell command's exit code is only in the rollout (its hook carries the raw output).
    assert (shell["tool"], shell["ok"], shell["exit_code"]) == ("Bash", False, 1)
    later = codex_rollout(lines, since=parse_rfc3339("2026-12-01T10:00:00Z") or 0.0)
    assert later.calls == () and later.llm_calls == 0


@settings(derandomize=True, max_examples=100)
@given(st.lists(st.builds(lambda kind, payload: json.dumps({"type": kind, "payload": payload}),
                          st.sampled_from(["turn_context", "event_msg", "response_item", "x"]),
                          st.dictionaries(st.sampled_from(["type", "model", "info", "call_id", "name",
                                                           "input", "output"]),
                                          st.one_of(st.text(max_size=8), st.integers(), st.none(),
                                                    st.sampled_from(["apply_patch", "token_count",
                                                                     "custom_tool_call"])))),
                max_size=20))
def test_codex_rollout_reader_never_raises(lines: list[str]) -> None:
    stats = codex_rollout(lines)
    assert stats.llm_calls >= 0 and all(c["e"] == "call" and isinstance(c["ok"], bool) for c in stats.calls)
