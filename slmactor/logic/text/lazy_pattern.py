"""Regular expressions compiled at their first use.

The redactor holds some seventy patterns, and a hook process (one per tool call) redacts a
short command that most of them are never tried on: each pass runs only when its literals are
in the text. Compiling them all at import cost a hook ~10 ms of its ~60; a `lazy` pattern is
compiled the first time anything asks it for a method, then behaves as the compiled pattern
(its methods are taken over, so later calls cost no indirection).
"""

from __future__ import annotations

import re
from typing import Any, cast

#: What a lazy pattern takes over from the compiled one at its first use.
_TAKEN = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split",
          "pattern", "flags", "groups", "groupindex")


class _Lazy:
    """A pattern's source and flags until something asks for it."""

    def __init__(self, source: str, flags: int) -> None:
        self._source = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        # Called only for what the instance does not hold yet: the first use compiles.
        compiled = re.compile(self._source, self._flags)
        for taken in _TAKEN:
            setattr(self, taken, getattr(compiled, taken))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self._source!r}, {self._flags})"


def lazy(source: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, done when the pattern is first used."""
    return cast("re.Pattern[str]", _Lazy(source, int(flags)))
