"""The import loop: every counted file, once, into the project each of its sessions belongs to.

For each file (`files.Found`, or a blob of a committed history from `gitsource`) the harness
rooms say what it is (`sniff_session`, from the name and the first 64 KiB; a JSON array of
objects that no room claims is re-read as JSON lines, the shape a `Stop` hook's copy of a
transcript has) and read it (`read_sessions`, over bounded `files.Lines`). Nothing a file holds
stops the import: a room that fails on a file, a file no room reads, a line a parser refuses, a
session the daemon refuses — each is skipped and counted with its reason (`Tally.skips` lists
every one), and the next file is read.

Each session becomes a `run.finish` (`logic.loop.recorded.import_report`) in the project it ran
in: `--project`, else the project a committed history belongs to, else its recorded directory
when that exists here, else the project here `places.Places` matches it to (a moved or cloned
project: by git remote or root name, when unambiguous). A session matched nowhere is skipped
with the exact command that imports it; its file is not recorded as done, so that command (or
any rerun) reads it again.

Age: a session that ended before the episode store's age limit (`episodes_max_age_days`, 180
days by default) still teaches its lessons, repair rules, regression checks and metrics, but
its episode (the similar-work memory) is pruned at once — the import counts such sessions and
what was kept from them; with `keep_old` their reports carry the episode store's keep tag, and
the store keeps their episodes past the age limit (still within its count cap).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from slmactor.cli.sessions.files import (
    HEAD_BYTES,
    MAX_FILE_BYTES,
    Lines,
    TextLines,
    array_as_lines,
    looks_like_array,
)
from slmactor.cli.sessions.places import Places, command
from slmactor.cli.sessions.state import ImportState

#: Skips listed one by one in the result (more are only counted).
MAX_LISTED = 100_000
#: Skips named in the human summary.
MAX_EXAMPLES = 20
SECONDS_PER_DAY = 86_400.0


class Item(Protocol):
    """One file to read: on disk (`files.Found`) or in a git repository (`gitsource.Blob`)."""

    @property
    def name(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def stamp(self) -> int: ...
    @property
    def project(self) -> str: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def origin(self) -> tuple[str, ...]: ...
    def head(self) -> str: ...
    def opener(self) -> Lines: ...
    def data(self) -> bytes: ...


@dataclass(slots=True)
class Options:
    """How one import runs."""

    #: `--project` ("" = each session's own).
    project: str = ""
    #: Only sessions active since (epoch seconds; 0 = all).
    since: float = 0.0
    #: The episode store's age limit (None = none) and whether to keep older episodes anyway.
    max_age_days: float | None = 180.0
    keep_old: bool = False
    #: The time the import runs at (epoch seconds).
    now: float = 0.0


@dataclass(slots=True)
class Moved:
    """Sessions that ran in one directory that is not here."""

    cwd: str
    sessions: int = 0
    files: list[str] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)


class Tally:
    """The counts of one import."""

    def __init__(self) -> None:
        self.files = self.bytes = self.sessions = self.new = self.already = self.continued = 0
        self.calls = self.failed_calls = self.repaired = self.lessons = self.candidates = 0
        self.unchanged_files = self.companions = self.matched_elsewhere = 0
        self.files_seen = self.bytes_seen = 0
        self.by_harness: dict[str, dict[str, int]] = {}
        self.classes: dict[str, int] = {}
        self.skipped_files: dict[str, int] = {}
        self.skipped_sessions: dict[str, int] = {}
        self.skipped_lines: dict[str, int] = {}
        self.skips: list[dict[str, Any]] = []
        self.unlisted = 0
        self.examples: list[str] = []
        self.moved: dict[str, Moved] = {}
        self.old = {"sessions": 0, "lessons": 0, "repair_candidates": 0, "regression_checks": 0,
                    "episodes_kept": 0}

    def _list(self, entry: dict[str, Any]) -> None:
        if len(self.skips) < MAX_LISTED:
            self.skips.append(entry)
        else:
            self.unlisted += 1

    def skip_file(self, label: str, reason: str) -> None:
        self.skipped_files[reason] = self.skipped_files.get(reason, 0) + 1
        self._list({"path": label, "reason": reason})
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(f"{label}: {reason}")

    def skip_lines(self, label: str, skipped: dict[str, int]) -> None:
        for reason, count in sorted(skipped.items()):
            self.skipped_lines[reason] = self.skipped_lines.get(reason, 0) + count
            self._list({"path": label, "reason": reason, "lines": count})

    def skip_session(self, label: str, run: str, reason: str, **extra: Any) -> None:
        self.skipped_sessions[reason] = self.skipped_sessions.get(reason, 0) + 1
        self._list({"path": label, "session": run, "reason": reason, **extra})

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files, "bytes": self.bytes, "unchanged_files": self.unchanged_files,
            "companion_files": self.companions,
            "sessions": self.sessions, "new": self.new, "already_imported": self.already,
            "continued": self.continued, "matched_elsewhere": self.matched_elsewhere,
            "skipped_sessions": dict(sorted(self.skipped_sessions.items())),
            "calls": self.calls, "failed_calls": self.failed_calls,
            "failures_by_class": dict(sorted(self.classes.items(), key=lambda kv: (-kv[1], kv[0]))),
            "repaired_in_session": self.repaired, "lessons_learned": self.lessons,
            "repair_candidates": self.candidates,
            "old_sessions": dict(self.old),
            "by_harness": self.by_harness,
            "skipped_files": dict(sorted(self.skipped_files.items())),
            "skipped_lines": dict(sorted(self.skipped_lines.items())),
            "skipped_examples": self.examples,
            "moved": [{"cwd": m.cwd, "sessions": m.sessions, "candidates": m.candidates,
                       "command": command(m.files, m.candidates[0] if len(m.candidates) == 1 else "")}
                      for m in self.moved.values()],
            "skips": self.skips,
            "skips_not_listed": self.unlisted,
        }


Send = Callable[[dict[str, Any], str], dict[str, Any]]


class Refused(Exception):
    """The daemon refused one session's report (the import goes on with the next)."""


