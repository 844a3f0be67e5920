"""Mechanical repair of almost-JSON written by a model (the `repair_json` transform, SPEC S-10.4).

`repair_json(text)` fixes what small models typically get wrong in tool-call arguments, without
guessing content: Markdown code fences around the JSON, prose before or after it, trailing commas,
single-quoted strings, Python literals (`True`, `False`, `None`), and unclosed strings, objects and
arrays (the model was cut off).  It returns a string that `json.loads` accepts, or `None` when the
text cannot be repaired this way.  One pass over the characters: linear time, no backtracking.
"""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"^\s*```[\w+.-]*[ \t]*\n(.*?)\n?[ \t]*```\s*$", re.DOTALL)
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_CLOSERS = {"{": "}", "[": "]"}


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _unfence(text: str) -> str:
    match = _FENCE.match(text)
    return match.group(1) if match else text


def _read_string(text: str, start: int, out: list[str]) -> int:
    """Copy the string literal opening at `start` as a double-quoted JSON string.

    Returns the index after its closing quote (or len(text) if it never closes, in which case
    the string is closed here).
    """
    quote = text[start]
    out.append('"')
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            # \' is not a JSON escape: inside a single-quoted string it is just a quote.
            out.append("'" if nxt == "'" else ch + nxt)
            i += 2
            continue
        if ch == quote:
            out.append('"')
            return i + 1
        if ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        else:
            out.append(ch)
        i += 1
    out.append('"')
    return n


def _drop_trailing_comma(out: list[str]) -> None:
    j = len(out) - 1
    while j >= 0 and out[j].isspace():
        j -= 1
    if j >= 0 and out[j] == ",":
        del out[j]


def _rebuild(text: str) -> str:
    out: list[str] = []
    stack: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            i = _read_string(text, i, out)
            continue
        if ch in _CLOSERS:
            stack.append(_CLOSERS[ch])
            out.append(ch)
        elif ch in "}]":
            _drop_trailing_comma(out)
            if stack and stack[-1] == ch:
                stack.pop()
                out.append(ch)
                if not stack:
                    break  # the value is complete; anything after it is prose
            # A stray closer that matches nothing open is dropped.
        elif ch.isalpha() or ch == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            out.append(_PY_LITERALS.get(word, word))
            i = j
            continue
        else:
            out.append(ch)
        i += 1
    _drop_trailing_comma(out)
    out.extend(reversed(stack))
    return "".join(out)


def repair_json(text: str) -> str | None:
    """A JSON text repaired from `text`, `text` itself if it already parses, else None."""
    if _parses(text):
        return text
    body = _unfence(text.strip())
    starts = [pos for pos in (body.find("{"), body.find("[")) if pos >= 0]
    if not starts:
        return None
    repaired = _rebuild(body[min(starts):])
    return repaired if _parses(repaired) else None
