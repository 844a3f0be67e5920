"""The fix a rendered line names, parsed (`parse_fix`) and checked against the failures it is
for (`check_fix`): the README's F-same-call, F-reread, F-swap-equal, F-swap-target, F-mask,
F-failed-later, F-shell-state, F-dont-retry and F-fix-absent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from bench.truth.evidence import (
    Index,
    Rec,
    Verdict,
    args_equal,
    basename_of,
    false,
    later_failed_same_way,
    same_goal,
    shell_target,
    show,
)
from bench.truth.shell import (
    begins,
    cnorm,
    command_paths,
    is_pathlike,
    masks,
    norm,
    segments,
    slash,
    starts_like,
    step,
    words_of,
)

_READ_ONLY_HEADS = frozenset({"ls", "cat", "head", "tail", "grep", "rg", "egrep", "find", "wc", "echo", "pwd",
                              "which", "type", "file", "stat", "du", "df", "tree", "less", "more", "sort",
                              "uniq", "diff", "cmp", "git status", "git log", "git diff", "git show", "git branch",
                              "git remote", "git rev-parse", "git grep", "git blame", "whoami", "date", "env",
                              "printenv", "jq", "awk", "cut", "basename", "dirname", "realpath", "readlink",
                              "sleep", "ps", "gh pr", "gh run", "gh api", "gh issue", "curl", "sed"})


@dataclass
class Fix:
    kind: str
    fields: dict[str, str]
    text: str
    clipped: bool = False


_FIX_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("same", re.compile(r"^the same (?P<tool>\S+) call on(?P<where>.*?)(?: succeeded when run again\.?)?$", re.DOTALL)),
    ("reread", re.compile(r"^reading (?P<where>\S.*?) again\b(?:, then (?P<tool>\S+) again\b.*)?$", re.DOTALL)),
    ("read_first", re.compile(r"^(?P<rtool>\S+) `(?P<where>.+?)` first, then (?:the (?P<tool>\S+) resent with its text "
                              r"copied from what it read|the same (?P<tool2>\S+) call)\.?$")),
    ("run_first", re.compile(r"^Run `(?P<x>[^`]+)` first\b")),
    ("dont", re.compile(r"^Do not retry (?P<tool>\S+) on this target: (?P<why>.+?)\.?$")),
    ("swap", re.compile(r"^(?:Run )?`(?P<b>[^`]+(?:`[^`]*`[^`]*)*?)` instead of `(?P<a>[^`]+?)(?:`(?: \(`(?P<full>.+)`\))?"
                        r"\.?|…)?$", re.DOTALL)),
    ("adding", re.compile(r"^adding `(?P<add>.+?)` \(as `(?P<full>.+)`\)\.?$")),
    ("add", re.compile(r"^Add `(?P<add>.*)` to the command\.?$")),
    ("bound", re.compile(r"^Bound the output: append `(?P<add>.+)`\.?$")),
    ("with", re.compile(r"^(?P<tool>[\w.-]+) with (?P<settings>`.+`)\.?$")),
    ("switch", re.compile(r"^(?P<t2>[\w.-]+) instead of (?P<t1>[\w.-]+) on (?P<where>.+)$")),
    ("wrong_tool", re.compile(r"^(?P<t1>[\w.-]+) is the wrong tool for this; use (?P<t2>[\w.-]+)\.?$")),
    ("transform", re.compile(r"^the same (?:edit|content) .*\((?P<tool>\S+) on (?P<where>.+)\)$")),
    ("corrected", re.compile(r"^a corrected (?P<tool>\S+) on (?P<where>.+)$")),
    ("command", re.compile(r"^`(?P<cmd>[^`].*?)(?:`\.?|…)$", re.DOTALL)),
)


def parse_fix(text: str) -> Fix:
    text = text.strip()
    for kind, pattern in _FIX_SHAPES:
        m = pattern.match(text)
        if m:
            fields = {k: v for k, v in m.groupdict().items() if v is not None}
            cut = text.endswith("…") or kind == "swap" and not re.search(r"`\)?\.?$", text)
            return Fix(kind, fields, text, clipped=cut)
    return Fix("other", {}, text, clipped=text.endswith("…"))


def _between(failed: Rec, fixed: Rec, index: Index) -> list[Rec]:
    return index.recs[failed.s][failed.c + 1:fixed.c]


def _changes(rec: Rec) -> bool:
    """A call that changed something (an edit, or a shell command that is not read-only)."""
    if rec.failed:
        return False
    if rec.fam == "edit":
        return True
    if rec.fam == "shell" and rec.command:
        heads = {step(seg).head for seg in segments(rec.command)}
        return not all(h in _READ_ONLY_HEADS or h.split(" ", 1)[0] in _READ_ONLY_HEADS for h in heads if h)
    return False


def _reads(rec: Rec, path: str, index: Index) -> bool:
    """A successful call that read the file: a read tool on it, or a read-only shell command naming it
    (Codex and Gemini read files with `sed -n`, `cat`, `nl`, `rg`)."""
    if rec.failed or not path:
        return False
    if rec.fam == "read":
        return index.same_path(rec.path, path)
    if rec.fam == "shell" and rec.command and not _changes(rec):
        target = index.rel(path)
        return any(o.startswith("path:") and (o[5:] == target or basename_of(o[5:]) == basename_of(path) and target is None)
                   for o in shell_target(rec.command, index, rec.base).operands) or slash(path) in slash(rec.command)
    return False


def _next_on_target(failed: Rec, index: Index, tool: str = "") -> Rec | None:
    """The next successful call of the same tool on the failed call's target."""
    for r in index.after(failed):
        if r.failed or r.call.tool != (tool or failed.call.tool):
            continue
        if failed.path and r.path and index.same_path(r.path, failed.path):
            return r
        if failed.command and r.command and shell_target(r.command, index, r.base).head == shell_target(
                failed.command, index, failed.base).head:
            return r
        if not failed.path and not failed.command:
            return r
    return None