def _claim(rooms: list[Any], name: str, head: str) -> tuple[Any, str, str]:
    """(the room that reads the file, what the file is to it, "") — or (None, "", why none
    does: "" when no room claims it, else the room that failed to tell)."""
    for room in rooms:
        try:
            kind = room.sniff_session(name, head)
        except Exception as exc:  # noqa: BLE001 - one room's odd sniff must not stop the import
            return None, "", f"unreadable as {room.title} ({type(exc).__name__})"
        if kind:
            return room, kind, ""
    return None, "", ""


def _first_line_bad(head: str) -> bool:
    """Whether a file's first line is no JSON value (broken, too deep, or past the head)."""
    from slmactor.logic.loop.transcripts import parse_json

    first, newline, _rest = head.lstrip().partition("\n")
    return bool(first) and (not newline or bool(parse_json(first)[1]))


def _head_after_bad_lines(opener: Lines, budget: int = MAX_FILE_BYTES) -> str:
    """The head a file would have without its leading lines that are no JSON ("" when none
    is): read line by line, within `budget` bytes."""
    from slmactor.logic.loop.transcripts import MAX_TRANSCRIPT_LINE, parse_json

    kept: list[str] = []
    size = seen = 0
    for line in opener():
        seen += len(line)
        if not kept and (len(line) > MAX_TRANSCRIPT_LINE or not line.strip() or parse_json(line)[1]):
            if seen > budget:
                return ""
            continue
        kept.append(line)
        size += len(line)
        if size >= HEAD_BYTES:
            break
    return "".join(kept)[:HEAD_BYTES]


