"""Lexical confinement of the paths that offline regression checks may read.

A regression check names a file relative to the project root. Before the store touches the disk,
the path is validated here, purely lexically: it must be relative, must not climb out (`..`), must
not name the root itself, and must not carry NUL bytes, Windows drive letters or UNC prefixes.
What a lexical check cannot see — symlinks that point out of the root, FIFOs, devices, huge files —
is refused by the store (`slmactor.stores.base.confined`), which walks the validated parts with
`O_NOFOLLOW` directory descriptors and reads only regular files, bounded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_PATH_BYTES = 1024
MAX_PARTS = 64

_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True, slots=True)
class Confined:
    """A path accepted for reading: its components below the root, in order."""

    parts: tuple[str, ...]

    @property
    def relative(self) -> str:
        return "/".join(self.parts)


@dataclass(frozen=True, slots=True)
class Refused:
    """A path the checks will not read, and why (shown to the user)."""

    reason: str


def confine(path: str) -> Confined | Refused:
    """Validate `path` as a file below the project root; never touches the disk.

    `./a//b/` style noise is tolerated (`.` and empty parts are dropped); anything that could
    leave the root is refused rather than "fixed" — a check that names `../x` is a bad check.
    """
    if not path or not path.strip():
        return Refused("empty path")
    if "\x00" in path:
        return Refused("path contains a NUL byte")
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        return Refused("path too long")
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        return Refused("absolute path")
    if "\\" in path:
        # A backslash is a separator on Windows and a plain byte on POSIX; either reading of a
        # check written elsewhere is ambiguous, so it is not guessed at.
        return Refused("backslash in path")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            return Refused("path leaves the project root (..)")
        parts.append(part)
    if not parts:
        return Refused("path names the project root itself")
    if len(parts) > MAX_PARTS:
        return Refused("path too deep")
    return Confined(tuple(parts))
