"""`slmactor memory episodes [N]` and `slmactor memory recall TASK` (SPEC S-20.2).

`episodes` lists the newest N episodes the daemon remembers for the project (default 10; N must be
positive). `recall` ranks them against a task the way a harness's recall does, and with
`--explain` shows why each one was recalled: each matched term's BM25F contribution by field,
the coverage the gate saw, and the recency and success factors.
"""

from __future__ import annotations

import argparse
from typing import Any

from slmactor.cli.context import EXIT_OK, EXIT_UNREACHABLE, CliContext, exit_code_for


def register(sub: Any) -> None:
    episodes = sub.add_parser("episodes", help="the most recent runs the harness remembers")
    episodes.add_argument("n", nargs="?", type=int, default=10, help="how many (default 10)")
    episodes.set_defaults(func=cmd_episodes)

    recall = sub.add_parser("recall", help="recall past episodes for a task (BM25F)")
    recall.add_argument("query", metavar="TASK", help="the task to recall past work for")
    recall.add_argument("--files", nargs="+", default=[], metavar="PATH", help="focus files")
    recall.add_argument("--tools", nargs="+", default=[], metavar="TOOL",
                        help="tools the task will use (boosts episodes that used them)")
    recall.add_argument("--tags", nargs="+", default=[], metavar="TAG",
                        help="tags of the task (boosts episodes with them)")
    recall.add_argument("--language", default="", help="only episodes in this language (or none)")
    recall.add_argument("--model", default="", help="only episodes of this model (or none)")
    recall.add_argument("--success-only", action="store_true", help="only episodes that succeeded")
    recall.add_argument("--failures-only", action="store_true", help="only episodes that failed")
    recall.add_argument("--since", default="", metavar="RFC3339", help="only episodes at or after")
    recall.add_argument("-n", type=int, default=3, help="how many hits (default 3; ≤ 0 = all)")
    recall.add_argument("--min-coverage", type=float, default=0.0,
                        help="share of query terms a hit must hold (0 = default 0.34; <0 = off)")
    recall.add_argument("--min-score", type=float, default=0.0, help="absolute BM25F floor")
    recall.add_argument("--explain", action="store_true", help="show why each hit was recalled")
    recall.set_defaults(func=cmd_recall)


def _ask(ctx: CliContext, msg: Any) -> tuple[Any, int | None]:
    from slmactor.client import DaemonUnavailable, RequestFailed

    try:
        with ctx.client() as client:
            return client.ask(msg), None
    except DaemonUnavailable as exc:
        return None, ctx.fail(str(exc), EXIT_UNREACHABLE)
    except RequestFailed as exc:
        return None, ctx.fail(str(exc), exit_code_for(exc))


def _files(files: list[str], limit: int = 4) -> str:
    shown = ", ".join(f"`{f}`" for f in files[:limit])
    more = len(files) - limit
    return shown + (f" (+{more} more)" if more > 0 else "")


def _line(entry: dict[str, Any]) -> str:
    mark = "✓" if entry.get("success") else "✗"
    query = str(entry.get("query", "")).splitlines()[0][:120] if entry.get("query") else "(no task)"
    line = f"{mark} {entry.get('at', '')}  {query}  [{entry.get('id', '')}]"
    if entry.get("files"):
        line += f"\n    → touched {_files(list(entry['files']))}"
    if entry.get("failures"):
        line += f"\n    {entry['failures']} failure(s)"
    return line


def render_episodes(result: dict[str, Any]) -> str:
    episodes = result.get("episodes", [])
    if not episodes:
        return "no episodes remembered yet"
    head = f"{len(episodes)} of {result.get('total', len(episodes))} episode(s), newest first:"
    return "\n".join([head, *(_line(e) for e in episodes)])


def render_recall(result: dict[str, Any]) -> str:
    hits = result.get("hits", [])
    if not hits:
        return f"nothing recalled ({result.get('episodes', 0)} episode(s) searched)"
    lines: list[str] = []
    for i, hit in enumerate(hits, 1):
        lines.append(f"{i}. score {hit['score']:.4f}  " + _line(hit["entry"]))
        for failure in (hit.get("episode") or {}).get("failures", []):
            if failure.get("resolved_by"):
                fix = failure.get("resolution") or failure.get("resolved_by")
                lines.append(f"    - hit: {str(failure.get('message', ''))[:100]} → fixed by "
                             f"{str(fix)[:80]}")
        if hit.get("why"):
            lines.extend("    " + ln for ln in str(hit["why"]).splitlines())
    lines.append(f"(mode {result.get('mode', '?')}, {result.get('episodes', 0)} episode(s))")
    return "\n".join(lines)


def cmd_episodes(ctx: CliContext) -> int:
    from slmactor.protocol.messages import EpisodeRecent

    if ctx.args.n <= 0:
        return ctx.fail("memory episodes: N must be positive")
    result, failed = _ask(ctx, EpisodeRecent(n=ctx.args.n))
    if failed is not None:
        return failed
    ctx.emit(result, render_episodes(result))
    return EXIT_OK


def cmd_recall(ctx: CliContext) -> int:
    from slmactor.protocol.messages import MemoryRecall

    args: argparse.Namespace = ctx.args
    if not args.query.strip() and not args.files:
        return ctx.fail("memory recall: give a query (and optionally --files)")
    msg = MemoryRecall(
        query=args.query, files=list(args.files), tools=list(args.tools), tags=list(args.tags),
        language=args.language, model=args.model, success_only=args.success_only,
        failures_only=args.failures_only, since=args.since, n=args.n,
        min_coverage=args.min_coverage, min_score=args.min_score, explain=args.explain,
    )
    result, failed = _ask(ctx, msg)
    if failed is not None:
        return failed
    ctx.emit(result, render_recall(result))
    return EXIT_OK
