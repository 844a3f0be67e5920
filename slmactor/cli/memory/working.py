"""`slmactor memory working` (and `memory show` when no other group module claims it): one run's
working memory (SPEC S-1).

    slmactor memory working --run ID [--budget N] [--json]   the block a prompt would get
    slmactor memory working --run ID --snapshot [--json]      every field, counters included
    slmactor memory working --run ID --mirror                 write <project>/.slmcode/memory/WORKING.md
    slmactor memory working --run ID --reset --yes            forget the run's working memory
                                                              (asks first without --yes, like
                                                              every destructive command)
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from slmactor.cli.context import EXIT_OK, EXIT_UNREACHABLE, CliContext, exit_code_for


def _add(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=help_text)
    p.add_argument("--run", required=True, metavar="ID", help="the run id the harness uses")
    p.add_argument("--budget", type=int, default=0, metavar="N", help="token budget (0 = default 700)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--snapshot", action="store_true", help="show every field instead of the block")
    what.add_argument("--mirror", action="store_true", help="write WORKING.md for the run now")
    what.add_argument("--reset", action="store_true", help="forget the run's working memory")
    p.add_argument("--yes", action="store_true", help="--reset without asking for confirmation")
    p.set_defaults(func=cmd_working)


def register(sub: Any) -> None:
    _add(sub, "working", "a run's working memory: task, files, commands, failures, decisions")
    if "show" not in getattr(sub, "choices", {}):
        _add(sub, "show", "a run's working-memory block (same as `memory working`)")


def _where(failure: dict[str, Any]) -> str:
    return " ".join(part for part in (failure["tool"], failure["path"]) if part) or "-"


def _snapshot_text(reply: dict[str, Any]) -> str:
    if not reply.get("live"):
        return f"no live run {reply['run_id']!r} in this project"
    snap = reply["snapshot"]
    c = snap["counters"]
    lines = [
        f"run {snap['run_id']}: {c['calls']} tool calls, {c['errors']} failed, {c['redundant']} redundant",
        f"task: {snap['task'].splitlines()[0] if snap['task'] else '-'}",
        f"role: {snap['role'] or '-'}",
        f"focus: {', '.join(snap['focus']) or '-'}",
        f"summary: {snap['summary'] or '-'}",
        f"files read: {', '.join(snap['files_read']) or '-'}",
        f"files edited: {', '.join(snap['files_edited']) or '-'}",
        "commands: " + (", ".join(f"{x['command']} ({x['status']})" for x in snap["commands"]) or "-"),
        "decisions: " + ("; ".join(snap["decisions"]) or "-"),
        f"open failures ({len(snap['open_failures'])}):",
        *(f"  {f['key']}  {_where(f)}: {f['message'] or '-'} ×{f['attempts']}" for f in snap["open_failures"]),
        f"resolved failures ({len(snap['resolved_failures'])}):",
        *(
            f"  {f['key']}  {f['message']} → {f['resolution'] or f['resolved_by'] or 'unknown'}"
            for f in snap["resolved_failures"]
        ),
        f"last {len(snap['events'])} tool calls:",
        *(
            f"  {e['at']}  {'ok ' if e['ok'] else 'ERR'} {e['tool']} {e['path'] or e['command'] or e['args']}"
            + (f" — {e['error']}" if e["error"] else "")
            for e in snap["events"]
        ),
    ]
    return "\n".join(lines)


def cmd_working(ctx: CliContext) -> int:
    from slmactor.client import DaemonUnavailable, RequestFailed
    from slmactor.protocol.messages import RunReset, WorkingMirror, WorkingRender, WorkingSnapshot

    args: argparse.Namespace = ctx.args
    if args.budget < 0:
        return ctx.fail("memory working: --budget must be 0 (default) or positive")
    if not args.run.strip():
        return ctx.fail("memory working: --run must name a run")
    if args.reset and not args.yes:
        # The rule of every destructive command: --json or no terminal needs --yes.
        if ctx.json or not sys.stdin.isatty():
            return ctx.fail("memory working --reset: pass --yes to confirm")
        answer = input(f"forget the working memory of run {args.run!r}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            return ctx.fail("memory working --reset: not confirmed (pass --yes)")
    try:
        with ctx.client() as client:
            if args.snapshot:
                reply = client.ask(WorkingSnapshot(run_id=args.run))
                ctx.emit(reply, _snapshot_text(reply))
            elif args.mirror:
                reply = client.ask(WorkingMirror(run_id=args.run))
                text = f"wrote {reply['path']}" if reply["written"] else (
                    "nothing to write (the run is empty)" if reply.get("live") else f"no live run {args.run!r}"
                )
                ctx.emit(reply, text)
            elif args.reset:
                reply = client.ask(RunReset(run_id=args.run))
                ctx.emit(reply, "reset" if reply["reset"] else f"no live run {args.run!r}")
            else:
                reply = client.ask(WorkingRender(run_id=args.run, budget=args.budget))
                text = reply["text"].rstrip("\n") if reply["text"] else (
                    f"(nothing known about run {args.run!r} yet)" if not reply["live"] else "(empty)"
                )
                ctx.emit(reply, text)
    except DaemonUnavailable as exc:
        return ctx.fail(str(exc), EXIT_UNREACHABLE)
    except RequestFailed as exc:
        return ctx.fail(str(exc), exit_code_for(exc))
    return EXIT_OK
