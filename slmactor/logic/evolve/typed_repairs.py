"""Typed repairs learned from the call that got past a failure: what changed, as data.

A real session's fix is rarely one of the seed's argument transforms. It is another interpreter
(`python` → `python3`), an argument the harness wants (`limit`, `run_in_background`,
`new_string: ""`), another tool for the same target (`Read` of a directory → a listing), the
right path, a bounded rerun (`| head`), something done first (read the file, `cd`), or nothing
at all (the quota is gone, the user said no). This module OWNS reading that difference:

* `target` / `pair`: which later call of a session got past a failure — the first one that did
  not fail, of the same tool family, on the same target (file, command head, URL);
* `infer`: the typed `Repair` (kinds in `repairs.TYPED_KINDS`) that turns the failed call into
  the fixing one, with a precondition on the failed call (`Spec.when`) so it is offered only to
  calls it can repair;
* `fits` / `rewrite`: whether a learned repair fits a new failed call, and the rewritten call
  when the repair is exact (a command substitution, a path correction, a bounded rerun, an
  argument set); never for a repair that needs the model (a precondition, a do-not-retry);
* `advice`: the fix named in the harness's own words — "`X` failed here with …; `Y` worked
  (3 of 3 times)" — with the tool and argument names of the calls themselves.

Pure: no I/O, no clock; rules, counts and Beta confidence stay in `rules.RuleBook`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from slmactor.logic.evolve.repairs import Repair, Spec
from slmactor.logic.evolve.rules import Rule, RuleBook
from slmactor.logic.failures.call import COMMAND, CONTENT, NEW, OLD, PATCH, PATH, ToolCall
from slmactor.logic.failures.fingerprint import Fingerprint
from slmactor.logic.failures.verdict import command_heads
from slmactor.logic.text import shell
from slmactor.logic.text.redact import redact

Args = Mapping[str, Any]
#: Tool name → family (edit, read, shell, search, web, task); "" when unknown.
FamilyOf = Callable[[str], str]

#: The shared words (`logic.failures.call`) typed repairs read a call's arguments in: the room
#: that built the call renamed its own keys to them (`ToolCall.shared`).
PATH_KEY = PATH
COMMAND_KEY = COMMAND
URL_KEYS = ("url", "uri")
#: Keys whose value is the content of an edit, a file or a request: a change there is the
#: model's work, not a repair a rule can learn.
CONTENT_KEYS = frozenset({OLD, NEW, CONTENT, PATCH, COMMAND, "text", "prompt", "query",
                          "pattern"})
#: A scalar argument longer than this is content, not a setting.
MAX_SETTING = 40
#: Shell words that bound output, read from the end of a fixing command.
_BOUNDERS = ("head", "tail", "wc", "less", "grep", "sed", "cut", "sort", "uniq", "awk")
#: A substituted command prefix is at most this many words on either side.
MAX_PREFIX = 5
MAX_EVIDENCE_CHARS = 300
_NUMBER = re.compile(r"\d[\d.]*[a-z]{0,2}")

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call as typed repairs read it: the harness's tool name, its arguments in the
    shared words (`ToolCall.shared`), its family."""

    tool: str
    args: Args
    family: str = ""

    @classmethod
    def of(cls, call: ToolCall) -> Call:
        """The call a room built, in the shared words (its command among them even where the
        tool keeps it in words of its own: Cline's `commands` list)."""
        args = call.shared()
        if call.command and COMMAND_KEY not in args:
            args = {**args, COMMAND_KEY: call.command}
        return cls(call.tool, args, call.family)

    @property
    def command(self) -> str:
        value = self.args.get(COMMAND_KEY)
        return value if isinstance(value, str) else ""

    @property
    def path(self) -> str:
        value = self.args.get(PATH_KEY)
        return value if isinstance(value, str) else ""

    @property
    def path_key(self) -> str:
        return PATH_KEY if self.path else ""


def norm_command(command: str) -> str:
    return _SPACE.sub(" ", command).strip()


def head_of(command: str) -> str:
    """The first command head of a shell line ("" when there is none)."""
    heads = command_heads(command)
    return heads[0] if heads else ""


