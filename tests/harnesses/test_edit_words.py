"""A rule learned on one harness's edit tool fits another's: the shared transforms read every
tool's arguments in one set of words (Gemini CLI's `allow_multiple` is their `replace_all`), and
what they produce goes back in the tool's own."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor import harnesses
from slmactor.logic.evolve.transforms import infer_between, infer_transform, transform

GEMINI = {"file_path": "/p/app.py", "old_string": "fetch_all", "new_string": "fetch_every"}


def test_gemini_replace_all_is_the_shared_replace_all_and_back() -> None:
    gemini = harnesses.get("gemini")
    failed = gemini.tool_call("replace", GEMINI, ok=False, error="found 3 occurrences")
    fixed = gemini.tool_call("replace", {**GEMINI, "allow_multiple": True})
    # Read in the shared words, Gemini's fix is the transform a Claude Code fix taught.
    assert infer_transform(json.dumps(GEMINI), json.dumps({**GEMINI, "allow_multiple": True})) is None
    assert infer_between(failed.shared(), fixed.shared()) == "set_replace_all"
    new_args, changed = transform("set_replace_all", failed.shared())
    assert changed and failed.localized(new_args) == {**GEMINI, "allow_multiple": True}
    # Claude Code's Edit says replace_all itself: the same shared words.
    claude = harnesses.get("claude").tool_call("Edit", {**GEMINI, "replace_all": True})
    assert claude.shared() == fixed.shared()


ARGS = st.dictionaries(st.sampled_from(["file_path", "old_string", "new_string", "allow_multiple", "x"]),
                       st.one_of(st.booleans(), st.text(max_size=5)), max_size=5)


@settings(max_examples=200, derandomize=True)
@given(ARGS)
def test_translation_of_gemini_arguments_round_trips(args: dict[str, object]) -> None:
    # The shared words and back give the call the harness sent, whatever keys it has.
    call = harnesses.get("gemini").tool_call("replace", args)
    shared = call.shared()
    assert call.localized(shared) == args
    assert "allow_multiple" not in shared and "old_string" not in shared


def test_codex_one_shot_command_reads_its_exit_code_from_the_rollout(tmp_path: object) -> None:
    # The line shape of Codex CLI 0.169.0's rollout (`event_msg` `item_completed`, recorded by
    # the real binary in tests/realcli/test_codex_learns_a_command.py before its PostToolUse).
    from pathlib import Path

    rollout = Path(str(tmp_path)) / "rollout-1.jsonl"
    item = {"type": "CommandExecution", "id": "call_000011", "command": ["/bin/bash", "-lc", "x"],
            "status": "failed", "aggregated_output": "x: not found\n", "exit_code": 127}
    rollout.write_text(json.dumps({"timestamp": "2026-12-01T23:15:10.302Z", "type": "event_msg",
                                   "payload": {"type": "item_completed", "item": item}}) + "\n")
    room = harnesses.get("codex")
    payload = {"transcript_path": str(rollout), "tool_use_id": "call_000011",
               "tool_response": "x: not found\n"}
    assert room.outcome("Bash", "PostToolUse", payload) == (False, "x: not found")
    assert room.outcome("Bash", "PostToolUse", {**payload, "tool_use_id": "call_9"}) == (True, "")
    assert room.outcome("Bash", "PostToolUse", {**payload, "transcript_path": "/nonexistent.jsonl"}) == (True, "")