def import_sessions(items: Iterable[Item], rooms: list[Any], state: ImportState, opts: Options, *,
                    send: Send | None, places: Places, tally: Tally | None = None,
                    progress: Callable[[Tally, bool], None] | None = None, depth: int = 8) -> Tally:
    """Import every session of `items`; `send(report, project)` is the daemon's reply to its
    `run.finish` (None: a dry run) and raises `Refused` for a report the daemon refused. Reports
    are sent from a thread of their own, at most `depth` unanswered, so reading the next file
    overlaps the daemon's work on the last; every count and state line is written here, in the
    caller's thread, as replies come back."""
    pipeline = Pipeline(send, depth) if send is not None else None
    run = _Import(rooms, state, opts, pipeline, places, tally if tally is not None else Tally())
    try:
        for item in items:
            run.tally.files_seen += 1
            run.tally.bytes_seen += min(item.size, MAX_FILE_BYTES)
            try:
                run.file(item)
            finally:
                run.settle(wait=False)
                if progress is not None:
                    progress(run.tally, False)
        run.settle(wait=True)
    finally:
        if pipeline is not None:
            pipeline.close()
    if progress is not None:
        progress(run.tally, True)
    return run.tally


def read_records(item: Item, rooms: list[Any], tally: Tally) -> tuple[Any, list[Any]] | None:
    """The room that reads `item` and every session record in it; None for a file that is no
    session of any room (skipped and counted in `tally` with its reason, as are its bad lines;
    a companion file, read beside its session, is counted as one)."""
    from slmactor.harnesses.base import COMPANION, SESSION

    label = item.label
    try:
        head = item.head()
    except OSError as exc:
        tally.skip_file(label, f"unreadable ({exc.strerror or type(exc).__name__})")
        return None
    name = item.name
    opener: Lines | None = None
    room, kind, failed = _claim(rooms, name, head)
    if room is None and not failed and _first_line_bad(head):
        # A hostile first line (too deep, too long, broken) must not hide the session after it.
        try:
            readable = _head_after_bad_lines(item.opener())
        except OSError:
            readable = ""
        if readable:
            room, kind, failed = _claim(rooms, name, readable)
    if room is None and not failed and looks_like_array(name, head) and item.size <= MAX_FILE_BYTES:
        try:
            lines, _why = array_as_lines(item.data())
        except OSError:
            lines = []
        if lines:  # a transcript saved as one JSON array: its objects as JSON lines
            opener = TextLines(label, lines)
            name = name + "l"
            room, kind, failed = _claim(rooms, name, "".join(lines[:64])[:HEAD_BYTES])
    if room is None:
        tally.skip_file(label, failed or "not a session")
        return None
    if kind == COMPANION:
        tally.companions += 1  # read beside its session, not on its own
        return None
    if kind != SESSION:
        return None
    tally.files += 1
    tally.bytes += min(item.size, MAX_FILE_BYTES)
    source = opener or item.opener()
    try:
        records = list(room.read_sessions(label, source))
    except Exception as exc:  # noqa: BLE001 - one odd file must not stop the import
        tally.skip_lines(label, source.skipped)
        tally.skip_file(label, f"unreadable as {room.title} ({type(exc).__name__})")
        return None
    tally.skip_lines(label, source.skipped)
    if not records:
        tally.skip_file(label, f"larger than {MAX_FILE_BYTES >> 20} MiB" if item.size > MAX_FILE_BYTES
                        else f"no {room.title} session in it")
        return None
    return room, records


