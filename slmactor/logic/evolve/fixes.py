"""What a fix is: for every failed call of a session, what got past it, read from the calls alone.

`outcomes(calls)` walks one session's calls in order and answers, per failure (`Outcome`):

* its **kind**: a failure to repair, or one of what is not — a user's refusal, the harness's
  policy, a call that never ran (a parallel call failed), no failure at all (an empty search, a
  probe that answered no). Only a failure teaches a repair or is told as unresolved;
* its **attempts**: failed calls that do what it tried (`target.does_what`, the same file) before
  anything got past it are attempts of one failure, the last one compared with the fix;
* **resolved**: a later call of the session *reached* what it was after (`target.reaches`: the
  same program and sub-command on any operands, the same file by another spelling or a near one,
  the same tool taking other arguments). "Unresolved" is said only when none did;
* the **fix**: the first later success that does what the failed call tried, on the same target.
  When it is the same call, the fix is what happened between (`passed after editing `a.py``;
  a command run first; the file read first), or nothing. When it differs, the fix is the typed
  repair that turns the one into the other exactly (`typed_repairs.infer`, checked with
  `rewrite`), a read-and-resend of an edit, or a named transform; a change of the content alone
  (the model's work) or of the target (another package, file, program) is no repair. Arguments
  that did not parse are never learned from;
* **held**: after the fix, evidence against it — the next test run failed where a test run had
  passed before, or the edit was undone — says it did not hold (the second seed's backfire).

Every answer carries the indexes of its evidence (the failed call, the fixing call, the calls
between), so a claim made of it can name its records. Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from slmactor.logic.evolve import typed_repairs
from slmactor.logic.evolve.repairs import Repair
from slmactor.logic.evolve.transforms import infer_transform
from slmactor.logic.failures.call import NEW, OLD, PATCH, ToolCall
from slmactor.logic.failures.fingerprint import Fingerprint, fingerprint
from slmactor.logic.failures.verdict import command_heads, is_test_run
from slmactor.logic.text import shell as tg

FAILURE, REFUSAL, POLICY, NOT_RUN, BENIGN = "failure", "refusal", "policy", "not_run", "benign"
#: Arguments that describe a call to a person and change nothing it does.
_NOTES = frozenset({"description", "explanation", "reason", "summary", "title", "justification"})
#: Shell programs that only read (a call of one changes nothing between a failure and its fix).
_READERS = frozenset({"ls", "cat", "head", "tail", "grep", "rg", "egrep", "find", "fd", "wc",
                      "echo", "pwd", "which", "type", "file", "stat", "du", "df", "tree", "less",
                      "more", "sort", "uniq", "diff", "cmp", "whoami", "date", "env", "printenv",
                      "jq", "awk", "cut", "basename", "dirname", "realpath", "readlink", "sleep",
                      "ps", "sed", "nl", "bat", "printf", "true", "cd", "test", "git status",
                      "git log", "git diff", "git show", "git branch", "git remote",
                      "git rev-parse", "git grep", "git blame", "git ls-files", "curl"})
#: Files named in a fix "passed after editing …" before the rest are counted.
MAX_NAMED_FILES = 3
#: Longest command a fix names whole (a longer one is told by its typed difference alone).
MAX_FIX_COMMAND = 200
#: Failures a step before the same command answers for the project, not for one session: the
#: runtime or environment the project needs (activated first), whose fact the rules learn.
PREPARED_CLASSES = frozenset({"runtime_version", "env_not_activated", "dependency_missing"})
_TRANSFORM_WORDS = {
    "strip_line_number_prefix": "the same edit without the read tool's line-number gutter",
    "trim_trailing_whitespace": "the same edit without the trailing whitespace",
    "unfence_code": "the same content without the Markdown code fence",
}


@dataclass(frozen=True, slots=True)
class Fix:
    """What got past a failure, as it can be told and learned."""

    #: after_edit | after_command | read_first | reread | typed | transform | switch |
    #: prepared | respelled
    kind: str
    #: The fix in words, whole (never clipped).
    text: str
    #: The exact typed repair, when the fixing call is one (None: told, not applied).
    repair: Repair | None = None
    #: A named argument transform that reproduces the fix exactly ("" when none).
    transform: str = ""
    #: Files the fix names (what a stale check looks for).
    files: tuple[str, ...] = ()
    #: Commands the fix names (their paths are checked too).
    commands: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Outcome:
    """One failure of a session and what came of it; indexes are into the session's calls."""

    index: int
    fp: Fingerprint
    kind: str = FAILURE
    attempts: tuple[int, ...] = ()
    #: A later call that reached what it was after (None: unresolved).
    resolved_at: int | None = None
    #: The later success that did what it tried on the same target (None: none did).
    fixed_at: int | None = None
    #: What to learn and tell of it (None: nothing: no fix, or no repair in the difference).
    fix: Fix | None = None
    #: The calls between the failure and its fixing call.
    between: tuple[int, ...] = ()
    #: False when evidence after the fix says it did not hold; None when nothing says.
    held: bool | None = None
    #: The call that says it did not hold.
    backfire_at: int | None = None

    @property
    def resolved(self) -> bool:
        return self.resolved_at is not None or self.fixed_at is not None