def target(call: Call) -> str:
    """What a call works on: its file, its command head, its URL, else its tool."""
    path = call.path
    if path:
        return "path:" + path.replace("\\", "/").rstrip("/").lower()
    command = call.command
    if command:
        return "head:" + head_of(command).split(" ", 1)[0]
    for key in URL_KEYS:
        value = call.args.get(key)
        if isinstance(value, str) and value:
            return "url:" + value.split("?", 1)[0].split("#", 1)[0].lower()
    return "tool:" + call.tool.lower()


def _stem(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()


def same_target(a: Call, b: Call) -> bool:
    """Same target, or (for a file tool) the same file name or folder (a path correction)."""
    if target(a) == target(b):
        return True
    if a.command and b.command:
        # A wrapper or interpreter around the same program (`uv run pytest`, `.venv/bin/python
        # -m pytest` for `pytest`): the failed head's program is still a word of the fix.
        program = head_of(a.command).split(" ", 1)[0].rsplit("/", 1)[-1]
        if program and program in {w.rsplit("/", 1)[-1] for w in _words(b.command)}:
            return True
        # Another program on the same arguments (`.venv/bin/python app.py` for `python3
        # app.py`): an interpreter substituted.
        wa, wb = _words(a.command), _words(b.command)
        if len(wa) > 1 and wa[1:] == wb[1:]:
            return True
        # The same file read bounded (`sed -n '1,100p' big.log`, `head -n 100 big.log` for `cat
        # big.log`): a program that bounds output, on the failed command's last operand.
        return (len(wa) > 1 and len(wb) > 1 and wa[-1] == wb[-1] and wa[0] != wb[0]
                and wb[0] in _BOUNDERS and not wa[-1].startswith("-"))
    if a.path and b.path:
        pa, pb = a.path.replace("\\", "/").lower(), b.path.replace("\\", "/").lower()
        return _stem(pa) == _stem(pb) or pa.rsplit("/", 1)[0] == pb.rsplit("/", 1)[0]
    return False


def pair(calls: Sequence[tuple[Call, bool]], index: int, window: int = 12) -> int | None:
    """The index of the call that got past the failed call `calls[index]` (`(call, failed)`
    pairs in session order): the first later call of the same family on the same target that
    did not fail, within `window` calls; None when the session never got past it."""
    failed, _ = calls[index]
    for j in range(index + 1, min(len(calls), index + 1 + window)):
        call, did_fail = calls[j]
        if did_fail or (call.family or call.tool) != (failed.family or failed.tool):
            continue
        if same_target(failed, call):
            return j
    return None


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command, posix=True)
    except ValueError:
        return command.split()


def _scalar(value: object) -> bool:
    if isinstance(value, bool | int | float) or value is None:
        return True
    return isinstance(value, str) and len(value) <= MAX_SETTING and "\n" not in value


def _same(a: object, b: object) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return norm_command(a) == norm_command(b)
    return a == b


def evidence(call: Call) -> str:
    """The fixing call as evidence: redacted, clipped."""
    text = json.dumps({"tool": call.tool, "args": dict(call.args)}, ensure_ascii=False,
                      sort_keys=True, default=str)
    text = redact(text)
    return text if len(text) <= MAX_EVIDENCE_CHARS else text[: MAX_EVIDENCE_CHARS - 1] + "…"


def _repair(kind: str, when: dict[str, Any], what: dict[str, Any], guidance: str,
            tool: str = "") -> Repair:
    return Repair(kind, guidance=guidance, tool=tool, spec=Spec(when, what),
                  retry=kind in RETRYABLE)


#: Kinds a harness may apply without the model (`rewrite` answers a call for them).
RETRYABLE = frozenset({"substitute_command", "change_args", "correct_path", "bound_output",
                       "switch_tool"})
#: Classes after which a retry of the same call is no use: the service or the user decides.
DO_NOT_RETRY = frozenset({"service_exhausted", "user_rejected", "rate_limit"})
#: Classes whose same-call retry after something else happened is a precondition (read first,
#: start the service first).
_PRECONDITION_OF = {"tool_misuse": "read_first", "file_not_read": "read_first",
                    "stale_handle": "start_first", "network_error": "start_first",
                    "edit_not_found": "read_first", "edit_text_not_found": "read_first",
                    "patch_failed": "read_first"}
