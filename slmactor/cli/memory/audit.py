"""`slmactor memory audit [--json] [--fix]`: every claim the project's memory holds, the records
it rests on and its verdict now — true, stale, contradicted, unverified — so a user sees why a
line is or is not told; `--fix` retires what fails (each with its reason, in
`memory/retired.json`).

Also what reached a model in this project's recorded sessions: the block lines and failure
advice each session was told (the session ledgers the hooks keep), each judged now.
"""

from __future__ import annotations

from typing import Any

from slmactor.cli.context import EXIT_FAILED, EXIT_OK, CliContext


def register(sub: Any) -> None:
    audit = sub.add_parser(
        "audit", help="every claim memory holds, its evidence and whether it holds now",
        description="List every claim the project's memory holds (facts, MEMORY.md lines) with "
        "the records behind it and its verdict: true, stale (a path it names is gone), "
        "contradicted (its own records say it did not hold) or unverified (no record supports "
        "it); and what each recorded session was told. --fix retires what fails.")
    audit.add_argument("--fix", action="store_true", help="retire the claims that fail")
    audit.set_defaults(func=cmd_audit)


def audit_text(reply: dict[str, Any]) -> str:
    counts = reply.get("counts") or {}
    lines = [f"{reply.get('passing', 0)} of {reply.get('total', 0)} claims hold now"
             + ("" if not counts else " (" + ", ".join(
                 f"{n} {verdict}" for verdict, n in sorted(counts.items())) + ")")]
    for row in reply.get("claims") or []:
        if row.get("verdict") == "true":
            continue
        lines.append(f"  {row.get('verdict')}: {row.get('says', '')}")
        if row.get("why"):
            lines.append(f"      why: {row['why']}")
        if row.get("evidence"):
            lines.append(f"      records: {', '.join(row['evidence'][:5])}")
    told = reply.get("told") or []
    if told:
        held = sum(1 for t in told if t.get("verdict") == "true")
        lines.append(f"{held} of {len(told)} lines told to a model hold now")
        lines.extend(f"  {t.get('verdict')}: {t.get('says', '')}" for t in told
                     if t.get("verdict") != "true")
    retired = reply.get("retired") or []
    if retired:
        lines.append(f"retired {len(retired)}:")
        lines.extend(f"  {r.get('text', '')} ({r.get('why', '')})" for r in retired)
    return "\n".join(lines)


def cmd_audit(ctx: CliContext) -> int:
    from slmactor.protocol.messages import MemoryAudit

    def run() -> int:
        with ctx.client() as client:
            reply = client.ask(MemoryAudit(fix=ctx.args.fix))
        if "error" in reply:
            ctx.emit(reply, f"memory audit failed: {reply['error']}")
            return EXIT_FAILED
        ctx.emit(reply, audit_text(reply))
        return EXIT_OK

    return ctx.call(run)