class Pipeline:
    """Sends reports from a thread of its own (a blocking `send`), at most `depth` unanswered;
    the caller collects the answers (`answers`). A send that fails otherwise than `Refused`
    (the daemon is gone) stops the pipeline: the caller gets the error at its next collection."""

    def __init__(self, send: Send, depth: int) -> None:
        import queue
        import threading

        self._send = send
        self._todo: queue.Queue[tuple[Any, dict[str, Any], str] | None] = queue.Queue(maxsize=max(1, depth))
        self._done: queue.SimpleQueue[tuple[Any, dict[str, Any] | None, str]] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self.unanswered = 0
        self._thread = threading.Thread(target=self._work, name="import-sender", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        while True:
            job = self._todo.get()
            if job is None:
                return
            token, report, where = job
            if self._error is not None:
                self._done.put((token, None, ""))
                continue
            try:
                self._done.put((token, self._send(report, where), ""))
            except Refused as exc:
                self._done.put((token, None, str(exc) or "refused"))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, who raises it
                self._error = exc
                self._done.put((token, None, ""))

    def submit(self, token: Any, report: dict[str, Any], where: str) -> None:
        self.unanswered += 1
        self._todo.put((token, report, where))

    def answers(self, wait: bool) -> list[tuple[Any, dict[str, Any] | None, str]]:
        """The answers so far (`wait`: every one), in the order they came."""
        import queue

        got = []
        while self.unanswered:
            try:
                answer = self._done.get(block=wait)
            except queue.Empty:
                break
            self.unanswered -= 1
            got.append(answer)
        if self._error is not None:
            raise self._error
        return got

    def close(self) -> None:
        self._todo.put(None)
        self._thread.join(timeout=60)


@dataclass(slots=True)
class _FileJob:
    """One file's sessions on their way: recorded as done once every one is answered."""

    item: Item
    done: list[str] = field(default_factory=list)
    waiting: int = 0
    whole: bool = True
    closed: bool = False


@dataclass(slots=True)
class _Sent:
    """What one session's answer completes."""

    job: _FileJob
    rid: str
    harness: str
    total: int
    part: int
    old: bool
    calls: int
    failed: int
    repaired: int
    classes: dict[str, int]


class _Import:
    """One import's context: the rooms, the state, the daemon, the projects here."""

    def __init__(self, rooms: list[Any], state: ImportState, opts: Options, pipeline: Pipeline | None,
                 places: Places, tally: Tally) -> None:
        from slmactor import harnesses
        from slmactor.logic.working.toolclasses import EDIT

        classes = harnesses.tool_classes()
        self.rooms, self.state, self.opts, self.places, self.tally = rooms, state, opts, places, tally
        self.pipeline = pipeline
        #: Run ids sent and not answered yet.
        self.inflight: set[str] = set()
        self.is_edit: Callable[[str], bool] = lambda tool: classes.classify(tool)[1] == EDIT
        self.cutoff = (opts.now - opts.max_age_days * SECONDS_PER_DAY) if opts.max_age_days is not None else 0.0

    def file(self, item: Item) -> None:
        tally = self.tally
        if self.state.unchanged(item.key, item.size, item.stamp):
            tally.unchanged_files += 1
            return
        found = read_records(item, self.rooms, tally)
        if found is None:
            return
        room, records = found
        job = _FileJob(item)
        for record in records:  # every one tried, whatever the one before came to
            if not self.session(room, record, item, job):
                job.whole = False
        job.closed = True
        self._close(job)

    def _close(self, job: _FileJob) -> None:
        """Record the file as done once every session in it is imported (or was before)."""
        if job.closed and not job.waiting and job.whole and self.pipeline is not None:
            self.state.finished(job.item.key, job.item.size, job.item.stamp, job.done)

    def settle(self, wait: bool) -> None:
        """Take in the daemon's answers so far (`wait`: all of them)."""
        if self.pipeline is None:
            return
        for sent, reply, refused in self.pipeline.answers(wait):
            self._answered(sent, reply, refused)

    def _answered(self, sent: _Sent, reply: dict[str, Any] | None, refused: str) -> None:
        tally, job = self.tally, sent.job
        job.waiting -= 1
        self.inflight.discard(sent.rid)
        if reply is None:
            tally.skip_session(job.item.label, sent.rid, f"refused by the daemon ({refused})")
            job.whole = False
            self._close(job)
            return
        self.state.imported(sent.rid, sent.total, sent.part + 1)
        lessons, candidates = int(reply.get("lessons") or 0), int(reply.get("candidates") or 0)
        tally.lessons += lessons
        tally.candidates += candidates
        if sent.old:
            tally.old["lessons"] += lessons
            tally.old["repair_candidates"] += candidates
            tally.old["regression_checks"] += int(reply.get("checks") or 0)
        self._count(sent)
        job.done.append(sent.rid)
        self._close(job)

    def _count(self, sent: _Sent) -> None:
        """A session imported (or, in a dry run, that would be)."""
        tally = self.tally
        row = tally.by_harness[sent.harness]
        if sent.old:
            tally.old["sessions"] += 1
            tally.old["episodes_kept"] += int(self.opts.keep_old)
        if sent.part:
            tally.continued += 1
        else:
            tally.new += 1
            row["new"] += 1
        tally.calls += sent.calls
        tally.failed_calls += sent.failed
        row["calls"] += sent.calls
        row["failed_calls"] += sent.failed
        tally.repaired += sent.repaired
        for cls, count in sent.classes.items():
            tally.classes[cls] = tally.classes.get(cls, 0) + count

    def session(self, room: Any, record: Any, item: Item, job: _FileJob) -> bool:
        """Import one session (its answer comes later); False when it was skipped."""
        from slmactor import harnesses
        from slmactor.hooks.session import merge_transcript
        from slmactor.logic.loop import recorded

        continuation, failure_classes = recorded.continuation, recorded.failure_classes
        import_report, run_id = recorded.import_report, recorded.run_id
        tally, opts, label = self.tally, self.opts, item.label
        rid = run_id(room.name, record.session_id)
        row = tally.by_harness.setdefault(room.name, {"sessions": 0, "new": 0, "calls": 0, "failed_calls": 0})
        tally.sessions += 1
        row["sessions"] += 1
        if rid in self.inflight:  # a copy of a session on its way: decide on the daemon's answer
            self.settle(wait=True)
        seen, part = self.state.sessions.get(rid, (0, 0))
        total = len(record.stats.calls)
        if part and total <= seen:
            tally.already += 1
            return True
        if part:
            # The session went on after it was imported: its new calls are its next part.
            record = continuation(record, seen)
        ended = record.stats.ended_at or record.stats.started_at
        if opts.since and ended and ended < opts.since:
            tally.skip_session(label, rid, "older than --since")
            return False
        where = _where(record, item, opts, self.places, tally, label, rid)
        if not where:
            return False
        report = import_report(room.name, record, where, is_edit=self.is_edit,
                               edit_format_of=harnesses.edit_format, merge=merge_transcript, part=part + 1)
        old = bool(self.cutoff) and 0 < ended < self.cutoff
        if item.tags:
            report["tags"] = [*report["tags"], *item.tags]
        if old and opts.keep_old:
            from slmactor.stores.episodes import KEEP_TAG  # (the store's import is heavy: numpy)

            report["tags"] = [*report["tags"], KEEP_TAG]
        calls = record.stats.calls
        sent = _Sent(job, rid, room.name, total, part, old, len(calls),
                     sum(1 for c in calls if c.get("ok") is not True),
                     sum(1 for f in report["failures"] if f.get("resolved_by")), failure_classes(report))
        if self.pipeline is None:  # a dry run: counted as it would be
            self._count(sent)
            job.done.append(rid)
            return True
        job.waiting += 1
        self.inflight.add(rid)
        self.pipeline.submit(sent, report, str(Path(where).resolve()))
        return True


def _where(record: Any, item: Item, opts: Options, places: Places, tally: Tally, label: str, rid: str) -> str:
    """The project a session is filed in ("" when it cannot be told: skipped and counted)."""
    if opts.project:
        return opts.project
    if item.project:
        return item.project
    cwd = record.cwd if isinstance(record.cwd, str) else ""
    if cwd and "\x00" not in cwd and os.path.isdir(cwd):
        places.add(cwd)
        return str(cwd)
    remote = str(getattr(record, "remote", "") or getattr(item, "remote", "") or "")
    matched, candidates = places.match(cwd, remote) if cwd or remote else (None, [])
    if matched is not None:
        tally.matched_elsewhere += 1
        return str(matched)
    moved = tally.moved.setdefault(cwd, Moved(cwd))
    moved.sessions += 1
    for word in item.origin:
        if word not in moved.files:
            moved.files.append(word)
    moved.candidates = [str(c) for c in candidates]
    if not cwd:
        reason = "names no directory (give --project)"
    elif candidates:
        reason = "ran in a directory not here; more than one project here is named like it"
    else:
        reason = "ran in a directory not here (give --project)"
    tally.skip_session(label, rid, reason, cwd=cwd)
    return ""
