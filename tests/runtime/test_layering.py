"""The import direction of ARCHITECTURE.md §4, checked over every module's imports (ast)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "slmactor"

#: room → slmactor packages it must never import (directly).
FORBIDDEN = {
    "logic": {"protocol", "runtime", "stores", "actors", "cli", "client", "config", "testing"},
    "protocol": {"logic", "runtime", "stores", "actors", "cli", "client", "config", "testing"},
    "stores": {"actors", "runtime", "cli", "client", "testing"},
    "runtime": {"actors", "cli"},
}
#: third-party imports a room may use (anything else must be stdlib).
PROTOCOL_THIRD_PARTY = {"msgpack"}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                parts = path.relative_to(PACKAGE.parent).with_suffix("").parts[: -node.level]
                base = ".".join(parts)
                names.append(f"{base}.{node.module}" if node.module else base)
            elif node.module:
                names.append(node.module)
    return names


def _modules(room: str) -> list[Path]:
    return sorted((PACKAGE / room).rglob("*.py"))


@pytest.mark.parametrize("room", sorted(FORBIDDEN))
def test_room_imports_follow_the_architecture(room: str) -> None:
    offences = []
    for path in _modules(room):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] == "slmactor" and len(parts) > 1 and parts[1] in FORBIDDEN[room]:
                offences.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert offences == []


def test_logic_is_pure_stdlib_plus_nothing_async() -> None:
    impure = {"asyncio", "anyio", "zmq", "aiofiles", "socket", "subprocess", "threading"}
    offences = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in _modules("logic")
        for name in _imports(path)
        if name.split(".")[0] in impure
    ]
    assert offences == []


def test_protocol_uses_only_stdlib_and_msgpack() -> None:
    import sys

    stdlib = set(sys.stdlib_module_names)
    offences = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in _modules("protocol")
        for name in _imports(path)
        if name.split(".")[0] not in stdlib | PROTOCOL_THIRD_PARTY | {"slmactor"}
    ]
    assert offences == []


def test_every_room_is_checked() -> None:
    # A new top-level package must be placed in the rules deliberately.
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert rooms - set(FORBIDDEN) <= {"actors", "cli", "demo_data", "hooks"}
