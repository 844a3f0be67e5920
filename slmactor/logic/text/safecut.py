"""Cuts that never keep part of a secret: the one rule every clip of text follows.

Text is cut to a length in many places (a tool's arguments to 200 bytes, a hook's fields to
16 KB, a command to its first line) and redacted later, when it is stored or sent. A cut that
falls inside a secret leaves a prefix the redactor no longer recognises (`sk_live_4eC39Hq` is
too short for a Stripe key, `-----BEGIN PRIVATE KEY-----\\nMIIEv` has no END line). So when a
cut splits a run of token characters, the run is looked at whole, with the text around it, the
way the redactor would see it uncut: if the redactor changes anything in the part the cut
keeps, that part is dropped (the cut moves back to where the secret starts). A cut between
runs, or through a run that holds no secret (an id, a hash, a path), is left exactly where it
was, so cuts of ordinary text keep their byte-exact lengths.

The redactor is imported on first use: only a cut through a run pays for compiling it.
"""

from __future__ import annotations

import string

#: Characters a secret (token, key, password, URL with credentials) is made of: a cut with one
#: of these on both sides may split a secret. Blanks, quotes, brackets, `,;|<>` and the
#: backslash of a JSON escape are boundaries.
RUN_CHARS = frozenset(string.ascii_letters + string.digits + "_-+/=.~%$!@#^&*:?")
#: How far a run is followed each way from the cut (longer runs are cut at this distance).
MAX_RUN = 4096
#: Text before the run the redactor sees too: names and commands that make a value a secret
#: (`--password`, `curl … -u`, `mysql … -p` look back up to 512 characters).
CONTEXT_BEFORE = 512
#: Text after the run the redactor sees too: the rest of a quoted value, a closing quote.
CONTEXT_AFTER = 256


def safe_head(text: str, head: str) -> str:
    """`head`, a prefix of `text` that a cut kept, or a shorter prefix that keeps no part of a
    secret the cut went through."""
    cut = len(head)
    if cut == 0 or cut >= len(text) or head[-1] not in RUN_CHARS or text[cut] not in RUN_CHARS:
        return head
    start = cut
    low = max(cut - MAX_RUN, 0)
    while start > low and text[start - 1] in RUN_CHARS:
        start -= 1
    end = cut
    high = min(cut + MAX_RUN, len(text))
    while end < high and text[end] in RUN_CHARS:
        end += 1
    from slmactor.logic.text.redact import redact

    first = max(start - CONTEXT_BEFORE, 0)
    window = text[first : min(end + CONTEXT_AFTER, len(text))]
    redacted = redact(window)
    if redacted == window:
        return head
    same_head = _common_prefix(window, redacted)
    changed_from = first + same_head
    changed_to = first + len(window) - _common_suffix(window[same_head:], redacted[same_head:])
    if changed_from >= cut or changed_to <= start:
        return head  # what the redactor changed lies outside the kept part of the run
    return head[: min(start, changed_from)]


def cut_chars(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, never keeping part of a secret."""
    if len(text) <= limit:
        return text
    return safe_head(text, text[: max(limit, 0)])


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix (binary search over slice compares, done in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _common_suffix(a: str, b: str) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            low = mid
        else:
            high = mid - 1
    return low