def kind_of(fp: Fingerprint) -> str:
    """What a failed call was: a failure to repair, or a refusal, a policy, a call that never ran,
    no failure at all."""
    if fp.cls == "user_rejected":
        return REFUSAL
    if fp.cls == "policy_denied":
        return POLICY
    if fp.cls == "not_a_failure":
        return NOT_RUN if fp.detail == "not_run" else BENIGN
    return FAILURE


# ------------------------------------------------------------------------------- same target

def _command(call: ToolCall) -> str:
    return typed_repairs.norm_command(call.command)


def _notes_off(call: ToolCall) -> dict[str, object]:
    return {k: v for k, v in call.shared().items() if k not in _NOTES}


def same_call(a: ToolCall, b: ToolCall) -> bool:
    """The same tool with the same arguments (notes to a person aside)."""
    if a.tool.lower() != b.tool.lower() or a.unparsed or b.unparsed:
        return False
    if a.command or b.command:
        return _command(a) == _command(b) and _cwd(a) == _cwd(b)
    return _notes_off(a) == _notes_off(b)


def _cwd(call: ToolCall) -> str:
    for key in ("workdir", "cwd", "dir_path", "directory"):
        value = call.args.get(key)
        if isinstance(value, str):
            return value
    return ""


def _url(call: ToolCall) -> str:
    for key in typed_repairs.URL_KEYS:
        value = call.args.get(key)
        if isinstance(value, str) and value:
            return value.split("#", 1)[0]
    return ""


def does_what(failed: ToolCall, other: ToolCall) -> bool:
    """`other` works on what `failed` tried: the same goal of a shell line, the same file, the
    same URL; for a call with none of these, the same tool."""
    if failed.command and other.command:
        return tg.does_what(failed.command, other.command)
    if failed.command or other.command:
        return False
    if failed.family and other.family and failed.family != other.family:
        return False  # a read does not do what an edit tried, on the same file or not
    if failed.path and other.path:
        return tg.same_path(failed.path, other.path)
    if failed.path or other.path:
        return False
    if _url(failed) or _url(other):
        return _url(failed) == _url(other)
    return failed.tool.lower() == other.tool.lower()


#: Shell programs that show a whole file (what a harness cuts when it is too large).
_VIEWERS = frozenset({"cat", "less", "more", "bat", "nl", "type"})
#: Shell programs that show part of a file (a bounded read of what a viewer showed whole).
_PARTIAL = frozenset({"head", "tail", "sed", "awk", "grep", "rg", "cut"})