def where_of(fix: Fix) -> str:
    return fix.fields.get("where", "").strip().rstrip("…").strip()


def _on_where(rec: Rec, where: str, index: Index) -> bool:
    return bool(where) and bool(rec.path and (index.same_path(where, rec.path) or starts_like(where, rec.path))
                                or rec.command and starts_like(where, rec.command))


def _narrow(recs: list[Rec], fix: Fix, index: Index) -> list[Rec]:
    """Of the failures a line's error names, those the fix's own tool and target name."""
    tool = fix.fields.get("tool") or fix.fields.get("tool2") or fix.fields.get("t1") or ""
    where = where_of(fix)
    kept = [r for r in recs if (not tool or r.call.tool == tool) and (not where or _on_where(r, where, index))]
    if fix.kind == "swap" and fix.fields.get("a"):
        kept = [r for r in kept if r.command and begins(fix.fields["a"], r.command)]
    return kept or recs


def fix_command(fix: Fix) -> str:
    f = fix.fields
    return (f.get("full") or f.get("b") or f.get("cmd") or "").rstrip("`")


def _ran_fix(fix: Fix, rec: Rec) -> bool:
    """Whether a successful call is the fix the line names (its command, or its first step)."""
    if rec.failed or not rec.command:
        return False
    if fix.kind == "run_first":
        return cnorm(rec.command).startswith(cnorm(fix.fields["x"]))
    want = fix_command(fix)
    return bool(want) and (begins(want, rec.command) or fix.kind == "swap" and begins(fix.fields["b"], rec.command))


def fix_candidates(failures: list[Rec], fix: Fix, index: Index) -> list[Rec]:
    """The failures a fix speaks of: those the line named (narrowed to the fix's own tool and
    target), else those the fix names itself, else the failures its fixing call followed."""
    if failures:
        return _narrow(failures, fix, index)
    f = fix.fields
    if fix.kind == "swap" and f.get("a"):
        # the failures the fix followed: the last failed call of its family before each run of
        # the fix (within 11 calls), that begins like the fix's "instead of" part
        named = [r for r in _followed(fix, index) if r.command and begins(f["a"], r.command)]
        if named:
            return named
        return [r for r in index.failures() if r.command and begins(f["a"], r.command)]
    where = where_of(fix)
    tool = f.get("tool") or f.get("tool2") or ""
    if fix.kind in ("reread", "read_first", "transform", "corrected", "same") and where:
        return [r for r in index.failures() if (not tool or r.call.tool == tool) and _on_where(r, where, index)]
    if fix.kind == "switch":
        return [r for r in index.failures() if r.call.tool == f["t1"] and _on_where(r, where, index)]
    if fix.kind == "dont":
        return [r for r in index.failures() if r.call.tool.lower() == f["tool"].lower()
                or r.fam == {"bash": "shell"}.get(f["tool"].lower(), f["tool"].lower())]
    if fix.kind == "with":
        settings = dict(re.findall(r"`([\w.-]+): (.+?)`", f["settings"]))
        found = []
        for row in index.recs:
            for k, rec in enumerate(row):
                if not rec.failed and rec.call.tool == f["tool"] and all(
                        norm(json.dumps(rec.call.args.get(key))) == norm(v) for key, v in settings.items()):
                    before = [r for r in row[max(0, k - 11):k] if r.failed and r.call.tool == f["tool"]]
                    if before and before[-1] not in found:
                        found.append(before[-1])
        return found
    if fix.kind in ("command", "swap", "run_first", "adding"):
        return _followed(fix, index)
    return []


