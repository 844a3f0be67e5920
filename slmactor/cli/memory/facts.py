"""`slmactor memory show | facts | lessons | forget`: the distilled memory (SPEC S-20.1–S-20.3).

memory show [--role R] [--run ID] [--budget N] [--task TEXT] [--files F …] [--tags T …]
            [--model M] [--language L] [--lines]
                                            the memory block a role receives (S-7.4), and what
                                            it left out; with --run and no --role: that run's
                                            working block; --lines: one line each, with its id
                                            and evidence
memory facts [--kind K]                     facts by score, pinned ones marked ★
memory lessons [--task TEXT] [--max-bytes N] [--tag T …] [--limit N]
                                            the lesson lines a worker would see (S-8.10), ranked
                                            for the task, then the do/don't lessons (for the
                                            task: in recall order, C-10); --tag alone lists the
                                            do/don't lessons carrying the tags
memory forget SCOPE [--run ID] [--yes]      working|episodic|episodes|semantic|facts|
                                            procedural|project|all; every scope asks first
                                            unless --yes (--json or no terminal: refused
                                            without --yes), like every destructive command
memory forget --session ID | --rule ID | --line ID | --query TEXT [--yes]
                                            only what is named (`forget_items.py`)
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from slmactor.cli.context import EXIT_FAILED, EXIT_OK, CliContext

SCOPES = ("working", "episodic", "episodes", "semantic", "facts", "procedural", "project", "all")
NOTHING_YET = "(nothing remembered yet — finish a run with your harness first)"


def register(sub: Any) -> None:
    show = sub.add_parser("show", help="the memory block a role receives in its prompt")
    show.add_argument("--role", default="", help="role whose shares apply (default worker)")
    show.add_argument("--run", default="", metavar="ID", help="include this run's working memory")
    show.add_argument(
        "--budget",
        type=int,
        default=0,
        metavar="N",
        help="token budget (0 = the configured memory_tokens)",
    )
    show.add_argument("--task", default="", metavar="TEXT",
                      help="the task the block is for (default: the project's block, no task)")
    show.add_argument("--query", dest="task", help=argparse.SUPPRESS)  # the older name
    show.add_argument("--lines", action="store_true",
                      help="one line per thing the block says, with its id (for `memory forget "
                           "--line`) and what backs it")
    show.add_argument("--files", nargs="*", default=[], metavar="F", help="focus files")
    show.add_argument("--tags", nargs="*", default=[], metavar="T", help="tags of the task")
    show.add_argument("--model", default="", help="model id (selects procedural memory)")
    show.add_argument("--language", default="", help="the task's language (selects procedural memory)")
    show.set_defaults(func=cmd_show)

    facts = sub.add_parser("facts", help="what the project's semantic memory holds")
    facts.add_argument(
        "--kind", default="", help="command, gotcha, layout, convention, dependency or file"
    )
    facts.set_defaults(func=cmd_facts)

    lessons = sub.add_parser("lessons", help="the lesson lines a worker would see")
    lessons.add_argument("--max-bytes", type=int, default=0, metavar="N", help="0 = 1600")
    lessons.add_argument("--task", default="", metavar="TEXT",
                         help="the task the lessons are for: its lesson lines, ranked, then "
                              "its do/don't lessons in recall order")
    lessons.add_argument("--query", dest="task", help=argparse.SUPPRESS)  # the older name
    lessons.add_argument("--tag", action="append", default=[], metavar="T",
                         help="only lessons carrying this tag (repeatable)")
    lessons.add_argument("--limit", type=int, default=0, metavar="N",
                         help="how many do/don't lessons (0 = 10, at most 100)")
    lessons.set_defaults(func=cmd_lessons)

    distill = sub.add_parser("distill", help="distil facts from the newest episodes now")
    distill.add_argument("--wait", action="store_true", help="return when the pass is done")
    distill.set_defaults(func=cmd_distill)

    forget = sub.add_parser(
        "forget", help="forget a part of memory, or sessions, rules, lines or what matches a task",
        description="Forget a whole scope (SCOPE), or only what you name: sessions (their "
        "episodes), repair rules (retired), block lines (retired: no block says them again), "
        "or everything a task text finds (the sessions recall returns for it and the block "
        "lines that mention it).")
    forget.add_argument("scope", nargs="?", default="", help="|".join(SCOPES))
    forget.add_argument("--session", action="append", default=[], metavar="ID",
                        help="a session (run id or episode id) to forget; repeatable")
    forget.add_argument("--rule", action="append", default=[], metavar="ID",
                        help="a repair rule to retire; repeatable")
    forget.add_argument("--line", action="append", default=[], metavar="ID",
                        help="a memory-block line to retire (ids: `memory show --lines`); "
                             "repeatable")
    forget.add_argument("--query", default="", metavar="TEXT",
                        help="forget the sessions recall finds for TEXT and the lines that "
                             "mention it")
    forget.add_argument(
        "--run",
        default="",
        metavar="ID",
        help="reset only this run's working memory (default: every run)",
    )
    forget.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    forget.set_defaults(func=cmd_forget)


def cmd_show(ctx: CliContext) -> int:
    from slmactor.protocol.messages import EpisodeRecent, MemoryBlock, MemoryLines, WorkingRender

    args = ctx.args
    if args.budget < 0:
        return ctx.fail("memory show: --budget must be 0 (default) or positive")

    def run() -> int:
        with ctx.client() as client:
            if args.run and not args.role and not args.lines:
                reply = client.ask(WorkingRender(run_id=args.run, budget=args.budget))
                ctx.emit(reply, reply["text"].rstrip("\n") or NOTHING_YET)
                return EXIT_OK
            fields = {"role": args.role or "worker", "budget": args.budget, "query": args.task,
                      "files": list(args.files), "tags": list(args.tags), "run_id": args.run,
                      "model": args.model, "language": args.language}
            reply = client.ask(MemoryLines(**fields) if args.lines else MemoryBlock(**fields))
            sessions = client.ask(EpisodeRecent(n=1, ids_only=True))["total"]
        left_out = block_left_out(args, sessions, len(reply.get("retired", [])))
        reply = {**reply, "sessions": sessions, "left_out": left_out}
        text = lines_text(reply["lines"]) if args.lines else reply["text"].rstrip("\n")
        if not text:
            text = NOTHING_YET if not sessions else "(the project's block is empty)"
        ctx.emit(reply, "\n\n".join([text, *left_out]))
        return EXIT_OK

    return ctx.call(run)


def block_left_out(args: Any, sessions: int, retired: int) -> list[str]:
    """What the block shown did not include, and how to get it."""
    notes = []
    if not (args.task.strip() or args.files or args.tags or args.run) and sessions:
        notes.append(f"(left out: similar past work — {sessions} session(s) remembered; it is "
                     "chosen by a task: `memory show --task TEXT`)")
    if retired:
        notes.append(f"(left out: {retired} line(s) you retired; `memory show --lines --json` "
                     "lists them)")
    return notes


def lines_text(lines: list[dict[str, Any]]) -> str:
    """One line per block line: its id, where it stands, the text, then what backs it."""
    out = []
    for line in lines:
        where = " / ".join(p for p in (line["section"], line["heading"]) if p)
        out.append(f"{line['id']}  [{where}]  {line['text']}")
        for ev in line["evidence"]:
            if ev["kind"] == "fact":
                sources = ", ".join(ev["sources"]) or "no run named"
                mark = "" if ev["verified"] else " (unverified repository content)"
                out.append(f"    fact {ev['id']}: +{ev['support']}/-{ev['contradict']}, "
                           f"confidence {ev['confidence']:.2f}, from {sources}{mark}")
            elif ev["kind"] == "episode":
                out.append(f"    session {ev['run_id'] or ev['id']} ({ev['at']}, "
                           f"{'succeeded' if ev['success'] else 'failed'})")
        out.append(f"    verdict: {line['verdict']}")
    return "\n".join(out)


def facts_text(facts: list[dict[str, Any]]) -> str:
    """One line per fact, by confidence (S-20.2), pinned ones marked ★, ones a repository
    brought unsigned marked ? (review and adopt them with `slmactor trust`)."""
    if not facts:
        return "(no facts yet)"
    facts = sorted(facts, key=lambda f: (-f["confidence"], f["subject"]))
    width = max(len(f["kind"]) for f in facts)
    lines = []
    for f in facts:
        mark = "?" if f.get("verified") is False else "★" if f.get("pinned") else " "
        counts = f"+{f['support']}/-{f['contradict']}"
        lines.append(
            f"{mark} {f['kind']:<{width}}  {f['confidence']:.2f}  {counts:<7} {f['subject']}: {f['text']}"
        )
    if any(f.get("verified") is False for f in facts):
        lines.append("(? = unverified repository content: `slmactor trust` to review)")
    return "\n".join(lines)


def cmd_facts(ctx: CliContext) -> int:
    from slmactor.protocol.messages import FactList

    def run() -> int:
        with ctx.client() as client:
            reply = client.ask(FactList(kind=ctx.args.kind))
        ctx.emit(reply, facts_text(reply["facts"]))
        return EXIT_OK

    return ctx.call(run)


def polar_lines(lessons: list[dict[str, Any]]) -> list[str]:
    """One line per do/don't lesson: score, confidence, uses, then the lesson as a prompt sees it."""
    lines = []
    for le in lessons:
        what = (f"NEVER: {le['trigger']} (Reason: {le['fix']})" if le["polarity"] == "dont"
                else f"[{le['type']}] When: {le['trigger']} -> Do: {le['fix']}")
        tags = f"  [{', '.join(le['tags'])}]" if le["tags"] else ""
        lines.append(f"{le['score']:6.3f}  {le['confidence']:.2f}  {le['used']:>3}×  {what}{tags}")
    return lines


