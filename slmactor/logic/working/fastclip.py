"""Exact fast paths of `text.clip` and `text.first_line` for the working-memory hot path.

`record_tool` clips args, errors and commands on every tool call. The shared helpers encode the
whole string to UTF-8 to count bytes; these avoid that in the common cases — an ASCII string's
byte length is its length, and a string of at most n/4 characters can never exceed n bytes — and
look at only the head of a long error. They fall back to the shared helpers otherwise, so the
results are identical (property tests compare them on adversarial text).
"""

from __future__ import annotations

from slmactor.logic.text.safecut import safe_head
from slmactor.logic.text.strings import clip, first_line

#: Longest run of leading whitespace the fast first-line path looks through before falling back.
_LEAD_SCAN = 256


def clip_fast(text: str, limit: int) -> str:
    """Exactly `text.clip(text, limit)`, without encoding in the common cases."""
    if limit <= 0:
        return ""
    t = text.strip()
    if len(t) <= limit >> 2:
        return t
    if t.isascii():
        return safe_head(t, t[:limit]).rstrip()
    return clip(t, limit)


def first_line_fast(text: str, limit: int) -> str:
    """Exactly `text.first_line(text, limit)`, looking at only `limit + 256` characters when
    the text does not start with a long run of whitespace."""
    if limit <= 0:
        return ""
    head = text[: limit + _LEAD_SCAN].lstrip()
    if len(head) < limit and len(text) > limit + _LEAD_SCAN:
        head = text.lstrip()
    if not head:
        return ""
    line = head[:limit].splitlines()[0]
    if len(line) == limit and head[limit : limit + 1] not in ("", "\n", "\r"):
        # The line goes on past the cut: the secret-safe cut must see all of it, as
        # `first_line` does.
        whole = head.splitlines()[0]
        if len(whole) == len(head):
            return first_line(text, limit)  # the line runs past the head: the exact path
        if not whole.isascii():
            return clip(whole, limit)
        return safe_head(whole.rstrip(), line).rstrip()
    if line.isascii():
        return line.rstrip()
    return clip(line, limit)
