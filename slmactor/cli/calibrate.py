"""`slmactor calibrate show [--model M] [--endpoint URL] [--json]`: stored calibration profiles.

The harness (which owns the model endpoint) measures and reports with `calibration.report`; this
command shows what the daemon keeps: per (model id, endpoint) the concurrency knee, efficiency
per level, p50/p95 solo latency, decode rate, context window, age, and whether it has expired
(older than 30 days → the harness should re-measure).
"""

from __future__ import annotations

from typing import Any

from slmactor.cli.context import EXIT_OK, EXIT_UNREACHABLE, CliContext, exit_code_for


def register(sub: Any) -> None:
    p = sub.add_parser("show", help="stored calibration profiles (knee, latency, decode rate)")
    p.add_argument("--model", default="", help="only this exact model id")
    p.add_argument("--endpoint", default="", help="with --model: only this endpoint")
    p.set_defaults(func=cmd_show)


def render(profiles: list[dict[str, Any]]) -> str:
    if not profiles:
        return "no calibration profiles yet — the harness reports them with calibration.report"
    lines = []
    for p in profiles:
        levels = ", ".join(f"{lvl}:{float(eff) * 100:.0f}%" for lvl, eff in
                           sorted(p.get("efficiency", {}).items(), key=lambda kv: int(kv[0])))
        status = "expired — re-measure" if p.get("expired") else "current"
        lines.append(f"{p['model']} @ {p.get('endpoint') or '(no endpoint)'} — knee {p['knee']}"
                     f" ({status}, measured {p.get('measured_at') or '?'})")
        lines.append(f"  efficiency {levels}; solo p50 {float(p['p50_ms']):.0f} ms, p95 "
                     f"{float(p['p95_ms']):.0f} ms; decode {float(p['decode_tps']):.1f} tok/s; "
                     f"context {p.get('context_window') or '?'}")
    return "\n".join(lines)


def cmd_show(ctx: CliContext) -> int:
    from slmactor.client import DaemonUnavailable, RequestFailed
    from slmactor.protocol.messages import CalibrationGet

    args = ctx.args
    if args.endpoint and not args.model:
        return ctx.fail("calibrate show: --endpoint needs --model")
    try:
        with ctx.client() as client:
            result = client.ask(CalibrationGet(model=args.model, endpoint=args.endpoint))
    except DaemonUnavailable as exc:
        return ctx.fail(str(exc), EXIT_UNREACHABLE)
    except RequestFailed as exc:
        return ctx.fail(f"calibrate show: {exc.reason}", exit_code_for(exc))
    if args.model:
        profile = result.get("profile")
        profiles = [{**profile, "expired": result.get("expired", False)}] if profile else []
        data: dict[str, Any] = {"profiles": profiles, "count": len(profiles)}
    else:
        data = result
        profiles = result.get("profiles", [])
    ctx.emit(data, render(profiles))
    return EXIT_OK