#: Classes whose fix resent the edit with other text: the text is the model's work, read from the
#: file again; reading first is the part a rule can say (a tool's own misuse — ambiguity, a
#: missing parameter — is not fixed by reading).
REREAD_EDIT = frozenset({"edit_not_found", "patch_failed", "file_not_read"})


def infer(failed: Call, fix: Call | None, cls: str, detail: str = "") -> Repair | None:
    """The typed repair that turns `failed` into `fix` (None: nothing a rule can learn).

    `cls` / `detail` are the failure's class and misuse. Without a fix, only a do-not-retry is
    learned (a quota that is gone, a user who said no).
    """
    family = failed.family or failed.tool.lower()
    if cls in DO_NOT_RETRY:
        return _repair("do_not_retry", {"family": family, "target": target(failed)},
                       {"until": "session"},
                       f"Do not retry {failed.tool} on this target: {_why_stop(cls)}.")
    if fix is None:
        return None
    if fix.tool != failed.tool:
        return _switch(failed, fix, family)
    before, after = failed.command, fix.command
    if before and after:
        return _shell(failed, fix, family, cls)
    return _args(failed, fix, family, cls, detail)


def _why_stop(cls: str) -> str:
    return {"user_rejected": "the user refused it",
            "service_exhausted": "the service's quota is exhausted"}.get(
        cls, "the service refuses it for now")


def _switch(failed: Call, fix: Call, family: str) -> Repair | None:
    if not same_target(failed, fix):
        return None
    keep = sorted(k for k in fix.args if k in failed.args and _same(fix.args[k], failed.args[k]))
    new = [k for k in fix.args if k not in failed.args]
    # The new tool's content (a whole file for `write_to_file`) is the model's work for this
    # file, never a setting: a switch that needs it names the tool and leaves the call alone.
    settings = {k: fix.args[k] for k in new if k not in CONTENT_KEYS and _scalar(fix.args[k])}
    what: dict[str, Any] = {"tool": fix.tool, "keep": keep, "set": settings}
    if any(k in CONTENT_KEYS for k in new):
        what["partial"] = True
    when: dict[str, Any] = {"family": family, "tool": failed.tool}
    return _repair("switch_tool", when, what,
                   f"{failed.tool} is the wrong tool for this; use {fix.tool}.", tool=fix.tool)


def _shell(failed: Call, fix: Call, family: str, cls: str) -> Repair | None:
    before, after = norm_command(failed.command), norm_command(fix.command)
    if before == after:
        return _precondition(failed, family, cls)
    if after.startswith(before) and after[len(before):].lstrip().startswith("|"):
        pipe = after[len(before):].strip()
        if head_of(pipe.lstrip("| ")).split(" ", 1)[0] in _BOUNDERS:
            return _repair("bound_output", {"family": family, "head": head_of(before)},
                           {"append": pipe}, f"Bound the output: append `{pipe}`.")
    if after.endswith(before) and after[: -len(before)].rstrip().endswith("&&"):
        first = after[: -len(before)].rstrip()[:-2].strip()
        return _repair("precondition", {"family": family, "head": head_of(before)},
                       {"first": "command", "prefix": first},
                       f"Run `{first}` first (`{first} && …`).")
    if "\n" in failed.command.strip() or "\n" in fix.command.strip() \
            or len(shell.steps(failed.command)) != len(shell.steps(fix.command)):
        # A script of several lines, or other steps: its words run together here would name a
        # command nobody ran.
        return None
    a, b = _words(before), _words(after)
    # Longest common tail: what the fix kept; the differing leading words are the substitution.
    k = 0
    while k < min(len(a), len(b)) and a[-1 - k] == b[-1 - k]:
        k += 1
    if k == len(a) and len(b) > k:
        k -= 1  # a wrapper put before the whole command (`uv run`): substitute its first word
    old, new = a[: len(a) - k], b[: len(b) - k]
    if k and old and new and len(old) <= MAX_PREFIX and len(new) <= MAX_PREFIX:
        frm, to = " ".join(old), " ".join(new)
        # `pre`: the command head it was learned on (`python pytest`), the only calls a
        # pre-flight rewrite may touch before they run (`python script.py` is not one).
        return _repair("substitute_command", {"family": family, "starts": frm},
                       {"from": frm, "to": to, "pre": head_of(before)},
                       f"Run `{to}` instead of `{frm}`.")
    # Same leading words, changed options at the end: an argument change of the command.
    j = 0
    while j < min(len(a), len(b)) and a[j] == b[j]:
        j += 1
    if j and j == len(a) and 0 < len(b) - j <= MAX_PREFIX:  # nothing added: no change
        extra = " ".join(b[j:])
        # `on`: the command it was learned on. Options alone (`-q`, `--timeout 600`) carry over
        # to another command of the same head; a selector's value (`-k test_name`) names
        # something of that command only, so elsewhere it is shown with the command it worked on.
        on = redact(before)
        return _repair("change_args", {"family": family, "head": head_of(before)},
                       {"append": extra, "on": on if len(on) <= MAX_EVIDENCE_CHARS else ""},
                       f"Add `{extra}` to the command.")
    return None


