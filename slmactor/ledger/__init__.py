"""The session ledger: what a harness's session did, written down as it happens, in one room.

Each hook is a one-shot process, so every tool event appends one line to the session's ledger —
the call (the `ToolCall` its room built: arguments in the shared words, family, command,
outcome; redacted), the first prompts, each pre-flight rewrite, what the session was told — under
the runtime directory (`hook-sessions/<session>-<crc32>.jsonl`, mode 0600, at most 8 MiB: past
that, calls are noted without their arguments), never in the project. `import sessions` merges a
recorded session's calls into the same shape (`merge_transcript`), so a hooked session and an
imported one are learned from alike; the hooks (`slmactor.hooks.session`: the session's end,
recovery) and the import both use this room.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from slmactor.logic.failures.call import ToolCall

LEDGER_DIR = "hook-sessions"
MAX_LEDGER_BYTES = 8 << 20
#: Longest prompt kept in the ledger.
MAX_PROMPT = 4000


def ledger_path(runtime_dir: Path, project: str, run_id: str) -> Path:
    """`hook-sessions/<session id, filename-safe>-<crc32 of project and session>.jsonl`."""
    import zlib

    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in run_id[:80])
    digest = zlib.crc32(f"{project}\0{run_id}".encode("utf-8", errors="replace"))
    return runtime_dir / LEDGER_DIR / f"{safe}-{digest:08x}.jsonl"


def append(path: Path, entry: Mapping[str, Any]) -> None:
    """Add one entry to a ledger (created 0600 in a 0700 directory); OSError propagates."""
    path.parent.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # the runtime dir: private
    path.parent.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        data = dict(entry)
        if os.fstat(fd).st_size > MAX_LEDGER_BYTES:
            if data.get("e") != "call":
                return
            data.pop("args", None)  # past the cap a call still counts, without its arguments
        line = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
        os.write(fd, line.encode("utf-8", errors="replace"))  # one write: concurrent hooks interleave whole lines
    finally:
        os.close(fd)


def _digest(text: str) -> str:
    import zlib

    return f"{zlib.crc32(text.encode('utf-8', errors='replace')):08x}"


#: A successful command longer than this keeps only its digest (a heredoc, a script inline).
MAX_OK_COMMAND = 1000
#: Texts up to this long are redacted once per process and remembered (`redacted`), at most
#: `MAX_MEMO` of them: an imported history repeats its commands, arguments and errors (`git
#: status`, `File does not exist.`) across thousands of calls; a longer text is redacted each time.
MAX_MEMO_TEXT = 2048
MAX_MEMO = 2048


def redacted(text: str) -> str:
    """`redact(text)` (pure: the same text always comes out the same), remembered for short texts."""
    if len(text) > MAX_MEMO_TEXT:
        from slmactor.logic.text.redact import redact

        return redact(text)
    return _redacted_short(text)


@functools.lru_cache(maxsize=MAX_MEMO)
def _redacted_short(text: str) -> str:
    from slmactor.logic.text.redact import redact

    return redact(text)


def call_entry(call: ToolCall, path: str, model: str, now: float, *, edit: bool) -> dict[str, Any]:
    """A call's ledger entry (`call_fields`), of the record its harness's room built: its arguments
    in the shared words (`harnesses.base.shared_json`), its family."""
    from slmactor.harnesses.base import shared_json

    found = call_fields(call.tool, path, shared_json(call), call.command, call.ok, call.error, model,
                  now, edit=edit, family=call.family)
    if call.call_id:
        found["id"] = call.call_id  # the transcript's name for it: the call is counted once
    return found


def call_fields(tool: str, path: str, args: str, command: str, ok: bool, error: str, model: str,
          now: float, *, edit: bool, family: str = "") -> dict[str, Any]:
    """A call's ledger entry.  Only what pairing needs is kept, and redacted: a successful call
    that is neither an edit nor a command keeps no arguments; a successful command keeps its
    digest and, up to `MAX_OK_COMMAND` characters, its text and arguments (a corrected command
    is the fix a typed repair is learned from, and "works here" is said only of commands that
    ran); a failed call or an edit keeps its arguments, command and error through the redactor
    (the same secret becomes the same marker in the failed and the fixed arguments, so the
    transform between them is still recognised)."""
    found: dict[str, Any] = {"e": "call", "at": now, "tool": tool, "ok": ok}
    if family:
        found["family"] = family
    if path:
        found["path"] = path
    if model:
        found["model"] = model
    if command:
        found["cmd"] = _digest(command)
    if ok and not edit and (not command or len(command) > MAX_OK_COMMAND
                            or len(args) > 4 * MAX_OK_COMMAND):
        return found
    for key, value in (("args", args), ("command", command), ("error", error)):
        if value:
            found[key] = redacted(value)
    return found


def prompt_entry(text: str, now: float) -> dict[str, Any]:
    """A prompt's ledger entry, redacted like a call's (a pasted key is in the prompt too)."""
    from slmactor.logic.text.redact import redact
    from slmactor.logic.text.safecut import cut_chars

    return {"e": "prompt", "at": now, "text": redact(cut_chars(text, MAX_PROMPT))}


#: Wrappers harnesses put around context a hook injected, or around their own reminders, when
#: they hand it back inside a prompt (opening and closing tag names).
_INJECTED_TAGS = ("hook_context", "system-reminder", "user-prompt-submit-hook")


def _line_key(line: str) -> str:
    """A line as compared across what a session was told and what a prompt carries (HTML
    entities undone: a harness may escape the context it echoes back)."""
    import html

    return _digest(html.unescape(line).strip())


#: Lines of what a session was told kept as text (for `memory audit`), and their length.
MAX_SAID_LINES = 64
MAX_SAID_CHARS = 600


def told_entry(text: str, now: float, keys: Sequence[str] = (), *, channel: str = "block",
               evidence: Sequence[str] = ()) -> dict[str, Any]:
    """A ledger entry naming what this session was told: the keys of the block's items (what
    the next block is compared by), every line of the text (digests: what a prompt that echoes
    it back is stripped of) and the lines themselves (`said`, with the records they rest on:
    what `memory audit` checks of what reached the model)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    entry: dict[str, Any] = {"e": "told", "at": now, "lines": sorted(
        {_line_key(line) for line in lines}), "channel": channel,
        "said": [line[:MAX_SAID_CHARS] for line in lines[:MAX_SAID_LINES]]}
    if keys:
        entry["keys"] = sorted({key_digest(k) for k in keys})
    if evidence:
        entry["evidence"] = [e for e in evidence if isinstance(e, str) and e][:16]
    return entry


