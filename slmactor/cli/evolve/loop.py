"""`slmactor evolve regressions [--run]` and `slmactor evolve reset [--yes]` (S-15, S-11.6, S-20.4).

`regressions` lists the project's regression checks; `--run` evaluates the offline (file) checks
now, confined to the project root. Command checks are listed for the harness to run under its own
permissions — neither the daemon nor this command executes them. `reset` forgets learned rules,
the policy, regression checks and project memory; it asks first unless `--yes` (and `--json`
requires `--yes`, since it cannot ask).
"""

from __future__ import annotations

import sys
from typing import Any

from slmactor.cli.context import (
    EXIT_DEGRADED,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNREACHABLE,
    CliContext,
    exit_code_for,
)


def register(sub: Any) -> None:
    reg = sub.add_parser("regressions", help="regression checks of fixed failures")
    reg.add_argument("--run", action="store_true", help="evaluate the offline file checks now")
    reg.set_defaults(func=cmd_regressions)
    reset = sub.add_parser("reset", help="forget rules, policy, regressions and project memory")
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    reset.set_defaults(func=cmd_reset)


def render_regressions(result: dict[str, Any], ran: bool) -> str:
    checks = result.get("checks", [])
    if not checks:
        return "no regression checks recorded yet"
    lines = []
    for check in checks:
        target = check.get("command") or check.get("path") or ""
        if check.get("substring"):
            target += f" ∋ {check['substring']!r}"
        status = ""
        if "result" in check:
            res = check["result"]
            status = {"pass": " ✓", "fail": " ✗", "skipped": " –"}.get(res["status"], "")
            if res.get("detail"):
                status += f" {res['detail']}"
        history = f"{check.get('runs', 0)} run(s), {check.get('fails', 0)} fail(s)"
        lines.append(f"- [{check['kind']}] {check['description']} — {target} ({history}){status}")
    if ran:
        lines.append(f"\noffline checks: {result['passed']} passed, {result['failed']} failed, "
                     f"{result['skipped']} skipped")
    if result.get("commands"):
        lines.append(f"{len(result['commands'])} command check(s) are for the harness to run; "
                     "slmactor never executes commands")
    return "\n".join(lines)


def cmd_regressions(ctx: CliContext) -> int:
    from slmactor.client import DaemonUnavailable, RequestFailed
    from slmactor.protocol.messages import EvolveRegressions

    try:
        with ctx.client() as client:
            result = client.ask(EvolveRegressions(run=ctx.args.run))
    except DaemonUnavailable as exc:
        return ctx.fail(str(exc), EXIT_UNREACHABLE)
    except RequestFailed as exc:
        return ctx.fail(f"evolve regressions: {exc}", exit_code_for(exc))
    ctx.emit(result, render_regressions(result, ctx.args.run))
    # A regressed check is a finding, not an error of this command: "not healthy" (150).
    return EXIT_DEGRADED if ctx.args.run and result.get("failed") else EXIT_OK


def cmd_reset(ctx: CliContext) -> int:
    from slmactor.client import DaemonUnavailable, RequestFailed
    from slmactor.protocol.messages import EvolveReset

    if not ctx.args.yes:
        if ctx.json:
            return ctx.fail("evolve reset: --json requires --yes")
        if not sys.stdin.isatty():
            return ctx.fail("evolve reset: not a terminal; pass --yes to confirm")
        answer = input(f"Forget {ctx.project}'s regression checks, working memory, episodes, "
                       "graph, facts and lessons (with the bullets slmactor wrote in MEMORY.md), "
                       "and the learned rules and policy of this project and user-wide? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing changed")
            return EXIT_OK
    try:
        with ctx.client() as client:
            result = client.ask(EvolveReset(), timeout=max(ctx.args.timeout, 10.0))
    except DaemonUnavailable as exc:
        return ctx.fail(str(exc), EXIT_UNREACHABLE)
    except RequestFailed as exc:
        return ctx.fail(f"evolve reset: {exc}", exit_code_for(exc))
    from slmactor.cli.memory.forgetting import render_reset

    failed = result.get("failed", [])
    ctx.emit(result, render_reset(str(ctx.project), result))
    return EXIT_FAILED if failed else EXIT_OK
