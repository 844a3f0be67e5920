"""Change a JSON document's text the way a person editing it would: only where it changed.

Owns reading JSON that may carry `//` and `/* */` comments (`loads`, `comments=True`: what a
harness reading its settings through strip-json-comments accepts; trailing commas stay an error,
as they are there) and `rewrite(text, new)`: the text of the value `new`, made from `text` by the
fewest edits. What is unchanged keeps its bytes: indentation, key order, comments, the final
newline. A key new to an object goes after its last member and an item new to a list after
its last item, each at the indentation of the members beside it (the file's own indent unit
and line ending); a member or item that went is cut out with its comma; any other change
replaces only the value that changed. Adding and then removing the same entries gives back
the original bytes.

Pure: text in, text out. `rewrite` checks its result parses to `new`; where an edit cannot be
made in place (a duplicate key, a list reordered) that part of the document is written anew.
"""

from __future__ import annotations

import contextlib
import json
import re
from json import decoder as _decoder
from typing import Any

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_BLANK = " \t\r\n"
#: The json module's string scanner (escapes, surrogates, control characters as json reads them).
_SCANSTRING: Any = _decoder.scanstring  # type: ignore[attr-defined]


class Node:
    """A value in the text: its span, and for a container its elements (members or items)."""

    __slots__ = ("end", "items", "keys", "start", "value")

    def __init__(self, start: int, end: int, value: Any, items: list[tuple[int, Node]] | None = None,
                 keys: list[str] | None = None) -> None:
        self.start = start
        self.end = end
        self.value = value
        #: Elements in order: (where the element starts — its key for a member —, its value).
        self.items = items or []
        #: A member's key per element (objects only).
        self.keys = keys or []


class _Parser:
    def __init__(self, text: str, comments: bool) -> None:
        self.text = text
        self.comments = comments

    def fail(self, what: str, at: int) -> ValueError:
        line = self.text.count("\n", 0, at) + 1
        column = at - (self.text.rfind("\n", 0, at) + 1) + 1
        return ValueError(f"{what} at line {line} column {column}")

    def skip(self, i: int) -> int:
        text = self.text
        while i < len(text):
            c = text[i]
            if c in _BLANK:
                i += 1
            elif c == "/" and self.comments and text.startswith("//", i):
                end = text.find("\n", i)
                i = len(text) if end < 0 else end
            elif c == "/" and self.comments and text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    raise self.fail("unterminated comment", i)
                i = end + 2
            else:
                break
        return i

    def value(self, i: int) -> Node:
        text = self.text
        if i >= len(text):
            raise self.fail("expected a value", i)
        c = text[i]
        if c == "{":
            return self.container(i, "}")
        if c == "[":
            return self.container(i, "]")
        if c == '"':
            return self.string(i)
        for word, value in _LITERALS.items():
            if text.startswith(word, i):
                return Node(i, i + len(word), value)
        match = _NUMBER.match(text, i)
        if match:
            return Node(i, match.end(), json.loads(match.group()))
        raise self.fail("expected a value", i)

    def string(self, i: int) -> Node:
        try:
            value, end = _SCANSTRING(self.text, i + 1, True)
        except ValueError as exc:
            raise self.fail(f"bad string ({exc.args[0].split(':')[0]})", i) from None
        return Node(i, end, value)

    def container(self, start: int, close: str) -> Node:
        is_object = close == "}"
        items: list[tuple[int, Node]] = []
        keys: list[str] = []
        i = self.skip(start + 1)
        if self.text.startswith(close, i):
            return Node(start, i + 1, {} if is_object else [], items, keys)
        while True:
            at = i
            if is_object:
                if not self.text.startswith('"', i):
                    raise self.fail("expected a key", i)
                key = self.string(i)
                i = self.skip(key.end)
                if not self.text.startswith(":", i):
                    raise self.fail("expected ':'", i)
                keys.append(key.value)
                i = self.skip(i + 1)
            node = self.value(i)
            items.append((at, node))
            i = self.skip(node.end)
            if self.text.startswith(",", i):
                i = self.skip(i + 1)
                continue
            if self.text.startswith(close, i):
                break
            raise self.fail(f"expected ',' or '{close}'", i)
        value: Any = dict(zip(keys, (n.value for _, n in items), strict=True)) if is_object \
            else [n.value for _, n in items]
        return Node(start, i + 1, value, items, keys)


