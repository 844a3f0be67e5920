"""A hook-driven session's ledger, and the `run.finish` that turns the session into memory.

Each hook is a one-shot process, so what a session did is written down as it happens: every tool
event appends one line to the session's **ledger** — the call with its full arguments (working
memory keeps only 200 bytes of them, too little to learn a transform from), its outcome, the
model when the payload names it — and so do the first prompts and each pre-flight rewrite.  The
ledger lives in the runtime directory (`hook-sessions/<hash of project and session>.jsonl`,
mode 0600, at most 8 MiB: past that, calls are noted without their arguments), never in the
project.

When the session ends — one of the room's `end_events` (`slmactor.harnesses`; for a harness
without an end event, its end of a turn) — the hook takes the ledger, asks the daemon for the
run's working memory, reads the transcript when the payload names one the room can read, builds
the run report (`slmactor.logic.loop.session_report`) and sends `run.finish`.  A turn's end is
debounced per session: it finishes only the part of the session not yet reported, and only when
that part made a tool call (an end after a turn without tools, or a repeated one, sends nothing);
each part after the first is its own run, `<session>#2`, `<session>#3`, …

Everything here fails open: a ledger that cannot be written or read costs the session its
learning, never the harness its call.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from slmactor.logic.failures.call import ToolCall

LEDGER_DIR = "hook-sessions"
MAX_LEDGER_BYTES = 8 << 20
#: Longest transcript read (a longer one is read up to this size).
MAX_TRANSCRIPT_BYTES = 64 << 20
#: Longest prompt kept in the ledger.
MAX_PROMPT = 4000
#: A ledger untouched this long belongs to a session that never ended (or whose end the daemon
#: never heard): removed at the next session end of any session, so the directory stays bounded.
STALE_SECONDS = 7 * 86400


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
    from slmactor.logic.text.redact import redact

    for key, value in (("args", args), ("command", command), ("error", error)):
        if value:
            found[key] = redact(value)
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


def told_entry(text: str, now: float, keys: Sequence[str] = ()) -> dict[str, Any]:
    """A ledger entry naming what this session was told: the keys of the block's items (what
    the next block is compared by) and every line of the text (digests only: what a prompt
    that echoes it back is stripped of)."""
    entry: dict[str, Any] = {"e": "told", "at": now, "lines": sorted(
        {_line_key(line) for line in text.splitlines() if line.strip()})}
    if keys:
        entry["keys"] = sorted({key_digest(k) for k in keys})
    return entry


def key_digest(key: str) -> str:
    """A block item's key as the ledger keeps it (a digest: the ledger stays small)."""
    return _digest(key)


def told_keys(entries: Sequence[Mapping[str, Any]]) -> set[str]:
    """The keys of every block item a session was told so far (as `told_entry` keeps them)."""
    found: set[str] = set()
    for entry in entries:
        if entry.get("e") == "told" and isinstance(entry.get("keys"), list):
            found.update(d for d in entry["keys"] if isinstance(d, str))
    return found


def told_lines(entries: Sequence[Mapping[str, Any]]) -> set[str]:
    """The digests of every line of context a session was given so far."""
    found: set[str] = set()
    for entry in entries:
        if entry.get("e") == "told" and isinstance(entry.get("lines"), list):
            found.update(d for d in entry["lines"] if isinstance(d, str))
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
    try:
        entries = _read(path)
        # What the session was told stays: a later segment's prompts add only what is new.
        rest = [e for e in entries[:count] if e.get("e") == "told"] + entries[count:]
        if not rest:
            path.unlink()
            return
        tmp = path.with_suffix(f".tmp-{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n"
                          for e in rest)
        os.replace(tmp, path)
    except OSError:
        pass


def _segment(path: Path) -> tuple[int, float]:
    """How many parts of this session were already reported, and when the last one was."""
    try:
        count, _, at = path.with_suffix(".finished").read_text().strip().partition(" ")
        return int(count or 0), float(at or 0)
    except (OSError, ValueError):
        return 0, 0.0


def _mark_segment(path: Path, n: int, at: float) -> None:
    with contextlib.suppress(OSError):
        path.with_suffix(".finished").write_text(f"{n} {at}")


#: How often a detached reporter looks whether the harness is gone (seconds).
SETTLE_POLL_S = 0.05
#: Command names of the shells a harness may run its hooks through: not the harness itself.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh"})


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(command name, parent pid) of `pid` from Linux's /proc; None elsewhere or when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read(4096)
    except OSError:
        return None
    name, _, rest = data.partition(b" (")[2].rpartition(b") ")
    fields = rest.split()
    return (name.decode(errors="replace"), int(fields[1])) if len(fields) > 1 else None


