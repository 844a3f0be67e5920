"""`slmactor graph …`: the knowledge graph over memory (SPEC S-20.6, S-21).

    graph stats                                   edges by type, node count, file size
    graph file <path>                             failure classes seen here, and what fixed them
    graph neighbors <node> [--dir in|out|either] [--type T]...    one hop
    graph walk <node> [--depth N] [--dir D] [--type T]... [--max-nodes N]   bounded traversal
    graph backfill                                materialise edges (idempotent)
    graph prune [--max-edges N] [--max-age D]     bound the store; rewrites the log
    graph forget [--yes]                          delete the graph; backfill rebuilds it

A node is a full id (`episode:ep_…`, `rule:rule_…`, `failure:fp_…`, `file:pkg/a.go`), a bare
episode / rule / fingerprint id, or a file path. `--type` must name an edge type of the
vocabulary (exit 2 otherwise). `--depth` above 6 is clamped with the warning `--depth clamped to
the package ceiling of 6`; a negative one exits 2. `walk` follows edges both ways unless `--dir`
says otherwise (a file only has incoming edges). `--max-age` takes days (`30`, `30d`) or hours
(`720h`); 0 means the default 180 days, negative means no age limit; `--max-edges` 0 means 20000,
negative unlimited. `forget` asks first unless `--yes`; `--json` requires `--yes`.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

from slmactor.cli.context import EXIT_OK, EXIT_UNREACHABLE, CliContext, exit_code_for

MAX_DEPTH = 6


def register(sub: Any) -> None:
    sub.add_parser("stats", help="edges by type, node count, file size").set_defaults(
        func=cmd_stats)
    file = sub.add_parser("file", help="failure classes seen in a file, and what fixed them")
    file.add_argument("path", help="the file (relative to the project root or the cwd)")
    file.set_defaults(func=cmd_file)
    nb = sub.add_parser("neighbors", help="one hop from a node")
    nb.add_argument("node", help="a node: full id (rule:…), bare episode/rule/fingerprint id, or file path")
    nb.add_argument("--dir", default="either", choices=["in", "out", "either"],
                    help="edge direction (default either)")
    nb.add_argument("--type", action="append", default=[], metavar="T", dest="types",
                    help="only edges of this type (repeatable)")
    nb.set_defaults(func=cmd_neighbors)
    walk = sub.add_parser("walk", help="bounded traversal from a node (depth ceiling 6)")
    walk.add_argument("node", help="the node to start from (id or file path, as for neighbors)")
    walk.add_argument("--depth", type=int, default=3, help="hops (default 3, at most 6)")
    walk.add_argument("--dir", default="either", choices=["in", "out", "either"],
                      help="edge direction (default either: a file only has incoming edges)")
    walk.add_argument("--type", action="append", default=[], metavar="T", dest="types",
                      help="only follow edges of this type (repeatable)")
    walk.add_argument("--max-nodes", type=int, default=0, help="default 200, at most 2000")
    walk.set_defaults(func=cmd_walk)
    sub.add_parser("backfill", help="materialise edges from memory (idempotent)").set_defaults(
        func=cmd_backfill)
    prune = sub.add_parser("prune", help="bound the graph; rewrites the log")
    prune.add_argument("--max-edges", type=int, default=0, help="0 → 20000, negative → unlimited")
    prune.add_argument("--max-age", default="0", metavar="D",
                       help="days (30, 30d) or hours (720h); 0 → 180 days, negative → unlimited")
    prune.set_defaults(func=cmd_prune)
    forget = sub.add_parser("forget", help="delete the graph (backfill rebuilds it)")
    forget.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    forget.set_defaults(func=cmd_forget)


def _ask(ctx: CliContext, msg: Any, timeout: float | None = None) -> tuple[Any, int | None]:
    """(result, None) or (None, exit code) after reporting the failure."""
    from slmactor.client import DaemonUnavailable, RequestFailed

    try:
        with ctx.client() as client:
            return client.ask(msg, timeout=timeout), None
    except DaemonUnavailable as exc:
        return None, ctx.fail(str(exc), EXIT_UNREACHABLE)
    except RequestFailed as exc:
        return None, ctx.fail(f"graph {ctx.args.subcommand}: {exc}", exit_code_for(exc))


def _bad_types(ctx: CliContext) -> int | None:
    from slmactor.logic.graph.core import VOCABULARY

    bad = [t for t in ctx.args.types if t.strip().lower() not in VOCABULARY]
    if bad:
        return ctx.fail(f"graph {ctx.args.subcommand}: unknown edge type {bad[0]!r} "
                        f"(known: {', '.join(VOCABULARY)})")
    return None


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


# ------------------------------------------------------------------------------ rendering
def render_stats(result: dict[str, Any]) -> str:
    lines = [(f"graph: {result['edges']} edge(s), {result['nodes']} node(s), "
             f"{_size(int(result['bytes']))} on disk")]
    by_type = sorted(result.get("by_type", {}).items(), key=lambda kv: (-kv[1], kv[0]))
    width = max((len(t) for t, _ in by_type), default=0)
    lines.extend(f"  {t:<{width}}  {n}" for t, n in by_type)
    if not result["edges"]:
        lines.append("  (empty — `slmactor graph backfill` materialises it from memory)")
    return "\n".join(lines)


def render_file(result: dict[str, Any]) -> str:
    file = result["file"]
    if not result["episodes"]:
        return f"nothing known about {file}"
    failures, classes = result["failures"], result["classes"]
    lines = [(f"{file}: touched in {len(result['episodes'])} episode(s), "
             f"{len(failures)} distinct failure(s)")]
    if not classes:
        lines.append("  no failures recorded here")
        return "\n".join(lines)
    lines.append("failure classes seen here:")
    by_class: dict[str, dict[str, str]] = {}
    for failure, rules in result["fixed_by"].items():
        cls = result["failure_class"].get(failure, "unknown")
        for rule in rules:
            by_class.setdefault(cls, {})[rule] = result["fixes"].get(failure, {}).get(rule, "")
    width = max(len(c) for c in classes)
    for cls, count in classes.items():
        fixed = by_class.get(cls, {})
        if fixed:
            how = ", ".join(f"{r} ({note})" if note else r for r, note in sorted(fixed.items()))
            lines.append(f"  {cls:<{width}}  ×{count}  fixed by {how}")
        else:
            lines.append(f"  {cls:<{width}}  ×{count}  not fixed by a rule yet")
    return "\n".join(lines)


def render_neighbors(result: dict[str, Any]) -> str:
    node = result["node"]
    types = ", ".join(result["types"]) or "any type"
    head = f"{node} ({result['direction']}, {types}): {len(result['neighbors'])} neighbor(s)"
    lines = [head]
    for edge in result["edges"]:
        if edge["from"] == node:
            lines.append(f"  -{edge['type']}-> {edge['to']}")
        else:
            lines.append(f"  <-{edge['type']}- {edge['from']}")
    return "\n".join(lines)


def render_walk(result: dict[str, Any]) -> str:
    nodes = result["nodes"]
    head = (f"walk from {result['start']} ({result['direction']}, depth {result['depth']}): "
            f"{len(nodes)} node(s)" + (" — stopped at max nodes" if result["truncated"] else ""))
    return "\n".join([head, *(f"  {n['depth']}  {n['path']}" for n in nodes)])


def render_backfill(result: dict[str, Any]) -> str:
    if result["added"]:
        return f"materialized {result['added']} new edge(s) — {result['edges']} total"
    return f"graph up to date — {result['edges']} edge(s), nothing new to materialize"


# ------------------------------------------------------------------------------ commands
def cmd_stats(ctx: CliContext) -> int:
    from slmactor.protocol.messages import GraphStats

    result, failed = _ask(ctx, GraphStats())
    if failed is not None:
        return failed
    ctx.emit(result, render_stats(result))
    return EXIT_OK


def _repo_relative(ctx: CliContext, raw: str) -> str:
    """A path typed from a subdirectory, made relative to the project root when it is there."""
    candidate = Path(os.path.abspath(raw))
    try:
        if candidate.exists():
            return candidate.resolve().relative_to(ctx.project).as_posix()
    except (ValueError, OSError):
        pass
    return raw


def cmd_file(ctx: CliContext) -> int:
    from slmactor.protocol.messages import GraphFile

    result, failed = _ask(ctx, GraphFile(path=_repo_relative(ctx, ctx.args.path)),
                          timeout=max(ctx.args.timeout, 30.0))
    if failed is not None:
        return failed
    ctx.emit(result, render_file(result))
    return EXIT_OK


def cmd_neighbors(ctx: CliContext) -> int:
    from slmactor.protocol.messages import GraphNeighbors

    bad = _bad_types(ctx)
    if bad is not None:
        return bad
    msg = GraphNeighbors(node=ctx.args.node, direction=ctx.args.dir, types=ctx.args.types)
    result, failed = _ask(ctx, msg, timeout=max(ctx.args.timeout, 30.0))
    if failed is not None:
        return failed
    ctx.emit(result, render_neighbors(result))
    return EXIT_OK


def cmd_walk(ctx: CliContext) -> int:
    from slmactor.protocol.messages import GraphWalk

    if ctx.args.depth < 0:
        return ctx.fail("graph walk: --depth must not be negative")
    bad = _bad_types(ctx)
    if bad is not None:
        return bad
    depth = ctx.args.depth
    if depth > MAX_DEPTH:
        print(f"slmactor: --depth clamped to the package ceiling of {MAX_DEPTH}", file=sys.stderr)
        depth = MAX_DEPTH
    msg = GraphWalk(node=ctx.args.node, depth=depth, direction=ctx.args.dir,
                    types=ctx.args.types, max_nodes=max(ctx.args.max_nodes, 0))
    result, failed = _ask(ctx, msg, timeout=max(ctx.args.timeout, 30.0))
    if failed is not None:
        return failed
    for warning in result.get("warnings", []):
        print(f"slmactor: {warning}", file=sys.stderr)
    if ctx.args.depth > MAX_DEPTH and ctx.json:
        result["warnings"] = [f"--depth clamped to the package ceiling of {MAX_DEPTH}",
                              *result.get("warnings", [])]
    ctx.emit(result, render_walk(result))
    return EXIT_OK


def cmd_backfill(ctx: CliContext) -> int:
    from slmactor.protocol.messages import GraphBackfill

    result, failed = _ask(ctx, GraphBackfill(), timeout=max(ctx.args.timeout, 120.0))
    if failed is not None:
        return failed
    ctx.emit(result, render_backfill(result))
    return EXIT_OK


def parse_max_age(text: str) -> float:
    """Days from `30`, `30d`, `720h`, `90m`, `3600s` (Go-style durations too); ValueError."""
    value = text.strip().lower()
    units = {"d": 1.0, "h": 1 / 24, "m": 1 / 1440, "s": 1 / 86400}
    scale = 1.0
    if value and value[-1] in units:
        scale, value = units[value[-1]], value[:-1]
    days = float(value) * scale
    if not math.isfinite(days):
        raise ValueError(text)
    return days


def cmd_prune(ctx: CliContext) -> int:
    from slmactor.protocol.messages import GraphPrune

    try:
        max_age = parse_max_age(ctx.args.max_age)
    except ValueError:
        return ctx.fail(f"graph prune: --max-age must be days (30, 30d) or hours (720h), "
                        f"not {ctx.args.max_age!r}")
    result, failed = _ask(ctx, GraphPrune(max_edges=ctx.args.max_edges, max_age_days=max_age),
                          timeout=max(ctx.args.timeout, 60.0))
    if failed is not None:
        return failed
    text = (f"pruned {result['removed']} edge(s) — {result['edges']} left" if result["removed"]
            else f"nothing to prune — {result['edges']} edge(s)")
    ctx.emit(result, text)
    return EXIT_OK


def cmd_forget(ctx: CliContext) -> int:
    from slmactor.protocol.messages import GraphForget

    if not ctx.args.yes:
        if ctx.json:
            return ctx.fail("graph forget: --json requires --yes")
        if not sys.stdin.isatty():
            return ctx.fail("graph forget: not a terminal; pass --yes to confirm")
        answer = input(f"Delete the knowledge graph of {ctx.project}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing changed")
            return EXIT_OK
    result, failed = _ask(ctx, GraphForget())
    if failed is not None:
        return failed
    ctx.emit(result, f"forgot {result['removed']} edge(s); `slmactor graph backfill` rebuilds them")
    return EXIT_OK