def bounded_read(failed: ToolCall, other: ToolCall, fp: Fingerprint) -> bool:
    """Whether shell line `other` read part of the file whose whole read `failed` had cut for
    size (`sed -n '1,100p' big.log` after `cat big.log`): the same file, another program."""
    if fp.cls != "output_too_large" or not (failed.command and other.command):
        return False
    a, b = tg.goal(failed.command), tg.goal(other.command)
    if a is None or b is None or a.program not in _VIEWERS or b.program not in _PARTIAL:
        return False
    return len(a.operands) == 1 and bool(b.operands) and tg.same_path(a.operands[0],
                                                                      b.operands[-1])


def _respelled(failed: str, other: str) -> tuple[str, str] | None:
    """The (missing, right) operand when shell line `other` runs `failed`'s goal with one
    operand spelled another way that names the file meant (`python3 test_calc.py` for `python3
    tests_calc.py`), the rest alike; None otherwise."""
    if not (failed and other):
        return None
    a, b = tg.goal(failed), tg.goal(other)
    if a is None or b is None or (a.program, a.sub, a.options) != (b.program, b.sub, b.options) \
            or len(a.operands) != len(b.operands):
        return None
    pairs = [(x, y) for x, y in zip(a.operands, b.operands, strict=True) if x != y]
    if len(pairs) != 1 or not tg.near_spelling(*pairs[0]):
        return None
    return pairs[0]


def reaches(failed: ToolCall, other: ToolCall, fp: Fingerprint) -> bool:
    """A later success got to what `failed` was after, in any of its forms."""
    if failed.command and other.command:
        return tg.reaches(failed.command, other.command) or bounded_read(failed, other, fp)
    if failed.path and other.path:
        if tg.same_path(failed.path, other.path) or tg.basename(failed.path) == tg.basename(
                other.path):
            return True
        return fp.cls in ("path_not_found", "file_not_found") and tg.near_spelling(
            failed.path, other.path)
    if failed.command or failed.path:
        return False
    url = _url(failed)
    if url:
        return _url(other) == url
    # A tool with no file, command or URL that refused its arguments took others.
    return failed.tool.lower() == other.tool.lower()


# ----------------------------------------------------------------------------- between two

def _changes(call: ToolCall) -> bool:
    """A call that changed something: an edit, or a shell line with a step that is not a read."""
    if not call.ok:
        return False
    if call.family == "edit":
        return True
    if call.command:
        heads = command_heads(call.command)
        return any(h not in _READERS and h.split(" ", 1)[0] not in _READERS for h in heads)
    return False


def _reads(call: ToolCall, path: str) -> bool:
    """A successful read of `path`: a read tool on it, or a read-only shell line naming it."""
    if not call.ok or not path:
        return False
    if call.family == "read" and call.path:
        return tg.same_path(call.path, path)
    if call.command and not _changes(call):
        name = tg.basename(path)
        return any(tg.same_path(w, path) or (tg.basename(w) == name and "/" not in w)
                   for s in tg.steps(call.command) for w in s.operands)
    return False


def _edited(calls: Sequence[ToolCall], between: Sequence[int]) -> list[str]:
    files: list[str] = []
    for i in between:
        call = calls[i]
        if call.ok and call.family == "edit":
            files.extend(p for p in call.paths if p not in files)
        elif call.ok and call.command:
            # An edit made in the shell (`sed -i`, `cat > a.py <<EOF`) is the model's edit too:
            # a fix "Run `sed -i …` first" would replay one session's change of the code.
            files.extend(p for p in tg.edited_paths(call.command) if p not in files)
    return files


def _files_words(files: Sequence[str]) -> str:
    named = ", ".join(f"`{f}`" for f in files[:MAX_NAMED_FILES])
    more = len(files) - MAX_NAMED_FILES
    return named + (f" and {more} other file{'s' if more > 1 else ''}" if more > 0 else "")


