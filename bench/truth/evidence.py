"""A project's history indexed for the truth labeller, and the evidence rules read from it.

`Index` holds every call (census readers, `bench/label_real.py` kinds). On it: which failed calls a
line names (`find_failures`), whether a failure was a refusal, a policy or a call that never ran
(`refusal_rule`), whether a later call of the session reached what it tried (`resolved_by`, rules
R1-R3 of `tests/fixtures/truth/README.md`), what a shell command works on (`shell_target`,
`same_goal`), and whether a path is gone (`stale_path`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bench.label_real import classify, command_of, failure_of, family, unwrap
from bench.real_census import Call
from bench.truth.history import History
from bench.truth.shell import (
    CD_OPTIONS,
    NOISE_HEADS,
    RUNNERS,
    TARGET_OPTIONS,
    cnorm,
    fragments,
    ignored,
    is_pathlike,
    moves,
    norm,
    program_of,
    quotes,
    relative,
    segments,
    slash,
    starts_like,
    step,
    words_of,
)


@dataclass(frozen=True)
class Verdict:
    label: str
    rule: str
    evidence: str = ""


def false(rule: str, evidence: str = "") -> Verdict:
    return Verdict("false", rule, evidence)


def empty(rule: str, evidence: str = "") -> Verdict:
    return Verdict("content_free", rule, evidence)


_PATH_KEYS = ("file_path", "path", "absolute_path", "notebook_path", "dir_path", "file", "target_file")


@dataclass
class Rec:
    """One call of the history as the rules see it."""

    s: int
    c: int
    call: Call
    fam: str
    command: str
    path: str
    text: str
    kind: str
    #: the project-relative folder the call ran in when it names one (Codex `workdir`, Gemini `dir_path`)
    base: str = ""

    @property
    def failed(self) -> bool:
        return self.call.failed


def call_path(args: dict[str, Any]) -> str:
    """The file a call works on: its path argument, or the first file a patch names."""
    for key in _PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    patch = args.get("input") or args.get("patch")
    if isinstance(patch, str):
        found = re.search(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", patch, re.MULTILINE)
        if found:
            return found.group(1).strip()
    return ""


@dataclass
class Index:
    history: History
    recs: list[list[Rec]] = field(default_factory=list)

    @classmethod
    def of(cls, history: History) -> Index:
        cached = _INDEX.get(id(history))
        if cached is not None and cached.history is history:
            return cached
        index = cls(history)
        for s, session in enumerate(history.sessions):
            row = []
            for c, call in enumerate(session.calls):
                text = unwrap(history.harness, call.result)[0] if call.failed else ""
                kind = classify(failure_of(history.harness, call)).kind if call.failed else ""
                rec = Rec(s, c, call, family(call.tool), command_of(call.args), call_path(call.args), text, kind)
                folder = call.args.get("workdir") or call.args.get("dir_path") or call.args.get("directory")
                if isinstance(folder, str) and folder and rec.command:
                    rec.base = relative(folder, history.cwds) or ""
                row.append(rec)
            index.recs.append(row)
        _INDEX.clear()
        _INDEX[id(history)] = index
        return index

    def all(self) -> Iterator[Rec]:
        for row in self.recs:
            yield from row

    def failures(self) -> Iterator[Rec]:
        return (r for r in self.all() if r.failed)

    def after(self, rec: Rec) -> list[Rec]:
        return self.recs[rec.s][rec.c + 1:]

    def rel(self, path: str, base: str = "") -> str | None:
        return relative(path, self.history.cwds, base)

    def same_path(self, a: str, b: str) -> bool:
        if not a or not b:
            return False
        ra, rb = self.rel(a), self.rel(b)
        if ra is not None and rb is not None:
            return ra == rb
        return slash(a).rstrip("/").lower() == slash(b).rstrip("/").lower()


_INDEX: dict[int, Index] = {}


def error_of(rec: Rec) -> str:
    return rec.call.result


def says(shown_error: str, rec: Rec) -> bool:
    """The shown error text quotes this failed call's result (raw or unwrapped)."""
    if not fragments(shown_error):
        return True
    code = re.fullmatch(r"\s*(?:exit status|Exit code:?|Exit Code:)\s*(-?\d+)\s*", shown_error)
    if code:
        return _exit_code(rec) == int(code.group(1))
    return quotes(shown_error, rec.call.result) or quotes(shown_error, rec.text) or quotes(
        cnorm(shown_error), cnorm(rec.call.result))