def _options_only(words: str) -> bool:
    """Whether appended words are options and numbers only (`-q`, `--timeout 600`), nothing
    that names a thing of the command they were learned on (`-k test_x`, a path)."""
    return all(w.startswith("-") or _NUMBER.fullmatch(w) for w in _words(words))


def _elsewhere(what: Mapping[str, Any], failed: Call) -> bool:
    """Whether an appended argument change meets another command than the one it was learned
    on, and names something of that one."""
    on = what.get("on")
    return (isinstance(on, str) and bool(on) and norm_command(failed.command) != on
            and not _options_only(str(what.get("append", ""))))


def _precondition(failed: Call, family: str, cls: str, *, resend: str = "same") -> Repair | None:
    """Do something first, then resend: the same call (`resend="same"`), or the call with its
    text taken anew from what was read (`"reread"`)."""
    first = _PRECONDITION_OF.get(cls)
    if first is None:
        return None
    if resend == "reread" and first == "read_first":
        return _repair("precondition", {"family": family, "cls": cls},
                       {"first": first, "resend": "reread"},
                       "Read the file again first, then resend the edit with its text copied "
                       "from what the file holds now.")
    what = {"read_first": "Read the file again first, then resend the same call.",
            "start_first": "Start the process or service it needs first, then resend it."}[first]
    return _repair("precondition", {"family": family, "cls": cls}, {"first": first}, what)


#: A read's range words: a fix that sets one bounds the output.
_RANGE_WORDS = frozenset({"limit", "offset", "start_line", "end_line"})


def _single(value: Any) -> dict[str, Any] | None:
    """The one map of a list of one (given as a list, or as its JSON text: Cline's hook
    `parameters`), else None."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        return value[0]
    return None


def _one_entry(a: Args, b: Args) -> tuple[str, Args, Args] | None:
    """Where the only argument the two calls differ in is a list of one map in both (Cline's
    `read_files {files: [{path, start_line, end_line}]}`): its key and the two maps, compared as
    the calls' own arguments."""
    keys = [k for k in {*a, *b} if not (k in a and k in b and _same(a[k], b[k]))]
    if len(keys) != 1:
        return None
    x, y = _single(a.get(keys[0])), _single(b.get(keys[0]))
    return (keys[0], x, y) if x is not None and y is not None else None


def _entry_args(args: Args, within: Any) -> Args | None:
    """The arguments a repair learned `within` one entry of a list speaks of (`args` when it
    speaks of the call's own); None when the call has no such single entry."""
    return _single(args.get(str(within))) if within else args