def _followed(fix: Fix, index: Index) -> list[Rec]:
    """For every successful run of the fix, the last failed call of its family in the 11 before it."""
    found: list[Rec] = []
    for row in index.recs:
        for k, rec in enumerate(row):
            if _ran_fix(fix, rec):
                before = [r for r in row[max(0, k - 11):k] if r.failed and r.fam == rec.fam]
                if before and before[-1] not in found:
                    found.append(before[-1])
    return found


_SHELL_STATE = frozenset({"cd", "pushd", "popd", "mkdir", "export", "unset", "source", ".", "set", "alias", "touch",
                          "rm", "git stash", "git checkout", "git switch", "git reset", "git clean", "kill", "pkill"})


def check_fix(fix: Fix, failures: list[Rec], index: Index) -> Verdict | None:
    """None when the transcripts support the fix for at least one of the failures, else why not."""
    f = fix.fields
    kind = fix.kind
    if kind == "swap" and cnorm(f["a"]).rstrip("…") == cnorm(f["b"]).rstrip("…"):
        return false("F-swap-equal", f"the fix `{norm(f['b'])[:120]}` is the failed call itself")
    if kind == "run_first":
        heads = {step(seg).head for seg in segments(f["x"])}
        if heads and all(h in _SHELL_STATE or h.split(" ", 1)[0] in _SHELL_STATE for h in heads):
            return false("F-shell-state", f"`{f['x']}` is a one-time shell state of one session, not a project fact")
    candidates = fix_candidates(failures, fix, index)
    if kind in ("other", "corrected", "wrong_tool", "bound", "add") and not candidates:
        return None
    if not candidates:
        return false("F-unsupported", "no failed call of the history matches what the fix is for")
    problems: list[Verdict] = []
    for failed in candidates:
        verdict = check_one(fix, failed, index)
        if verdict is None:
            return None
        problems.append(verdict)
    order = ("F-swap-equal", "F-swap-target", "F-failed-later", "F-same-call", "F-reread", "F-dont-retry",
             "F-fix-absent")
    return min(problems, key=lambda v: order.index(v.rule) if v.rule in order else len(order))