def cmd_lessons(ctx: CliContext) -> int:
    from slmactor.protocol.messages import LessonsRecall, LessonsRender

    args = ctx.args
    if args.max_bytes < 0:
        return ctx.fail("memory lessons: --max-bytes must be 0 (default) or positive")
    if args.limit < 0:
        return ctx.fail("memory lessons: --limit must be 0 (default) or positive")
    task = args.task.strip()

    def run() -> int:
        with ctx.client() as client:
            recalled = client.ask(LessonsRecall(task=task, tags=list(args.tag),
                                                limit=args.limit))
            if args.tag and not task:  # only the do/don't lessons carrying the tags
                ctx.emit(recalled, "\n".join(polar_lines(recalled["lessons"]))
                         or "(no do/don't lessons with these tags)")
                return EXIT_OK
            reply = client.ask(LessonsRender(query=task, max_bytes=args.max_bytes))
        if task:
            # The task's lesson lines (most relevant first), then its do/don't lessons.
            lines = [reply["text"].rstrip("\n")] if reply["text"].strip() else []
            lines += polar_lines(recalled["lessons"])
            ctx.emit({**reply, **recalled}, "\n".join(lines) or "(no lessons for this task)")
            return EXIT_OK
        reply = {**reply, "polar": recalled["lessons"]}
        text = reply["text"] or "(no lessons yet)"
        if recalled["lessons"]:
            text += "\n\nDo/don't lessons (score, confidence, uses):\n"
            text += "\n".join(polar_lines(recalled["lessons"]))
        ctx.emit(reply, text)
        return EXIT_OK

    return ctx.call(run)


