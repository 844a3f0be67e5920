"""Pre-flight repair of edits in the harness's own process.

On the room's pre-tool event (`slmactor.harnesses`: the event whose output can replace the
input), for the room's edit tools only (`preflight_edits`, search/replace; `preflight_patches`,
`*** Begin Patch` envelopes), the hook reads the file the edit will run on (it runs in the
user's repository; the daemon never touches it) and, when the text to replace is not there, asks
memory how this kind of failure was fixed before (`evolve.on_failure` with the harness's own
error text) and tries that beside the safe generic repairs.  `slmactor.logic.evolve.preflight`
decides; the input is rewritten only when exactly one repair matches the file exactly once, and
the reason says so in one line.  The output is the room's `preflight_output`, in the shape its
harness reads.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from slmactor import harnesses
from slmactor.harnesses.base import EditTool
from slmactor.logic.failures.call import OLD, PATCH, ToolCall

# The decision logic (`slmactor.logic.evolve.preflight`, and the transforms under it) is imported
# only when an edit's text is missing from its file: every other pre-tool event — another tool,
# an edit that will work — costs no more than reading the file.

#: Longest file pre-flight reads; a larger one is left to the tool.
MAX_FILE_BYTES = 8 << 20

#: (the call as it would fail) → the daemon's `evolve.on_failure` answer, or None.
AskAdvice = Callable[[ToolCall], Mapping[str, Any] | None]
#: (the call about to run) → the daemon's `evolve.preflight` answer, or None.
AskRewrite = Callable[[ToolCall], Mapping[str, Any] | None]


class Outcome(NamedTuple):
    """What the hook prints, and the ledger entry of a rewrite (None when nothing changed)."""

    output: dict[str, Any]
    reason: str
    entry: dict[str, Any] | None = None


def _read_text(path: Path) -> str | None:
    """The file's text, exactly as stored (no newline translation); None if it is not a readable
    regular UTF-8 file of at most 8 MiB."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            data = fh.read(MAX_FILE_BYTES + 1)
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def _resolve(name: str, base: Path) -> Path:
    path = Path(name).expanduser()
    return path if path.is_absolute() else base / path


def _learned(advice: Mapping[str, Any] | None, call: ToolCall, key: str | None = None) -> list[Any]:
    """The arguments a confident learned rule produced, as a `Candidate` in the shared words."""
    from slmactor.logic.evolve.preflight import Candidate

    if not advice or advice.get("apply") is not True:
        return []
    new_args = advice.get("new_input")
    rule_id = advice.get("rule_id")
    repair = advice.get("repair")
    if not isinstance(new_args, dict) or not new_args or not isinstance(rule_id, str):
        return []
    shared = call.with_input(new_args).shared()
    if key is not None and not isinstance(shared.get(key), str):
        return []
    name = repair.get("transform", "") if isinstance(repair, Mapping) else ""
    return [Candidate(shared, str(name) or "rule", rule_id)]


def run(harness: str, call: ToolCall | None, payload: Mapping[str, Any], base: Path, ask: AskAdvice,
        ask_rewrite: AskRewrite | None = None) -> Outcome:
    """Pre-flight for the call a pre-tool event is about to run; `{}` output unless the edit (or,
    where the room keeps the harness's permission rules, a shell command) is rewritten."""
    room = harnesses.get(harness)
    if call is None or not isinstance(room.tool_fields(payload)[1], dict):
        return Outcome({}, "no tool input")
    tool = call.tool
    if not room.is_preflight_tool(tool):
        if room.preflight_shell and ask_rewrite is not None and call.family == "shell":
            return _shell(room, call, payload, base, ask_rewrite)
        if room.read_limit and tool in room.preflight_reads:
            return _read(room, call, payload, base)
        return Outcome({}, f"{tool} is not an edit tool")
    cwd = room.project(payload, {}, "")
    base = Path(cwd) if cwd and os.path.isabs(cwd) else base
    if tool in room.preflight_patches:
        decision, message, path = _patch(call, room.patch_error, base, ask)
    else:
        decision, message, path = _edit(call, room.preflight_edits[tool], base, ask)
    if isinstance(decision, str):
        return Outcome({}, decision)
    if decision.candidate is None:
        return Outcome({}, decision.reason)
    cand = decision.candidate
    updated = {**call.args, **call.localized(cand.args)}
    # What the model reads: the repair by name, never an internal rule id (the ledger keeps it).
    how = "a fix learned in this project" if cand.rule_id else "a safe generic repair"
    reason = f"slmactor: rewrote the {tool} call before it ran ({cand.transform}, {how}): " \
             f"{decision.reason}."
    return Outcome(room.preflight_output(payload, updated, reason), reason,
                   _entry(call, updated, path, message, cand.transform, cand.rule_id, payload))


