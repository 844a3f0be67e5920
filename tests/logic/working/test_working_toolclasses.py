"""Tool-name classes per harness (SPEC S-1.2) and their configuration."""

from __future__ import annotations

import pytest

from slmactor import harnesses
from slmactor.logic.working.toolclasses import (
    EDIT,
    OTHER,
    READ,
    SEED_EDIT,
    SEED_READ,
    SEED_SHELL,
    SHELL,
    ToolClasses,
    ToolClassesConfigError,
)


def test_seed_classes_are_exactly_s_1_2() -> None:
    seed = ToolClasses.seed()
    assert [n for n in SEED_READ if seed.class_of(n) != READ] == []
    assert [n for n in SEED_EDIT if seed.class_of(n) != EDIT] == []
    assert [n for n in SEED_SHELL if seed.class_of(n) != SHELL] == []
    assert seed.class_of("Grep") == OTHER
    assert seed.names() == {
        "read": sorted(SEED_READ),
        "edit": sorted(SEED_EDIT),
        "shell": sorted(SEED_SHELL),
        "modes": [],
    }


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        # Claude Code
        ("Read", READ), ("Glob", READ), ("Grep", READ), ("LS", READ),
        ("Edit", EDIT), ("MultiEdit", EDIT), ("Write", EDIT), ("NotebookEdit", EDIT),
        ("Bash", SHELL), ("TodoWrite", OTHER), ("WebFetch", OTHER), ("Task", OTHER),
        # Codex CLI
        ("shell", SHELL), ("local_shell", SHELL), ("exec_command", SHELL), ("apply_patch", EDIT),
        ("update_plan", OTHER),
        # OpenHands
        ("execute_bash", SHELL), ("terminal", SHELL), ("edit_file", EDIT),
        # SWE-agent
        ("open", READ), ("goto", READ), ("scroll_down", READ), ("find_file", READ),
        ("search_file", READ), ("search_dir", READ), ("edit", EDIT), ("create", EDIT),
        ("submit", OTHER),
        # Gemini CLI, Cline
        ("read_file", READ), ("write_file", EDIT), ("replace", EDIT), ("run_shell_command", SHELL),
        ("execute_command", SHELL), ("write_to_file", EDIT), ("replace_in_file", EDIT),
        # names are trimmed and lower-cased
        ("  BASH ", SHELL), ("", OTHER), ("   ", OTHER),
    ],
)
def test_default_classes_know_harness_names(tool: str, expected: str) -> None:
    assert harnesses.tool_classes().class_of(tool) == expected


@pytest.mark.parametrize("tool", ["str_replace_editor", "file_editor", "STR_REPLACE_EDITOR"])
@pytest.mark.parametrize(
    ("command", "args", "expected"),
    [
        ("view", "", READ),
        ("create", "", EDIT),
        ("str_replace", "", EDIT),
        ("insert", "", EDIT),
        ("undo_edit", "", EDIT),
        ("", "view /repo/a.py", READ),
        ("", '{"command": "str_replace", "path": "/repo/a.py"}', EDIT),
        ("", "", OTHER),
        ("frobnicate", "", OTHER),
    ],
)
def test_mode_tools_take_their_class_from_the_sub_command(
    tool: str, command: str, args: str, expected: str
) -> None:
    assert harnesses.tool_classes().class_of(tool, command, args) == expected


def test_config_extends_and_overrides_the_defaults() -> None:
    tc = ToolClasses.from_config(
        {
            "read": ["view_source"],
            "shell": ["Grep"],  # moved from read to shell
            "edit": ["str_replace_editor"],  # no longer a mode tool
            "modes": {"mytool": {"look": "read", "change": "edit"}},
        }
    )
    assert tc.class_of("view_source") == READ
    assert tc.class_of("grep") == SHELL
    assert tc.class_of("str_replace_editor", "view") == EDIT
    assert tc.class_of("mytool", "look") == READ
    assert tc.class_of("mytool", "change") == EDIT
    assert tc.class_of("Read") == READ  # defaults kept
    assert "mytool" in tc.names()["modes"] and "str_replace_editor" not in tc.names()["modes"]


def test_config_can_replace_the_defaults() -> None:
    tc = ToolClasses.from_config({"read": ["look"], "replace_defaults": True})
    assert tc.class_of("look") == READ
    assert tc.class_of("Read") == OTHER


@pytest.mark.parametrize(
    "config",
    [
        {"read": "Read"},
        {"read": [1]},
        {"modes": []},
        {"modes": {"t": {"x": "delete"}}},
        {"replace_defaults": "yes"},
        {"raed": ["x"]},
    ],
)
def test_bad_config_is_reported(config: dict[str, object]) -> None:
    with pytest.raises(ToolClassesConfigError):
        ToolClasses.from_config(config)


def test_classify_memo_is_bounded_and_correct() -> None:
    tc = harnesses.tool_classes()
    for i in range(2000):
        assert tc.classify(f"Tool{i}") == (f"tool{i}", OTHER)
    assert tc.classify(" Read ") == ("read", READ)
    assert len(tc.memo) <= 512


def test_classes_from_config_strings_are_the_canonical_constants() -> None:
    # The hot path compares classes by identity; config strings are equal but distinct objects.
    tc = ToolClasses.from_config({"modes": {"t": {"look": "READ".lower()}}})
    assert tc.class_of("t", "look") is READ
