"""A hook-driven session's end: the `run.finish` that turns its ledger into memory.

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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

# The ledger is its own room (`slmactor.ledger`), shared with `import sessions`; its names are
# kept here for the callers that reach them through this module.
from slmactor.ledger import (
    LEDGER_DIR,
    MAX_LEDGER_BYTES,
    MAX_OK_COMMAND,
    MAX_PROMPT,
    _when,
    append,
    call_entry,
    call_fields,
    command_digest,
    drop,
    key_digest,
    ledger_path,
    merge_transcript,
    prompt_entry,
    read_ledger,
    told_entry,
    told_keys,
    told_lines,
    without_injected,
)

__all__ = [  # the ledger's names, re-exported
    "LEDGER_DIR",
    "MAX_LEDGER_BYTES",
    "MAX_OK_COMMAND",
    "MAX_PROMPT",
    "append",
    "call_entry",
    "call_fields",
    "command_digest",
    "drop",
    "key_digest",
    "ledger_path",
    "merge_transcript",
    "prompt_entry",
    "read_ledger",
    "told_entry",
    "told_keys",
    "told_lines",
    "without_injected",
]

#: Longest transcript read (a longer one is read up to this size).
MAX_TRANSCRIPT_BYTES = 64 << 20
#: A ledger untouched this long belongs to a session that never ended (or whose end the daemon
#: never heard): removed at the next session end of any session, so the directory stays bounded.
STALE_SECONDS = 7 * 86400


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
