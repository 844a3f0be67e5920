"""Small text primitives shared by every memory layer (SPEC S-0.4 to S-0.6).

Lengths are measured in UTF-8 bytes, like the Go original, and cuts never split a character —
nor keep part of a secret (`safecut`): text is redacted after it is cut, and a secret cut in
two is no longer recognisable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

from slmactor.logic.text.safecut import safe_head

#: Characters per token of the fallback counter (S-0.4); nothing here downloads a tokenizer.
CHARS_PER_TOKEN = 4
#: Bytes per token used to turn a token budget into a byte budget (S-0.4).
BYTES_PER_TOKEN = 4
#: Marker inserted where `fit_to_tokens` cut the text (S-0.5).
FIT_MARKER = "\n…\n"

TokenCounter = Callable[[str], int]


def count_tokens_chars(text: str) -> int:
    """The default token counter: ceil(len(text) / 4) characters per token."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def hash_id(prefix: str, *parts: str) -> str:
    """`prefix` + the first 12 hex digits of SHA-256 over `parts` joined by NUL (S-0.6)."""
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    return prefix + digest[:12]


def cut_bytes(text: str, limit: int) -> str:
    """Cut `text` to at most `limit` UTF-8 bytes without splitting a character or keeping part
    of a secret (a cut through one moves back to where it starts)."""
    if limit <= 0:
        return ""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return text
    head = raw[:limit].decode("utf-8", "ignore")
    return safe_head(text, head) if text.startswith(head) else head


def clip(text: str, limit: int) -> str:
    """Trim whitespace, then cut to at most `limit` bytes without splitting a character (S-0.6)."""
    return cut_bytes(text.strip(), limit).rstrip() if limit > 0 else ""


def clip_words(text: str, limit: int) -> str:
    """`clip`, but a cut falls between words and is marked with "…" (for text people read).

    The result, ellipsis included, is at most `limit` bytes; a single word longer than that is
    cut inside it (there is no boundary to fall back to).
    """
    text = text.strip()
    if len(text.encode("utf-8", "surrogatepass")) <= limit:
        return text
    room = cut_bytes(text, limit - len("…".encode()))
    if not room.strip():
        return ""
    following = text[len(room):len(room) + 1]
    if following and not following.isspace() and not room[-1].isspace():
        words = room.rsplit(None, 1)  # the cut fell inside a word: drop that word
        if len(words) == 2:
            room = words[0]
    return room.rstrip() + "…"


def first_line(text: str, limit: int) -> str:
    """The first non-blank line of `text`, trimmed and clipped to `limit` bytes (S-0.6)."""
    for line in text.splitlines():
        if line.strip():
            return clip(line, limit)
    return ""


def dedupe(items: Iterable[str], limit: int) -> list[str]:
    """Drop blanks and duplicates (after trimming), keep order, keep the first `limit` (S-0.6)."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        value = item.strip()
        if not value or value in seen:
            continue
        seen.add(value)
        out.append(value)
        if len(out) >= limit:
            break
    return out


def _shrink(text: str, target_bytes: int) -> str:
    return cut_bytes(text, max(target_bytes - len(FIT_MARKER.encode()), 0)).rstrip() + FIT_MARKER


def fit_to_tokens(text: str, budget: int, counter: TokenCounter = count_tokens_chars) -> str:
    """Fit `text` into `budget` tokens (S-0.5).

    Returns "" when the budget is not positive or the text is blank. Text longer than twice the
    byte budget is cut first; then, up to four times, the text is counted and shrunk to
    `len * (budget / got) * 0.92` bytes, giving "" once that target falls under 16 bytes.
    """
    if budget <= 0 or not text.strip():
        return ""
    hard_cap = budget * BYTES_PER_TOKEN * 2
    if len(text.encode("utf-8", "surrogatepass")) > hard_cap:
        text = _shrink(text, hard_cap)
    for _ in range(4):
        got = counter(text)
        if got <= budget:
            return text
        target = int(len(text.encode("utf-8", "surrogatepass")) * (budget / got) * 0.92)
        if target < 16:
            return ""
        text = _shrink(text, target)
    return text if counter(text) <= budget else ""


def fit_lines(text: str, budget: int, counter: TokenCounter = count_tokens_chars) -> str:
    """`text` within `budget` tokens, dropping whole lines from the end (an item cut
    mid-word — `- Edit fo…` — costs tokens and says nothing); a heading left without its
    items goes too. Only when not even the first line fits is the text cut (`fit_to_tokens`)."""
    if budget <= 0:
        return ""
    if counter(text) <= budget:
        return text
    lines = text.split("\n")
    while lines and counter("\n".join(lines)) > budget:
        lines.pop()
        while lines and (not lines[-1].strip() or lines[-1].rstrip().endswith(":")
                         or lines[-1].startswith("#")):
            lines.pop()  # a blank line or a heading whose items were dropped
    if lines:
        return "\n".join(lines)
    return fit_to_tokens(text, budget, counter)
