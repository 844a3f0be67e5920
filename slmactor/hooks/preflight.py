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

# The decision logic (`slmactor.logic.evolve.preflight`, and the transforms under it) is imported
# only when an edit's text is missing from its file: every other pre-tool event — another tool,
# an edit that will work — costs no more than reading the file.

#: Longest file pre-flight reads; a larger one is left to the tool.
MAX_FILE_BYTES = 8 << 20

#: (tool, message, args) → the daemon's `evolve.on_failure` answer, or None.
AskAdvice = Callable[[str, str, str], Mapping[str, Any] | None]
#: (tool, args) → the daemon's `evolve.preflight` answer, or None.
AskRewrite = Callable[[str, str], Mapping[str, Any] | None]


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


def _learned(advice: Mapping[str, Any] | None, key: str | None = None) -> list[Any]:
    """The arguments a confident learned rule produced, as a `Candidate`."""
    from slmactor.logic.evolve.preflight import Candidate

    if not advice or advice.get("apply") is not True:
        return []
    new_args = advice.get("new_args")
    rule_id = advice.get("rule_id")
    repair = advice.get("repair")
    if not isinstance(new_args, str) or not new_args or not isinstance(rule_id, str):
        return []
    try:
        parsed = json.loads(new_args)
    except ValueError:
        return []
    if not isinstance(parsed, dict) or (key is not None and not isinstance(parsed.get(key), str)):
        return []
    name = repair.get("transform", "") if isinstance(repair, Mapping) else ""
    return [Candidate(parsed, str(name) or "rule", rule_id)]


def run(fmt: str, event: str, payload: Mapping[str, Any], base: Path, ask: AskAdvice,
        ask_rewrite: AskRewrite | None = None) -> Outcome:
    """Pre-flight for one pre-tool event; `{}` output unless the edit (or, where the room keeps
    the harness's permission rules, a shell command) is rewritten."""
    room = harnesses.get(fmt)
    if not room.pre_event or room.pre_event != event:
        return Outcome({}, "not a pre-tool event")
    tool, raw, _ = room.tool_fields(payload)
    tool_input = raw
    if not tool or not isinstance(tool_input, dict):
        return Outcome({}, "no tool input")
    if not room.is_preflight_tool(tool):
        if room.preflight_shell and ask_rewrite is not None and room.families.get(tool) == "shell":
            return _shell(room, tool, tool_input, payload, ask_rewrite)
        return Outcome({}, f"{tool} is not an edit tool")
    cwd = room.project(payload, {}, "")
    base = Path(cwd) if cwd and os.path.isabs(cwd) else base
    if tool in room.preflight_patches:
        decision, message, path = _patch(tool, tool_input, room.patch_error, base, ask)
    else:
        decision, message, path = _edit(tool, tool_input, room.preflight_edits[tool], base, ask)
    if isinstance(decision, str):
        return Outcome({}, decision)
    if decision.candidate is None:
        return Outcome({}, decision.reason)
    cand = decision.candidate
    updated = {**tool_input, **cand.args}
    # What the model reads: the repair by name, never an internal rule id (the ledger keeps it).
    how = "a fix learned in this project" if cand.rule_id else "a safe generic repair"
    reason = f"slmactor: rewrote the {tool} call before it ran ({cand.transform}, {how}): " \
             f"{decision.reason}."
    model = payload.get("model")
    entry = {"e": "preflight", "tool": tool, "path": path, "message": message,
             "failed_args": _dump(tool_input), "fixed_args": _dump(updated),
             "transform": cand.transform, "rule_id": cand.rule_id,
             "model": model if isinstance(model, str) else ""}
    return Outcome(room.preflight_output(payload, updated, reason), reason, entry)


def _shell(room: Any, tool: str, tool_input: dict[str, Any], payload: Mapping[str, Any],
           ask: AskRewrite) -> Outcome:
    """A shell command rewritten by a learned substitution that always worked (the daemon
    decides: `evolve.preflight`); the same tool only, other input fields kept."""
    answer = ask(tool, _dump(tool_input))
    if not answer or answer.get("found") is not True or answer.get("new_tool") != tool:
        return Outcome({}, "no learned rewrite for this command")
    try:
        new_args = json.loads(str(answer.get("new_args") or ""))
    except ValueError:
        return Outcome({}, "the learned rewrite is not a JSON object")
    if not isinstance(new_args, dict):
        return Outcome({}, "the learned rewrite is not a JSON object")
    updated = {**tool_input, **new_args}
    reason = f"slmactor: rewrote the {tool} call before it ran (a fix learned in this project: " \
             f"{answer.get('reason')})."
    model = payload.get("model")
    entry = {"e": "preflight", "tool": tool, "path": "", "message": "",
             "failed_args": _dump(tool_input), "fixed_args": _dump(updated),
             "transform": "substitute_command", "rule_id": str(answer.get("rule_id") or ""),
             "model": model if isinstance(model, str) else ""}
    return Outcome(room.preflight_output(payload, updated, reason), reason, entry)


def _dump(args: Mapping[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


#: (a `Decision`, or the reason there is nothing to decide; the would-be error; the file).
_Found = tuple[Any, str, str]


def _edit(tool: str, tool_input: dict[str, Any], spec: EditTool, base: Path,
          ask: AskAdvice) -> _Found:
    old, name = tool_input.get(spec.old), tool_input.get(spec.path)
    if not isinstance(old, str) or not old or not isinstance(name, str) or not name:
        return "not a search/replace edit", "", ""
    text = _read_text(_resolve(name, base))
    if text is None:
        return "the file could not be read", "", name
    if spec.normalizes_crlf:
        text = text.replace("\r\n", "\n")
    if old in text:  # the common case: no repair needed, no daemon asked
        return "the text to replace is in the file", "", name
    from slmactor.logic.evolve.preflight import EditFields, decide, generic_candidates

    fields = EditFields(spec.old, spec.new, spec.replace_all, spec.expected)
    message = spec.error.format(old=old, path=name)
    candidates = [*_learned(ask(tool, message, _dump(tool_input))),
                  *generic_candidates(tool_input, text, fields)]
    return decide(tool_input, text, candidates, fields), message, name


def _patch(tool: str, tool_input: dict[str, Any], error: str, base: Path, ask: AskAdvice) -> _Found:
    from slmactor.logic.evolve.preflight import decide_patch, generic_patch_candidates, patch_paths

    patch = tool_input.get("command")
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
    candidates = [*_learned(ask(tool, message, _dump(tool_input)), "command"), *generic]
    return decide_patch(patch, files, candidates), message, first
