"""Generate the tables of `clients/PROTOCOL.md` from `slmactor.protocol`, so the doc cannot drift.

    .venv/bin/python clients/protocol_table.py           # rewrite the generated blocks in place
    .venv/bin/python clients/protocol_table.py --check   # exit 1 if PROTOCOL.md is out of date

The generated blocks sit between `<!-- generated:NAME:begin -->` and `<!-- generated:NAME:end -->`
markers (NAME = limits, errors, kinds); everything else in the document is written by hand.
`tests/protocol/test_golden.py` runs the same check.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import typing
from pathlib import Path
from typing import Any

from slmactor.protocol import PROTOCOL_VERSION, codec
from slmactor.protocol.errors import ErrorCode
from slmactor.protocol.messages import MESSAGES, Message

DOC = Path(__file__).resolve().parent / "PROTOCOL.md"
_RESERVED = {"id", "project"}
_BLOCK = re.compile(r"(<!-- generated:(\w+):begin -->\n)(.*?)(<!-- generated:\2:end -->)", re.DOTALL)


def _type_name(tp: Any) -> str:
    if tp is str:
        return "str"
    if tp is bool:
        return "bool"
    if tp is int:
        return "int"
    if tp is float:
        return "float"
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is list and args == (str,):
        return "list[str]"
    if origin is list:
        return "list[map]"
    if origin is dict:
        return "map"
    raise TypeError(f"no wire type for {tp!r}")


def _default_text(f: dataclasses.Field[Any]) -> str:
    value = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[]"
    if isinstance(value, dict):
        return "{}"
    return repr(value)


def _cap_text(type_name: str, cap: int) -> str:
    """The cap, shown only where it differs from the default of its type (see the limits)."""
    if type_name == "str" and cap != codec.MAX_TEXT:
        return f", ≤ {cap:,} chars"
    if type_name.startswith("list") and cap != codec.MAX_LIST:
        return f", ≤ {cap:,} items"
    return ""


def field_rows(cls: type[Message]) -> list[str]:
    """One `name type = default (cap)` description per wire field of `cls`, in order."""
    hints = typing.get_type_hints(cls)
    schema = codec.schemas_for_all()[str(cls.KIND)]
    out = []
    for f in dataclasses.fields(cls):
        if f.name in _RESERVED:
            continue
        type_name = _type_name(hints[f.name])
        cap = _cap_text(type_name, schema[f.name][1])
        out.append(f"`{f.name}` {type_name} = {_default_text(f)}{cap}")
    return out


def _summary(cls: type[Message]) -> str:
    doc = (cls.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(doc.split()).replace("|", "\\|")


def render_kinds() -> str:
    lines = [
        "| kind | sent as | fields (`name` type = default, cap if not the default) | what it does |",
        "|---|---|---|---|",
    ]
    for kind, cls in MESSAGES.items():
        sent = "tell (events.sock; ctl.sock acks)" if cls.TELL else "ask (ctl.sock)"
        fields = "<br>".join(field_rows(cls)) or "—"
        lines.append(f"| `{kind}` | {sent} | {fields} | {_summary(cls)} |")
    return "\n".join(lines) + "\n"


def render_errors() -> str:
    lines = ["| code | name | meaning |", "|---|---|---|"]
    source = Path(sys.modules[ErrorCode.__module__].__file__ or "").read_text(encoding="utf-8")
    for code in ErrorCode:
        match = re.search(rf"#: (.*)\n\s+{code.name} = {int(code)}\b", source)
        meaning = match.group(1) if match else ""
        lines.append(f"| {int(code)} | `{code.name}` | {meaning} |")
    return "\n".join(lines) + "\n"


def render_limits() -> str:
    rows = [
        ("protocol version `v`", str(PROTOCOL_VERSION)),
        ("largest body frame", (f"{codec.MAX_MESSAGE_BYTES:,} bytes (1 MiB); larger → `TOO_LARGE`, "
                               "much larger frames are cut off by the socket (disconnect, no reply)")),
        ("largest tell body", (f"{codec.MAX_TELL_BYTES:,} bytes (256 KiB); larger → dropped unread on "
                              "`events.sock` (counted invalid), `TOO_LARGE` on `ctl.sock`; a frame over "
                              "260 KiB on `events.sock` is cut off by the socket (disconnect)")),
        ("frames of one message", ("`[kind, body]` (a REQ socket's empty delimiter too); more → `BAD_FRAMES` "
                                   "on `ctl.sock`, dropped whole and counted invalid on `events.sock`")),
        ("bytes of one request, all frames", "1 MiB + 4 KiB; more → `TOO_LARGE`, the rest discarded unread"),
        ("items in any one map or array", f"{codec.MAX_CONTAINER:,} (else `BAD_MSGPACK`)"),
        ("maps and arrays in one body, in all", f"{codec.MAX_CONTAINERS:,} (else `BAD_MSGPACK`)"),
        ("any integer, anywhere in a body", f"±{codec.MAX_SAFE_INT:,} (2⁵³ − 1; else `BAD_FIELD`)"),
        ("any float, anywhere in a body", f"finite and within ±{codec.MAX_SAFE_INT:,} (NaN, ±inf → `BAD_FIELD`)"),
        ("any string or map key, anywhere in a body", "a NUL (U+0000) is accepted and replaced by U+FFFD as it is decoded (a text carries what a tool printed; only `project` refuses one)"),
        ("nesting inside map / list[map] fields", f"{codec.MAX_DEPTH} levels (else `BAD_FIELD`)"),
        ("a `str` field, unless its row says otherwise", f"{codec.MAX_TEXT:,} characters"),
        ("a list field, unless its row says otherwise", f"{codec.MAX_LIST:,} items"),
        ("each string inside a `list[str]`", f"{codec.MAX_TEXT:,} characters"),
        ("request `id`", f"{codec.MAX_ID} characters (longer ids are answered with id \"\")"),
        ("`project`", "4,096 characters, an absolute path"),
        ("reply `error.reason`", "4,096 characters"),
    ]
    lines = ["| limit | value |", "|---|---|"]
    lines.extend(f"| {name} | {value} |" for name, value in rows)
    return "\n".join(lines) + "\n"


RENDERERS = {"limits": render_limits, "errors": render_errors, "kinds": render_kinds}


def regenerate(text: str) -> str:
    """`text` with every generated block replaced by its current rendering."""
    seen: set[str] = set()

    def fill(match: re.Match[str]) -> str:
        name = match.group(2)
        seen.add(name)
        return match.group(1) + RENDERERS[name]() + match.group(4)

    result = _BLOCK.sub(fill, text)
    missing = set(RENDERERS) - seen
    if missing:
        raise ValueError(f"PROTOCOL.md lacks generated block(s): {', '.join(sorted(missing))}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail if the doc is out of date")
    args = parser.parse_args(argv)
    current = DOC.read_text(encoding="utf-8")
    fresh = regenerate(current)
    if args.check:
        if fresh != current:
            print(f"{DOC} is out of date: run python clients/protocol_table.py", file=sys.stderr)
            return 1
        return 0
    if fresh != current:
        DOC.write_text(fresh, encoding="utf-8")
        print(f"updated {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