def parse(text: str, *, comments: bool = False) -> Node:
    """The document's tree of spans; ValueError (with line and column) when it is not JSON."""
    parser = _Parser(text, comments)
    root = parser.value(parser.skip(0))
    end = parser.skip(root.end)
    if end != len(text):
        raise parser.fail("extra data after the document", end)
    return root


def loads(text: str, *, comments: bool = False) -> Any:
    """The document's value (`comments`: `//` and `/* */` comments allowed)."""
    return parse(text, comments=comments).value


def _same(a: Any, b: Any) -> bool:
    # `==` would take 1 for true and 1.0 for 1: the text would not change where it should.
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


class _Style:
    """How the file is written: its indent unit, its line ending, its `key: value` spacing."""

    def __init__(self, text: str, root: Node) -> None:
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.unit = "  "
        indents = [m.group(1) for m in re.finditer(r"\n([ \t]+)\S", text)]
        if indents:
            self.unit = "\t" if indents[0].startswith("\t") else min(indents, key=len)
        self.colon = ": "
        if root.keys:
            at, node = root.items[0]
            between = text[at:node.start]
            self.colon = ": " if between.rstrip().endswith(":") and between.endswith((" ", "\t")) else ":"

    def dump(self, value: Any, indent: str) -> str:
        text = json.dumps(value, indent=self.unit, ensure_ascii=False, separators=(",", self.colon))
        return text.replace("\n", self.newline + indent)

    def inline(self, value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(", ", self.colon))


