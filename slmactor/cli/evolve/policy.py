"""`slmactor evolve why DECISION [--model M] [--language L] [--scope user|project] [--json]`.

Prints the bandit's posterior for a decision exactly as S-13.7 (grouped by model family, other
families below `— other models (recorded, not used here) —`). A decision that is neither shipped
(S-13.1) nor recorded under any model exits 2, as the seed's `evolve why` does; a shipped decision
without evidence prints `<decision>: no evidence yet — using the shipped defaults.` and exits 0.
"""

from __future__ import annotations

from typing import Any

from slmactor.cli.context import EXIT_OK, EXIT_UNREACHABLE, CliContext, exit_code_for


def register(sub: Any) -> None:
    p = sub.add_parser("why", help="why the bandit prefers an option (posterior per model family)")
    p.add_argument("decision", help="e.g. edit_format, think_passes, review_strictness")
    p.add_argument("--model", default="", help="model id or family (default: any model)")
    p.add_argument("--language", default="", help="language (default: any language)")
    p.add_argument("--scope", choices=("user", "project"), default="user",
                   help="which policy.json (default: user)")
    p.add_argument("--deterministic", action="store_true",
                   help="explain deterministic mode (argmax, no exploration)")
    p.set_defaults(func=cmd_why)


def cmd_why(ctx: CliContext) -> int:
    from slmactor.client import DaemonUnavailable, RequestFailed
    from slmactor.logic.policy.bandit import SHIPPED_PRIORS
    from slmactor.protocol.messages import PolicyWhy

    args = ctx.args
    decision = args.decision.strip().lower()
    if not decision:
        return ctx.fail("evolve why: DECISION must not be blank")
    try:
        with ctx.client() as client:
            result = client.ask(PolicyWhy(decision=decision, model=args.model,
                                          language=args.language, scope=args.scope,
                                          deterministic=args.deterministic))
    except DaemonUnavailable as exc:
        return ctx.fail(str(exc), EXIT_UNREACHABLE)
    except RequestFailed as exc:
        return ctx.fail(f"evolve why: {exc.reason}", exit_code_for(exc))
    known = decision in SHIPPED_PRIORS or result.get("found") or result.get("others")
    if not known:
        known_list = ", ".join(sorted(SHIPPED_PRIORS))
        return ctx.fail(f"evolve why: unknown decision {decision!r} (nothing recorded; shipped "
                        f"decisions: {known_list})")
    ctx.emit(result, str(result.get("text", "")))
    return EXIT_OK
