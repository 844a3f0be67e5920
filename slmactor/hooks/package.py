"""Each harness's own packaging of slmactor (a plugin, an extension), generated, never hand-kept.

Owns: the files of a harness's package (`files`: its room's `package`, fed the same hook entries
`hook install` writes into a project's shared settings), where a package goes under an output
root (`folder`), writing them (`write`) and telling which files on disk differ (`stale`). The
repository's own packages are this generator's output, checked by a test.

A package is shared like a project's files, so nothing in it names this machine: each hook runs
the user's entry point (`install.SHARED`) and answers neutrally where it is absent, and the MCP
server runs `<entry point> mcp`, or exits 0 at once where slmactor is not installed (the harness
then lists a server without tools, and no session fails).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from slmactor import __version__, harnesses
from slmactor.hooks.install import SHARED, entries

#: What every package says about itself.
ABOUT = {
    "name": "slmactor",
    "version": __version__,
    "description": "Memory and a self-improvement loop for coding agents: slmactor's hooks and "
                   "its MCP server (needs slmactor installed; without it they do nothing).",
    "author": "slmactor",
    "license": "MIT",
}


class Written(NamedTuple):
    """One file of a package, and whether writing it changed the disk (or would, dry)."""

    path: Path
    changed: bool


def packageable() -> tuple[str, ...]:
    """Every harness with a packaging of its own."""
    return tuple(name for name in harnesses.names()
                 if harnesses.get(name).settings is not None and _documents(name))


def folder(harness: str) -> str:
    """Where a harness's package goes under the output root."""
    return f"plugins/{harness}"


def server_line() -> str:
    """The MCP server's shell line: the user's entry point, or a quiet exit without it."""
    return f'h="{SHARED}"; [ -x "$h" ] && exec "$h" mcp; exit 0'


def _documents(harness: str) -> dict[str, Any]:
    room = harnesses.get(harness)
    server = {"command": "sh", "args": ["-c", server_line()]}
    # The event → groups block of a settings file, whatever the room's own file format.
    hooks = {event: [group] for event, group in entries(harness, SHARED).items()} if room.events else {}
    documents: dict[str, Any] = room.package(folder(harness), hooks, server, ABOUT)
    if documents:
        from slmactor.hooks.package_assets import icon_png, readme

        documents[f"{folder(harness)}/README.md"] = readme(room.title or harness)
        documents[f"{folder(harness)}/assets/icon.png"] = icon_png()
    return documents


def files(harness: str) -> dict[str, bytes]:
    """Relative path → bytes of each file of the harness's package (empty: it has none)."""
    if harnesses.find(harness) is None:
        raise ValueError(f"unknown harness {harness!r} (one of {', '.join(harnesses.names())})")
    return {path: doc if isinstance(doc, bytes) else doc.encode() if isinstance(doc, str)
            else (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()
            for path, doc in sorted(_documents(harness).items())}


def stale(harness: str, root: Path) -> list[str]:
    """The package's files under `root` that are missing or differ from what `write` writes."""
    out = []
    for rel, data in files(harness).items():
        try:
            same = (root / rel).read_bytes() == data
        except OSError:
            same = False  # missing or unreadable: it is to be written
        if not same:
            out.append(rel)
    return out


def write(harness: str, root: Path, *, dry_run: bool = False) -> list[Written]:
    """Write the harness's package under `root` (atomically per file; unchanged files are
    left alone). A file the generator does not write is never touched."""
    made = files(harness)
    if not made:
        raise ValueError(f"{harness} has no plugin or extension format "
                         f"(one of {', '.join(packageable())}); use `slmactor hook install`")
    out = []
    changed = set(stale(harness, root))
    for rel, data in made.items():
        path = root / rel
        if rel in changed and not dry_run:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.chmod(tmp, 0o644)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        out.append(Written(path, rel in changed))
    return out
