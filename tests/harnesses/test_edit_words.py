"""A rule learned on one harness's edit tool fits another's: the shared transforms read every
tool's arguments in one set of words (Gemini CLI's `allow_multiple` is their `replace_all`), and
what they produce goes back in the tool's own."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor import harnesses
from slmactor.logic.evolve.transforms import apply_transform, infer_transform

GEMINI = {"file_path": "/p/app.py", "old_string": "fetch_all", "new_string": "fetch_every"}


def test_gemini_replace_all_is_the_shared_replace_all_and_back() -> None:
    fixed = json.dumps({**GEMINI, "allow_multiple": True})
    # Read in the shared words, Gemini's fix is the transform a Claude Code fix taught.
    assert infer_transform(json.dumps(GEMINI), fixed) is None
    assert infer_transform(harnesses.canonical_args("replace", json.dumps(GEMINI)),
                           harnesses.canonical_args("replace", fixed)) == "set_replace_all"
    new_args, changed = apply_transform("set_replace_all", json.dumps(GEMINI))
    assert changed and json.loads(harnesses.localized_args("replace", new_args)) == json.loads(fixed)
    # Claude Code's Edit already says replace_all: nothing to translate.
    claude = json.dumps({**GEMINI, "replace_all": True})
    assert harnesses.canonical_args("Edit", claude) == claude


ARGS = st.dictionaries(st.sampled_from(["file_path", "old_string", "new_string", "allow_multiple", "x"]),
                       st.one_of(st.booleans(), st.text(max_size=5)), max_size=5)


@settings(max_examples=200, derandomize=True)
@given(st.one_of(ARGS.map(json.dumps), st.text(max_size=20)))
def test_translation_of_gemini_arguments_round_trips(text: str) -> None:
    # Gemini's `replace` never takes `replace_all`: its arguments go there and back unchanged,
    # and anything that is not a JSON object is left alone.
    there = harnesses.canonical_args("replace", text)
    back = harnesses.localized_args("replace", there)
    if there == text:
        assert back == text
    else:
        assert json.loads(back) == json.loads(text) and "allow_multiple" not in json.loads(there)


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