def _args(failed: Call, fix: Call, family: str, cls: str, detail: str) -> Repair | None:
    a, b = failed.args, fix.args
    one = _one_entry(a, b)
    if one is not None:
        _, a, b = one
    changed = {k: v for k, v in b.items() if k not in a or not _same(a[k], v)}
    removed = sorted(k for k in a if k not in b)
    if not changed and not removed:
        return _precondition(failed, family, cls)
    path_key = failed.path_key
    if (cls in REREAD_EDIT and not removed and set(changed) <= CONTENT_KEYS
            and target(failed) == target(fix)):
        # The same edit on the same file with other text: it was read again and resent.
        return _precondition(failed, family, cls, resend="reread")
    if path_key and set(changed) == {path_key} and not removed and one is None:
        return _repair("correct_path", {"family": family, "path": failed.path},
                       {"key": path_key, "to": b[path_key]},
                       f"{failed.path} is not there; the file is {b[path_key]}.")
    settings = {k: v for k, v in changed.items() if k not in CONTENT_KEYS and _scalar(v)}
    if settings and all(k in settings or k in CONTENT_KEYS for k in changed):
        kind = "bound_output" if _RANGE_WORDS & set(settings) else "change_args"
        # The fix also changed content (the model's own work): the setting is what a rule can
        # say, but setting it alone does not make the fixing call, so it is never a rewrite.
        partial = any(k in CONTENT_KEYS for k in changed)
        return _repair(kind, {"family": family, "missing": sorted(k for k in settings
                                                                  if k not in a)},
                       {"set": settings, "unset": removed, **({"partial": True} if partial
                                                               else {}),
                        **({"within": one[0]} if one is not None else {})},
                       "Set " + ", ".join(f"`{k}: {json.dumps(v)}`" for k, v in settings.items())
                       + ".")
    # A required parameter the failed call lacked, given empty (`new_string: ""`).
    empty = {k: v for k, v in changed.items() if k not in a and v in ("", [], {})}
    if empty and detail == "missing_parameter":
        return _repair("change_args", {"family": family, "missing": sorted(empty)},
                       {"set": empty, "unset": []},
                       "Set " + ", ".join(f"`{k}: {json.dumps(v)}`" for k, v in empty.items())
                       + ".")
    return None


# --------------------------------------------------------------------------- use a learned one

def fits(repair: Repair, failed: Call) -> bool:
    """Whether a learned typed repair's precondition holds on this failed call."""
    spec = repair.spec
    if spec is None:
        return False
    when = spec.when
    family = failed.family or failed.tool.lower()
    if when.get("family") and when["family"] != family:
        return False
    if "tool" in when and when["tool"] != failed.tool:
        return False
    if "target" in when and when["target"] != target(failed):
        return False
    if "path" in when and when["path"] != failed.path:
        return False
    if "starts" in when and not _starts(failed.command, str(when["starts"])):
        return False
    if "head" in when and when["head"] and head_of(failed.command) != when["head"]:
        return False
    missing = when.get("missing")
    args = _entry_args(failed.args, spec.what.get("within"))
    return args is not None and not (isinstance(missing, list) and any(k in args for k in missing))


def _starts(command: str, words: str) -> bool:
    a, w = _words(norm_command(command)), _words(words)
    return bool(w) and a[: len(w)] == w


def rewrite(repair: Repair, failed: Call) -> Call | None:
    """The repaired call, when the repair is exact on this call; None otherwise."""
    spec = repair.spec
    if spec is None or repair.kind not in RETRYABLE or not fits(repair, failed):
        return None
    what = spec.what
    if what.get("partial") is True:
        return None
    args = dict(failed.args)
    if repair.kind == "substitute_command":
        key = COMMAND_KEY if isinstance(args.get(COMMAND_KEY), str) else ""
        if not key:
            return None
        rest = _words(norm_command(args[key]))[len(_words(str(what["from"]))):]
        args[key] = " ".join([str(what["to"]), *(shlex.quote(w) for w in rest)])
        return Call(failed.tool, args, failed.family)
    if repair.kind == "correct_path":
        # Learned before calls spoke the shared words, the key may be a harness's own: the path
        # is the path, whatever it was called.
        args.pop(str(what["key"]), None)
        args[PATH_KEY] = what["to"]
        return Call(failed.tool, args, failed.family)
    if repair.kind in ("bound_output", "change_args"):
        if "append" in what:
            key = COMMAND_KEY if isinstance(args.get(COMMAND_KEY), str) else ""
            if not key or _elsewhere(what, failed):
                return None
            args[key] = f"{norm_command(args[key])} {what['append']}"
            return Call(failed.tool, args, failed.family)
        settings = what.get("set")
        entry = _entry_args(failed.args, what.get("within"))
        if not isinstance(settings, dict) or entry is None:
            return None
        entry = {k: v for k, v in {**entry, **settings}.items()
                 if k not in {str(u) for u in what.get("unset") or []}}
        if what.get("within"):
            args[str(what["within"])] = [entry]
        else:
            args = entry
        return Call(failed.tool, args, failed.family)
    if repair.kind == "switch_tool":
        if any(k in CONTENT_KEYS for k in args):
            return None  # the new call's content is the model's to write (a diff, a file body)
        keep = [str(k) for k in what.get("keep") or []]
        new_args = {k: args[k] for k in keep if k in args}
        settings = what.get("set")
        if isinstance(settings, dict):
            if any(k in CONTENT_KEYS for k in settings):
                return None  # learned before content was left to the model: advice only
            new_args.update(settings)
        return Call(str(what["tool"]), new_args, failed.family)
    return None