def command_digest(command: str) -> str:
    """The digest the ledger keys a call's command by (`cmd`): a pre-flight rewrite's entry names
    the command that then runs by it."""
    return _digest(command)


def key_digest(key: str) -> str:
    """A block item's key as the ledger keeps it (a digest: the ledger stays small)."""
    return _digest(key)


def told_keys(entries: Sequence[Mapping[str, Any]]) -> set[str]:
    """The keys of every block item a session was told so far (as `told_entry` keeps them)."""
    return _told(entries, "keys")


def told_lines(entries: Sequence[Mapping[str, Any]]) -> set[str]:
    """The digests of every line of context a session was given so far."""
    return _told(entries, "lines")


def _told(entries: Sequence[Mapping[str, Any]], field: str) -> set[str]:
    """Every digest the session's `told` entries list under `field`."""
    found: set[str] = set()
    for entry in entries:
        if entry.get("e") == "told" and isinstance(entry.get(field), list):
            found.update(d for d in entry[field] if isinstance(d, str))
    return found


def without_injected(prompt: str, told: set[str]) -> str:
    """A prompt without the context this session was given (a harness may prepend it) and
    without harnesses' own reminder blocks, so the prompt stored as the task is the user's."""
    import re

    text = prompt
    for tag in _INJECTED_TAGS:
        text = re.sub(rf"<{re.escape(tag)}>.*?</{re.escape(tag)}>", "", text, flags=re.DOTALL)
    kept = [line for line in text.splitlines() if not (line.strip() and _line_key(line) in told)]
    return "\n".join(kept).strip()


def _read(path: Path) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                value = json.loads(raw)
            except ValueError:
                continue  # a line cut by a crash: the rest of the ledger still counts
            if isinstance(value, dict):
                entries.append(value)
    return entries


