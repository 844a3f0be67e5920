"""Every room's tool names map to one tool family (edit, read, shell, search, web, task), and the
registry answers the family of any room's tool — so a repair learned on one harness's tool
serves another harness's tool of the same family."""

from __future__ import annotations

from slmactor import harnesses
from slmactor.harnesses.base import EDIT, FAMILIES, READ, SHELL, Harness
from slmactor.logic.evolve.repairs import Repair
from slmactor.logic.evolve.rules import RuleBook
from slmactor.logic.evolve.suggest import lookup
from slmactor.logic.failures.fingerprint import analyze

NOW = 1_780_000_000.0


def test_each_rooms_tools_have_one_known_family() -> None:
    seen: dict[str, tuple[str, str]] = {}
    for room in harnesses.every():
        for tool, family in room.families.items():
            assert family in FAMILIES, (room.name, tool, family)
            earlier = seen.setdefault(tool, (room.name, family))
            assert earlier[1] == family, f"{tool}: {earlier} vs {room.name} {family}"
        # Every tool a room's hooks know by kind has the family of that kind.
        for tool, kind in room.tool_kinds.items():
            assert room.families.get(tool) == kind, (room.name, tool)


def test_the_registry_answers_across_harnesses() -> None:
    edit_tools = ["Edit", "replace", "apply_patch", "replace_in_file", "str_replace_editor"]
    assert {harnesses.tool_family(t) for t in edit_tools} == {EDIT}
    shells = ["Bash", "run_shell_command", "exec_command", "execute_command", "execute_bash"]
    assert {harnesses.tool_family(t) for t in shells} == {SHELL}
    assert harnesses.tool_family("read_file") == READ
    assert harnesses.tool_family("ws_edit") == EDIT  # slmcode's own names
    assert harnesses.tool_family("bash") == SHELL  # case folded
    assert harnesses.tool_family("no_such_tool_anywhere") == ""


class _Made(Harness):
    name = "made_up_for_families"
    families = {"Scribble": EDIT}


def test_a_room_registered_later_is_asked_too() -> None:
    assert harnesses.tool_family("Scribble") == ""
    harnesses.register(_Made())
    try:
        assert harnesses.tool_family("Scribble") == EDIT
    finally:
        harnesses._loaded.pop(_Made.name, None)
        harnesses._families.clear()


def test_a_repair_learned_on_one_harnesses_edit_serves_anothers() -> None:
    book = RuleBook()
    learned = book.learn(analyze("Edit", "<tool_use_error>String to replace not found in file."
                                 "</tool_use_error>", "python"),
                         Repair("transform_args", guidance="trimmed", transform="trim_trailing_whitespace",
                                retry=True), NOW, evidence="run-1", proven=True)
    assert learned is not None
    message = "Failed to edit, could not find the string to replace."
    gemini = analyze("replace", message, "rust")
    args = harnesses.get("gemini").tool_call(
        "replace", {"file_path": "/a.rs", "old_string": "let a = 1; ", "new_string": "b"}).shared()
    assert lookup(book, gemini, message, args) is None  # without the rooms, `replace` is unknown
    pick = lookup(book, gemini, message, args, family=harnesses.tool_family)
    assert pick is not None and pick.proposed and pick.source == learned