def check_one(fix: Fix, failed: Rec, index: Index) -> Verdict | None:
    f = fix.fields
    kind = fix.kind
    if kind == "same":
        again = next((r for r in index.after(failed) if not r.failed and args_equal(r.call, failed.call)), None)
        if again is None:
            nxt = _next_on_target(failed, index)
            if nxt is None:
                return false("F-fix-absent", f"{show(failed)}; nothing on its target succeeded later in that session")
            return false("F-same-call", f"{show(failed)}; the same call never succeeded again, the next on its "
                         f"target had other arguments: {show(nxt)}")
        between = [r for r in _between(failed, again, index) if _changes(r) or r.path and failed.path
                   and index.same_path(r.path, failed.path)]
        if between:
            return false("F-same-call", f"{show(failed)} → {show(again)}; in between: "
                         + "; ".join(show(r, 80) for r in between[:3]))
        return None
    if kind in ("reread", "read_first", "transform"):
        nxt = _next_on_target(failed, index)
        if nxt is None:
            return false("F-fix-absent", f"{show(failed)}; no later {failed.call.tool} on it succeeded in that session")
        if kind == "transform":
            return None if not args_equal(nxt.call, failed.call) else false(
                "F-same-call", f"{show(failed)} → {show(nxt)}: the same arguments")
        reads = [r for r in _between(failed, nxt, index) if _reads(r, failed.path, index)]
        if not reads:
            return false("F-reread", f"{show(failed)} → {show(nxt)} with no read of the file in between")
        if f.get("tool2") and not args_equal(nxt.call, failed.call):
            return false("F-same-call", f"{show(failed)} → {show(nxt)}: resent with other arguments")
        return None
    if kind in ("swap", "command", "adding"):
        want = fix_command(fix)
        for r in index.after(failed):
            if not _ran_fix(fix, r):
                continue
            if failed.command and cnorm(r.command).startswith(cnorm(failed.command)) and masks(
                    cnorm(r.command)[len(cnorm(failed.command)):]):
                return false("F-mask", f"{show(failed)} → {show(r)}: the fix is the failed command with a step "
                             "that does nothing or hides its exit status")
            if failed.command and cnorm(r.command) == cnorm(failed.command) and kind == "swap":
                return false("F-swap-equal", f"{show(failed)} → {show(r)}: the fix is the failed command itself")
            ok, why = same_goal(failed, r.command, index, r.base) if failed.command else (True, "")
            if not ok:
                return false("F-swap-target", f"{show(failed)} → {show(r)}: {why}")
            again = later_failed_same_way(r, failed, index)
            if again is not None:
                return false("F-failed-later", f"{show(failed)} → {show(r)}, then {show(again)}")
            return None
        return false("F-fix-absent", f"{show(failed)}; `{norm(want)[:100]}` never succeeded after it in that session")
    if kind in ("add", "adding", "bound") and masks(fix.fields.get("add", "")):
        return false("F-mask", f"adding `{fix.fields.get('add', '')}` does nothing to the command or hides its exit "
                     f"status: not a repair of {show(failed)}")
    if kind in ("add", "bound"):
        prev = ""
        for w in words_of(fix.fields["add"]):
            if kind == "add" and not w.startswith("-") and not re.search(r"[|<>&]", w) \
                    and not prev.startswith("-") and is_pathlike(w):
                return false("F-swap-target", f"adding the operand `{w}` narrows the command to another target "
                             f"({show(failed)})")
            prev = w
        return None
    if kind == "run_first":
        for r in index.after(failed):
            if _ran_fix(fix, r):
                return None
        return false("F-fix-absent", f"{show(failed)}; `{norm(f['x'])[:100]}` did not run after it in that session")
    if kind == "dont":
        for rec in index.all():
            if (rec.s, rec.c) <= (failed.s, failed.c) or rec.failed or rec.call.tool != failed.call.tool:
                continue
            if not failed.path or index.same_path(rec.path, failed.path):
                return false("F-dont-retry", f"{show(failed)} was refused, later {show(rec)} succeeded")
        return None
    if kind == "with":
        settings = dict(re.findall(r"`([\w.-]+): (.+?)`", f["settings"]))
        for r in index.after(failed):
            if r.failed or r.call.tool != f["tool"]:
                continue
            if all(norm(json.dumps(r.call.args.get(k))) == norm(v) for k, v in settings.items()):
                return None
        return false("F-fix-absent", f"{show(failed)}; no later {f['tool']} with {settings} succeeded in that session")
    if kind in ("switch", "wrong_tool"):
        for r in index.after(failed):
            if not r.failed and r.call.tool == f["t2"]:
                return None
        return false("F-fix-absent", f"{show(failed)}; no later {f['t2']} succeeded in that session")
    return None


def file_of_fix(fix: Fix) -> list[tuple[str, str]]:
    """The file a fix names as the one to work on (a read-first's file, a corrected call's)."""
    if fix.kind in ("reread", "read_first", "transform", "corrected", "same", "switch"):
        where = where_of(fix)
        if where and is_pathlike(where.replace(" ", "_")) and not where.startswith(("`", "(")):
            return [(where, "")]
    return []


def commands_of_fix(fix: Fix) -> list[tuple[str, str]]:
    """(path, cd base) of the paths the commands of a fix use."""
    out: list[tuple[str, str]] = []
    for key in ("b", "full", "cmd", "x"):
        if fix.fields.get(key):
            out += command_paths(fix.fields[key])
    return out
