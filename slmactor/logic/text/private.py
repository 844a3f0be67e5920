"""What a user keeps out of memory: `<private>…</private>` text and the project's excluded paths.

Pure rules, applied at every door a harness's data comes in by (the client, the hook's stdin, the
Node client), before anything is sent, spooled or written:

* **`<private>…</private>`** (the convention users of other memory tools know; the tag in any
  case) — the span, tags included, becomes `«private»`. A tag left open hides everything after
  it: in plain text to the end, in JSON text to the end of the JSON string it opened in (a
  string's own quotes are escaped inside it, so the JSON around stays valid).
* **Excluded paths** (`<project>/.slmcode/exclude`, one glob a line, `#` comments; the syntax of
  a `.gitignore` line without negation): a pattern without `/` matches a name at any depth
  (`*.pem`, `.env`), one ending in `/` a directory and all below it (`secrets/`), one with a `/`
  inside is anchored at the project root (`config/prod/*.yml`, `**` for any depth). A path
  matches when it or one of its parent directories does, relative or absolute under the
  project root. A record (a tool call, a failure, a call of a report) that names an excluded
  path is dropped whole — what a call read or printed from that file is the file — and any
  other mention becomes `«excluded»`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

PRIVATE_MARK = "«private»"
EXCLUDED_MARK = "«excluded»"
#: Lower-cased bytes every text holding a private span contains (a cheap first look).
PROBE = b"<private"

_PLAIN = re.compile(r"<private\s*>.*?(?:</private\s*>|\Z)", re.IGNORECASE | re.DOTALL)
# Inside JSON text: a span ends at its closing tag or at the unescaped quote ending its string.
_JSON = re.compile(r'<private\s*>(?:\\.|[^"\\])*?(?:</private\s*>|(?="))', re.IGNORECASE | re.DOTALL)
_JSON_BYTES = re.compile(rb'<private\s*>(?:\\.|[^"\\])*?(?:</private\s*>|(?="))', re.IGNORECASE | re.DOTALL)
#: A stray closing tag (its opening was in text already cut) says nothing: dropped.
_CLOSE = re.compile(r"</private\s*>", re.IGNORECASE)
#: Path-like words: what a shell, an argument map or an error message puts between separators.
_WORD = re.compile(r"""[^\s"'`<>|;,=(){}\[\]]+""")


def has_private(text: str) -> bool:
    return "<private" in text.lower()


def _looks_json(text: str) -> bool:
    head = text.lstrip()[:1]
    return head in ("{", "[")


def strip_private(text: str) -> str:
    """`text` with every private span replaced by `«private»` (JSON text stays valid JSON)."""
    if not has_private(text):
        return text
    pattern = _JSON if _looks_json(text) else _PLAIN
    return _CLOSE.sub("", pattern.sub(PRIVATE_MARK, text))


def strip_private_json_bytes(raw: bytes) -> bytes:
    """A JSON document's bytes with private spans cut inside its strings (a hook's stdin)."""
    if PROBE not in raw.lower():
        return raw
    return _JSON_BYTES.sub(PRIVATE_MARK.encode(), raw)


def parse_patterns(text: str) -> tuple[str, ...]:
    """The globs of an exclude file: one a line, blank lines and `#` comments skipped."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and not line.startswith("!"):
            out.append(line)
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True, slots=True)
class Excluder:
    """The exclude list of one project (its root, absolute, and its globs)."""

    root: str
    patterns: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def _relative(self, word: str) -> str | None:
        path = word.strip().removeprefix("file://")
        while path.startswith("./"):
            path = path[2:]
        # `calc.py:12`, `calc.py:12:4`: a position after the path is not part of it.
        path = re.sub(r"(?::\d+)+:?$", "", path)
        root = self.root.rstrip("/")
        if path.startswith("/"):
            if path == root:
                return None
            if path.startswith(root + "/"):
                return path[len(root) + 1:]
            return path.lstrip("/")  # outside the project: name patterns still apply
        if path.startswith("~"):
            return path.lstrip("~/")
        return path or None

    def excludes(self, path: str) -> bool:
        """Whether `path` (relative to the root, or absolute) is an excluded path or inside one."""
        rel = self._relative(path)
        if not rel:
            return False
        parts = [p for p in rel.split("/") if p and p != "."]
        if not parts:
            return False
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        for pattern in self.patterns:
            glob = pattern.strip("/")
            if not glob:
                continue
            # Anchored when it has a `/` inside; a name at any depth otherwise. Either way a
            # match on a parent directory covers everything below it.
            names = prefixes if "/" in glob else parts
            if any(fnmatch.fnmatchcase(name, glob) for name in names):
                return True
        return False

    def mentions(self, text: str) -> bool:
        return bool(self.patterns) and any(self.excludes(w) for w in _WORD.findall(text))

    def scrub(self, text: str) -> str:
        """`text` with every excluded path in it replaced by `«excluded»`."""
        if not self.patterns:
            return text
        return _WORD.sub(lambda m: EXCLUDED_MARK if self.excludes(m.group(0)) else m.group(0), text)


def _mentions(value: Any, excluder: Excluder) -> bool:
    if isinstance(value, str):
        return excluder.mentions(value)
    if isinstance(value, dict):
        return any(_mentions(v, excluder) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_mentions(v, excluder) for v in value)
    return False


def scrub(value: Any, excluder: Excluder | None = None) -> Any:
    """`value` (strings, maps and lists, as a message body holds them) without private spans and
    excluded paths: a map inside a list that names an excluded path is dropped from it."""
    if isinstance(value, str):
        value = strip_private(value)
        return excluder.scrub(value) if excluder else value
    if isinstance(value, dict):
        return {k: scrub(v, excluder) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        kept: Iterable[Any] = value
        if excluder:
            kept = [v for v in value if not (isinstance(v, dict) and _mentions(v, excluder))]
        return [scrub(v, excluder) for v in kept]
    return value


def names_excluded(value: Any, excluder: Excluder | None) -> bool:
    """Whether a record (a tool call's fields) names an excluded path anywhere."""
    return bool(excluder) and _mentions(value, excluder)  # type: ignore[arg-type]