def _exit_code(rec: Rec) -> int | None:
    found = re.search(r"(?:Process exited with code|Exit code:?|Exit Code:|exit_code\"?:)\s*(-?\d+)", rec.call.result)
    return int(found.group(1)) if found else None


def args_equal(a: Call, b: Call) -> bool:
    def canon(args: dict[str, Any]) -> str:
        kept = {k: v for k, v in args.items() if k not in ("description", "timeout", "timeout_ms", "yield_time_ms",
                                                             "max_output_tokens", "workdir", "justification")}
        return norm(json.dumps(kept, sort_keys=True, ensure_ascii=False))
    return a.tool == b.tool and canon(a.args) == canon(b.args)


def show(rec: Rec, limit: int = 160) -> str:
    what = rec.command or (f"{rec.call.tool} {rec.path}" if rec.path else rec.call.tool)
    if not rec.command and not rec.path:
        what += " " + norm(json.dumps(rec.call.args, ensure_ascii=False))[:80]
    state = "failed" if rec.failed else "ok"
    return f"s{rec.s}#{rec.c} {rec.call.tool} {state}: {norm(what)[:limit]}"


@dataclass(frozen=True)
class Target:
    """What a shell command works on: the head of its first step that does something, and the
    operands of every such step (paths made project-relative through the session's cwd and any
    `cd` / `-C` the command made)."""

    head: str
    operands: frozenset[str]


def shell_target(command: str, index: Index, base: str = "", raw: bool = False) -> Target:
    """`raw`: paths as written (not resolved through the cwd), and no note of where it ran."""
    start = base
    moved_to = ""
    operands: set[str] = set()
    head = ""

    def move(to: str) -> None:
        nonlocal base, moved_to
        rel = index.rel(to.strip("'\""), base)
        base = rel if rel is not None else base
        moved_to = rel if rel is not None else slash(to.strip("'\"")).rstrip("/")

    for segment in segments(command):
        words = words_of(segment)
        if words and words[0] in ("cd", "pushd") and len(words) > 1:
            move(words[1])
            continue
        st = step(segment)
        if not st.head or st.head.split(" ", 1)[0] in NOISE_HEADS:
            continue
        head = head or st.head
        j = 0
        rest = st.words
        while j < len(rest):
            word = rest[j]
            if word.startswith("-"):
                flag = word.split("=", 1)[0]
                value = word.split("=", 1)[1] if "=" in word else (rest[j + 1] if j + 1 < len(rest) else "")
                if (flag in TARGET_OPTIONS or flag in CD_OPTIONS) and value and not (
                        flag in TARGET_OPTIONS and is_pathlike(value) and len(flag) == 2):
                    if flag in CD_OPTIONS:
                        move(value)
                    else:
                        operands.add(f"{flag}={value.strip(chr(39) + chr(34))}")
                    j += 1 if "=" in word else 2
                    continue
                j += 1
                continue
            w = word.strip("'\"")
            if is_pathlike(w):
                r = None if raw else index.rel(w, base)
                operands.add("path:" + (r if r is not None else slash(w).rstrip("/")))
            else:
                operands.add(w)
            j += 1
    if moved_to and moved_to != start and not raw:
        operands.add("path:" + moved_to + "/")  # where it ran is part of what it worked on
    return Target(head, frozenset(operands))