def named_fix(repair: Repair, failed: Call) -> str:
    """The fix in the calls' own words (tool and argument names as the harness spells them)."""
    spec = repair.spec
    if spec is None:
        return repair.guidance.strip()
    what = spec.what
    done = rewrite(repair, failed)
    if repair.kind == "substitute_command":
        return f"`{what['to']}` instead of `{what['from']}`" + (
            f" (`{norm_command(done.command)}`)" if done is not None else "")
    if repair.kind == "correct_path":
        return f"{failed.tool} on `{what['to']}`"
    if repair.kind in ("bound_output", "change_args"):
        if "append" in what and _elsewhere(what, failed):
            return f"adding `{what['append']}` (as `{what['on']} {what['append']}`)"
        if "append" in what:
            return f"`{norm_command(failed.command)} {what['append']}`"
        settings = what.get("set") or {}
        parts = ", ".join(f"`{k}: {json.dumps(v)}`" for k, v in dict(settings).items())
        return f"{failed.tool} with {parts}"
    if repair.kind == "switch_tool":
        return f"`{what['tool']}` instead of `{failed.tool}`"
    if repair.kind == "precondition":
        return repair.guidance.strip()
    if repair.kind == "do_not_retry":
        return repair.guidance.strip()
    return repair.guidance.strip()


def advice(repair: Repair, failed: Call, error_head: str, successes: int, samples: int,
           read_tool: str = "") -> str:
    """"`X` failed here with …; `Y` worked (n of m times)." — the fix with its content.

    `read_tool` is the harness's own read tool, named in a read-first precondition.
    """
    what = _failed_words(failed)
    err = error_head.strip()
    err = err if len(err) <= 120 else err[:119] + "…"
    said = f" with `{err}`" if err else ""
    fix = _fix_words(repair, failed, read_tool)
    if repair.kind == "do_not_retry":
        return f"{what} failed here{said}. {fix}"
    if not samples:
        return f"{what} failed here{said}; the known fix: {fix}."
    return f"{what} failed here{said}; {fix} worked ({successes} of {samples} time" \
           f"{'' if samples == 1 else 's'})."


def _fix_words(repair: Repair, failed: Call, read_tool: str) -> str:
    """`named_fix`, with a read-first precondition naming the harness's read tool."""
    fix = named_fix(repair, failed)
    if repair.kind == "precondition" and read_tool and "Read the file" in fix:
        spec = repair.spec
        reread = spec is not None and spec.what.get("resend") == "reread"
        then = (f"the {failed.tool} resent with its text copied from what it read" if reread
                else f"the same {failed.tool} call")
        fix = f"{read_tool} `{failed.path or 'the file'}` first, then {then}"
    return fix


def _failed_words(failed: Call) -> str:
    command = norm_command(failed.command)
    if command:
        command = command if len(command) <= 80 else command[:79] + "…"
        return f"`{command}`"
    if failed.path:
        return f"`{failed.tool}` on `{failed.path}`"
    return f"`{failed.tool}`"


# --------------------------------------------------------------------------- choose and learn

#: A rewrite without the model needs this many successes and no failure (the pre-flight bar).
REWRITE_MIN_SUCCESSES = 3
#: Failures whose fix is the model's work (what the program said is wrong with the code, the
#: tests, the build): a repair that worked before is named, never applied in the model's place.
MODEL_CLASSES = frozenset({"runtime_error", "test_failure", "compile_error", "lint_error",
                           "review_rejected", "no_progress", "unknown"})


def may_apply(rule: Rule, cls: str) -> bool:
    """The bar for applying `rule` to a failure of class `cls` without the model: it never
    failed in >= REWRITE_MIN_SUCCESSES uses, the fix is not the model's work, and it is not a
    bounded read (which range to read is the model's pick)."""
    return (rule.successes >= REWRITE_MIN_SUCCESSES and rule.failures == 0
            and cls not in MODEL_CLASSES and rule.repair.kind != "bound_output")


