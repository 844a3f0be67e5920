"""Where a session whose directory is gone belongs: a moved or cloned project.

A recorded session names the directory it ran in. On another machine, or after the project
moved, that directory does not exist here. `Places` knows the projects here — the git root the
import runs in, the projects earlier imports filed sessions in (kept in the import state), the
directories of this import's sessions that do exist, and the repository a committed history
came from — and matches a gone directory to one of them:

1. by git remote, when the session recorded one (`origin`'s URL compared host/owner/name,
   scheme, user and `.git` left out) and exactly one project here has it;
2. by root name, when exactly one project here (or a folder beside one, `<parent>/<name>`) is
   named like the gone directory or one of its last folders (a session that ran in a sub-folder
   belongs to the project around it); the two top folders of an absolute path (`/home/<user>`,
   `/Users/<user>`) are never taken for a project's name.

Two or more matches, or none: the session is skipped, and the import prints the exact
`slmactor import sessions … --project DIR` command that files it (`command`).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from pathlib import Path, PurePosixPath, PureWindowsPath

#: Folders of a gone path tried as a project's name, from the deepest.
NAME_DEPTH = 4
#: Files named one by one in a suggested command (more: their common folder).
MAX_NAMED_FILES = 8

_SCP_LIKE = re.compile(r"^[\w.-]+@([^:/]+):(.+)$")


def normalize_remote(url: str) -> str:
    """`github.com/owner/name` of a git remote URL in any of its spellings ("" for none)."""
    url = url.strip()
    if not url:
        return ""
    scp = _SCP_LIKE.match(url)
    if scp:
        host, path = scp.group(1), scp.group(2)
    else:
        rest = url.split("://", 1)[-1]
        rest = rest.split("@", 1)[-1] if "@" in rest.split("/", 1)[0] else rest
        host, _, path = rest.partition("/")
        host = host.split(":", 1)[0]  # a port
    path = path.strip("/").removesuffix(".git").strip("/")
    return f"{host.lower()}/{path.lower()}" if host and path else ""


def git_dir(root: Path) -> Path | None:
    """The git directory of a working tree (`.git`, or the one a `.git` file points to)."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    try:
        text = dot.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if text.startswith("gitdir:"):
        target = Path(text[len("gitdir:"):].strip())
        return target if target.is_absolute() else (root / target)
    return None


def remote_of(root: Path) -> str:
    """The normalized URL of `origin` (else the first remote) in the repository at `root`."""
    where = git_dir(root)
    if where is None:
        return ""
    config = where / "config"
    if not config.is_file() and (where / "commondir").is_file():  # a worktree: the main config
        try:
            common = (where / (where / "commondir").read_text().strip()).resolve()
        except OSError:
            return ""
        config = common / "config"
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    remotes: dict[str, str] = {}
    section = ""
    for line in text.splitlines():
        line = line.strip()
        head = re.match(r'^\[remote\s+"([^"]+)"\]$', line)
        if head:
            section = head.group(1)
            continue
        if line.startswith("["):
            section = ""
            continue
        if section and line.replace(" ", "").startswith("url="):
            remotes.setdefault(section, line.split("=", 1)[1].strip())
    url = remotes.get("origin") or next(iter(remotes.values()), "")
    return normalize_remote(url)


def _parts(path: str) -> list[str]:
    """The folder names of a recorded path, POSIX or Windows, without its top two."""
    pure = PureWindowsPath(path) if re.match(r"^[A-Za-z]:[\\/]", path) or "\\" in path else PurePosixPath(path)
    names = [p for p in pure.parts if p not in (pure.anchor, "/", "\\")]
    return names[2:] if pure.is_absolute() else names


class Places:
    """The projects here a gone directory may be matched to."""

    def __init__(self, known: Iterable[Path] = ()) -> None:
        self._roots: dict[str, Path] = {}
        self._remotes: dict[str, str] = {}
        for root in known:
            self.add(root)

    def add(self, root: Path | str) -> None:
        """A project here (ignored when it is no directory, the home folder or `/`)."""
        path = Path(root)
        key = str(path)
        if key in self._roots or not path.is_dir() or path == Path.home() or path == Path(path.anchor):
            return
        self._roots[key] = path

    def roots(self) -> list[Path]:
        return list(self._roots.values())

    def _remote(self, root: Path) -> str:
        key = str(root)
        if key not in self._remotes:
            self._remotes[key] = remote_of(root)
        return self._remotes[key]

    def match(self, cwd: str, remote: str = "") -> tuple[Path | None, list[Path]]:
        """(the project here a session that ran in `cwd` belongs to, or None; the candidates
        that made it ambiguous, or the nearest ones named like it)."""
        wanted = normalize_remote(remote) if "/" in remote else ""
        if wanted:
            same = [r for r in self._roots.values() if self._remote(r) == wanted]
            if len(same) == 1:
                return same[0], []
            if len(same) > 1:
                return None, same
        names = _parts(cwd)[-NAME_DEPTH:]
        for name in reversed(names):
            hits: dict[str, Path] = {str(r): r for r in self._roots.values() if r.name == name}
            for root in list(self._roots.values()):
                beside = root.parent / name
                if beside.is_dir() and str(beside) not in hits:
                    hits[str(beside)] = beside
            if len(hits) == 1:
                return next(iter(hits.values())), []
            if hits:
                return None, sorted(hits.values())
        return None, []


def command(args: list[str], project: str) -> str:
    """The exact command that imports the sessions `args` read (files, folders, `--git SPEC`)
    into `project` (`DIR` when no single project here is it)."""
    pairs = [args[i:i + 2] for i, a in enumerate(args) if a == "--git"]
    files = [a for i, a in enumerate(args) if a != "--git" and (i == 0 or args[i - 1] != "--git")]
    if len(files) > MAX_NAMED_FILES:
        try:
            common = os.path.commonpath(files)
        except ValueError:
            common = ""
        files = [common] if common else files[:MAX_NAMED_FILES]
    words = ["slmactor", "import", "sessions", *files, *(w for pair in pairs for w in pair),
             "--project", project or "DIR"]
    return " ".join(w if w in ("DIR", "--git", "--project") else shlex.quote(w) for w in words)
