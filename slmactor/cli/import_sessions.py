"""`slmactor import sessions [PATH…]`: learn from the sessions a user's harnesses already recorded.

Walks the given files and folders — by default every harness's standard locations
(`Harness.session_roots`: the transcripts, rollouts, recorded chats and task histories each one
keeps) — and asks each harness room which files are its sessions (`sniff_session`, from the name
and the first 64 KiB) and to read them (`read_sessions`). Each session becomes a `run.finish`,
built by the same `session_report` as a hooked session, filed in the project it ran in (its
recorded cwd; `--project` overrides; a cwd that no longer exists is counted and skipped) under
the run id `import:<harness>:<session id>`, so a session is learned from once however many
copies of it there are. The daemon redacts what it stores; the calls are redacted as the hook
ledger redacts them before they are even sent.

Streaming and bounded: files are read one at a time, line by line, at most `MAX_FILE_BYTES`
each (a longer JSONL file is read up to it, its cut last line skipped; a longer JSON document is
skipped and counted); nothing else of the tree is held. A file that is no session, cannot be
read or makes a reader fail is skipped and counted with its reason, never a reason to stop.

Idempotent and resumable: `<user store>/import-sessions.jsonl` (plain JSON lines, compacted past
`MAX_STATE_LINES`) records each imported session's run id as soon as the daemon accepted it, and
each finished file's size and mtime; a second run skips unchanged files unread and sessions
already imported, and an interrupted run picks up where it stopped. A session that went on after
its import (a transcript still being written) is imported again from its first new call, as the
run's next part (`<run id>#2`). Progress goes to stderr on a
terminal; the summary (`--json`: one document) counts sessions, calls, failures by class
(`fingerprint.analyze`), repairs within sessions, what the daemon learned, and skipped files by
reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from slmactor.cli.context import EXIT_OK, EXIT_USAGE, CliContext

#: Longest file read (a JSONL file is read up to it; a JSON document longer than it is skipped).
MAX_FILE_BYTES = 32 << 20
#: What a room sees of a file to tell whether it is one of its sessions.
HEAD_BYTES = 64 << 10
#: The state file keeps at most this many lines (compacted to the newest when over).
MAX_STATE_LINES = 200_000
STATE_NAME = "import-sessions.jsonl"
#: Skipped files named in the summary (the rest are only counted).
MAX_EXAMPLES = 20


def register(sub: Any) -> None:
    from slmactor import harnesses

    sessions = sub.add_parser(
        "sessions", help="learn from the sessions your harnesses recorded on disk (default: their "
                         "standard locations)")
    sessions.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to read")
    sessions.add_argument("--harness", default="auto", choices=("auto", *harnesses.names()),
                          help="whose files they are (default: recognised per file)")
    sessions.add_argument("--since", metavar="WHEN",
                          help="only sessions active since WHEN (an ISO date/time, or 7d, 12h)")
    sessions.add_argument("--dry-run", action="store_true",
                          help="read and count, send nothing, remember nothing")
    sessions.set_defaults(func=cmd_import_sessions)


# --------------------------------------------------------------------------------- reading


def bounded_lines(path: str, cap: int = MAX_FILE_BYTES) -> Iterator[str]:
    """The file's lines (with their ends), decoded, up to `cap` bytes; a line the cap cuts is
    dropped (never half a record)."""
    with open(path, "rb") as fh:
        left = cap
        while left > 0:
            raw = fh.readline(left)
            if not raw:
                return
            left -= len(raw)
            if left <= 0 and not raw.endswith(b"\n") and fh.read(1):
                return  # cut by the cap
            yield raw.decode("utf-8", errors="replace")


def parse_since(value: str, now: float) -> float:
    """`7d`, `12h`, `30m` before `now`, or an ISO date/time; ValueError otherwise."""
    from slmactor.logic.text.timefmt import parse_rfc3339

    value = value.strip()
    units = {"d": 86400, "h": 3600, "m": 60}
    if value[-1:] in units and value[:-1].isdigit():
        return now - int(value[:-1]) * units[value[-1]]
    at = parse_rfc3339(value if "T" in value or " " in value else f"{value}T00:00:00Z")
    if at is None:
        raise ValueError(f"--since {value!r}: not a date (2026-01-31, 2026-01-31T12:00:00Z) or an age (7d, 12h)")
    return at


def walk(paths: Iterable[Path]) -> Iterator[Path]:
    """Every file under `paths`, each folder in name order; symlinked files are followed,
    symlinked folders are not (a loop cannot make the walk endless)."""
    for root in paths:
        if root.is_file():
            yield root
            continue
        for folder, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(files):
                yield Path(folder) / name


# ----------------------------------------------------------------------------------- state


class ImportState:
    """What earlier runs imported: run ids, and finished files with their size and mtime."""

    def __init__(self, path: Path, *, write: bool) -> None:
        self.path = path
        self.write = write
        #: run id → (calls imported, parts sent): a session that went on after its import is
        #: imported again from its first new call, as its next part (`<run id>#2`, ...).
        self.sessions: dict[str, tuple[int, int]] = {}
        self.files: dict[str, tuple[int, int]] = {}
        lines = 0
        # No file yet: nothing imported.
        with contextlib.suppress(FileNotFoundError), open(path, "rb") as fh:
            for raw in fh:
                lines += 1
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue  # a line cut by an interrupted run
                if isinstance(entry, dict):
                    self._apply(entry)
        if write and lines > MAX_STATE_LINES:
            self._compact()

    def _apply(self, entry: dict[str, Any]) -> None:
        if isinstance(entry.get("s"), str):
            calls, part = entry.get("calls"), entry.get("part")
            # A line that does not say how many calls: the session counts as imported whole.
            self.sessions[entry["s"]] = (calls if isinstance(calls, int) else 1 << 62,
                                         part if isinstance(part, int) else 1)
        elif isinstance(entry.get("f"), str) and isinstance(entry.get("size"), int) \
                and isinstance(entry.get("mtime_ns"), int):
            self.files[entry["f"]] = (entry["size"], entry["mtime_ns"])

    def _append(self, entry: dict[str, Any]) -> None:
        if not self.write:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", errors="replace"))
        finally:
            os.close(fd)

    def _compact(self) -> None:
        keep_sessions = list(self.sessions.items())[-MAX_STATE_LINES // 2:]
        keep_files = list(self.files.items())[-MAX_STATE_LINES // 2:]
        self.sessions, self.files = dict(keep_sessions), dict(keep_files)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps({"s": s, "calls": calls, "part": part}) + "\n"
                          for s, (calls, part) in keep_sessions)
            fh.writelines(json.dumps({"f": f, "size": size, "mtime_ns": mtime}) + "\n"
                          for f, (size, mtime) in keep_files)
        os.replace(tmp, self.path)

    def unchanged(self, path: str, size: int, mtime_ns: int) -> bool:
        return self.files.get(path) == (size, mtime_ns)

    def imported(self, run_id: str, calls: int, part: int) -> None:
        self.sessions[run_id] = (calls, part)
        self._append({"s": run_id, "calls": calls, "part": part})

    def finished(self, path: str, size: int, mtime_ns: int, run_ids: list[str]) -> None:
        self.files[path] = (size, mtime_ns)
        self._append({"f": path, "size": size, "mtime_ns": mtime_ns, "sessions": run_ids[:50]})


# ---------------------------------------------------------------------------------- import


class Tally:
    """The counts of one import."""

    def __init__(self) -> None:
        self.files = self.bytes = self.sessions = self.new = self.already = self.continued = 0
        self.calls = self.failed_calls = self.repaired = self.lessons = self.candidates = 0
        self.unchanged_files = self.companions = 0
        self.by_harness: dict[str, dict[str, int]] = {}
        self.classes: dict[str, int] = {}
        self.skipped_files: dict[str, int] = {}
        self.skipped_sessions: dict[str, int] = {}
        self.examples: list[str] = []

    def skip_file(self, path: Path, reason: str) -> None:
        self.skipped_files[reason] = self.skipped_files.get(reason, 0) + 1
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(f"{path}: {reason}")

    def skip_session(self, reason: str) -> None:
        self.skipped_sessions[reason] = self.skipped_sessions.get(reason, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files, "bytes": self.bytes, "unchanged_files": self.unchanged_files,
            "companion_files": self.companions,
            "sessions": self.sessions, "new": self.new, "already_imported": self.already,
            "continued": self.continued,
            "skipped_sessions": dict(sorted(self.skipped_sessions.items())),
            "calls": self.calls, "failed_calls": self.failed_calls,
            "failures_by_class": dict(sorted(self.classes.items(), key=lambda kv: (-kv[1], kv[0]))),
            "repaired_in_session": self.repaired, "lessons_learned": self.lessons,
            "repair_candidates": self.candidates,
            "by_harness": self.by_harness,
            "skipped_files": dict(sorted(self.skipped_files.items())),
            "skipped_examples": self.examples,
        }


def _rooms(choice: str) -> list[Any]:
    from slmactor import harnesses
    from slmactor.harnesses.base import Harness

    def reads(room: Harness) -> bool:
        return type(room).read_sessions is not Harness.read_sessions or bool(room.trajectory_hints)

    if choice != "auto":
        room = harnesses.get(choice)
        if not reads(room):
            raise ValueError(f"import sessions: {room.title} keeps no recorded sessions slmactor reads")
        return [room]
    return [room for room in harnesses.every() if reads(room)]


def default_roots(rooms: list[Any]) -> list[Path]:
    home = Path.home()
    return [p for room in rooms for p in room.session_roots(os.environ, home) if p.exists()]


def _head(path: Path) -> str:
    with open(path, "rb") as fh:
        return fh.read(HEAD_BYTES).decode("utf-8", errors="replace")


def _opener(path: str) -> Callable[[], Iterator[str]]:
    return lambda: bounded_lines(path)


def import_sessions(paths: list[Path], rooms: list[Any], state: ImportState, *, project: str,
                    since: float, send: Callable[[dict[str, Any], str], dict[str, Any]] | None,
                    progress: Callable[[Tally, bool], None] | None = None) -> Tally:
    """Import every session under `paths`; `send(report, project)` is the daemon's reply to its
    `run.finish` (None: a dry run)."""
    from slmactor import harnesses
    from slmactor.harnesses.base import COMPANION, SESSION
    from slmactor.hooks.session import merge_transcript
    from slmactor.logic.loop.recorded import continuation, failure_classes, import_report, run_id
    from slmactor.logic.working.toolclasses import EDIT

    classes = harnesses.tool_classes()

    def is_edit(tool: str) -> bool:
        return classes.classify(tool)[1] == EDIT

    tally = Tally()
    for path in walk(paths):
        try:
            st = path.stat()
        except OSError as exc:
            tally.skip_file(path, f"unreadable ({exc.strerror or exc})")
            continue
        import stat as _stat

        if not _stat.S_ISREG(st.st_mode):
            continue  # a socket, a FIFO: never opened
        key = str(path.absolute())
        if state.unchanged(key, st.st_size, st.st_mtime_ns):
            tally.unchanged_files += 1
            continue
        if since and st.st_mtime < since:
            tally.skip_file(path, "older than --since")
            continue
        try:
            head = _head(path)
        except OSError as exc:
            tally.skip_file(path, f"unreadable ({exc.strerror or exc})")
            continue
        claim = next(((room, kind) for room in rooms
                      if (kind := room.sniff_session(path.name, head))), None)
        if claim is None:
            tally.skip_file(path, "not a session")
            continue
        room, kind = claim
        if kind == COMPANION:
            tally.companions += 1  # read beside its session, not on its own
            continue
        if kind != SESSION:
            continue
        tally.files += 1
        tally.bytes += min(st.st_size, MAX_FILE_BYTES)
        try:
            records = list(room.read_sessions(str(path), _opener(str(path))))
        except Exception as exc:  # noqa: BLE001 - one odd file must not stop the import
            tally.skip_file(path, f"unreadable as {room.title} ({type(exc).__name__})")
            continue
        if not records:
            tally.skip_file(path, f"larger than {MAX_FILE_BYTES >> 20} MiB" if st.st_size > MAX_FILE_BYTES
                            else f"no {room.title} session in it")
            continue
        done: list[str] = []
        for record in records:
            rid = run_id(room.name, record.session_id)
            row = tally.by_harness.setdefault(room.name, {"sessions": 0, "new": 0, "calls": 0, "failed_calls": 0})
            tally.sessions += 1
            row["sessions"] += 1
            seen, part = state.sessions.get(rid, (0, 0))
            total = len(record.stats.calls)
            if part and total <= seen:
                tally.already += 1
                continue
            if part:
                # The session went on after it was imported: its new calls are its next part.
                record = continuation(record, seen)
            ended = record.stats.ended_at or record.stats.started_at
            if since and ended and ended < since:
                tally.skip_session("older than --since")
                continue
            where = project or record.cwd
            if not where:
                tally.skip_session("names no directory (give --project)")
                continue
            if not os.path.isdir(where):
                tally.skip_session("its directory no longer exists")
                continue
            report = import_report(room.name, record, where, is_edit=is_edit,
                                   edit_format_of=harnesses.edit_format, merge=merge_transcript,
                                   part=part + 1)
            if send is not None:
                reply = send(report, str(Path(where).resolve()))
                tally.lessons += int(reply.get("lessons") or 0)
                tally.candidates += int(reply.get("candidates") or 0)
                state.imported(rid, total, part + 1)
            done.append(rid)
            if part:
                tally.continued += 1
            else:
                tally.new += 1
                row["new"] += 1
            calls = record.stats.calls
            failed = sum(1 for c in calls if c.get("ok") is not True)
            tally.calls += len(calls)
            tally.failed_calls += failed
            row["calls"] += len(calls)
            row["failed_calls"] += failed
            tally.repaired += sum(1 for f in report["failures"] if f.get("resolved_by"))
            for cls, count in failure_classes(report).items():
                tally.classes[cls] = tally.classes.get(cls, 0) + count
        if send is not None:
            state.finished(key, st.st_size, st.st_mtime_ns, done)
        if progress is not None:
            progress(tally, False)
    if progress is not None:
        progress(tally, True)
    return tally


def _progress() -> Callable[[Tally, bool], None]:
    last = [0.0]

    def show(tally: Tally, final: bool) -> None:
        now = time.monotonic()
        if not final and now - last[0] < 0.2:
            return
        last[0] = now
        print(f"\rimporting sessions: {tally.files} file(s), {tally.bytes / 1e6:.0f} MB, "
              f"{tally.sessions} session(s), {tally.new} new", end="\n" if final else "",
              file=sys.stderr, flush=True)

    return show


def summary_text(result: dict[str, Any]) -> str:
    lines = [(f"{'would import' if result['dry_run'] else 'imported'} {result['new']} new session(s) "
              f"and {result['continued']} new part(s) "
              f"of {result['sessions']} found in {result['files']} file(s) "
              f"({result['already_imported']} already imported, {result['unchanged_files']} file(s) unchanged)"),
             (f"calls {result['calls']}, failed {result['failed_calls']}, repaired within the session "
              f"{result['repaired_in_session']}; lessons learned {result['lessons_learned']}, "
              f"repair candidates {result['repair_candidates']}")]
    if result["failures_by_class"]:
        lines.append("failures by class: " + ", ".join(f"{k} {v}" for k, v in result["failures_by_class"].items()))
    for reason, count in result["skipped_sessions"].items():
        lines.append(f"skipped {count} session(s): {reason}")
    for reason, count in result["skipped_files"].items():
        lines.append(f"skipped {count} file(s): {reason}")
    return "\n".join(lines)


def cmd_import_sessions(ctx: CliContext) -> int:
    from slmactor.config import default_home

    args = ctx.args
    try:
        rooms = _rooms(args.harness)
        since = parse_since(args.since, time.time()) if args.since else 0.0
    except ValueError as exc:
        return ctx.fail(str(exc))
    project = str(ctx.project) if args.project else ""
    roots = [Path(p) for p in args.paths] if args.paths else default_roots(rooms)
    missing = [str(p) for p in roots if not p.exists()]
    if missing:
        return ctx.fail(f"import sessions: not found: {', '.join(missing)}", EXIT_USAGE)
    state = ImportState(default_home() / STATE_NAME, write=not args.dry_run)
    progress = _progress() if sys.stderr.isatty() and not ctx.json else None
    started = time.monotonic()

    def finish(tally: Tally) -> int:
        result = {"roots": [str(r) for r in roots], "dry_run": bool(args.dry_run), "state": str(state.path),
                  **tally.to_dict(), "seconds": round(time.monotonic() - started, 3)}
        ctx.emit(result, summary_text(result))
        return EXIT_OK

    if args.dry_run:
        return finish(import_sessions(roots, rooms, state, project=project, since=since, send=None,
                                      progress=progress))

    def run() -> int:
        from slmactor.protocol.messages import RunFinish

        with ctx.client(timeout=max(args.timeout, 30.0)) as client:
            def send(report: dict[str, Any], where: str) -> dict[str, Any]:
                reply = client.ask(RunFinish(report=report, project=where))
                return reply if isinstance(reply, dict) else {}

            return finish(import_sessions(roots, rooms, state, project=project, since=since, send=send,
                                          progress=progress))

    return ctx.call(run)