def _after_same(calls: Sequence[ToolCall], failed: ToolCall, between: Sequence[int],
                fp: Fingerprint) -> Fix | None:
    """The failed call itself got past it later: what happened in between is the fix."""
    files = _edited(calls, between)
    if files and failed.family != "edit":
        return Fix("after_edit", f"it passed after editing {_files_words(files)}",
                   files=tuple(files))
    changed = [i for i in between if _changes(calls[i]) and calls[i].command]
    if len(changed) == 1 and not files:
        first = _command(calls[changed[0]])
        if first and len(first) <= MAX_FIX_COMMAND and not tg.only_shell_state(first):
            return Fix("after_command", f"Run `{first}` first, then the same call",
                       commands=(first,))
    if failed.path and not changed and any(_reads(calls[i], failed.path) for i in between):
        return Fix("read_first", f"read `{failed.path}` first, then the same {failed.tool} call",
                   files=(failed.path,))
    return None


def _differs(calls: Sequence[ToolCall], failed: ToolCall, fixed: ToolCall,
             between: Sequence[int], fp: Fingerprint) -> Fix | None:
    """The call that got past it differs: the exact typed difference, or nothing."""
    if failed.unparsed or fixed.unparsed:
        return None  # arguments that did not parse are never learned from
    edited = _edited(calls, between)
    if failed.command and edited:
        return None  # the code changed too: which of the two got past it, the calls cannot say
    if failed.command and not _same_preparation(failed.command, fixed.command):
        if fp.cls in PREPARED_CLASSES and prepared_otherwise(failed, fixed) \
                and len(command := _command(fixed)) <= MAX_FIX_COMMAND:
            # Other steps before the same goal (a runtime activated first): no repair of the call,
            # but what the project's environment needed, as the hook reports it at the success.
            return Fix("prepared", f"`{command}` got past it", commands=(command,))
        return None  # other steps before the goal: one session's shell state, never a repair
    if failed.command and _acts_alike(failed.command, fixed.command):
        return None  # only steps that do nothing added (`; true`, `|| echo`): a mask, no repair
    if failed.path and any(tg.same_path(p, failed.path) for p in edited):
        return None  # the file changed under it
    respelled = _respelled(failed.command, fixed.command) if fp.cls in _MISSING else None
    if respelled is not None:
        # The model's own misspelling, told (the path that is there) and never a rule.
        wrong, right = respelled
        return Fix("respelled", f"`{right}`, not `{wrong}` (`{_command(fixed)}` ran)",
                   files=(right,), commands=(_command(fixed),))
    a, b = typed_repairs.Call.of(failed), typed_repairs.Call.of(fixed)
    if failed.tool.lower() == fixed.tool.lower() and not failed.command:
        name = infer_transform(json.dumps(a.args), json.dumps(b.args))
        if name in _TRANSFORM_WORDS:
            where = failed.path or failed.tool
            return Fix("transform", f"{_TRANSFORM_WORDS[name]} ({failed.tool} on {where})",
                       transform=name, files=(failed.path,) if failed.path else ())
        if fp.cls in typed_repairs.REREAD_EDIT and _content_only(failed, fixed):
            if not any(_reads(calls[i], failed.path) for i in between):
                return None  # other text, and nothing read: the model's own correction
            return Fix("reread", f"reading {failed.path} again, then {failed.tool} again with its "
                       "text copied from what it holds", files=(failed.path,))
    repair = typed_repairs.infer(a, b, fp.cls, fp.detail)
    if repair is None or repair.kind in ("precondition", "do_not_retry"):
        return None
    if repair.kind == "switch_tool":
        if _content_only(failed, fixed) or not failed.path:
            return None
        return Fix("switch", f"{fixed.tool} instead of {failed.tool} on {failed.path}",
                   repair=repair, files=(failed.path,))
    done = typed_repairs.rewrite(repair, a)
    if done is None or not _same_args(done, b):
        return None  # not exactly the fixing call: a typed repair applies only where exact
    text = typed_repairs.named_fix(repair, a)
    if len(text) > 2 * MAX_FIX_COMMAND:
        text = repair.guidance.strip()
    commands = (_command(fixed),) if fixed.command else ()
    files = (str(b.args.get(typed_repairs.PATH_KEY)),) if repair.kind == "correct_path" else ()
    return Fix("typed", text, repair=repair, commands=commands, files=files)


