"""The import direction of docs/DEVELOPING.md ("Layout and import direction"), checked over every module's imports (ast): between
the top-level rooms, between the domains of `slmactor/logic/`, and no two modules importing each
other (directly or around a longer circle)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "slmactor"

#: room → slmactor packages it must never import (directly).
FORBIDDEN = {
    "logic": {"protocol", "runtime", "stores", "actors", "cli", "client", "config", "testing",
              "harnesses"},
    "protocol": {"logic", "runtime", "stores", "actors", "cli", "client", "config", "testing",
                 "harnesses"},
    # A harness's room knows the harness; it reaches the daemon only as a client does.
    "harnesses": {"runtime", "actors", "stores", "cli", "hooks", "testing", "config"},
    # A store keeps files; what a harness's file means, it is handed (a reader), never the rooms.
    "stores": {"actors", "runtime", "cli", "client", "testing", "harnesses"},
    "runtime": {"actors", "cli"},
    "adapters": {"runtime", "actors", "stores", "cli"},
    # The session ledger: the hooks and `import sessions` write it; it reads the rooms' records.
    "ledger": {"runtime", "actors", "stores", "cli", "hooks", "testing"},
    # The page reads and acts only through the daemon's asks: never a store of its own.
    "ui": {"runtime", "actors", "stores", "harnesses", "hooks"},
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
                module = f"{base}.{node.module}" if node.module else base
            elif node.module:
                module = node.module
            else:
                continue
            names.append(module)
            # `from pkg import mod` imports a module too: record `pkg.mod` as well.
            names.extend(f"{module}.{alias.name}" for alias in node.names)
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


#: logic domain → the other logic domains it may import (mirrors `slmactor/logic/__init__.py`).
LOGIC_DOMAINS = {
    "text": set(),
    "failures": {"text"},
    "evolve": {"text", "failures", "working"},
    "recall": {"text"},
    "working": {"text"},
    "memory": {"text", "recall"},
    "policy": {"text"},
    "loop": {"text", "failures", "evolve", "memory", "policy", "recall"},
    "graph": {"text", "recall"},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_logic_is_grouped_into_the_known_domains() -> None:
    logic = PACKAGE / "logic"
    loose = sorted(p.name for p in logic.glob("*.py") if p.name != "__init__.py")
    domains = {p.name for p in logic.iterdir() if (p / "__init__.py").exists()}
    assert loose == []
    assert domains == set(LOGIC_DOMAINS)


@pytest.mark.parametrize("domain", sorted(LOGIC_DOMAINS))
def test_logic_domains_import_only_what_they_may(domain: str) -> None:
    offences = []
    for path in sorted((PACKAGE / "logic" / domain).rglob("*.py")):
        for name in _imports(path):
            parts = name.split(".")
            if parts[:2] != ["slmactor", "logic"] or len(parts) < 3:
                continue
            used = parts[2]
            if used != domain and used not in LOGIC_DOMAINS[domain]:
                offences.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert offences == []


def test_no_two_modules_import_each_other() -> None:
    # Imports of any kind count (inside functions and TYPE_CHECKING blocks too): a circle is a
    # circle for the reader even when Python can load it.
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imported in _imports(path):
            # `from pkg import mod` names a module; `from mod import func` names its module.
            if imported in modules and imported != name:
                targets.add(imported)
        graph[name] = targets
    # A package's __init__ is not a module of its own for this purpose.
    packages = {n for n, p in modules.items() if p.name == "__init__.py"}
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node] - packages):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(set(graph) - packages):
        if node not in state:
            visit(node)
    assert cycles == []


def test_no_folder_holds_too_much_of_the_package() -> None:
    # ~15 modules or ~25 % of the package's lines at most, so a reader finds a part by its folder.
    files = list(PACKAGE.rglob("*.py"))
    total = sum(len(p.read_text().splitlines()) for p in files)
    for folder in {p.parent for p in files}:
        own = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        lines = sum(len(p.read_text().splitlines()) for p in own)
        assert len(own) <= 16, f"{folder.relative_to(PACKAGE.parent)} holds {len(own)} modules"
        assert lines <= 0.25 * total, f"{folder.relative_to(PACKAGE.parent)} holds {lines} lines"


def test_every_room_is_checked() -> None:
    # A new top-level package must be placed in the rules deliberately.
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert rooms - set(FORBIDDEN) <= {"actors", "cli", "demo_data", "hooks"}


def test_the_rooms_say_what_they_return() -> None:
    """No function of a harness's room returns `Any`: a transcript, a session, a trajectory, a
    call are records with a type."""
    offences = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
        for path in _modules("harnesses")
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None
        and ast.unparse(node.returns) in ("Any", "typing.Any")
    ]
    assert offences == []

