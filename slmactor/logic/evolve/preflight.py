"""Pre-flight repair of an edit: fix a search/replace call *before* it fails.

A harness's pre-tool hook hands us the edit it is about to run and the file it will run on.
When the text to replace does not occur in the file, the call is going to fail; this module tries
the candidate repairs — the arguments a learned rule produced, and the safe generic transforms
(a read tool's line-number gutter in every real format, trailing whitespace, CRLF line endings) —
and picks one only when it is unambiguous:

* exactly one distinct candidate occurs in the file, and it occurs exactly once (or as many times
  as the call asks to replace: `replace_all`, or the number it `expected`);
* the original text does not occur (a call that would work is never touched);
* otherwise nothing is rewritten and the reason says why (no candidate, several candidates,
  several places).

The arguments are a map in the shared words (`ToolCall.shared`: `old_str`, `new_str`,
`replace_all`, `expected`, `patch`); the caller turns a chosen candidate back into its harness's
keys (`ToolCall.localized`). Pure: the caller reads the file and asks the daemon; this module only
compares strings. Patch edits (`*** Begin Patch` envelopes): `decide_patch` does the same for
every hunk of a patch's `*** Update File:` sections, on the lines each hunk expects to find
(context and removed lines).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from slmactor.logic.evolve.transforms import strip_patch_gutter, transform
from slmactor.logic.failures.call import EXPECTED, NEW, OLD, PATCH, REPLACE_ALL

#: Generic transforms tried on every not-found edit, safest first.  Each is checked against the
#: file, so a transform that is wrong for this call simply finds nothing.
GENERIC_TRANSFORMS: tuple[str, ...] = ("strip_line_number_prefix", "trim_trailing_whitespace")
#: Label of the file-aware line-ending repair (not a named transform: it depends on the file).
CRLF = "line_endings"


@dataclass(frozen=True, slots=True)
class Candidate:
    """Arguments that might make the call succeed, and where they came from."""

    args: dict[str, Any]
    transform: str
    #: The learned rule that produced them ("" for a generic transform).
    rule_id: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    """What pre-flight concluded: `candidate` is set only when the call is to be rewritten."""

    reason: str
    candidate: Candidate | None = None

    @property
    def rewrite(self) -> bool:
        return self.candidate is not None


def _wanted(args: Mapping[str, Any]) -> int:
    """How many occurrences the call may replace (0 = any number ≥ 1)."""
    if args.get(REPLACE_ALL) is True:
        return 0
    expected = args.get(EXPECTED)
    if isinstance(expected, int) and not isinstance(expected, bool) and expected > 0:
        return expected
    return 1


def _fits(count: int, wanted: int) -> bool:
    return count >= 1 if wanted == 0 else count == wanted


def generic_candidates(args: Mapping[str, Any], text: str) -> list[Candidate]:
    """The safe generic repairs of `args` for a file whose content is `text`."""
    out: list[Candidate] = []
    for name in GENERIC_TRANSFORMS:
        fixed, changed = transform(name, args)
        if changed:
            out.append(Candidate(fixed, name))
    old, new = args.get(OLD), args.get(NEW)
    if isinstance(old, str) and "\n" in old:
        if "\r\n" in text and "\r\n" not in old:
            swap = {OLD: old.replace("\n", "\r\n")}
            if isinstance(new, str):
                swap[NEW] = new.replace("\r\n", "\n").replace("\n", "\r\n")
            out.append(Candidate({**args, **swap}, CRLF))
        elif "\r\n" in old and "\r\n" not in text:
            swap = {OLD: old.replace("\r\n", "\n")}
            if isinstance(new, str):
                swap[NEW] = new.replace("\r\n", "\n")
            out.append(Candidate({**args, **swap}, CRLF))
    return out


def decide(args: Mapping[str, Any], text: str, candidates: Sequence[Candidate]) -> Decision:
    """Rewrite only when exactly one distinct candidate fits the file (see module docstring)."""
    old = args.get(OLD)
    if not isinstance(old, str) or not old:
        return Decision("not a search/replace edit")
    wanted = _wanted(args)
    if old in text:
        return Decision("the text to replace is in the file")
    fitting: dict[tuple[str, str], Candidate] = {}
    crowded = 0
    for cand in candidates:
        cand_old = cand.args.get(OLD)
        if not isinstance(cand_old, str) or not cand_old or cand_old == old:
            continue
        count = text.count(cand_old)
        if _fits(count, wanted):
            key = (cand_old, str(cand.args.get(NEW, "")))
            # A learned rule and a generic transform that agree are one candidate; keep the rule.
            if key not in fitting or (cand.rule_id and not fitting[key].rule_id):
                fitting[key] = cand
        elif count > 1:
            crowded += 1
    if len(fitting) == 1:
        return Decision("one repair matches the file exactly once", next(iter(fitting.values())))
    if len(fitting) > 1:
        return Decision(f"{len(fitting)} different repairs match the file: ambiguous")
    if crowded:
        return Decision("a repair matches several places in the file: ambiguous")
    return Decision("no repair matches the file")


# ------------------------------------------------------------------------- patch envelopes

_UPDATE = "*** Update File: "


def _hunks(patch: str) -> list[tuple[str, str]]:
    """(path, the text the hunk expects to find) for every hunk of every `*** Update File:`."""
    out: list[tuple[str, str]] = []
    path = ""
    expected: list[str] = []

    def flush() -> None:
        if path and expected:
            out.append((path, "\n".join(expected)))
        expected.clear()

    for line in patch.split("\n"):
        if line.startswith(("@@", "*** ")):
            flush()
            if line.startswith("*** "):
                path = line[len(_UPDATE):].strip() if line.startswith(_UPDATE) else ""
        elif path and line[:1] in (" ", "-"):
            expected.append(line[1:])
    flush()
    return out


def patch_paths(patch: str) -> list[str]:
    """The files a patch updates (`*** Update File:` headers), in order, without repeats."""
    seen: dict[str, None] = {}
    for line in patch.split("\n"):
        if line.startswith(_UPDATE) and line[len(_UPDATE):].strip():
            seen[line[len(_UPDATE):].strip()] = None
    return list(seen)


def _applies(patch: str, files: Mapping[str, str], *, once: bool) -> bool | None:
    """Whether every hunk's expected text is in its file (exactly once when `once`); None when a
    file could not be read, so the patch cannot be judged."""
    for path, expected in _hunks(patch):
        text = files.get(path)
        if text is None:
            return None
        count = text.count(expected)
        if count == 0 or (once and count != 1):
            return False
    return True


def decide_patch(patch: str, files: Mapping[str, str], candidates: Sequence[Candidate],
                 key: str = PATCH) -> Decision:
    """`decide` for a patch edit: `files` maps each patched path to its text.

    A candidate is taken only when every one of its hunks finds its expected text exactly once,
    while the original patch has a hunk that finds nothing; any unreadable file means no rewrite.
    """
    if not _hunks(patch):
        return Decision("the patch updates no file")
    original = _applies(patch, files, once=False)
    if original is None:
        return Decision("a patched file could not be read")
    if original:
        return Decision("every hunk of the patch is in its file")
    fitting: dict[str, Candidate] = {}
    for cand in candidates:
        fixed = cand.args.get(key)
        if not (isinstance(fixed, str) and fixed != patch and _applies(fixed, files, once=True)):
            continue
        if fixed not in fitting or (cand.rule_id and not fitting[fixed].rule_id):
            fitting[fixed] = cand
    if len(fitting) == 1:
        return Decision("the repaired patch matches each file exactly once",
                        next(iter(fitting.values())))
    if fitting:
        return Decision(f"{len(fitting)} different repairs match the files: ambiguous")
    return Decision("no repair makes every hunk match exactly once")


def generic_patch_candidates(patch: str, key: str = PATCH) -> list[Candidate]:
    """The safe generic repairs of a patch: its line-number gutters stripped."""
    fixed = strip_patch_gutter(patch)
    return [Candidate({key: fixed}, "strip_line_number_prefix")] if fixed is not None else []
