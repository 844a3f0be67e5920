"""Where a path that is not there probably is: the existing paths a failed call most likely
meant, and what the nearest existing folder holds.  Pure: the candidates are given.

A call that names a missing file or folder (`path_not_found`) is most often one of a few slips:
the right name under another base (a path relative to the wrong folder, `x.py` for
`src/pkg/x.py`), a typo in one part of it, or the same file name in a neighbouring folder
(`psi_trajectory/Cargo.toml` for `psi_trajectory/rs_impl/Cargo.toml`).  Given the paths known to
exist — the project tree as the hook sees it, or the paths a session's successful calls named —
`nearest` ranks those, in that order, and `folder` names the deepest existing folder of the
missing path with the entries it holds (most alike first), so the model picks from what exists
instead of guessing again.

Paths are compared part by part, `/` and `\\` alike and without case (a case slip is a slip);
what comes back is spelled as given.  `missing_path` finds the path a shell program said was
missing in its own words (coreutils', bash's, zsh's, git's, CPython's, Node's).
"""

from __future__ import annotations

import difflib
import os.path
import re
from collections.abc import Iterable
from dataclasses import dataclass

#: The failure classes of a call that named a path that is not there.
MISSING_CLASSES = frozenset({"file_not_found", "path_not_found"})
#: How alike (difflib ratio) one part of a path must be to count as a typo of another.
TYPO_RATIO = 0.8
#: Most paths `nearest` returns, and most entries a folder listing names.
MAX_MATCHES = 3
MAX_LISTING = 6
#: Longest folder listing in a hint, in characters (the advice as a whole is capped too).
MAX_HINT = 600

# The missing path in a program's own message: coreutils' and git's quoted forms, GNU sed's,
# ripgrep's, Go's and zsh's own, CPython's, Node's, then `prog: PATH: No such file or directory`
# (coreutils, bash).  Each is the wording of a real failure in tests/fixtures/real_failures.
_MISSING = (
    re.compile(r"cannot (?:change to|access|open|stat|remove) ['‘\"]([^'’\"\n]+)['’\"]"),
    re.compile(r"can't read ([^:\n]+): No such file"),
    re.compile(r"IO error for operation on ([^:\n]+): No such file"),
    re.compile(r"^open (\S+): no such file or directory", re.MULTILINE),
    re.compile(r"no matches found: (\S+)"),
    re.compile(r"can't open file ['\"]([^'\"\n]+)['\"]"),
    re.compile(r"No such file or directory: ['\"]([^'\"\n]+)['\"]"),
    re.compile(r"(?:no such file or directory|not a directory): ([^\s'\"]+)\s*$", re.IGNORECASE | re.MULTILINE),
    re.compile(r"pathspec ['\"]([^'\"\n]+)['\"] did not match"),
    re.compile(r"ENOENT[^'\n]*['\"]([^'\"\n]+)['\"]"),
    re.compile(r"(?:File|Path|Directory) not found: ([^\s\"',]+)"),
    re.compile(r"(?:^|: )([^\s:'\"][^:'\"\n]*): No such file or directory", re.MULTILINE),
)
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "line", "cd", "source", "."})


def missing_path(error: str, path_arg: str = "") -> str:
    """The path a failed call found missing: its path argument, else the one its program named."""
    if path_arg:
        return path_arg
    for pattern in _MISSING:
        for found in pattern.finditer(error):
            candidate = found.group(1).strip().rstrip(".,;")
            words = candidate.split()
            # `bash: line 1: X: No such…` — the shell's own prefixes are not the path.
            if candidate and len(words) == 1 and words[0] not in _SHELLS and not words[0].isdigit():
                return candidate
    return ""


def spelled_parts(path: str) -> list[str]:
    """The path's parts as spelled, `/` and `\\` alike, without `.` and empty parts."""
    return [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]


def parts(path: str) -> list[str]:
    """The path's parts, lower-case: what paths are compared on."""
    return [p.lower() for p in spelled_parts(path)]