def harness_pid() -> int:
    """The process that ran this hook (through a shell or not), or 0 when it cannot be told.
    Taken before a hook detaches, which re-parents it: from /proc (a file read, no import: the
    harness waits for this hook's answer), else psutil where the daemon extra installed it."""
    pid = os.getppid()
    found = _proc_stat(pid)
    if found is not None:
        if found[0] in SHELLS:
            pid = found[1]
        return pid if pid > 1 else 0
    try:
        import psutil
    except ImportError:
        return 0
    try:
        proc = psutil.Process(pid)
        if proc.name() in SHELLS:
            proc = proc.parent() or proc
        return proc.pid if proc.pid > 1 else 0
    except psutil.Error:
        return 0


def settle(path: str, until: float, harness_pid: int = 0) -> None:
    """Until `until` (`time.monotonic()`): wait for the harness's process (`harness_pid`) to exit, then for the
    file at `path` to keep its size for one SETTLE_POLL_S. A harness ending its session may
    still be writing the transcript: Claude Code 2.1 in `-p` mode fires SessionEnd before the
    last tool result is in the file (its async PostToolUse is cancelled at exit as well), so
    that call reached neither a hook nor the report. A harness has written its transcript
    once it has exited."""
    while harness_pid and time.monotonic() + SETTLE_POLL_S <= until:
        try:
            os.kill(harness_pid, 0)
        except OSError:
            break  # gone (or not ours to signal: nothing to wait for)
        time.sleep(SETTLE_POLL_S)

    def size() -> int:
        try:
            return os.stat(path).st_size
        except OSError:
            return -1

    before = size()
    while time.monotonic() + SETTLE_POLL_S <= until:
        time.sleep(SETTLE_POLL_S)
        now = size()
        if now == before:
            return
        before = now


def transcript_stats(harness: str, payload: Mapping[str, Any], since: float,
                     settle_until: float = 0.0, harness_pid: int = 0) -> Any:
    """`TranscriptStats` of the transcript the payload names, read by the harness's room, of
    what happened after `since`; None when there is none it reads. With `settle_until`, read
    once the file stopped growing (`settle`)."""
    from slmactor import harnesses

    room = harnesses.get(harness)
    name = room.transcript_path(payload)
    suffix = room.transcript_suffix()
    if not suffix or not name.endswith(suffix):
        return None
    from slmactor.harnesses.base import read_regular_file

    if settle_until:
        settle(name, settle_until, harness_pid)

    data = read_regular_file(name, MAX_TRANSCRIPT_BYTES)
    if data is None:
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    return room.transcript_stats(name, lines, since)


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
        if project and os.path.isabs(path) and Path(path).is_relative_to(project):
            path = str(Path(path).relative_to(project))
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
                out[index] = {**entry, "at": _when(hooked) or entry["at"], **keep}
            continue
        if (call.get("tool"), call.get("args")) in seen:
            continue
        # Only the transcript saw it (no hook told the daemon): its command is kept, redacted,
        # so the report can say it ran.
        entry["only_transcript"] = True
        if ok and call.get("command"):
            from slmactor.logic.text.redact import redact

            entry["command"] = redact(str(call["command"]))
        out.append(entry)
    return sorted(out, key=_when)  # stable: ties keep their order


def _when(entry: Mapping[str, Any]) -> float:
    at = entry.get("at")
    return float(at) if isinstance(at, (int, float)) and not isinstance(at, bool) else 0.0


