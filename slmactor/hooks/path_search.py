"""What exists near a path a failed call found missing, read from the disk the harness works on:
the deepest existing folder's entries and the project's files of the same (or a nearly same)
name, for `logic.evolve.path_hints` to rank.

Bounded, because a hook has a deadline: one listing of the folder, and a walk of the project
that stops after `MAX_ENTRIES` entries or `BUDGET_S` seconds, never follows a symlink, and skips
what holds no sources (hidden folders, `node_modules`, virtual environments, caches); a folder
outside the project is listed only below the user's home, never `/`, `/home` or `~` itself.  Paths come
back spelled the way the model spelled the missing one: relative to the project when it wrote a
relative path, absolute otherwise.  Reading names only: nothing is opened or run.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from slmactor.logic.evolve import path_hints

#: How much of the project one failed call may walk, and for how long.
MAX_ENTRIES = 20_000
BUDGET_S = 0.05
MAX_LISTED = 200
_SKIP = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "target", "dist"})


def _is_venv(path: str) -> bool:
    return os.path.exists(os.path.join(path, "pyvenv.cfg"))


def _deepest_folder(path: Path) -> Path | None:
    for parent in path.parents:
        # A folder we may not search, or a name too long to be one, says nothing: go up.
        with contextlib.suppress(OSError):
            if parent.is_dir():
                return parent
    return None


def _may_list(folder: Path, project: Path) -> bool:
    """A folder of the project, or one below the user's home: never `/`, `/home` or `~` itself,
    whose entries (other users, dotfiles) are no business of the model's."""
    with contextlib.suppress(OSError, RuntimeError):
        home = Path.home()
        return folder.is_relative_to(project) or (folder != home and folder.is_relative_to(home))
    return folder.is_relative_to(project)


def _spell(path: str, project: Path, relative: bool) -> str:
    if relative:
        try:
            return os.path.relpath(path, project)
        except ValueError:
            return path
    return path


def candidates(missing: str, project: Path, *, max_entries: int = MAX_ENTRIES,
               budget_s: float = BUDGET_S) -> list[str]:
    """Existing paths that `missing` may have meant: the entries of its deepest existing folder
    and the project's files and folders whose name is that of the missing one, or alike."""
    relative = not os.path.isabs(os.path.expanduser(missing))
    target = (project / missing) if relative else Path(os.path.expanduser(missing))
    name = target.name.lower()
    if not name:
        return []
    with contextlib.suppress(OSError):
        if target.exists():
            return []  # it is there now: a hint would say it is not
    found: list[str] = []
    folder = _deepest_folder(target)
    if folder is not None and _may_list(folder, project):
        # Unreadable: the walk below may still find the file.
        with contextlib.suppress(OSError), os.scandir(folder) as listing:
            for n, entry in enumerate(listing):
                if n >= MAX_LISTED:
                    break
                found.append(entry.path)
    deadline = time.monotonic() + budget_s
    pending, seen = [str(project)], 0
    while pending and seen < max_entries and time.monotonic() < deadline:
        here = pending.pop()
        try:
            with os.scandir(here) as listing:
                for entry in listing:
                    seen += 1
                    if seen > max_entries or time.monotonic() >= deadline:
                        break  # one huge folder must not outlast the bound either
                    lower = entry.name.lower()
                    if lower == name or path_hints.alike(lower, name):
                        found.append(entry.path)
                    if (entry.is_dir(follow_symlinks=False) and not entry.name.startswith(".")
                            and lower not in _SKIP and not _is_venv(entry.path)):
                        pending.append(entry.path)
        except OSError:
            continue  # a folder we may not read is one we cannot suggest from
    return [_spell(p, project, relative) for p in dict.fromkeys(found)]


def hint(error: str, path_arg: str, project: Path) -> str:
    """The line telling the model where the missing path probably is ("" when nothing is near)."""
    missing = path_hints.missing_path(error, path_arg)
    if not missing:
        return ""
    return path_hints.hint(missing, candidates(missing, project))
