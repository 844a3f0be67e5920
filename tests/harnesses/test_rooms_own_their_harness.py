"""What is particular to a harness lives in its room: no module outside `slmactor/harnesses/`
compares with a harness's name or spells one of its event names, tool names, environment
variables or settings folders (checked over every string constant of the package, docstrings
aside), nor uses one of its keys — the argument keys it renames to the shared words
(`arg_words`, `tool_words`, `edit_keys`), the payload keys it reads (`payload_keys`,
`project_key`, `event_key`) — as a key inside code: a subscript, a `get`/`pop`/`setdefault`,
an `in` or `==` test, a dict key, a keyword argument. Names that are slmcode's own vocabulary
(the shared words) or plain English words used in other senses (`replace`, `list`, `view`,
`diff`, `input`, ...) are not a harness's."""

from __future__ import annotations

import ast
from pathlib import Path

from slmactor import harnesses
from slmactor.harnesses.base import JsonSettings, ScriptPerEvent
from slmactor.logic.failures.call import SHARED
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
#: slmcode's own field names, which its repair transforms speak (SPEC S-9.4), and the rest of
#: the shared words a room renames its keys to (`slmactor.logic.failures.call.SHARED`).
SEED_FIELDS = frozenset({"old_str", "new_str", "path", "command", *SHARED})
#: Keys several harnesses share with slmactor's own records (a ledger's `cmd` digest, a
#: session's `cwd`, a report's `diff`, a tool's `input`, a record's `session_id`).
COMMON_KEYS = frozenset({"cmd", "cwd", "diff", "input", "session_id", "error", "prompt", "model"})


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


def harness_keys() -> dict[str, str]:
    """Every key that belongs to one harness → the room it belongs to."""
    owned: dict[str, str] = {}
    for room in harnesses.every():
        keys = {*room.arg_words, *(k for words in room.tool_words.values() for k in words),
                *(k for keys in room.edit_keys.values() for k in keys), *room.payload_keys,
                room.project_key, room.event_key}
        for edit in room.preflight_edits.values():
            keys |= {edit.old, edit.new, edit.replace_all, edit.expected, edit.path}
        for key in keys:
            if key and key not in SEED_FIELDS and key not in COMMON_KEYS:
                owned.setdefault(key, room.name)
    return owned


_KEY_METHODS = frozenset({"get", "pop", "setdefault"})


def _keys_in_code(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, key) of every string used as a key: subscripts, get/pop/setdefault, `in` and
    `==` tests, dict displays, keyword arguments."""
    found: list[tuple[int, str]] = []

    def const(node: ast.AST | None) -> str | None:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and const(node.slice) is not None:
            found.append((node.lineno, const(node.slice) or ""))
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in _KEY_METHODS \
                    and node.args and const(node.args[0]) is not None:
                found.append((node.lineno, const(node.args[0]) or ""))
            found.extend((node.lineno, kw.arg) for kw in node.keywords if kw.arg)
        elif isinstance(node, ast.Compare):
            found.extend((node.lineno, const(side) or "") for side in (node.left, *node.comparators)
                         if const(side) is not None)
        elif isinstance(node, ast.Dict):
            found.extend((node.lineno, const(k) or "") for k in node.keys if const(k) is not None)
    return found


def key_offences(package: Path, owned: dict[str, str]) -> list[str]:
    out: list[str] = []
    for path in sorted(package.rglob("*.py")):
        if path.is_relative_to(package / "harnesses"):
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        out.extend(f"{path.relative_to(package.parent)}:{line} {key!r} ({owned[key]})"
                   for line, key in _keys_in_code(tree) if key in owned)
    return sorted(out)


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


def test_the_check_knows_each_rooms_keys() -> None:
    owned = harness_keys()
    for expected, room in (("file_path", "claude"), ("allow_multiple", "gemini"),
                           ("old_text", "cline"), ("tool_use_id", "claude"),
                           ("postToolUse", "cline"), ("event_type", "openhands"),
                           ("filePath", "opencode"), ("file_text", "openhands")):
        assert owned.get(expected) == room, expected
    assert "old_str" not in owned and "path" not in owned  # the shared words are everyone's


def test_no_module_outside_the_rooms_uses_a_harness_key() -> None:
    assert key_offences(PACKAGE, harness_keys()) == []


def test_the_key_check_fails_on_a_key_put_back(tmp_path: Path) -> None:
    (tmp_path / "slmactor" / "logic").mkdir(parents=True)
    (tmp_path / "slmactor" / "logic" / "transforms.py").write_text(
        'def old(args):\n    return args.get("old_string") or args["old_str"]\n'
        'def f(x):\n    return g(file_path=x), {"allow_multiple": True}, "tool_use_id" in x\n'
        'MESSAGE = "old_string not found"  # wording, not a key\n')
    assert key_offences(tmp_path / "slmactor", harness_keys()) == [
        "slmactor/logic/transforms.py:2 'old_string' (claude)",
        "slmactor/logic/transforms.py:4 'allow_multiple' (gemini)",
        "slmactor/logic/transforms.py:4 'file_path' (claude)",
        "slmactor/logic/transforms.py:4 'tool_use_id' (claude)"]

