"""The one record of a tool call: built by a harness's room, read in the shared words, sent as a
msgpack map and turned back into the harness's own keys without loss."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor import harnesses
from slmactor.logic.failures.call import MAX_ARGS_TEXT, ToolCall, command_text
from slmactor.protocol import codec
from slmactor.protocol.messages import MAX_CALL_ARGS, EvolveOnFailure

_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20)
_value = st.recursive(st.none() | st.booleans() | st.integers(-1000, 1000) | _text,
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                      max_leaves=6)
_keys = st.sampled_from(["file_path", "absolute_path", "old_string", "new_string", "allow_multiple",
                         "replace_all", "path", "command", "cmd", "content", "limit", "x"])


@settings(max_examples=300, derandomize=True)
@given(room=st.sampled_from(harnesses.names()), tool=st.sampled_from(
    ["Edit", "Read", "Bash", "replace", "read_file", "run_shell_command", "apply_patch", "shell",
     "str_replace_editor", "editor", "edit", "bash", "x"]),
    args=st.dictionaries(_keys, _value, max_size=5), ok=st.booleans(), error=_text)
def test_a_call_goes_to_the_wire_and_back_and_its_shared_words_round_trip(
        room: str, tool: str, args: dict[str, Any], ok: bool, error: str) -> None:
    call = harnesses.get(room).tool_call(tool, args, ok=ok, error=error, call_id="c1")
    assert call.localized(call.shared()) == args  # nothing lost between the two vocabularies
    back = ToolCall.from_wire(codec.load(codec.dump(EvolveOnFailure(call=call.to_wire()))).call)  # type: ignore[attr-defined]
    assert back == call
    assert back.shared() == call.shared()


def test_each_room_names_its_keys_in_the_shared_words() -> None:
    claude = harnesses.get("claude").tool_call(
        "Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"}, ok=False, error="e")
    gemini = harnesses.get("gemini").tool_call(
        "replace", {"file_path": "a.py", "old_string": "x", "new_string": "y",
                    "expected_replacements": 2})
    codex = harnesses.get("codex").tool_call("shell", {"command": ["bash", "-lc", "ls -la x"]})
    assert claude.shared() == {"path": "a.py", "old_str": "x", "new_str": "y"}
    assert (claude.family, claude.kind, claude.paths, claude.ok) == ("edit", "edit", ("a.py",), False)
    assert gemini.shared()["expected"] == 2 and gemini.words["replace_all"] == "allow_multiple"
    assert codex.command == "ls -la x" and codex.shared()["command"] == "ls -la x"
    # A rewritten command goes back as the argv the harness sent.
    assert codex.localized({"command": "ls -l y"}) == {"command": ["bash", "-lc", "ls -l y"]}
    # A mode editor's sub-command is not a shell command.
    editor = harnesses.get("openhands").tool_call(
        "str_replace_editor", {"command": "view", "path": "/r/a.py"})
    assert editor.command == "" and editor.kind == "read" and "command" not in editor.words


def test_arguments_past_the_wire_cap_are_left_out_not_refused() -> None:
    assert MAX_ARGS_TEXT == MAX_CALL_ARGS  # one cap, stated on both sides of the wire
    call = harnesses.tool_call("Bash", {"command": "ls", "x": "y" * (MAX_ARGS_TEXT + 1)},
                               ok=False, error="boom")
    wire = call.to_wire()
    assert "args" not in wire and wire["command"] == "ls" and wire["error"] == "boom"
    assert codec.load(codec.dump(EvolveOnFailure(call=wire))).call == wire  # type: ignore[attr-defined]


def test_a_malformed_call_map_is_none_or_refused_never_an_exception() -> None:
    assert ToolCall.from_wire({"args": {}}) is None and ToolCall.from_wire("Edit") is None
    assert ToolCall.from_wire({"tool": "Edit", "paths": "a.py", "exit_code": True}) == ToolCall("Edit")
    bad = [{"tool": 3}, {"tool": "x" * 201}, {"tool": "E", "args": {"a": "b" * (MAX_CALL_ARGS + 1)}},
           {"tool": "E", "words": {"path": 1}}, {"tool": "E", "exit_code": "1"}]
    for call in bad:
        frames = codec.dump(EvolveOnFailure(call=call))
        try:
            codec.load(frames)
        except codec.ProtocolError:
            continue
        raise AssertionError(f"accepted {call!r}")


def test_command_text_reads_an_argv_once() -> None:
    assert command_text(["bash", "-lc", "a && b"]) == "a && b"
    assert command_text(["git", "commit", "-m", "two words"]) == "git commit -m 'two words'"
    assert command_text("ls") == "ls" and command_text(3) == ""