def read_ledger(path: Path) -> list[dict[str, Any]]:
    """The ledger's entries ([] when there is none)."""
    try:
        return _read(path)
    except FileNotFoundError:
        return []


def drop(path: Path, count: int) -> None:
    """Remove the first `count` entries (the ones just reported); entries a concurrent hook
    appended meanwhile stay for the next report."""
    tmp = path.with_suffix(f".tmp-{os.getpid()}")
    try:
        entries = _read(path)
        # What the session was told stays: a later segment's prompts add only what is new.
        rest = [e for e in entries[:count] if e.get("e") == "told"] + entries[count:]
        if not rest:
            path.unlink()
            return
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n"
                          for e in rest)
        os.replace(tmp, path)
    except OSError:
        # The ledger stays as it was (reported again next time); a half-written copy must not.
        try:
            tmp.unlink()
        except OSError:
            pass


def merge_transcript(entries: list[dict[str, Any]], calls: Sequence[Mapping[str, Any]],
                     is_edit: Callable[[str], bool], project: str = "") -> list[dict[str, Any]]:
    """The ledger with the calls of the session's transcript merged in, each call once.

    The transcript is the record; hooks are triggers that may not fire (a call rejected by the
    harness's own validation, a hook cancelled at exit, one skipped while the daemon was
    wedged). A transcript call the ledger has under the same id is the same call: its verdict
    replaces the hook's where the transcript knows better (it failed, or it carries an exit
    code the hook's payload lacked), keeping the hook's fingerprint link. One the ledger lacks
    is added, redacted as the ledger's own entries are; a call of an old ledger without ids is
    matched by tool and arguments. Paths inside `project` are made relative to it, as the
    hooks' entries name them.
    """
    out = list(entries)
    by_id = {e["id"]: i for i, e in enumerate(out) if e.get("e") == "call" and isinstance(e.get("id"), str)}
    seen = {(e.get("tool"), e.get("args")) for e in out if e.get("e") == "call" and not e.get("id")}
    for call in calls:
        tool, ok = str(call.get("tool", "")), call.get("ok") is True
        path = str(call.get("path", ""))
        if project and os.path.isabs(path):
            path = _relative_in(path, project)
        family = call.get("family")
        entry = call_fields(tool, path, str(call.get("args", "")), str(call.get("command", "")),
                            ok, str(call.get("error", "")), "", _when(call), edit=is_edit(tool),
                            family=family if isinstance(family, str) else "")
        call_id = call.get("id")
        if isinstance(call_id, str) and call_id:
            entry["id"] = call_id
        if isinstance(call.get("exit_code"), int):
            entry["exit_code"] = call["exit_code"]
        index = by_id.get(call_id) if isinstance(call_id, str) else None
        if index is not None:
            hooked = out[index]
            if hooked.get("ok") is not ok and (not ok or "exit_code" in entry):
                keep: dict[str, Any] = {k: hooked[k] for k in ("key", "model") if k in hooked}
                out[index] = {**entry, "at": _when(entry) or _when(hooked), **keep}
            elif _when(entry):
                # When the call happened is the transcript's: an async hook (Claude Code's
                # PostToolUse) may run after the next call's, and the calls' order is what says
                # which edit came before the test run that passed.
                out[index] = {**hooked, "at": entry["at"]}
            continue
        if (call.get("tool"), call.get("args")) in seen:
            continue
        # Only the transcript saw it (no hook told the daemon): its command is kept, redacted,
        # so the report can say it ran.
        entry["only_transcript"] = True
        if ok and call.get("command") and "command" not in entry:
            entry["command"] = redacted(str(call["command"]))
        out.append(entry)
    return sorted(out, key=_when)  # stable: ties keep their order


@functools.lru_cache(maxsize=1024)
def _relative_in(path: str, project: str) -> str:
    """`path` relative to `project` when it is inside it, else as it is (a session names the
    same files again and again: each is worked out once)."""
    inside = Path(path)
    return str(inside.relative_to(project)) if inside.is_relative_to(project) else path


def _when(entry: Mapping[str, Any]) -> float:
    at = entry.get("at")
    return float(at) if isinstance(at, (int, float)) and not isinstance(at, bool) else 0.0
