"""Named argument transforms: the deterministic repairs a rule can apply to a failed tool call
(SPEC S-10.4), and `infer_transform`, which recognises one of them in a successful retry.

The transforms read and rewrite a call's arguments as a map in the shared words of
`slmactor.logic.failures.call` (`old_str`, `new_str`, `replace_all`, `content`, `patch`, ...): the
harness's room renamed its own keys (`ToolCall.shared`), so no transform knows a harness.
`transform(name, args)` returns `(new_args, changed)` without parsing anything; `apply_transform`
is the same over a JSON text (a stored report's arguments, and `repair_json`, whose job is to
make a text parse): an unknown transform, unparsable arguments or no change give `(args,
False)`; otherwise the object is re-serialised compactly, keys in their original order.

Transforms:

* `repair_json` — mechanical JSON repair of the whole argument text (`repair_json.py`).
* `strip_line_number_prefix` — remove a read tool's line-number gutter from `old_str`, `patch`,
  `hunk`, in every format real read tools print (`strip_gutter`): `  42| code`, `42|code`
  (slmcode), `12\\tcode` (Claude Code's Read), `    12→code` (its older versions), `     12\\tcode`
  (`cat -n`, `nl -ba`: six columns and a tab), `12:code` (`grep -n`) and `12: code`.  Only when
  every non-blank line carries the same format and the numbers count up by one — so code that
  merely contains `x | y` or `12: value` is never touched; text after a `12\\t` gutter keeps its own
  tabs.  From `new_str` only when `old_str` itself carried a gutter (the model mirrored it), and
  there only from the lines that carry one; never from `content`/`body`, so Markdown tables and
  CSV with `|` survive (H-S-4).  A `*** Begin Patch` envelope (in `patch`) has its gutters stripped after each hunk line's marker (`strip_patch_gutter`).
* `trim_trailing_whitespace` — right-trim spaces, tabs and `\\r` on every line of `old_str`, `new_str`.
* `unfence_code` — a value that is exactly one ``` fence (optional language tag) becomes the
  fenced text; fields `old_str`, `new_str`, `content`, `body`, and a patch envelope fenced whole
  in `patch` (the fenced text opens with `*** Begin Patch`: a patch tool
  reads its first line as the envelope's, and a fenced shell command is not touched).
* `shrink_old_str` — an `old_str` of more than 2 lines becomes its first non-blank line.
* `set_replace_all` — set `replace_all: true` unless it already is.

Each transform also has a **precondition** (`fits`): what the failed call must show for
that transform to be the repair — a gutter on every line; trailing whitespace in `old_str` (not
counting a gutter); a value that is exactly one fence; JSON with a syntax slip, not a call cut
off; an `old_str` that is one token (replacing every occurrence of a statement or a block is a
guess: such an edit needs more context, never `replace_all`).  `repair_for(name, args)` gives the
repaired arguments only when the precondition holds and the transform changes them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from slmactor.logic.evolve.repair_json import json_cut_off, repair_json

#: Every named transform, in the order `infer_transform` tries them.
TRANSFORMS: tuple[str, ...] = (
    "strip_line_number_prefix", "trim_trailing_whitespace", "unfence_code", "repair_json",
    "shrink_old_str", "set_replace_all",
)

_OLD = ("old_str",)
_NEW = ("new_str",)
#: Gutter formats, in the order they are tried on a block's first prefixed line.  Group 1 is the
#: line number.  The tab and arrow formats consume exactly their separator, so indentation after
#: it (tabs included) is the code's own.
_GUTTERS: tuple[re.Pattern[str], ...] = (
    # Before the `|` gutter: Claude Code's Read numbers a Markdown table row `    12\t| a | b |`,
    # and the row's own `|` is code, not a second gutter.
    re.compile(r"[ \t]*(\d+)\t"),  # `12\tcode`, `     12\tcode`
    re.compile(r"[ \t]*(\d+)[ \t]*\| ?"),  # `  42| code`, `42|code`, `\t7 | code`
    re.compile(r"[ \t]*(\d+)\u2192"),  # `    12→code`
    # `L42: code`: Codex's `read_file` (openai/codex codex-rs/core/src/tools/handlers/
    # read_file.rs numbers lines `L{n}: `) and Gemini CLI's search output.
    re.compile(r"[ \t]*L(\d+): ?"),
    re.compile(r"[ \t]*(\d+): "),  # `12: code`
    re.compile(r"[ \t]*(\d+):"),  # `12:code`
)
#: A gutter whose line is otherwise empty once trailing blanks were trimmed (`    7` of a blank
#: line in `cat -n` output whose tab the model dropped).
_BARE_NUMBER = re.compile(r"[ \t]*(\d+)[ \t]*(?:[|:\u2192])?[ \t]*")
_TRAILING = re.compile(r"[ \t\r]+$", re.MULTILINE)
_FENCE = re.compile(r"^\s*```[\w+.-]*[ \t]*\n(.*?)\n?[ \t]*```\s*$", re.DOTALL)

Args = dict[str, Any]


def _gutter_of(lines: list[str]) -> re.Pattern[str] | None:
    """The one gutter format every non-blank line carries, numbered n, n+1, …; None otherwise."""
    for gutter in _GUTTERS:
        expected = -1
        seen = False  # a line with the whole gutter: numbers alone ("42") are not a listing
        for line in lines:
            full = gutter.match(line)
            match = full or (_BARE_NUMBER.fullmatch(line) if line.strip() else None)
            if match is None:
                if line.strip():
                    break
                continue
            number = int(match.group(1))
            if expected >= 0 and number != expected:
                break
            expected, seen = number + 1, seen or full is not None
        else:
            if seen:
                return gutter
    return None


def _strip_line(gutter: re.Pattern[str], line: str) -> str:
    match = gutter.match(line)
    if match is not None:
        return line[match.end():]
    return "" if line.strip() and _BARE_NUMBER.fullmatch(line) else line


def strip_gutter(text: str) -> str | None:
    """`text` without its line-number gutter, or None when it has no consistent one.

    A gutter is recognised only when every non-blank line carries the same format and the line
    numbers count up by one (a copied block of a read tool's output); see `_GUTTERS`.
    """
    lines = text.split("\n")
    gutter = _gutter_of(lines)
    if gutter is None:
        return None
    return "\n".join(_strip_line(gutter, line) for line in lines)


_GUTTERED = (*_OLD, "patch", "hunk")
#: The first line of a Codex `apply_patch` envelope.
PATCH_ENVELOPE = "*** Begin Patch"


def strip_patch_gutter(patch: str) -> str | None:
    """A Codex `apply_patch` envelope without the line-number gutters its hunks carry after their
    ` `/`-`/`+` markers (`-     3\\told line`, copied from `nl -ba` output); None when no hunk has
    a consistent gutter.  Each hunk (the lines between `@@` / `*** ` headers) is judged alone."""
    lines = patch.split("\n")
    changed = False
    start = 0
    for end in range(len(lines) + 1):
        if end < len(lines) and not lines[end].startswith(("@@", "*** ")):
            continue
        hunk, start = range(start, end), end + 1
        found = [i for i in hunk if lines[i][:1] in (" ", "-")]
        # The lines the hunk expects to find come from the file and count up by one; added lines
        # are the model's own and lose a gutter only where they mirror one.
        gutter = _gutter_of([lines[i][1:] for i in found]) if found else None
        if gutter is None:
            continue
        for i in hunk:
            mark, rest = lines[i][:1], lines[i][1:]
            if mark in (" ", "-"):
                lines[i] = mark + _strip_line(gutter, rest)
            elif mark == "+" and (m := gutter.match(rest)):
                lines[i] = mark + rest[m.end():]
        changed = True
    return "\n".join(lines) if changed else None


#: Where a patch envelope is passed whole (`_strip_gutters` reads the same fields).
_ENVELOPED = ("patch",)


def _is_unified_diff(text: str) -> bool:
    return any(line.startswith("@@") for line in text.split("\n"))


def _strip_gutters(args: Args) -> None:
    mirrored: re.Pattern[str] | None = None
    for key in _ENVELOPED:
        value = args.get(key)
        if isinstance(value, str) and value.lstrip().startswith(PATCH_ENVELOPE):
            stripped = strip_patch_gutter(value)
            if stripped is not None:
                args[key] = stripped
            return
    for key in _GUTTERED:
        value = args.get(key)
        if isinstance(value, str) and key not in _OLD and _is_unified_diff(value):
            # A unified diff's gutter sits after each line's ` `/`-`/`+` marker, hunk by hunk.
            stripped = strip_patch_gutter(value)
            if stripped is not None:
                args[key] = stripped
            continue
        if isinstance(value, str):
            lines = value.split("\n")
            gutter = _gutter_of(lines)
            if gutter is not None:
                args[key] = "\n".join(_strip_line(gutter, line) for line in lines)
                if key in _OLD:
                    mirrored = gutter
    if mirrored is not None:
        for key in _NEW:
            value = args.get(key)
            if isinstance(value, str):
                # The model wrote new lines without numbers beside copied ones: strip per line.
                args[key] = "\n".join(
                    line[m.end():] if (m := mirrored.match(line)) else line
                    for line in value.split("\n")
                )


def _trim_trailing(args: Args) -> None:
    for key in (*_OLD, *_NEW):
        value = args.get(key)
        if isinstance(value, str):
            args[key] = _TRAILING.sub("", value)


_FENCED = (*_OLD, *_NEW, "content", "body")


def _fenced(key: str, value: object) -> str | None:
    """The text inside `value` when it is exactly one fence a field named `key` can carry."""
    match = _FENCE.match(value) if isinstance(value, str) else None
    if match is None or "```" in match.group(1):
        return None
    inner = match.group(1)
    if key in _FENCED:
        return inner
    return inner if key in _ENVELOPED and inner.lstrip().startswith(PATCH_ENVELOPE) else None


def _unfence(args: Args) -> None:
    for key in (*_FENCED, *_ENVELOPED):
        inner = _fenced(key, args.get(key))
        if inner is not None:
            args[key] = inner


def _shrink(args: Args) -> None:
    for key in _OLD:
        value = args.get(key)
        if isinstance(value, str) and len(value.split("\n")) > 2:
            first = next((line for line in value.split("\n") if line.strip()), "")
            if first:
                args[key] = first


def _replace_all(args: Args) -> None:
    if args.get("replace_all") is not True:
        args["replace_all"] = True


_OBJECT_TRANSFORMS: dict[str, Callable[[Args], None]] = {
    "strip_line_number_prefix": _strip_gutters,
    "trim_trailing_whitespace": _trim_trailing,
    "unfence_code": _unfence,
    "shrink_old_str": _shrink,
    "set_replace_all": _replace_all,
}


def dump_args(args: Args) -> str:
    """Compact JSON for tool arguments (key order kept, non-ASCII kept)."""
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def _load_object(text: str) -> Args | None:
    try:
        value = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def transform(name: str, args: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """Apply the named transform to a call's arguments (a map in the shared words); the new map
    and whether it changed. `repair_json` needs the text: it never changes a map."""
    step = _OBJECT_TRANSFORMS.get(name)
    before, obj = dict(args), dict(args)
    if step is None:
        return obj, False
    step(obj)  # each step replaces top-level values, never edits one in place
    return obj, obj != before


def apply_transform(name: str, args: str) -> tuple[str, bool]:
    """`transform` over a JSON-object argument text (S-10.4)."""
    if name == "repair_json":
        if _load_object(args) is not None:
            return args, False
        repaired = repair_json(args)
        obj = _load_object(repaired) if repaired is not None else None
        return (dump_args(obj), True) if obj is not None else (args, False)
    loaded = _load_object(args) if name in _OBJECT_TRANSFORMS else None
    if loaded is None:
        return args, False
    new, changed = transform(name, loaded)
    return (dump_args(new), True) if changed else (args, False)


def same_json(a: str, b: str) -> bool:
    """Semantic JSON equality of two texts (False if either does not parse)."""
    try:
        return bool(json.loads(a) == json.loads(b))
    except (ValueError, TypeError, RecursionError):
        return False


def infer_between(failed: Mapping[str, Any], fixed: Mapping[str, Any]) -> str | None:
    """The named transform that turns the `failed` arguments into the `fixed` ones exactly (maps
    in the shared words), if there is one; None when they are equal or no single transform
    explains the fix."""
    if failed == fixed:
        return None
    for name in TRANSFORMS:
        new_args, changed = transform(name, failed)
        if changed and new_args == fixed:
            return name
    return None


def infer_transform(failed_args: str, fixed_args: str) -> str | None:
    """`infer_between` over JSON texts (a report's arguments): also `repair_json`, which turns a
    text that does not parse into the fixed arguments. None when the fixed arguments are not
    JSON."""
    fixed = _load_object(fixed_args)
    if fixed is None or same_json(failed_args, fixed_args):
        return None
    failed = _load_object(failed_args)
    if failed is not None:
        return infer_between(failed, fixed)
    new_args, changed = apply_transform("repair_json", failed_args)
    return "repair_json" if changed and same_json(new_args, fixed_args) else None


#: Longest `old_str` that still reads as one token (an identifier or a call site).
TOKEN_EDIT_MAX = 80


def is_token_edit(args: Mapping[str, Any]) -> bool:
    """True when the edit replaces one whitespace-free token (`defaultRetries`, `print(`).

    Replacing every occurrence of such a token is what a rename or a call-site rewrite means;
    replacing every occurrence of a statement or a block rarely is.
    """
    old = next((args[k] for k in _OLD if isinstance(args.get(k), str)), None)
    return isinstance(old, str) and 0 < len(old) <= TOKEN_EDIT_MAX and not any(
        ch.isspace() for ch in old
    )


# --- preconditions --------------------------------------------------------------


def _has_gutter(obj: Mapping[str, Any]) -> bool:
    if any(isinstance(obj.get(k), str) and obj[k].lstrip().startswith(PATCH_ENVELOPE)
           and strip_patch_gutter(obj[k]) is not None for k in _ENVELOPED):
        return True
    return any(isinstance(obj.get(k), str) and (
        strip_patch_gutter(obj[k]) is not None if k not in _OLD and _is_unified_diff(obj[k])
        else strip_gutter(obj[k]) is not None) for k in _GUTTERED)


def _has_trailing_space(obj: Mapping[str, Any]) -> bool:
    for key in _OLD:
        value = obj.get(key)
        if isinstance(value, str) and any(
            line.strip() and line != line.rstrip(" \t\r")
            for line in (strip_gutter(value) or value).split("\n")
        ):
            return True
    return False


def _has_fence(obj: Mapping[str, Any]) -> bool:
    return any(_fenced(key, obj.get(key)) is not None for key in (*_FENCED, *_ENVELOPED))


def _multi_line_old(obj: Mapping[str, Any]) -> bool:
    return any(isinstance(obj.get(k), str) and len(obj[k].split("\n")) > 2 for k in _OLD)


_PRECONDITIONS: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "strip_line_number_prefix": _has_gutter,
    "trim_trailing_whitespace": _has_trailing_space,
    "unfence_code": _has_fence,
    "shrink_old_str": _multi_line_old,
    "set_replace_all": lambda obj: obj.get("replace_all") is not True and is_token_edit(obj),
}


def fits_args(name: str, args: Mapping[str, Any]) -> bool:
    """True when the failed call's arguments (a map in the shared words) show what transform
    `name` repairs (see the module docstring); never `repair_json` (a map parsed already)."""
    check = _PRECONDITIONS.get(name)
    return check is not None and check(args)


def fits(name: str, args: str) -> bool:
    """`fits_args` over a JSON text; `repair_json` when the text has a slip (not a cut-off)."""
    if name == "repair_json":
        return _load_object(args) is None and not json_cut_off(args) and repair_json(args) is not None
    obj = _load_object(args) if name in _PRECONDITIONS else None
    return obj is not None and fits_args(name, obj)


def repair_for(name: str, args: str) -> str | None:
    """The arguments repaired by `name`, when its precondition holds and it changes them."""
    if not fits(name, args):
        return None
    new_args, changed = apply_transform(name, args)
    return new_args if changed else None


#: A failed call's arguments as transforms take them: a map in the shared words, or the text
#: of arguments that never parsed (only `repair_json` can do anything with those).
CallArgs = Mapping[str, Any] | str


def as_call_args(args: CallArgs) -> CallArgs:
    """`args` as a map when it is a JSON object's text, else as given (parsed once, here)."""
    if isinstance(args, str):
        obj = _load_object(args)
        return obj if obj is not None else args
    return args


def fits_call(name: str, args: CallArgs) -> bool:
    """`fits_args` for a map, `fits` for a text."""
    return fits(name, args) if isinstance(args, str) else fits_args(name, args)


def repaired(name: str, args: CallArgs) -> tuple[CallArgs, bool]:
    """`transform` for a map, `apply_transform` for a text."""
    return apply_transform(name, args) if isinstance(args, str) else transform(name, args)

