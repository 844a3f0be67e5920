"""Mechanical repair of almost-JSON written by a model (the `repair_json` transform, SPEC S-10.4).

`repair_json(text)` fixes the *slips* small models make in tool-call arguments, without guessing
content: Markdown code fences around the JSON, prose before or after it, trailing commas,
single-quoted strings, Python literals (`True`, `False`, `None`), unquoted object keys, and
closing brackets missing after a complete value (`{"a": "x"` → `{"a": "x"}`).

It never completes a call that was **cut off**: a string that never closes, or a text
that ends right after a key, a colon, a comma, an opening bracket or a number (which may itself be
cut) — `{"path": "a.go", "old_str": "x` — is not a slip but a truncated call, and closing it
would hand the tool a wrong, shortened argument as if it were the model's.  `repair_json` returns
`None` for it and `json_cut_off(text)` says so, so the caller can ask for the call to be resent.

One pass over the characters: linear time, no backtracking.
"""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"^\s*```[\w+.-]*[ \t]*\n(.*?)\n?[ \t]*```\s*$", re.DOTALL)
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_CLOSERS = {"{": "}", "[": "]"}
_NUMBER_CHARS = frozenset("-+.0123456789eE")

#: The advice for a cut-off call (`json_cut_off`): it cannot be repaired, only resent.
CUT_OFF_REASON = ("cannot repair: the arguments were cut off mid-string or mid-structure "
                  "(truncated JSON), not a syntax slip")
CUT_OFF_GUIDANCE = ("The tool call's arguments were cut off before they ended. Do not guess the "
                    "rest: resend the complete call (write a long edit in smaller pieces).")

# What the last significant token was, to tell "a value is complete" from "the text stops
# mid-way" when brackets are left open at the end.
_OPEN, _COMMA, _COLON, _KEY, _VALUE, _NUMBER, _CLOSE = range(7)


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

    Returns the index after its closing quote, or -1 when the string never closes (cut off).
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
    return -1


def _drop_trailing_comma(out: list[str]) -> None:
    j = len(out) - 1
    while j >= 0 and out[j].isspace():
        j -= 1
    if j >= 0 and out[j] == ",":
        del out[j]


def _rebuild(text: str) -> str | None:
    """The repaired text, or None when `text` was cut off (see the module docstring)."""
    out: list[str] = []
    stack: list[str] = []
    last = _OPEN
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        in_object = bool(stack) and stack[-1] == "}"
        if ch in "\"'":
            i = _read_string(text, i, out)
            if i < 0:
                return None
            last = _KEY if in_object and last in (_OPEN, _COMMA) else _VALUE
            continue
        if ch in _CLOSERS:
            stack.append(_CLOSERS[ch])
            out.append(ch)
            last = _OPEN
        elif ch in "}]":
            _drop_trailing_comma(out)
            if stack and stack[-1] == ch:
                stack.pop()
                out.append(ch)
                last = _CLOSE
                if not stack:
                    break  # the value is complete; anything after it is prose
            # A stray closer that matches nothing open is dropped.
        elif ch.isalpha() or ch == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            if in_object and last in (_OPEN, _COMMA):
                out.append(json.dumps(word))  # an unquoted key
                last = _KEY
            else:
                out.append(_PY_LITERALS.get(word, word))
                last = _VALUE
            i = j
            continue
        else:
            out.append(ch)
            if ch == ",":
                last = _COMMA
            elif ch == ":":
                last = _COLON
            elif ch in _NUMBER_CHARS:
                last = _NUMBER
        i += 1
    if stack and last not in (_VALUE, _CLOSE):
        return None  # stops after a key, a colon, a comma, an opener or a number: cut off
    _drop_trailing_comma(out)
    out.extend(reversed(stack))
    return "".join(out)


def _body(text: str) -> str | None:
    body = _unfence(text.strip())
    starts = [pos for pos in (body.find("{"), body.find("[")) if pos >= 0]
    return body[min(starts):] if starts else None


def repair_json(text: str) -> str | None:
    """A JSON text repaired from `text`, `text` itself if it already parses, else None.

    None also when the text was cut off (`json_cut_off`): that is not repairable.
    """
    if _parses(text):
        return text
    body = _body(text)
    if body is None:
        return None
    repaired = _rebuild(body)
    return repaired if repaired is not None and _parses(repaired) else None


def json_cut_off(text: str) -> bool:
    """True when `text` is JSON that was cut off mid-string or mid-structure (not a slip).

    A cut-off call cannot be repaired: the rest of it was never written. Text that parses, or
    holds no JSON at all, is not "cut off".
    """
    if _parses(text):
        return False
    body = _body(text)
    return body is not None and _rebuild(body) is None
