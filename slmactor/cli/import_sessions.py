"""`slmactor import sessions [PATH…] [--git REF_OR_DIR]`: learn from the sessions a user's (or a
team's) harnesses already recorded.

Reads the given files and folders — by default every harness's standard locations
(`Harness.session_roots`: the transcripts, rollouts, recorded chats, task histories and session
stores each one keeps) — and, with `--git`, the transcripts a repository holds in its tree or on
its transcript branches (`sessions.gitsource`). Each session becomes a `run.finish`, built by the
same `session_report` as a hooked session, in the project it belongs to (`sessions.run`), under
the run id `import:<harness>:<session id>`, so a session is learned from once however many
copies of it there are.

It finishes whatever the files hold: every file, line and session it cannot use is skipped and
counted with its reason (`--json` lists each one), and a moved project's sessions are matched to
the project here or come with the exact `--project` command that imports them. Progress has a
total, counted before anything is read (`sessions.progress`); stdout holds only the result.
Idempotent and resumable (`sessions.state`). Streaming and bounded: one file at a time, each
read up to `MAX_FILE_BYTES` (`sessions.files`). The daemon redacts what it stores; the calls are
redacted as the hook ledger redacts them before they are even sent.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from slmactor.cli.context import EXIT_OK, EXIT_USAGE, CliContext
from slmactor.cli.sessions.files import HEAD_BYTES, MAX_FILE_BYTES, bounded_lines

__all__ = ["HEAD_BYTES", "MAX_FILE_BYTES", "bounded_lines", "cmd_import_sessions", "parse_since", "register"]


def register(sub: Any) -> None:
    from slmactor import harnesses

    sessions = sub.add_parser(
        "sessions", help="learn from the sessions your harnesses recorded on disk (default: their "
                         "standard locations) or your team committed to git")
    sessions.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to read")
    sessions.add_argument("--git", metavar="REF_OR_DIR", action="append", default=[],
                          help="also read the transcripts a git repository holds: a repository folder "
                               "(its HEAD and transcript branches) or a ref of the current one; repeatable")
    sessions.add_argument("--harness", default="auto", choices=("auto", *harnesses.names()),
                          help="whose files they are (default: recognised per file)")
    sessions.add_argument("--since", metavar="WHEN",
                          help="only sessions active since WHEN (an ISO date/time, or 7d, 12h)")
    sessions.add_argument("--keep-old", action="store_true",
                          help="keep the similar-work memory (episodes) of sessions older than the episode "
                               "age limit (episodes_max_age_days, 180 days by default) instead of letting "
                               "it be pruned")
    sessions.add_argument("--dry-run", action="store_true",
                          help="read and count, send nothing, remember nothing")
    sessions.set_defaults(func=cmd_import_sessions)


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
    import os

    home = Path.home()
    return [p for room in rooms for p in room.session_roots(os.environ, home) if p.exists()]


def _age_limit() -> float | None:
    """The episode store's age limit in days (None: unlimited), as the daemon's settings say."""
    from slmactor.config import load_settings

    try:
        days = float(load_settings().episodes_max_age_days)
    except (OSError, ValueError, TypeError):
        days = 180.0
    if days < 0:
        return None
    return days or 180.0


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
    if result["matched_elsewhere"]:
        lines.append(f"{result['matched_elsewhere']} session(s) whose directory is gone were filed in the "
                     "project here that has its git remote or name")
    old = result["old_sessions"]
    if old["sessions"]:
        limit = result["episode_age_limit_days"]
        kept_from = (f"kept from them: {old['lessons']} lesson(s), {old['repair_candidates']} repair "
                     f"candidate(s), {old['regression_checks']} regression check(s) and their metrics")
        if old["episodes_kept"]:
            lines.append(f"{old['sessions']} session(s) older than the episode age limit ({limit:g} days): "
                         f"their episodes are kept (--keep-old); {kept_from}")
        else:
            lines.append(f"{old['sessions']} session(s) older than the episode age limit ({limit:g} days): "
                         f"their similar-work memory (episodes) is not kept; {kept_from}; "
                         "--keep-old keeps their episodes too")
    for reason, count in result["skipped_sessions"].items():
        lines.append(f"skipped {count} session(s): {reason}")
    for moved in result["moved"]:
        where = f"ran in {moved['cwd']}" if moved["cwd"] else "name no directory"
        also = f" (candidates: {', '.join(moved['candidates'])})" if len(moved["candidates"]) > 1 else ""
        lines.append(f"  {moved['sessions']} {where}{also}; to import them: {moved['command']}")
    for reason, count in result["skipped_files"].items():
        lines.append(f"skipped {count} file(s): {reason}")
    for reason, count in result["skipped_lines"].items():
        lines.append(f"skipped {count} line(s): {reason}")
    if result["skips"]:
        lines.append("(--json lists every skip with its file and reason)")
    return "\n".join(lines)


def _progress(ctx: CliContext, total_files: int, total_bytes: int) -> Any:
    from slmactor.cli.sessions.progress import Progress

    shown = Progress(total_files, total_bytes, terminal=sys.stderr.isatty() and not ctx.json)

    def report(tally: Any, final: bool) -> None:
        shown.update(tally.files_seen, tally.bytes_seen, final=final)

    return report


def cmd_import_sessions(ctx: CliContext) -> int:
    from slmactor.cli.sessions.files import collect
    from slmactor.cli.sessions.places import Places
    from slmactor.cli.sessions.run import Options, Refused, Tally, import_sessions
    from slmactor.cli.sessions.state import STATE_NAME, ImportState
    from slmactor.config import default_home

    args = ctx.args
    now = time.time()
    try:
        rooms = _rooms(args.harness)
        since = parse_since(args.since, now) if args.since else 0.0
    except ValueError as exc:
        return ctx.fail(str(exc))
    project = str(ctx.project) if args.project else ""
    roots = [Path(p) for p in args.paths] if args.paths or args.git else default_roots(rooms)
    missing = [str(p) for p in roots if not p.exists() and not p.is_symlink()]
    if missing:
        return ctx.fail(f"import sessions: not found: {', '.join(missing)}", EXIT_USAGE)
    tally = Tally()
    started = time.monotonic()
    items: list[Any] = collect(roots, tally.skip_file) if roots else []
    places = Places()
    if args.git:
        from slmactor.cli.sessions import gitsource

        try:
            for spec in args.git:
                repo_items, repo = gitsource.items(spec, Path.cwd(), rooms)
                items.extend(repo_items)
                places.add(repo)
        except gitsource.GitError as exc:
            return ctx.fail(f"import sessions --git: {exc}", EXIT_USAGE)
    state = ImportState(default_home() / STATE_NAME, write=not args.dry_run)
    places.add(ctx.project)
    for root in state.projects:
        places.add(root)
    limit = _age_limit()
    opts = Options(project=project, since=since, max_age_days=limit, keep_old=bool(args.keep_old), now=now)
    progress = _progress(ctx, len(items), sum(min(i.size, MAX_FILE_BYTES) for i in items))

    def finish(done: Tally) -> int:
        result = {"roots": [str(r) for r in roots], "git": list(args.git), "dry_run": bool(args.dry_run),
                  "state": str(state.path), "episode_age_limit_days": limit if limit is not None else -1,
                  **done.to_dict(), "seconds": round(time.monotonic() - started, 3)}
        ctx.emit(result, summary_text(result))
        return EXIT_OK

    if args.dry_run:
        return finish(import_sessions(items, rooms, state, opts, send=None, places=places, tally=tally,
                                      progress=progress))

    def run() -> int:
        from slmactor.client import RequestFailed
        from slmactor.protocol.messages import RunFinish

        with ctx.client(timeout=max(args.timeout, 30.0)) as client:
            def send(report: dict[str, Any], where: str) -> dict[str, Any]:
                try:
                    reply = client.ask(RunFinish(report=report, project=where))
                except RequestFailed as exc:  # this report only: the import goes on
                    raise Refused(str(exc)) from None
                state.project(where)
                return reply if isinstance(reply, dict) else {}

            return finish(import_sessions(items, rooms, state, opts, send=send, places=places, tally=tally,
                                          progress=progress))

    return ctx.call(run)
