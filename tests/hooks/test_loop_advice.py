"""Advice on a failed tool call, in the harness's own words and output shape."""

from __future__ import annotations

from slmactor.hooks.advice import advice_text, localize
from slmactor.hooks.dialects import output

SEED_GUIDANCE = ("old_str did not match. ws_read the file again and copy 2-3 lines VERBATIM "
                 "(same indentation and whitespace) as old_str.")


def test_tool_names_are_the_harness_own() -> None:
    assert localize("claude", SEED_GUIDANCE).startswith("old_string did not match. Read the file")
    assert "read_file the file" in localize("gemini", SEED_GUIDANCE)
    assert "ws_" not in localize("codex", SEED_GUIDANCE)
    # Two of slmcode's tools that are one tool of the harness are named once, not `(Glob / Glob)`.
    listing = "List the directory (ws_glob / ws_list) before guessing paths."
    assert localize("claude", listing) == "List the directory (Glob) before guessing paths."
    assert localize("gemini", listing) == ("List the directory (glob / list_directory) before "
                                           "guessing paths.")
    assert localize("claude", "ws_readme and old_strings stay") == "ws_readme and old_strings stay"


def test_advice_text_only_when_memory_knows_something() -> None:
    assert advice_text("claude", "Edit", {"found": False}) == ""
    advice = {"found": True, "apply": True, "confidence": 0.8, "guidance": SEED_GUIDANCE,
              "repair": {"kind": "transform_args", "transform": "strip_line_number_prefix"},
              "new_args": '{"old_string":"x"}', "exact": True, "outcomes": 3}
    text = advice_text("claude", "Edit", advice)
    assert "seen before" in text and "80% confidence over 3 outcomes" in text
    assert "Read the file" in text and '{"old_string":"x"}' in text


def test_a_shipped_rule_never_claims_the_failure_was_seen_before() -> None:
    # A rule that ships with slmactor has a prior, not a history: its first use is no memory.
    shipped = {"found": True, "confidence": 0.8, "guidance": SEED_GUIDANCE, "seeded": True, "outcomes": 0}
    text = advice_text("claude", "Edit", shipped)
    assert "seen before" not in text and "80%" not in text and "not tried in this project yet" in text


def test_advice_goes_out_only_on_events_that_take_context() -> None:
    assert output("claude", "PostToolUseFailure", "hint") == {
        "hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "hint"}}
    assert output("gemini", "AfterTool", "hint")["hookSpecificOutput"]["hookEventName"] == "AfterTool"
    assert output("cline", "PostToolUse", "hint") == {"cancel": False, "contextModification": "hint"}
    assert output("openhands", "PostToolUse", "hint") == {}
    assert output("claude", "PostToolUse", "") == {}
    assert "replace_in_file" in localize("cline", SEED_GUIDANCE.replace("ws_read", "ws_edit"))


def test_the_edit_tool_tables_agree() -> None:
    from slmactor import harnesses

    for room in harnesses.every():
        edits = {tool for tool, kind in room.tool_kinds.items() if kind == "edit"}
        assert set(room.preflight_edits) | room.preflight_patches <= edits
    assert harnesses.get("codex").preflight_patches == {"apply_patch"}


def test_gemini_gets_advice_after_a_failure_where_it_reaches_the_model() -> None:
    # AfterTool context is appended only to successful results: a failed call's advice goes as
    # the blocking reason that replaces the result, the tool's own error first.
    from slmactor import harnesses

    room = harnesses.get("gemini")
    out = room.failure_output("AfterTool", "Failed to edit, 0 occurrences found", "slmactor memory: …")
    assert out == {"decision": "deny", "reason": "Failed to edit, 0 occurrences found\n\nslmactor memory: …"}
    assert room.failure_output("AfterTool", "boom", "") is None
    assert harnesses.get("claude").failure_output("PostToolUseFailure", "boom", "advice") is None


def test_gemini_shell_advice_keeps_the_exit_code_and_the_output_inside_its_wrapper() -> None:
    # A failed run_shell_command's result is its llmContent: the output wrapped in
    # <untrusted_context> with its `Exit Code:` line. The blocking reason gives it back whole
    # (the command's output stays marked untrusted), memory's advice after it.
    import json
    from pathlib import Path

    from slmactor import harnesses

    fixture = Path(__file__).parents[1] / "fixtures/hooks/gemini/AfterTool-run_shell_command-failed.json"
    payload = json.loads(fixture.read_text())["payload"]
    out = harnesses.get("gemini").failure_output("AfterTool", "AssertionError", "slmactor memory: x",
                                                 payload)
    assert out is not None
    reason = out["reason"]
    content = payload["tool_response"]["llmContent"]
    assert reason.startswith(content.strip()) and reason.endswith("\n\nslmactor memory: x")
    assert "Exit Code: 1" in reason.split("</untrusted_context>")[0]
    assert "slmactor memory" not in reason.split("</untrusted_context>")[0]


def test_a_codex_command_its_sandbox_refused_is_told_to_ask_for_escalation() -> None:
    # The shipped permission advice ("do not retry the blocked command") is the wrong one under
    # Codex, whose own instructions say to rerun with `sandbox_permissions: "require_escalated"`
    # (codex-rs/protocol/src/prompts/permissions/approval_policy/on_request_rule.md).
    from slmactor.logic.evolve.rule_seeds import seed_rules

    seed = next(r for r in seed_rules() if r.trigger.cls == "permission_denied")
    advice = {"found": True, "seeded": True, "outcomes": 0, "guidance": seed.repair.guidance,
              "fingerprint": {"class": "permission_denied"}}
    codex = advice_text("codex", "exec_command", advice)
    assert "require_escalated" in codex and "prefix_rule" in codex
    assert "do not retry" not in codex
    # Claude Code's Bash, and a Codex failure of another class, keep the shipped words.
    assert "require_escalated" not in advice_text("claude", "Bash", advice)
    timeout = {**advice, "fingerprint": {"class": "timeout"}}
    assert "require_escalated" not in advice_text("codex", "exec_command", timeout)
    # A learned repair names its own fix: it is not replaced.
    learned = {**advice, "seeded": False, "outcomes": 2, "confidence": 0.8}
    assert "require_escalated" not in advice_text("codex", "exec_command", learned)