def _last_step(command: str, index: Index, base: str) -> Target | None:
    """The last step of a command that does something (its goal), with where it runs."""
    steps = segments(command)
    kept = [seg for seg in steps if step(seg).head and step(seg).head.split(" ", 1)[0] not in NOISE_HEADS]
    if not kept:
        return None
    moved = [seg for seg in steps if words_of(seg)[:1] in (["cd"], ["pushd"])]
    prefix = " && ".join(moved)
    whole = shell_target((prefix + " && " if prefix else "") + kept[-1], index, base)
    return whole


def same_goal(failed: Rec, b: str, index: Index, base_b: str = "") -> tuple[bool, str]:
    """Whether command `b` does what the failed call tried (a repair), not something else: the same
    program (by another path, version or through a runner) with the same sub-command, and the same
    operands — or, when the failure was a missing path, that path spelled another way (R3's test)."""
    a = failed.command
    ta, tb = shell_target(a, index, failed.base), shell_target(b, index, base_b)
    sub_a, sub_b = ta.head.split(" ")[1:], tb.head.split(" ")[1:]
    wrapped = (program_of(ta.head) != program_of(tb.head) and any(cnorm(b).startswith(r + " ") for r in RUNNERS)
               and program_of(ta.head) in cnorm(b).split()[:4])
    heads_ok = ta.head == tb.head or (program_of(ta.head) == program_of(tb.head) and sub_a == sub_b) or wrapped
    if not heads_ok:
        return False, f"another program or sub-command: `{ta.head}` → `{tb.head}`"
    la, lb = _last_step(a, index, failed.base), _last_step(b, index, base_b)
    if la is not None and la == lb and len(segments(a)) > 1:
        return True, ""  # the same goal step; only the steps before it (its preparation) changed
    if failed.kind == "output_too_large" and ta.head == tb.head:
        return True, ""  # too much output: narrowing what it reads is the repair
    oa, ob = set(ta.operands), set(tb.operands)
    if wrapped:  # `npx tsc x` for `tsc x`: the runner's words are not operands
        ob -= {w for w in ob if not w.startswith("path:") and w in cnorm(tb.head).split()}
        ob -= {program_of(ta.head), ta.head.split(" ", 1)[0]}
    if oa != ob and failed.kind == "path_not_found":
        da, db = oa - ob, ob - oa
        if len(da) == len(db) == 1 and all(x.startswith("path:") for x in da | db):
            x, y = next(iter(da))[5:], next(iter(db))[5:]
            if basename_of(x) == basename_of(y) or _near(x, y) or x.endswith("/" + y) or y.endswith("/" + x):
                return True, ""
    # the same command run in the folder it belongs to (a `cd` / `-C` added or dropped)
    if (oa != ob and moves(a) != moves(b)
            and shell_target(a, index, raw=True).operands == shell_target(b, index, raw=True).operands):
        return True, ""
    if oa != ob:
        return False, (f"`{norm(a)[:100]}` works on {sorted(oa)[:6]}; `{norm(b)[:100]}` on {sorted(ob)[:6]}")
    return True, ""


def later_failed_same_way(fix: Rec, failed: Rec, index: Index) -> Rec | None:
    """A later run of the fixing command, in the same session, that failed with the same kind."""
    for later in index.after(fix):
        if later.failed and later.command and cnorm(later.command) == cnorm(fix.command) and later.kind == failed.kind:
            return later
    return None


@dataclass
class Ref:
    """What failed, as a line names it: a command, or a tool and its path, or a tool alone."""

    command: str = ""
    tool: str = ""
    path: str = ""
    error: str = ""


def ref_of(what: str) -> Ref:
    what = what.strip()
    m = re.fullmatch(r"`(?P<tool>[^`]+)` on `(?P<path>.+)`", what) or re.fullmatch(
        r"(?P<tool>\S+) on `(?P<path>.+)`", what)
    if m:
        return Ref(tool=m.group("tool"), path=m.group("path"))
    m = re.fullmatch(r"`(?P<cmd>.+)`", what, re.DOTALL)
    if m:  # the product backticks a command; a tool it names bare (or backticked with "on")
        return Ref(command=m.group("cmd"))
    return Ref(tool=what)


