"""The MustPreserve digest of a run and its rendering (SPEC S-1.7, S-1.8).

A compacted run and a fresh run present the same headings in the same order, so a small model
sees one shape everywhere: files read → files edited → commands and exit status → failed tool
calls → decisions → each extra list (keys sorted). Every list is `- item` lines followed by a
blank line; empty lists are left out entirely. The whole text is cut to a byte budget with the
marker `"\\n…[digest truncated]\\n"`.

Nothing here counts tokens: the caller gives a byte budget (`budget·4`, S-0.4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from slmactor.logic.text.strings import cut_bytes
from slmactor.logic.working.records import CommandRun, FailureNote

#: Marker appended where the digest was cut to its byte budget (S-1.8).
DIGEST_TRUNCATED = "\n…[digest truncated]\n"
#: Heading of the resolved-failures extra list (S-1.7).
ALREADY_FIXED = "Already fixed this run (do not redo)"
#: Open failures shown in the digest (S-1.7).
DIGEST_FAILURES = 3


@dataclass(frozen=True, slots=True)
class Digest:
    """What working memory projects onto the MustPreserve schema (S-1.7)."""

    files_read: Sequence[str] = ()
    files_edited: Sequence[str] = ()
    commands: Sequence[CommandRun] = ()
    failures: Sequence[FailureNote] = ()
    decisions: Sequence[str] = ()
    extra: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (
            self.files_read
            or self.files_edited
            or self.commands
            or self.failures
            or self.decisions
            or any(self.extra.values())
        )


def failure_line(f: FailureNote) -> str:
    """`tool path: error`, or `tool: error` without a path (S-1.8); parts that are empty are
    left out instead of leaving a dangling `: `."""
    where = " ".join(part for part in (f.tool, f.path) if part)
    if where and f.message:
        return f"{where}: {f.message}"
    return where or f.message


def fixed_line(f: FailureNote) -> str:
    """`<message> → fixed by <resolution | resolved_by | unknown>` (S-1.7)."""
    what = f.message or " ".join(part for part in (f.tool, f.path) if part) or f.key
    return f"{what} → fixed by {f.fixed_by()}"


def _section(out: list[str], heading: str, items: Sequence[str]) -> None:
    if not items:
        return
    out.append(heading + ":\n")
    out.extend(f"- {item}\n" for item in items)
    out.append("\n")


def render_digest(digest: Digest, max_bytes: int) -> str:
    """The digest as Markdown-ish text of at most `max_bytes` UTF-8 bytes; "" when empty."""
    if max_bytes <= 0 or digest.is_empty():
        return ""
    out: list[str] = []
    _section(out, "Files read", digest.files_read)
    _section(out, "Files edited", digest.files_edited)
    _section(out, "Commands run + exit status", [f"`{c.command}` → {c.status}" for c in digest.commands])
    _section(out, "Failed tool calls", [failure_line(f) for f in digest.failures])
    _section(out, "Decisions", digest.decisions)
    for key in sorted(digest.extra):
        _section(out, key, digest.extra[key])
    text = "".join(out)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= max_bytes:
        return text
    room = max_bytes - len(DIGEST_TRUNCATED.encode("utf-8"))
    if room <= 0:
        return ""
    return cut_bytes(text, room).rstrip() + DIGEST_TRUNCATED