def _line_indent(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def _starts_line(text: str, at: int) -> bool:
    start = text.rfind("\n", 0, at) + 1
    return not text[start:at].strip(" \t")


class _Editor:
    def __init__(self, text: str, root: Node, comments: bool) -> None:
        self.text = text
        self.style = _Style(text, root)
        self.parser = _Parser(text, comments)
        self.edits: list[tuple[int, int, str]] = []

    def replace(self, node: Node, new: Any) -> None:
        self.edits.append((node.start, node.end, self.style.dump(new, _line_indent(self.text, node.start))))

    def diff(self, node: Node, new: Any) -> None:
        if _same(node.value, new):
            return
        old = node.value
        if isinstance(old, dict) and isinstance(new, dict) and len(node.keys) == len(old):
            gone = [i for i, k in enumerate(node.keys) if k not in new]
            added = [k for k in new if k not in old]
            if gone and added or (gone and len(gone) == len(node.keys)):
                self.replace(node, new)
                return
            for (_, child), key in zip(node.items, node.keys, strict=True):
                if key in new:
                    self.diff(child, new[key])
            if gone:
                self.delete(node, gone)
            if added:
                self.insert(node, [(k, new[k]) for k in added])
        elif isinstance(old, list) and isinstance(new, list):
            n = len(old)
            if len(new) > n and all(_same(a, b) for a, b in zip(old, new[:n], strict=True)):
                self.insert(node, [(None, v) for v in new[n:]])
            elif len(new) < n and new and (missing := _unmatched(old, new)) is not None:
                self.delete(node, missing)
            elif len(new) == n and n:
                for (_, child), value in zip(node.items, new, strict=True):
                    self.diff(child, value)
            else:
                self.replace(node, new)
        else:
            self.replace(node, new)

    def element(self, key: str | None, value: Any, indent: str, inline: bool) -> str:
        style = self.style
        body = style.inline(value) if inline else style.dump(value, indent)
        return body if key is None else json.dumps(key, ensure_ascii=False) + style.colon + body

    def insert(self, node: Node, pairs: list[tuple[str | None, Any]]) -> None:
        text, nl = self.text, self.style.newline
        close = node.end - 1
        multiline = "\n" in text[node.start:node.end]
        if not node.items:
            indent = _line_indent(text, node.start)
            inner = indent + self.style.unit
            body = ("," + nl + inner).join(self.element(k, v, inner, False) for k, v in pairs)
            if text[node.start + 1:close].strip(_BLANK):  # a comment inside: keep it, after ours
                self.edits.append((node.start + 1, node.start + 1, nl + inner + body))
            else:
                self.edits.append((node.start + 1, close, nl + inner + body + nl + indent))
            return
        last_at, last = node.items[-1]
        if not multiline:
            body = "".join(", " + self.element(k, v, "", True) for k, v in pairs)
            self.edits.append((last.end, last.end, body))
            return
        indent = _line_indent(text, last_at) if _starts_line(text, last_at) else \
            _line_indent(text, node.start) + self.style.unit
        body = "".join("," + nl + indent + self.element(k, v, indent, False) for k, v in pairs)
        # After the last element's value, past a comment on its line; before the closing bracket
        # when that shares the line.
        at = last.end
        while True:
            j = at
            while j < len(text) and text[j] in " \t":
                j += 1
            if text.startswith("//", j) or text.startswith("/*", j):
                end = self.parser.skip(j)
                if "\n" in text[j:end]:
                    end = text.find("\n", j)
                at = end
                continue
            break
        if at > last.end and (text[at:at + 1] in ("\n", "\r") or at >= len(text)):
            self.edits.append((last.end, last.end, ","))
            self.edits.append((at, at, body[1:]))
        else:
            self.edits.append((last.end, last.end, body))

    def comma_after(self, value: Node) -> int:
        at = self.parser.skip(value.end)
        return at if self.text.startswith(",", at) else -1

    def delete(self, node: Node, gone: list[int]) -> None:
        text = self.text
        count = len(node.items)
        runs: list[tuple[int, int]] = []
        for i in gone:
            if runs and runs[-1][1] == i - 1:
                runs[-1] = (runs[-1][0], i)
            else:
                runs.append((i, i))
        for first, last in runs:
            if last < count - 1:
                start = node.start + 1 if first == 0 else self.comma_after(node.items[first - 1][1]) + 1
                end = self.comma_after(node.items[last][1]) + 1
                self.edits.append((start, end, ""))
            else:
                comma = self.comma_after(node.items[first - 1][1])
                at = node.items[first][0]
                while at > comma + 1 and text[at - 1] in _BLANK:
                    at -= 1
                self.edits.append((comma, comma + 1, ""))
                self.edits.append((max(at, comma + 1), node.items[last][1].end, ""))


def _unmatched(old: list[Any], new: list[Any]) -> list[int] | None:
    """Indexes of `old` not kept when `new` is `old` with some items taken out (else None)."""
    gone, j = [], 0
    for i, item in enumerate(old):
        if j < len(new) and _same(item, new[j]):
            j += 1
        else:
            gone.append(i)
    return gone if j == len(new) else None


def rewrite(text: str, new: Any, *, comments: bool = False) -> str:
    """`text` edited to hold `new`: the fewest edits, everything unchanged kept byte for byte."""
    root = parse(text, comments=comments)
    editor = _Editor(text, root, comments)
    editor.diff(root, new)
    out = text
    for start, end, piece in sorted(editor.edits, key=lambda e: (e[0], e[1]), reverse=True):
        out = out[:start] + piece + out[end:]
    with contextlib.suppress(ValueError):  # an edit that broke the text: written anew below
        if _same(loads(out, comments=comments), new):
            return out
    # Not expected: an edit this module got wrong. The document is right, if not its layout.
    return editor.style.dump(new, "") + ("\n" if text.endswith("\n") else "")


def dumps(value: Any) -> str:
    """A new document (a file we create): two-space indent, a final newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