def closeness(a: str, b: str) -> float:
    """difflib's ratio of two names, or 0.0 when they cannot reach `TYPO_RATIO` (cheap checks first)."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < TYPO_RATIO or matcher.quick_ratio() < TYPO_RATIO:
        return 0.0
    return matcher.ratio()


def alike(a: str, b: str) -> bool:
    """Whether one name is probably a slip for the other."""
    return closeness(a, b) >= TYPO_RATIO


def _common_prefix(a: list[str], b: list[str]) -> int:
    """How many leading parts two paths share."""
    return len(os.path.commonprefix([a, b]))


@dataclass(frozen=True, slots=True)
class Match:
    """An existing path the missing one probably meant, and why."""

    path: str
    why: str  # "elsewhere" | "typo" | "same name"


def _score(missing: list[str], known: list[str]) -> tuple[int, float, int] | None:
    """(rank of the slip, its closeness, shared leading parts), or None when nothing alike.
    Rank 3: the same path under another base; 2: one part mistyped; 1: the same file name."""
    n = min(len(missing), len(known))
    tail_m, tail_k = missing[-n:], known[-n:]
    if tail_m == tail_k:
        # One is the other with more leading folders: the right name from the wrong base.
        return (3, float(n), _common_prefix(missing, known))
    differing = [(a, b) for a, b in zip(tail_m, tail_k, strict=True) if a != b]
    if len(missing) == len(known) and len(differing) == 1:
        near = closeness(*differing[0])
        if near >= TYPO_RATIO:
            return (2, near, _common_prefix(missing, known))
    if missing[-1] == known[-1] and len(missing) > 1:
        shared = _common_prefix(missing, known)
        # A common name (`README.md`, `Cargo.toml`) elsewhere says little unless it shares
        # folders with the missing path.
        if shared:
            return (1, float(shared), shared)
    return None


_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def is_absolute(path: str) -> bool:
    """Absolute on any system the path may come from (`/x`, `~/x`, `C:\\x`)."""
    return path.startswith(("/", "\\", "~")) or bool(_DRIVE.match(path))


def nearest(missing: str, known: Iterable[str], limit: int = MAX_MATCHES) -> list[Match]:
    """The known paths the missing one most likely meant, best first: only those of the best
    kind of slip found, and of those only the ones as close as the closest."""
    target = parts(missing)
    if not target:
        return []
    absolute = is_absolute(missing)
    scored: dict[str, tuple[tuple[int, float, int], str]] = {}
    for path in known:
        key = "/".join(parts(path))
        if not key or key == "/".join(target) or key in scored:
            continue
        if absolute and not is_absolute(path) and "/".join(target).endswith("/" + key):
            continue  # most likely the very path that is missing, relative to where the call ran
        score = _score(target, key.split("/"))
        if score is not None:
            scored[key] = (score, path)
    if not scored:
        return []
    best = max(score for score, _ in scored.values())
    top = sorted((path for score, path in scored.values() if score == best), key=lambda p: (len(p), p))
    why = {3: "elsewhere", 2: "typo", 1: "same name"}[best[0]]
    return [Match(path, why) for path in top[:limit]]


@dataclass(frozen=True, slots=True)
class Folder:
    """The deepest existing folder of a missing path and the entries it holds (most alike
    the missing part first); `more` counts entries not listed."""

    path: str
    entries: tuple[str, ...]
    more: int = 0


def folder(missing: str, known: Iterable[str], limit: int = MAX_LISTING) -> Folder | None:
    """The deepest folder of `missing` that a known path lies in, with its entries as paths
    spelled like the missing one; None when no known path shares a folder with it."""
    target = parts(missing)
    if len(target) < 2:
        return None
    below: dict[int, dict[str, str]] = {}
    for path in known:
        spelled = spelled_parts(path)
        p = [s.lower() for s in spelled]
        depth = _common_prefix(target[:-1], p)
        # An entry named like the missing part itself is the path as it was before it went.
        if depth and len(p) > depth and p[depth] != target[depth]:
            below.setdefault(depth, {}).setdefault(p[depth], spelled[depth])
    if not below:
        return None
    depth = max(below)
    lead = "/" if missing.replace("\\", "/").startswith("/") else ""
    base = lead + "/".join(spelled_parts(missing)[:depth])
    wanted = target[depth]
    entries = sorted(below[depth].items(),
                     key=lambda kv: (-difflib.SequenceMatcher(None, wanted, kv[0]).ratio(), kv[0]))
    shown = tuple(f"{base}/{spelled}" for _, spelled in entries[:limit])
    return Folder(base, shown, max(0, len(entries) - limit))


def hint(missing: str, known: Iterable[str]) -> str:
    """One line for the model: the paths it probably meant, else what the folder holds."""
    paths = list(known)
    matches = nearest(missing, paths)
    if matches:
        why = {"elsewhere": "the same name under another folder",
               "typo": "one part spelled differently",
               "same name": "the same file name nearby"}[matches[0].why]
        named = ", ".join(f"`{m.path}`" for m in matches)
        return f"`{missing}` is not there; {named} {'is' if len(matches) == 1 else 'are'} ({why})."
    place = folder(missing, paths)
    if place is None:
        return ""
    head = f"`{missing}` is not there; `{place.path}` holds "
    shown: list[str] = []
    for entry in place.entries:
        if shown and len(head) + sum(len(e) + 4 for e in shown) + len(entry) > MAX_HINT:
            break  # the closest entries fit; the rest are counted
        shown.append(entry)
    more = place.more + len(place.entries) - len(shown)
    listed = ", ".join(f"`{e}`" for e in shown)
    return f"{head}{listed}{f' and {more} more' if more else ''}."
