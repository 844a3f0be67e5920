"""Whether a path a claim names is there to use: the project's tree on disk (a path is looked
up, never opened; `.gitignore`d paths a fresh clone lacks are not "gone") and the deletions and
writes of the project's runs (`logic.memory.claims.PathEvents`). The `Records` that
`logic.memory.claims.check` reads, for the distiller's claims and the rules actor's advice.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from slmactor.logic.memory.claims import PathEvents
from slmactor.logic.text.private import Excluder, parse_patterns

_WINDOWS = re.compile(r"^[A-Za-z]:[\\/]")
#: A path whose existence is asked again within one check costs one lookup.
_CACHE = 4096


class ProjectRecords:
    """What the checks read: the runs' deletions and writes (none known: the tree alone), and
    the project's tree."""

    def __init__(self, root: Path, paths: PathEvents | None) -> None:
        self.root = root
        self.paths = paths or PathEvents()
        text = ""
        try:
            with open(root / ".gitignore", encoding="utf-8", errors="replace") as handle:
                text = handle.read(256 * 1024)
        except OSError:
            pass
        self.ignored = Excluder(str(root), parse_patterns(text))
        self._known: dict[str, str] = {}

    def gone(self, path: str) -> str:
        """Why `path` is not there to use ("" when it is)."""
        found = self._known.get(path)
        if found is not None:
            return found
        why = self._gone(path)
        if len(self._known) < _CACHE:
            self._known[path] = why
        return why

    def _gone(self, path: str) -> str:
        p = path.strip().strip("'\"")
        run = self.paths.deleted_by(p)
        if run:
            return f"was deleted by a later run ({run})"
        if p.startswith(("~", "$")):
            return "is outside the project"
        root = str(self.root)
        if p.startswith("/") or _WINDOWS.match(p):
            norm = p.replace("\\", "/")
            if not (norm == root or norm.startswith(root.rstrip("/") + "/")):
                return "is outside the project"
            rel = norm[len(root.rstrip("/")) + 1:]
        else:
            rel = p.replace("\\", "/")
            while rel.startswith("./"):
                rel = rel[2:]
        if rel.startswith("../") or rel == "..":
            return "is outside the project"
        if not rel or os.path.lexists(self.root / rel):
            return ""
        if "/" in rel and not os.path.lexists(self.root / rel.split("/", 1)[0]):
            # Its first folder is none of the project's (a virtual environment, a tool's own
            # tree): whether it is there is the environment's to say, not the project's.
            return ""
        if self.ignored.excludes(rel):
            return ""  # ignored by the project (a build output, a virtual environment)
        return "is not in the project"