def _entry(call: ToolCall, updated: Mapping[str, Any], path: str, message: str, transform: str,
           rule_id: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The ledger's `preflight` entry of a rewrite: both calls' arguments in the shared words."""
    model = payload.get("model")
    done = call.with_input(updated)
    entry = {"e": "preflight", "tool": call.tool, "family": call.family, "path": path,
             "message": message, "failed_args": _dump(call.shared()),
             "fixed_args": _dump(done.shared()), "transform": transform,
             "rule_id": rule_id, "model": model if isinstance(model, str) else ""}
    if done.command and not path:
        from slmactor.harnesses.base import command_of
        from slmactor.hooks.session import command_digest

        # The rewritten command's digest, as the ledger keys the call that then runs (read
        # from the arguments: a list of commands is no shared word).
        entry["cmd"] = command_digest(command_of(updated) or done.command)
    return entry


def _shell(room: Any, call: ToolCall, payload: Mapping[str, Any], base: Path,
           ask: AskRewrite) -> Outcome:
    """A shell command rewritten by what the project learned about its environment (the daemon
    decides: `evolve.preflight`), asked only when a row of the project's pre-flight table speaks
    of the command (`hooks/gate.py`); the same tool only, other input fields kept."""
    from slmactor.hooks.gate import matching, read_rows

    if not call.command or not matching(read_rows(str(base)), call.command, call.tool):
        return Outcome({}, "nothing this project learned speaks of this command")
    answer = ask(call)
    if not answer or answer.get("found") is not True or answer.get("new_tool") != call.tool:
        return Outcome({}, "no learned rewrite for this command")
    new_args = answer.get("new_input")
    if not isinstance(new_args, dict) or not new_args:
        return Outcome({}, "the learned rewrite is not a map of arguments")
    updated = {**call.args, **new_args}
    new_command = answer.get("new_command")
    if isinstance(new_command, str) and new_command:
        # The command put back where the harness's tool keeps it (its form: text, argv, list).
        put = room.with_command({**call.args, **{k: v for k, v in new_args.items()
                                                 if k != "command" or "command" in call.args}},
                                new_command)
        if put is None:
            return Outcome({}, "the call's form cannot say the learned rewrite")
        updated = put
    said = str(answer.get("reason") or "")
    reason = said if said.startswith("slmactor ") else \
        f"slmactor: rewrote the {call.tool} call before it ran (a fix learned in this " \
        f"project: {said})."
    rule_id = str(answer.get("rule_id") or "")
    # The error the original call met before (the fact's evidence): the avoided failure's class.
    said_before = str(answer.get("message") or "")
    return Outcome(room.preflight_output(payload, updated, reason), reason,
                   _entry(call, updated, "", said_before, "environment" if rule_id.startswith("env_")
                          else "substitute_command", rule_id, payload))


#: Bytes of a file a bounded read's first lines may hold: well under the harness's own size
#: limit, and under its limit on the tokens a read returns (Claude Code: 25,000).
READ_BUDGET = 64 * 1024


def _read(room: Any, call: ToolCall, payload: Mapping[str, Any], base: Path) -> Outcome:
    """A read of a whole file over the harness's size limit, bounded to the harness's own range
    (its first lines, as many as fit `READ_BUDGET`): the harness would refuse it whole. Decided
    here, from the file on disk; the daemon is not asked."""
    name = call.path
    if not name:
        return Outcome({}, "the read names no file")
    path = _resolve(name, base)
    try:
        size = path.stat().st_size
    except OSError:
        return Outcome({}, "the file could not be read")
    if size <= room.read_limit:
        return Outcome({}, "the file is within the harness's limit")
    lines = _lines_within(path, READ_BUDGET)
    updated = room.bounded_read(call.args, lines)
    if updated is None:
        return Outcome({}, "the read already names a range")
    total = _count_lines(path)
    reason = (f"slmactor: {name} is {size // 1024} KB, over {call.tool}'s "
              f"{room.read_limit // 1024} KB limit for a whole file: read its lines 1-{lines} "
              f"of {total} (read further with the same tool's range).")
    return Outcome(room.preflight_output(payload, updated, reason), reason,
                   _entry(call, updated, name, "", "bound_output", "", payload))


def _lines_within(path: Path, budget: int) -> int:
    """How many whole lines from the top of `path` fit in `budget` bytes (at least one)."""
    used = count = 0
    try:
        with path.open("rb") as fh:
            for line in fh:
                used += len(line)
                if used > budget:
                    break
                count += 1
    except OSError:
        return 1
    return max(count, 1)


def _count_lines(path: Path) -> int:
    count = 0
    try:
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                count += block.count(b"\n")
    except OSError:
        return 0
    return count


def _dump(args: Mapping[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


#: (a `Decision`, or the reason there is nothing to decide; the would-be error; the file).
_Found = tuple[Any, str, str]


def _foreseen(call: ToolCall, message: str) -> ToolCall:
    """The call as it would fail: its own error text, as the harness would report it."""
    from dataclasses import replace

    return replace(call, ok=False, error=message)


def _edit(call: ToolCall, spec: EditTool, base: Path, ask: AskAdvice) -> _Found:
    args = call.shared()
    old, name = args.get(OLD), call.path
    if not isinstance(old, str) or not old or not name:
        return "not a search/replace edit", "", ""
    text = _read_text(_resolve(name, base))
    if text is None:
        return "the file could not be read", "", name
    if spec.normalizes_crlf:
        text = text.replace("\r\n", "\n")
    if old in text:  # the common case: no repair needed, no daemon asked
        return "the text to replace is in the file", "", name
    from slmactor.logic.evolve.preflight import decide, generic_candidates

    message = spec.error.format(old=old, path=name)
    candidates = [*_learned(ask(_foreseen(call, message)), call),
                  *generic_candidates(args, text)]
    return decide(args, text, candidates), message, name


def _patch(call: ToolCall, error: str, base: Path, ask: AskAdvice) -> _Found:
    from slmactor.logic.evolve.preflight import decide_patch, generic_patch_candidates, patch_paths

    patch = call.shared().get(PATCH)
    if not isinstance(patch, str) or not patch.strip():
        return "no patch", "", ""
    files: dict[str, str] = {}
    for name in patch_paths(patch):
        text = _read_text(_resolve(name, base))
        if text is not None:
            files[name] = text
    first = next(iter(files), "")
    if not files:
        return "no patched file could be read", "", first
    generic = generic_patch_candidates(patch)
    message = error.format(path=first, old="")
    decision = decide_patch(patch, files, generic)
    if decision.reason == "every hunk of the patch is in its file":
        return decision, message, first
    candidates = [*_learned(ask(_foreseen(call, message)), call, PATCH), *generic]
    return decide_patch(patch, files, candidates), message, first
