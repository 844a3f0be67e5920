"""`slmactor metrics …`: show, compare, replay recorded trajectories, and an HTML report.

    metrics show [--last N] [--label L]          pooled summary of the newest N runs (default 1)
    metrics compare [N] [--baseline-label A --current-label B]
    metrics replay PATH                          offline A/B of trajectories (our format,
                                                 mini-swe-agent, SWE-agent .traj, OpenHands)
                                                 with the project's current rules
    metrics replay PATH… --learn [--git REF] [--html FILE]
                                                 real histories of every harness replayed in
                                                 time order with learning on: what memory would
                                                 have done at each failure, per harness
    metrics report --html FILE                   self-contained page with trend charts
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slmactor.cli.context import EXIT_FAILED, EXIT_OK, CliContext

#: Newest episodes whose failures the report counts by class (the store's default cap).
REPORT_EPISODES = 300


def register(sub: Any) -> None:
    show = sub.add_parser("show", help="metrics of the newest runs (pooled)")
    show.add_argument("--last", type=int, default=1, help="how many runs (default 1)")
    show.add_argument("--label", default="", help="only runs with this label")
    show.set_defaults(func=cmd_show)

    cmp = sub.add_parser("compare", help="newest N runs against the N before them (no N: the "
                                         "newest labelled pass against the one before, as the "
                                         "demo and the HTML report compare)")
    cmp.add_argument("n", nargs="?", type=int, default=None,
                     help="runs per side (default: the newest two labelled passes, else 5)")
    cmp.add_argument("--baseline-label", default="", help="compare runs by label instead")
    cmp.add_argument("--current-label", default="", help="label of the current runs")
    cmp.set_defaults(func=cmd_compare)

    rep = sub.add_parser("replay", help="replay recorded histories: offline A/B, or --learn: what "
                                         "memory would have done at every failure")
    rep.add_argument("paths", type=Path, nargs="*", metavar="PATH",
                     help="history files or folders: any harness's transcripts, rollouts, chats, task "
                          "histories or trajectories (without --learn: trajectories, one PATH)")
    rep.add_argument("--learn", action="store_true",
                     help="replay in time order with learning on and report, per harness, what memory "
                          "would have repaired before the call, told, and got wrong (nothing is stored)")
    rep.add_argument("--git", action="append", default=[], metavar="REF_OR_DIR",
                     help="with --learn: also the transcripts a repository holds (as import sessions "
                          "--git reads them)")
    rep.add_argument("--html", type=Path, metavar="FILE", help="with --learn: also draw it as a page")
    rep.set_defaults(func=cmd_replay)

    html = sub.add_parser("report", help="write a self-contained HTML report")
    html.add_argument("--html", type=Path, required=True, metavar="FILE", help="the page to write")
    html.add_argument("--n", type=int, default=5, help="runs per side of the compare table")
    html.set_defaults(func=cmd_report)


def cmd_show(ctx: CliContext) -> int:
    from slmactor.protocol.messages import MetricsShow

    if ctx.args.last < 0:
        return ctx.fail("metrics show: --last must not be negative")

    def run() -> int:
        with ctx.client() as client:
            result = client.ask(MetricsShow(last=ctx.args.last, label=ctx.args.label))
        ctx.emit(result, result["text"].rstrip("\n"))
        return EXIT_OK

    return ctx.call(run)


def cmd_compare(ctx: CliContext) -> int:
    from slmactor.protocol.messages import MetricsCompare

    args = ctx.args
    if args.n is not None and args.n <= 0:
        return ctx.fail("metrics compare: N must be positive")
    if bool(args.baseline_label) != bool(args.current_label):
        return ctx.fail("metrics compare: give both --baseline-label and --current-label")

    def run() -> int:
        with ctx.client() as client:
            if args.n is None and not args.baseline_label:
                result = _default_compare(client)
            else:
                result = client.ask(MetricsCompare(n=args.n or 5, baseline_label=args.baseline_label,
                                                   current_label=args.current_label))
        ctx.emit(result, result["text"].rstrip("\n"))
        return EXIT_OK

    return ctx.call(run)


def _default_compare(client: Any) -> dict[str, Any]:
    """`metrics compare` with neither N nor labels: the runs `metrics report` compares."""
    from slmactor.logic.loop.metrics import Run
    from slmactor.logic.loop.metrics_compare import default_comparison
    from slmactor.protocol.messages import MetricsShow

    runs = [Run.from_dict(r) for r in client.ask(MetricsShow(last=0))["runs"]]
    found, compared = default_comparison(runs, 5)
    if found is None:
        return {"enough_runs": False, "runs": len(runs), "compared": compared,
                "text": compared + "\n"}
    return {"enough_runs": found.enough_runs, "runs": len(runs), "compared": compared,
            **found.to_dict(), "text": f"Compares {compared}.\n\n" + found.render()}


def _on_terminal() -> bool:
    """Progress goes to stderr, and only to a person watching it (not to a log or a pipe)."""
    import sys

    return sys.stderr is not None and sys.stderr.isatty()


def _say_progress(line: str) -> None:
    import sys

    print(line, file=sys.stderr, flush=True)


def _ab_progress() -> Any:
    def show(index: int, total: int, trajectory: Any) -> None:
        _say_progress(f"[{index}/{total}] {trajectory.id}: replayed with the current rules")

    return show


def cmd_replay(ctx: CliContext) -> int:
    if ctx.args.learn:
        return _learning(ctx)
    if ctx.args.git or ctx.args.html:
        return ctx.fail("metrics replay: --git and --html go with --learn")
    if len(ctx.args.paths) != 1:
        return ctx.fail("metrics replay: give one trajectory file or folder (several: with --learn)")
    from slmactor import harnesses
    from slmactor.stores.trajectories import TrajectoryFormatError, load_trajectories

    path = ctx.args.paths[0]
    try:
        trajectories, skipped = load_trajectories(path, harnesses.read_trajectory)
    except (FileNotFoundError, TrajectoryFormatError) as exc:
        return ctx.fail(f"metrics replay: {exc}")
    if not trajectories:
        return ctx.fail(f"metrics replay: no trajectories (*.json, *.traj) in {path}")

    def run() -> int:
        from slmactor.cli.loop.replay_driver import ab_replay

        with ctx.client(timeout=max(ctx.args.timeout, 10.0)) as client:
            data = ab_replay(client, trajectories, _ab_progress() if _on_terminal() else None)
        data["skipped_files"] = skipped
        notes = "".join(f"skipped {s}\n" for s in skipped)
        ctx.emit(data, (notes + data["text"]).rstrip("\n"))
        return EXIT_OK

    return ctx.call(run)


def _learning(ctx: CliContext) -> int:
    """`metrics replay PATH… --learn`: the replay engine over the histories, in this process
    (no daemon: nothing is stored)."""
    from slmactor.cli.context import write_text_atomically
    from slmactor.cli.loop.histories import ProductMemory, read
    from slmactor.cli.sessions.gitsource import GitError
    from slmactor.logic.loop.histories.engine import replay
    from slmactor.logic.loop.histories.html import render_html
    from slmactor.logic.loop.histories.report import render, to_dict

    paths: list[Path] = ctx.args.paths
    if not paths and not ctx.args.git:
        return ctx.fail("metrics replay --learn: give the history files or folders (or --git)")
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        return ctx.fail(f"metrics replay: not found: {', '.join(missing)}")
    show = _reading_progress() if _on_terminal() else None
    try:
        histories, tally = read(paths, ctx.args.git, Path.cwd(), progress=show)
    except GitError as exc:
        return ctx.fail(f"metrics replay: {exc}")
    if not histories:
        return ctx.fail("metrics replay --learn: no session in "
                        + ", ".join([*map(str, paths), *ctx.args.git]))
    result = replay(histories, ProductMemory())
    data = to_dict(result)
    data["files"] = tally.files
    data["skipped_files"] = dict(sorted(tally.skipped_files.items()))
    text = render(result)
    if ctx.args.html is not None:
        target: Path = ctx.args.html
        try:
            write_text_atomically(target, render_html(result, sources=[*map(str, paths), *ctx.args.git]))
        except OSError as exc:
            return ctx.fail(f"metrics replay: cannot write {target}: {exc.strerror or exc}", EXIT_FAILED)
        data["html"] = str(target.resolve())
        text += f"\nwrote {target}"
    ctx.emit(data, text)
    return EXIT_OK


def _reading_progress() -> Any:
    def show(done: int, total: int) -> None:
        if done == total or done % max(1, total // 10) == 0:
            _say_progress(f"read {done}/{total} file(s)")

    return show


def _episode(client: Any, ask: Any) -> dict[str, Any] | None:
    """One episode, or None when it was pruned between the listing and the read."""
    from slmactor.client import RequestFailed

    try:
        reply = client.ask(ask)
    except RequestFailed:
        return None
    return reply if isinstance(reply, dict) else None


def cmd_report(ctx: CliContext) -> int:
    import time

    from slmactor.cli.context import write_text_atomically
    from slmactor.logic.loop.metrics import Run
    from slmactor.logic.loop.metrics_compare import default_comparison
    from slmactor.logic.loop.report_html import failure_classes, render_html
    from slmactor.protocol.messages import EpisodeGet, EpisodeRecent, EvolveRules, MetricsShow

    def run() -> int:
        with ctx.client() as client:
            shown = client.ask(MetricsShow(last=0))
            rules = client.ask(EvolveRules())["rules"]
            # Failures by class come from the remembered episodes (each failure has its class).
            ids = client.ask(EpisodeRecent(n=REPORT_EPISODES, ids_only=True))["ids"]
            episodes = [e for e in (_episode(client, EpisodeGet(episode_id=i)) for i in ids) if e]
        runs = [Run.from_dict(r) for r in shown["runs"]]
        comparison, compared = default_comparison(runs, ctx.args.n)
        page = render_html(runs, comparison, project=str(ctx.project), generated_at=time.time(),
                           rules=rules, failures=failure_classes(episodes), compared=compared)
        target: Path = ctx.args.html
        try:
            # Atomic replace; the mode follows the umask (a report is meant to be shared).
            write_text_atomically(target, page)
        except OSError as exc:
            return ctx.fail(f"metrics report: cannot write {target}: {exc.strerror or exc}",
                            EXIT_FAILED)
        data = {"html": str(target.resolve()), "runs": len(runs), "rules": len(rules),
                "episodes": len(episodes), "compared": compared,
                "verdict": comparison.verdict() if comparison else "not enough runs"}
        verdict = f"; verdict: {data['verdict']} ({compared})" if comparison else ""
        ctx.emit(data, f"wrote {target} ({len(runs)} run(s), {len(rules)} rule(s)){verdict}")
        return EXIT_OK

    return ctx.call(run)