def matches(ref: Ref, rec: Rec, index: Index) -> bool:
    if not rec.failed:
        return False
    if ref.command:
        if not rec.command or not starts_like(ref.command, rec.command) and not quotes(ref.command, rec.command):
            return False
    elif ref.path:
        if rec.call.tool != ref.tool or not (index.same_path(ref.path, rec.path) or starts_like(ref.path, rec.path)):
            return False
    elif ref.tool and rec.call.tool != ref.tool:
        return False
    return says(ref.error, rec) if ref.error else True


def find_failures(ref: Ref, index: Index, hint: str = "") -> list[Rec]:
    found = [r for r in index.failures() if matches(ref, r, index)]
    if hint:
        hinted = [r for r in found if index.history.sessions[r.s].session_id == hint]
        return hinted or found
    return found


def failures_by_error(error: str, index: Index) -> list[Rec]:
    return [r for r in index.failures() if says(error, r)] if fragments(error) else []


_REFUSAL = re.compile(r"The user doesn't want to (?:proceed|take this action)|User rejected|The user denied this "
                      r"operation|\[Request interrupted by user|rejected by the user|Operation cancelled by user|"
                      r"user (?:declined|refused|cancelled)|\[Operation Cancelled\]", re.IGNORECASE)


_NOT_RUN = re.compile(r"Sibling tool call errored|Cancelled: parallel tool call", re.IGNORECASE)


_POLICY = re.compile(r"Permission for this (?:tool use|action) was denied|denied by the [\w ]{0,40}classifier|"
                     r"Blocked by classifier|Command rejected because it could not be parsed safely|"
                     r"PreToolUse:\S* hook|blocked by (?:a |the )?(?:hook|policy)", re.IGNORECASE)


_WRAPPERS_ONLY = re.compile(r"^(?:The tool execution failed with the following error:?|\[ERROR\]|Error:?|"
                            r"(?:exit status|Exit code:?|Exit Code:) ?-?\d+|Process exited with code -?\d+)$",
                            re.IGNORECASE)


def says_nothing(error: str) -> bool:
    """An error text with nothing in it but a harness's wrapper, an exit status or a few characters."""
    text = norm(error).rstrip("…").strip()
    return len(text) < 12 or bool(_WRAPPERS_ONLY.match(text)) or not re.search(r"[A-Za-z]{3}", text)


def refusal_rule(line_error: str, recs: list[Rec]) -> Verdict | None:
    """F-refusal / F-policy / F-not-run: what the line calls a failure is a user's refusal, the
    harness's policy, or a call that never ran."""
    kinds = {r.kind for r in recs}
    if _REFUSAL.search(line_error) or recs and kinds == {"user_rejected"}:
        return false("F-refusal", "the user refused the call: " + (show(recs[0]) if recs else norm(line_error)[:160]))
    if recs and kinds == {"policy_denied"} or _POLICY.search(line_error[:300]):
        return false("F-policy", "the harness's policy refused it: " + (show(recs[0]) + " — " + norm(recs[0].text)[:160]
                                                                         if recs else norm(line_error)[:160]))
    if _NOT_RUN.search(line_error):
        return false("F-not-run", "the call never ran (a parallel call failed): "
                     + (show(recs[0]) if recs else norm(line_error)[:120]))
    return None