@dataclass(frozen=True, slots=True)
class Choice:
    """The typed rule for one failed call, and what it makes of the call."""

    rule: Rule
    #: The repaired call, when the rule is exact here and has never failed in >= 3 uses.
    rewritten: Call | None
    #: The fix named in the call's own words, with the outcomes behind it.
    text: str


def choose(book: RuleBook, fp: Fingerprint, message: str, failed: Call, *,
           error_head: str = "", read_tool: str = "") -> Choice | None:
    """The best learned typed rule whose trigger matches `fp` and whose precondition fits
    `failed` (exact fingerprint first, then confidence, then successes)."""
    if fp.is_zero or fp.benign:
        return None
    # A rule a repository brought unsigned is never named as what worked here (the rules
    # actor shows it labelled, its commands withheld, when nothing of the user's fits).
    typed = [r for r in book.rules.values()
             if r.usable and r.verified and r.repair.spec and (r.exact_for(fp)
                                                or r.trigger.matches(fp, message))
             and fits(r.repair, failed)]
    if not typed:
        return None
    # The exact fingerprint first, then confidence, then successes.
    ranked = sorted(typed, key=lambda r: (r.exact_for(fp), r.confidence, r.successes, r.id),
                    reverse=True)
    best = ranked[0]
    done = rewrite(best.repair, failed)
    exact = done is not None and may_apply(best, fp.cls)
    text = advice(best.repair, failed, error_head, best.successes, best.samples,
                  read_tool=read_tool)
    if not exact:
        text += _runner_up(ranked, failed, read_tool)
    return Choice(best, done if exact else None, text)


def _runner_up(ranked: list[Rule], failed: Call, read_tool: str) -> str:
    """The next fix that also got past this failure, when memory holds a different one that
    worked: the model picks between two fixes with their records, not one guess."""
    named = _fix_words(ranked[0].repair, failed, read_tool)
    for other in ranked[1:]:
        words = _fix_words(other.repair, failed, read_tool)
        if other.successes > 0 and words != named:
            times = f"{other.successes} of {other.samples} time{'' if other.samples == 1 else 's'}"
            return f" Also worked here: {words} ({times})."
    return ""


def learn(book: RuleBook, fp: Fingerprint, failed: Call, fix: Call | None, now: float, *,
          run: str = "", held: bool = True) -> Rule | None:
    """Learn the typed repair from a failure and the call that got past it (None: nothing to
    learn). The rule's trigger names no tool — the precondition holds the family — so a repair
    learned on one harness's tool serves another's of that family; its evidence is the fixing
    call, redacted."""
    if fp.is_zero or fp.benign:
        return None
    repair = infer(failed, fix, fp.cls, fp.detail)
    if repair is None:
        return None
    proof = f"{run} {evidence(fix)}".strip() if fix is not None else run
    return book.learn(dataclasses.replace(fp, tool=""), repair, now, evidence=proof,
                      proven=fix is not None, held=held)


def parse_args(args: str) -> dict[str, Any] | None:
    """A call's JSON arguments as an object, or None."""
    try:
        value = json.loads(args) if args else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def preflight(book: RuleBook, call: Call) -> Choice | None:
    """A shell call rewritten *before* it runs: only by a learned command substitution that
    fits it, was learned on the same command head from a failure that is not the model's work
    (`MODEL_CLASSES`), succeeded every time (>= 3, no failure), and
    is the only such rule giving a rewrite (two that disagree: none)."""
    if not call.command:
        return None
    head = head_of(call.command)
    found: dict[str, Choice] = {}
    for rule in book.rules.values():
        if not (rule.usable and rule.verified and rule.repair.kind == "substitute_command"
                and may_apply(rule, rule.trigger.cls)):
            continue
        spec = rule.repair.spec
        if spec is None or not head or spec.what.get("pre") != head or not fits(rule.repair, call):
            continue
        done = rewrite(rule.repair, call)
        if done is not None:
            found.setdefault(done.command, Choice(rule, done, named_fix(rule.repair, call)))
    return next(iter(found.values())) if len(found) == 1 else None