def _same_preparation(failed: str, fixed: str) -> bool:
    """Whether two shell lines prepare their goal alike: the same steps before it (a `cd` aside),
    or the fixed line only adds steps before it that are not a shell's passing state (a step
    run first, `npm ci && npm test`)."""
    def prep(command: str) -> list[str]:
        steps = [s for s in tg.steps(command) if s.program and s.program not in ("cd", "pushd")]
        return [" ".join(tg.words_of(s.text)) for s in steps[:-1]]

    a, b = prep(failed), prep(fixed)
    if a == b:
        return True
    added = [s for s in b if s not in a]
    return len(a) < len(b) and all(s in b for s in a) and not any(
        tg.only_shell_state(step) for step in added)


#: Steps that do nothing at all (added to a command, they only hide its exit status).
_NO_OPS = frozenset({"true", ":", "echo", "printf", "sleep", ""})


def prepared_otherwise(failed: ToolCall, fixed: ToolCall) -> bool:
    """Whether a shell call got past `failed` by the same goal with other steps before it (a
    runtime activated, a variable set): no repair of the call, but what the environment
    needed — the rules actor's environment facts learn from such a pair."""
    if not (failed.command and fixed.command) or not does_what(failed, fixed) \
            or same_call(failed, fixed) or _same_preparation(failed.command, fixed.command):
        return False
    before = {" ".join(tg.words_of(s.text)) for s in tg.steps(failed.command)}
    added = [s for s in tg.steps(fixed.command) if " ".join(tg.words_of(s.text)) not in before]
    # Steps that do nothing (`true`, `echo`) only hide the exit status: a mask, not a need.
    return any(s.program not in _NO_OPS for s in added)


def _acts_alike(failed: str, fixed: str) -> bool:
    """Whether two shell lines run the same steps that do something, word for word (what the
    fixed line adds does nothing to a target, or hides the exit status)."""
    def acts(command: str) -> list[list[str]]:
        return [tg.words_of(s.text) for s in tg.acting(command)]

    return bool(acts(failed)) and acts(failed) == acts(fixed)


def _content_only(failed: ToolCall, fixed: ToolCall) -> bool:
    a, b = _notes_off(failed), _notes_off(fixed)
    changed = {k for k in set(a) | set(b) if a.get(k) != b.get(k)}
    return bool(changed) and changed <= {OLD, NEW, PATCH, "content", "text", "edits"}


def _same_args(a: typed_repairs.Call, b: typed_repairs.Call) -> bool:
    if a.tool.lower() != b.tool.lower():
        return False
    if a.command or b.command:
        return tg.words_of(a.command) == tg.words_of(b.command)
    strip = {k: _decoded(v) for k, v in a.args.items() if k not in _NOTES}
    other = {k: _decoded(v) for k, v in b.args.items() if k not in _NOTES}
    return strip == other