def finish(ask: Callable[[str, dict[str, Any]], Any], *, harness: str, event: str,
           payload: Mapping[str, Any], path: Path, run_id: str, project: str = "",
           settle_until: float = 0.0, harness_pid: int = 0) -> dict[str, Any] | None:
    """Build and send the session's (or segment's) `run.finish`; the daemon's reply, or None when
    there was nothing to report or no reply (then the ledger stays for the next end event).
    `ask(kind, fields)` returns the daemon's reply or None, and never raises. `settle_until`
    and `harness_pid`: as for `settle`."""
    from slmactor import harnesses
    from slmactor.logic.loop.session_report import session_report
    from slmactor.logic.working.toolclasses import EDIT

    if harnesses.get(harness).is_stop_rerun(event, payload):
        return None
    entries = read_ledger(path)
    recorded = len(entries)
    # In the order the calls happened: async hooks (Claude's PostToolUse) may append late.
    entries.sort(key=_when)
    done, since = _segment(path)
    # The transcript first: a session whose every call's hook was lost (cancelled when `-p`
    # exited, skipped while the daemon was wedged) is still a session the transcript recorded.
    transcript = transcript_stats(harness, payload, since, settle_until, harness_pid)
    classes = harnesses.tool_classes()

    def is_edit(tool: str) -> bool:
        return classes.classify(tool)[1] == EDIT

    if transcript is not None and transcript.calls:
        entries = merge_transcript(entries, transcript.calls, is_edit, project)
    if not any(e.get("e") in ("call", "preflight") for e in entries):
        return None
    report_id = run_id if done == 0 else f"{run_id}#{done + 1}"
    snapshot: dict[str, Any] | None = None
    if done == 0:
        reply = ask("working.snapshot", {"run_id": run_id})
        if isinstance(reply, dict) and isinstance(reply.get("snapshot"), dict):
            snapshot = reply["snapshot"]
    now = time.time()
    report = session_report(report_id, harness, entries, snapshot, transcript, now, is_edit,
                            first_segment=done == 0, edit_format_of=harnesses.edit_format)
    # Answered once the report is journalled (durable; a daemon killed mid-pipeline replays it),
    # not after the pipeline: a turn's end may end every turn, and a pipeline slower than the
    # hook's deadline would read as a wedged daemon and open the hooks' breaker.
    reply = ask("run.finish", {"report": report})
    if not isinstance(reply, dict):
        mark_pending(path, harness=harness, event=event, payload=payload, run_id=run_id, project=project)
        return None
    drop(path, recorded)
    _mark_segment(path, done + 1, now)
    with contextlib.suppress(OSError):
        path.with_suffix(PENDING_SUFFIX).unlink()
    prune(path.parent, now)
    return reply


#: Beside a ledger whose session ended while the daemon could not take its report: what a later
#: hook needs to report it (the end event's harness, event, payload, run and project).
PENDING_SUFFIX = ".pending"
#: Largest end-event payload kept for a later report (an end event carries a few ids and paths).
MAX_PENDING_BYTES = 16 << 10
#: Sessions a hook event reports for others at most (each costs two asks of the event's deadline).
RECOVER_PER_EVENT = 2


def mark_pending(path: Path, *, harness: str, event: str, payload: Mapping[str, Any], run_id: str,
                 project: str) -> None:
    """Note that the session of this ledger ended unreported, for `recover` to report later."""
    data = json.dumps({"fmt": harness, "event": event, "payload": dict(payload), "run_id": run_id,
                       "project": project}, ensure_ascii=False, default=str)
    if len(data) > MAX_PENDING_BYTES:
        data = json.dumps({"fmt": harness, "event": event, "payload": {}, "run_id": run_id, "project": project})
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path.with_suffix(PENDING_SUFFIX), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)


def recover(ask: Callable[[str, dict[str, Any]], Any], directory: Path, *, skip: Path | None = None,
            limit: int = RECOVER_PER_EVENT) -> int:
    """Report sessions that ended while the daemon could not take their report (oldest first, at
    most `limit`); how many were reported. A session hooks never saw end stays in its ledger
    until `prune` removes it."""
    try:
        markers = sorted(directory.glob(f"*{PENDING_SUFFIX}"), key=lambda m: m.stat().st_mtime)
    except OSError:
        return 0
    reported = 0
    for marker in markers:
        ledger = marker.with_suffix(".jsonl")
        if reported >= limit or (skip is not None and ledger == skip):
            continue
        try:
            note = json.loads(marker.read_text(encoding="utf-8"))
            harness, event, payload = str(note["fmt"]), str(note["event"]), note["payload"]
            run_id, project = str(note["run_id"]), str(note.get("project", ""))
        except (OSError, ValueError, KeyError, TypeError):
            with contextlib.suppress(OSError):
                marker.unlink()  # unreadable: nothing to report it with
            continue
        if not ledger.exists():
            with contextlib.suppress(OSError):
                marker.unlink()
            continue
        if finish(ask, harness=harness, event=event, payload=payload if isinstance(payload, dict) else {},
                  path=ledger, run_id=run_id, project=project) is None:
            break  # the daemon still does not answer: try again at a later event
        reported += 1
    return reported


def prune(directory: Path, now: float) -> int:
    """Remove ledgers (and their markers) untouched for `STALE_SECONDS`; how many were removed."""
    removed = 0
    try:
        names = list(directory.iterdir())
    except OSError:
        return 0
    for name in names:
        with contextlib.suppress(OSError):
            if now - name.stat().st_mtime > STALE_SECONDS:
                name.unlink()
                removed += 1
    return removed