def cmd_distill(ctx: CliContext) -> int:
    from slmactor.protocol.messages import MemoryDistill

    def run() -> int:
        with ctx.client(timeout=max(ctx.args.timeout, 60.0) if ctx.args.wait else None) as client:
            reply = client.ask(MemoryDistill(wait=ctx.args.wait))
        if "error" in reply:
            ctx.emit(reply, f"distillation failed: {reply['error']}")
            return EXIT_FAILED
        if ctx.args.wait and reply.get("unchanged"):
            text = f"no new episodes since the last pass ({reply['episodes']} in the window)"
        elif ctx.args.wait:
            text = f"distilled {reply['episodes']} episode(s) into {reply['facts']} fact observation(s)"
        else:
            text = (
                "distilling in the background" if reply["started"] else "already distilling; queued"
            )
        ctx.emit(reply, text)
        return EXIT_OK

    return ctx.call(run)


def _confirmed(scope: str) -> bool:
    if not sys.stdin.isatty():
        return False
    answer = input(f"forget {scope} memory? This cannot be undone. [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def cmd_forget(ctx: CliContext) -> int:
    from slmactor.cli.memory.forget_items import cmd_forget_items, named_items
    from slmactor.protocol.messages import MemoryForget

    scope = ctx.args.scope.strip().lower()
    if named_items(ctx.args):
        if scope:
            return ctx.fail("memory forget: give a SCOPE or --session/--rule/--line/--query, "
                            "not both")
        return cmd_forget_items(ctx)
    if scope not in SCOPES:
        return ctx.fail(
            f"memory forget: invalid scope {ctx.args.scope!r} (one of {', '.join(SCOPES)})"
        )
    if not ctx.args.yes:  # one rule for every destructive command, whatever the scope
        if ctx.json:
            return ctx.fail(f"memory forget {scope}: --json requires --yes")
        if not _confirmed(scope):
            return ctx.fail(f"memory forget {scope}: not confirmed (pass --yes)")

    def run() -> int:
        with ctx.client() as client:
            reply = client.ask(MemoryForget(scope=scope, run_id=ctx.args.run))
        from slmactor.cli.memory.forgetting import render_forget

        ctx.emit(reply, render_forget(scope, reply))
        return EXIT_OK if reply["ok"] else EXIT_FAILED

    return ctx.call(run)