def _decoded(value: object) -> object:
    """A list or map a harness sends as JSON text (Cline 3's hook `parameters.files`), as the
    value it holds: a rewrite puts the value back, and the two are one argument."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


# ------------------------------------------------------------------------------ after the fix

def _undone(calls: Sequence[ToolCall], j: int) -> int | None:
    """A later edit that undoes the fixing edit (its new text put back to the old)."""
    fixed = calls[j]
    old, new = fixed.arg(OLD), fixed.arg(NEW)
    if not isinstance(old, str) or not isinstance(new, str) or not fixed.path:
        return None
    for k in range(j + 1, len(calls)):
        call = calls[k]
        if call.ok and call.family == "edit" and tg.same_path(call.path, fixed.path) \
                and call.arg(OLD) == new and call.arg(NEW) == old:
            return k
        if call.ok and call.command and any(
                s.head in ("git checkout", "git restore") and any(
                    tg.same_path(w, fixed.path) for w in s.operands)
                for s in tg.steps(call.command)):
            return k
    return None


def _backfire(calls: Sequence[ToolCall], i: int, j: int,
              fingerprint_of: Callable[[ToolCall], Fingerprint] = fingerprint) -> int | None:
    """Evidence after the fix at `j` that it did not hold: the edit undone, the fixing command
    failing the same way later, or the next test run failing where a test run had passed before
    the failure at `i`."""
    undone = _undone(calls, j)
    if undone is not None:
        return undone
    fixing = calls[j]
    if fixing.command:
        cls = fingerprint_of(calls[i]).cls
        for k in range(j + 1, len(calls)):
            call = calls[k]
            if not call.ok and call.command and (same_call(fixing, call) or does_what(
                    fixing, call)) and fingerprint_of(call).cls == cls:
                return k
    if calls[j].family != "edit":
        return None
    passed_before = any(calls[k].ok and calls[k].command and is_test_run(calls[k].command)
                        for k in range(i))
    if not passed_before:
        return None
    for k in range(j + 1, len(calls)):
        call = calls[k]
        if call.command and is_test_run(call.command):
            return None if call.ok else k
    return None


def _redacted(text: str) -> bool:
    return "REDACTED" in text or "«redacted" in text


#: Classes of a call that named a path that is not there: a near spelling of it got past.
_MISSING = frozenset({"path_not_found", "file_not_found"})


# --------------------------------------------------------------------------------- the walk

def outcomes(calls: Sequence[ToolCall],
             fingerprint_of: Callable[[ToolCall], Fingerprint] = fingerprint) -> list[Outcome]:
    """Every failure of a session (the last attempt of each) with what came of it, in order."""
    out: list[Outcome] = []
    n = len(calls)
    absorbed: set[int] = set()
    for i in range(n - 1, -1, -1):
        if calls[i].ok or i in absorbed:
            continue
        failed = calls[i]
        fp = fingerprint_of(failed)
        attempts = [i]
        # Earlier failed calls that did what this one tried, with no success on it in between.
        for k in range(i - 1, -1, -1):
            other = calls[k]
            if other.ok and does_what(failed, other):
                break
            if not other.ok and k not in absorbed and (same_call(other, failed) or does_what(
                    other, failed)):
                attempts.append(k)
                absorbed.add(k)
        out.append(_outcome(calls, i, fp, tuple(sorted(attempts)), fingerprint_of))
    out.reverse()
    return out


def _outcome(calls: Sequence[ToolCall], i: int, fp: Fingerprint, attempts: tuple[int, ...],
             fingerprint_of: Callable[[ToolCall], Fingerprint] = fingerprint) -> Outcome:
    failed = calls[i]
    kind = kind_of(fp)
    resolved_at = fixed_at = None
    for j in range(i + 1, len(calls)):
        call = calls[j]
        if not call.ok:
            continue
        if resolved_at is None and reaches(failed, call, fp):
            resolved_at = j
        if (same_call(failed, call) or does_what(failed, call) or bounded_read(failed, call, fp)
                or (call.tool.lower() != failed.tool.lower() and failed.path and call.path
                    and call.family == failed.family and tg.same_path(call.path, failed.path))
                or (fp.cls in _MISSING and call.tool == failed.tool and failed.path
                    and call.path and tg.near_spelling(failed.path, call.path))
                or (fp.cls in _MISSING and _respelled(failed.command, call.command))):
            fixed_at = j
            break
    if fixed_at is None or kind != FAILURE:
        return Outcome(i, fp, kind, attempts, resolved_at, fixed_at)
    between = tuple(range(i + 1, fixed_at))
    fixed = calls[fixed_at]
    if same_call(failed, fixed):
        fix = _after_same(calls, failed, between, fp)
    else:
        fix = _differs(calls, failed, fixed, between, fp)
    held: bool | None = None
    backfire = None
    if fix is not None and any(_redacted(p) for p in (*fix.files, *fix.commands)):
        fix = None  # what the fix names was redacted: it cannot be told or checked
    if fix is not None:
        backfire = _backfire(calls, i, fixed_at, fingerprint_of)
        held = False if backfire is not None else None
    return Outcome(i, fp, kind, attempts, resolved_at if resolved_at is not None else fixed_at,
                   fixed_at, fix, between, held, backfire)