def resolved_by(failed: Rec, index: Index) -> Rec | None:
    """A later call of the session that reached what the failed call tried (R1-R3 of the README)."""
    later = [r for r in index.after(failed) if not r.failed]
    for r in later:  # R1 the same call; R2 the same target in another spelling
        if args_equal(r.call, failed.call):
            return r
        if failed.path and r.path and r.call.tool == failed.call.tool and index.same_path(r.path, failed.path):
            return r
        if failed.command and r.command and r.fam == failed.fam:
            ok, _ = same_goal(failed, r.command, index, r.base)
            if ok and shell_target(failed.command, index, failed.base).head:
                return r
        if (not failed.path and not failed.command and failed.fam != "shell" and r.call.tool == failed.call.tool
                and failed.kind in ("tool_misuse", "format_rejected") and _url(r) == _url(failed)):
            # arguments the tool refused, then the same tool (on the same URL) took corrected ones
            return r
    if failed.kind == "path_not_found":  # R3 the right path: one path changed to a near spelling of it
        for r in later:
            if r.call.tool != failed.call.tool:
                continue
            if failed.path and r.path and (basename_of(r.path) == basename_of(failed.path) or _near(r.path, failed.path)):
                return r
            if failed.command and r.command:
                fa, fb = shell_target(failed.command, index, failed.base), shell_target(r.command, index, r.base)
                da, db = fa.operands - fb.operands, fb.operands - fa.operands
                if (fa.head == fb.head and len(da) == len(db) == 1 and all(x.startswith("path:") for x in da | db)
                        and (basename_of(next(iter(da))) == basename_of(next(iter(db))) or _near(next(iter(da))[5:],
                                                                                      next(iter(db))[5:]))):
                    return r
    return None


def _url(rec: Rec) -> str:
    value = rec.call.args.get("url") or rec.call.args.get("uri")
    return str(value).split("#", 1)[0] if value else ""


def basename_of(path: str) -> str:
    return slash(path).rstrip("/").rsplit("/", 1)[-1].lower()


def _near(a: str, b: str) -> bool:
    """Two spellings of one path: the same folder and names at most two edits apart."""
    a, b = slash(a).rstrip("/").lower(), slash(b).rstrip("/").lower()
    da, _, na = a.rpartition("/")
    db, _, nb = b.rpartition("/")
    return da == db and na != nb and _edits(na, nb) <= 2


def _edits(a: str, b: str) -> int:
    if abs(len(a) - len(b)) > 2:
        return 3
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def stale_path(paths: list[tuple[str, str]], index: Index, fix_path: bool = False) -> str | None:
    """The first path (of those given) that is gone: absent from the project tree (and not ignored by
    it), or deleted later in the history."""
    tree = index.history.tree
    for path, cd in paths:
        base = index.rel(cd) if cd else ""
        if cd and base is None:
            continue
        rel = index.rel(path, base or "")
        if rel is None or rel == ".":
            continue
        explicit = slash(path).startswith(("/", "./", "../", "~")) or re.match(r"^[A-Za-z]:/", slash(path))
        if not explicit and tree is not None and rel.split("/", 1)[0] not in tree and not fix_path:
            continue  # a bare relative word whose first part is nothing of the project: not a path of it
        if tree is not None and rel not in tree and not ignored(rel, index.history.ignores):
            return f"`{path}` ({rel}) is not in the project tree at {index.history.project}'s commit"
        deleted = deleted_later(rel, index)
        if deleted is not None:
            return f"`{path}` was deleted later: {show(deleted)}"
    return None


def deleted_later(rel: str, index: Index) -> Rec | None:
    """The last event of the history on `rel` when it is a deletion (`rm`, `git rm`, a patch's
    `Delete File`) that nothing re-created."""
    last: Rec | None = None
    deleted = False
    for rec in index.all():
        if rec.failed:
            continue
        if rec.command:
            base = ""
            for segment in segments(rec.command):
                words = words_of(segment)
                if words and words[0] == "cd" and len(words) > 1:
                    base = index.rel(words[1].strip("'\"")) or ""
                    continue
                st = step(segment)
                if st.head in ("rm", "git rm", "rmdir", "unlink"):
                    for w in st.words:
                        r = index.rel(w.strip("'\""), base) if not w.startswith("-") else None
                        if r and (rel == r or rel.startswith(r + "/")):
                            last, deleted = rec, True
        patch = str(rec.call.args.get("input") or "")
        for m in re.finditer(r"^\*\*\* (Delete|Add|Update) File: (.+)$", patch, re.MULTILINE):
            if index.rel(m.group(2).strip()) == rel:
                last, deleted = rec, m.group(1) == "Delete"
        if rec.fam == "edit" and rec.path and index.rel(rec.path) == rel:
            last, deleted = rec, False
    return last if deleted else None
