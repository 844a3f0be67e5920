"""What a fix is made of, decided from the calls alone: its distinguishing part, and whether the
failed call or the project's earlier fixes could have told it.

* `facets(failed, fix, read_tools)`: the fix's *distinguishing part*, a list of facets, each a
  list of acceptable namings — a changed tool's name (the new tool's content arguments are then
  the model's work, not part of it); each changed setting's key (set to 1, "exactly one" names
  it too: mini-swe-agent's one block per reply); a changed path's new value; for a shell command, each word run the fix inserted
  or replaced (`difflib` over the words); for a fix that resends the same call, or the same edit
  of the same file with other text (read then resend), a read tool of the harness.
* `names_fix(text, facets)`: advice names the fix when it names every facet (any naming of each).
* `call_derivable`: the failed call alone could have told the fix — every facet is named by the
  error the harness showed (a setting by its key, a tool by its name, a read by "read"), or one
  of the shipped argument transforms turns the failed call into the fix.
* `memory_key`: what an earlier failure's fix must share for this one to be *memory-derivable*:
  the tool family, the failure class and the distinguishing part. Independent of what any rule
  book learned: two failures share it or not.

Pure: no I/O.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence

from slmactor.logic.evolve import typed_repairs as tr

Facets = list[list[str]]


def _norm(value: object) -> object:
    if isinstance(value, str):
        return tr.norm_command(value)
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_norm(v) for v in value]
    return value


def same_call(a: tr.Call, b: tr.Call) -> bool:
    """The same tool with the same arguments (whitespace runs in strings collapsed)."""
    return a.tool == b.tool and _norm(dict(a.args)) == _norm(dict(b.args))


def _setting(key: str) -> list[str]:
    return [f"`{key}", f"{key}:", f"{key}="]


def facets(failed: tr.Call, fix: tr.Call, read_tools: Sequence[str]) -> Facets:
    """The fix's distinguishing part (see the module docstring)."""
    out: Facets = []
    reads = list(read_tools)
    if fix.tool != failed.tool:
        out.append([fix.tool])
    before, after = failed.command, fix.command
    if after and before:
        a, b = tr._words(tr.norm_command(before)), tr._words(tr.norm_command(after))
        ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
        for op, _i1, _i2, j1, j2 in ops:
            if op in ("insert", "replace"):
                out.append([" ".join(b[j1:j2])])
        if a == b and fix.tool == failed.tool:
            # The same command again: what it was sent with is what differs (a longer timeout,
            # a request to leave the sandbox, to run in the background); with nothing else
            # changed, a read before it (the precondition).
            settings = [key for key, value in fix.args.items() if key != tr.COMMAND_KEY
                        and (key not in failed.args or not tr._same(failed.args[key], value))]
            out.extend(_setting(key) for key in settings)
            if not settings:
                out.append(reads)
        return out
    changed = {k for k, v in fix.args.items() if k not in failed.args or not tr._same(failed.args[k], v)}
    if (fix.tool == failed.tool and changed and changed <= tr.CONTENT_KEYS
            and not set(failed.args) - set(fix.args) and tr.target(failed) == tr.target(fix)
            and failed.family == "edit"):
        # The same edit of the same file with other text: the text is the model's work, read
        # from the file again; reading is the part memory can say.
        return [reads]
    for key, value in fix.args.items():
        if key in failed.args and tr._same(failed.args[key], value):
            continue
        if key == tr.PATH_KEY:
            out.append([str(value).replace("\\", "/"), str(value)])
        elif key == tr.COMMAND_KEY and after and not before:
            continue  # the action the fix took: its other facet is what differs
        elif key in tr.CONTENT_KEYS or not tr._scalar(value):
            if fix.tool != failed.tool:
                continue  # the new tool's content is the model's work; the switch is the part
            out.append([json.dumps(value)[:60]])
        elif value == 1:
            out.append(["exactly one", *_setting(key)])  # a count set to one, or a setting named
        else:
            out.append(_setting(key))
    if not out:
        out.append(reads)
    return out


def names_fix(text: str, wanted: Facets) -> bool:
    """Whether `text` names every facet of a fix (any naming of each)."""
    low = tr.norm_command(text).lower()
    return bool(wanted) and all(any(tr.norm_command(n).lower() in low for n in facet if n)
                                for facet in wanted)


_WORD_EDGE = r"(?<![A-Za-z0-9_]){}(?![A-Za-z0-9_])"


def _bare(naming: str) -> str:
    """A naming as a program would say it: a setting's key without the marks advice uses."""
    return naming.strip().strip("`").rstrip(":=").strip()


def call_derivable(failed: tr.Call, fix: tr.Call, error: str, wanted: Facets,
                   read_tools: Sequence[str], shipped_transform: str | None) -> bool:
    """Whether the failed call alone could have told the fix (see the module docstring)."""
    if shipped_transform:
        return True
    if not wanted:
        return False
    low = error.lower()
    reads = {r.lower() for r in read_tools}
    for facet in wanted:
        names = [_bare(n).lower() for n in facet if _bare(n)]
        if names and all(n in reads for n in names):
            names.append("read")  # a read tool is named by the program's "read it first"
        if not any(re.search(_WORD_EDGE.format(re.escape(n)), low) for n in names if n):
            return False
    return True


def memory_key(family: str, cls: str, wanted: Facets) -> str:
    """What an earlier failure's fix must share with this one's for memory to have held it."""
    parts = sorted(sorted(tr.norm_command(n).lower() for n in facet) for facet in wanted)
    return json.dumps([family, cls, parts])
