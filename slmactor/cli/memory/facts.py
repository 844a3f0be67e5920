"""`slmactor memory show | facts | lessons | forget`: the distilled memory (SPEC S-20.1–S-20.3).

memory show [--role R] [--run ID] [--budget N] [--query Q] [--files F …] [--tags T …]
            [--model M] [--language L]      the memory block a role receives (S-7.4);
                                            with --run and no --role: that run's working block
memory facts [--kind K]                     facts by score, pinned ones marked ★
memory lessons [--query Q] [--max-bytes N]  the lesson lines a worker would see (S-8.10), then
                                            the do/don't lessons when there are any
memory lessons --task TEXT [--tag T …] [--limit N]
                                            the do/don't lessons in recall order for that task
                                            (C-10); --tag alone lists those carrying the tags
memory forget SCOPE [--run ID] [--yes]      working|episodic|episodes|semantic|facts|
                                            procedural|project|all; every scope asks first
                                            unless --yes (--json or no terminal: refused
                                            without --yes), like every destructive command
"""

from __future__ import annotations

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
    show.add_argument("--query", default="", help="the task text the block is conditioned on")
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
    lessons.add_argument("--query", default="", help="the task text the lessons are ranked against")
    lessons.add_argument("--max-bytes", type=int, default=0, metavar="N", help="0 = 1600")
    lessons.add_argument("--task", default="", metavar="TEXT",
                         help="the do/don't lessons in recall order for this task")
    lessons.add_argument("--tag", action="append", default=[], metavar="T",
                         help="only lessons carrying this tag (repeatable)")
    lessons.add_argument("--limit", type=int, default=0, metavar="N",
                         help="how many do/don't lessons (0 = 10, at most 100)")
    lessons.set_defaults(func=cmd_lessons)

    distill = sub.add_parser("distill", help="distil facts from the newest episodes now")
    distill.add_argument("--wait", action="store_true", help="return when the pass is done")
    distill.set_defaults(func=cmd_distill)

    forget = sub.add_parser("forget", help="forget a part of memory")
    forget.add_argument("scope", help="|".join(SCOPES))
    forget.add_argument(
        "--run",
        default="",
        metavar="ID",
        help="reset only this run's working memory (default: every run)",
    )
    forget.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    forget.set_defaults(func=cmd_forget)


def cmd_show(ctx: CliContext) -> int:
    from slmactor.protocol.messages import MemoryBlock, WorkingRender

    args = ctx.args
    if args.budget < 0:
        return ctx.fail("memory show: --budget must be 0 (default) or positive")

    def run() -> int:
        with ctx.client() as client:
            if args.run and not args.role:
                reply = client.ask(WorkingRender(run_id=args.run, budget=args.budget))
            else:
                reply = client.ask(
                    MemoryBlock(
                        role=args.role or "worker",
                        budget=args.budget,
                        query=args.query,
                        files=list(args.files),
                        tags=list(args.tags),
                        run_id=args.run,
                        model=args.model,
                        language=args.language,
                    )
                )
        ctx.emit(reply, reply["text"].rstrip("\n") or NOTHING_YET)
        return EXIT_OK

    return ctx.call(run)


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
    polar_only = bool(args.task.strip() or args.tag)

    def run() -> int:
        with ctx.client() as client:
            recalled = client.ask(LessonsRecall(task=args.task, tags=list(args.tag),
                                                limit=args.limit))
            if polar_only:
                ctx.emit(recalled, "\n".join(polar_lines(recalled["lessons"]))
                         or "(no do/don't lessons for this task)")
                return EXIT_OK
            reply = client.ask(LessonsRender(query=args.query, max_bytes=args.max_bytes))
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
    from slmactor.protocol.messages import MemoryForget

    scope = ctx.args.scope.strip().lower()
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
