"""What is particular to a harness lives in its room: no module outside `slmactor/harnesses/`
compares with a harness's name or spells one of its event names, tool names, payload keys,
environment variables or settings folders (checked over every string constant of the package,
docstrings aside). Names that are slmcode's own vocabulary or plain English words used in other
senses (`replace`, `list`, `view`, ...) are not a harness's."""

from __future__ import annotations

import ast
from pathlib import Path

from slmactor import harnesses
from slmactor.harnesses.base import JsonSettings, ScriptPerEvent
from slmactor.logic.working.toolclasses import SEED_EDIT, SEED_READ, SEED_SHELL

PACKAGE = Path(__file__).resolve().parents[2] / "slmactor"
ROOMS = PACKAGE / "harnesses"
#: Words several harnesses share with ordinary code (`str.replace`, `errors="replace"`, a list,
#: a patch, a file opened or created): a constant equal to one says nothing about a harness.
COMMON_WORDS = frozenset({
    "replace", "list", "patch", "create", "insert", "append", "open", "view", "edit", "write",
    "read", "bash", "shell", "grep", "glob", "ls", "goto", "terminal", "editor",
    # Tool-family tables name these too: an interpreter and a plain word.
    "python", "task",
})
#: slmcode's own field names, which its repair transforms speak (SPEC S-9.4).
SEED_FIELDS = frozenset({"old_str", "new_str", "path", "command"})


def harness_names() -> dict[str, str]:
    """Every name that belongs to one harness → the room it belongs to."""
    seed = {n.lower() for n in (*SEED_READ, *SEED_EDIT, *SEED_SHELL)}
    owned: dict[str, str] = {}
    for room in harnesses.every():
        names = {room.name, *room.events, *room.tool_kinds, *room.edit_keys,
                 *room.preflight_edits, *room.preflight_patches, *room.read_tools,
                 *room.edit_tools, *room.shell_tools, *room.mode_tools, *room.families,
                 room.project_env}
        if room.event_key != "hook_event_name":
            names.add(room.event_key)
        settings = room.settings
        if isinstance(settings, JsonSettings):
            names |= {settings.folder, settings.user_env}
        elif isinstance(settings, ScriptPerEvent):
            names |= {settings.project[0]}
        for name in names:
            if name and name.lower() not in seed and name.lower() not in COMMON_WORDS \
                    and name not in SEED_FIELDS:
                owned.setdefault(name, room.name)
    return owned


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            found.add(id(body[0].value))
    return found


def offences(package: Path, owned: dict[str, str]) -> list[str]:
    out: list[str] = []
    for path in sorted(package.rglob("*.py")):
        if path.is_relative_to(ROOMS):
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        docs = _docstrings(tree)
        out.extend(f"{path.relative_to(package.parent)}:{node.lineno} {node.value!r} ({owned[node.value]})"
                   for node in ast.walk(tree)
                   if isinstance(node, ast.Constant) and isinstance(node.value, str)
                   and id(node) not in docs and node.value in owned)
    return sorted(out)


def test_the_check_knows_each_rooms_names() -> None:
    owned = harness_names()
    for expected, room in (("claude", "claude"), ("PostToolUseFailure", "claude"),
                           ("CODEX_HOME", "codex"), ("run_shell_command", "gemini"),
                           ("hookName", "cline"), ("OPENHANDS_PROJECT_DIR", "openhands"),
                           ("scroll_up", "sweagent"), (".clinerules", "cline")):
        assert owned.get(expected) == room, expected


def test_no_module_outside_the_rooms_carries_a_harness() -> None:
    assert offences(PACKAGE, harness_names()) == []


def test_the_check_fails_on_a_branch_put_back(tmp_path: Path) -> None:
    # The check itself can fail: a generic module that branches on a harness is caught.
    (tmp_path / "slmactor" / "hooks").mkdir(parents=True)
    (tmp_path / "slmactor" / "hooks" / "loop.py").write_text(
        'def neutral(fmt):\n    return {"cancel": False} if fmt == "cline" else {}\n'
        'EVENTS = ("BeforeTool",)\n')
    assert offences(tmp_path / "slmactor", harness_names()) == [
        "slmactor/hooks/loop.py:2 'cline' (cline)", "slmactor/hooks/loop.py:3 'BeforeTool' (gemini)"]
