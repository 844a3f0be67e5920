"""`slmactor evolve fingerprint ...` and `slmactor evolve rules [--all]` (SPEC S-9, S-10, S-20).

`fingerprint` shows the fingerprint of one failure message (argument, or `-` / nothing for stdin):
its id, class, normalised text, salient text and which part of the message produced it.  The
daemon computes it (so the answer is the running algorithm's); `--local` computes it in this
process.  `--jsonl` is a batch mode that always runs locally: stdin holds one
`{"tool", "language", "model", "message"}` object per line, stdout gets one result per line
(`id`, `class`, `norm`, `salient`, `version`, ...) — a bad line gets `{"line": N, "error": ...}`
and the exit status is 2.

`rules` lists the repair rules the project has learned and the shipped ones it has used, with
their confidence; `--all` adds unused shipped rules and retired rules.
"""

from __future__ import annotations

import sys
from typing import Any

from slmactor.cli.context import EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE, CliContext, exit_code_for


def register(sub: Any) -> None:
    fp = sub.add_parser("fingerprint", help="fingerprint a failure message")
    fp.add_argument("message", nargs="?", default="-", help="the message, or - for stdin")
    fp.add_argument("--tool", default="", help="the tool that failed")
    fp.add_argument("--language", default="", help="the project language")
    fp.add_argument("--model", default="", help="the model id (folded to its family)")
    fp.add_argument("--jsonl", action="store_true",
                    help="batch: one JSON object per stdin line, one result per stdout line")
    fp.add_argument("--local", action="store_true", help="compute here, without the daemon")
    fp.set_defaults(func=cmd_fingerprint)
    rules = sub.add_parser("rules", help="repair rules with confidence and outcome counts")
    rules.add_argument("--all", action="store_true",
                       help="include unused shipped rules and retired rules")
    rules.set_defaults(func=cmd_rules)


def render_fingerprint(fp: dict[str, Any]) -> str:
    from slmactor.logic.failures.classify import describe

    if not fp.get("id"):
        return "nothing to fingerprint (empty message)"
    where = "/".join(x or "*" for x in (fp.get("tool"), fp.get("language"), fp.get("model_family")))
    return "\n".join([
        f"{fp['id']}  {fp['class']}  [{where}]  v{fp.get('version')}",
        f"  what:    {describe(fp['class'])}",
        f"  norm:    {fp.get('norm', '')}",
        f"  salient: {fp.get('salient') or '(none: structural class)'}",
        f"  why:     {fp.get('explain', '')}",
    ])


def _batch(ctx: CliContext) -> int:
    import json

    from slmactor.harnesses import tool_family
    from slmactor.logic.failures.fingerprint import analyze

    bad = 0
    for number, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict):
                raise TypeError("not a JSON object")
            fields = {k: item.get(k, "") for k in ("tool", "message", "language", "model")}
            if not all(isinstance(v, str) for v in fields.values()):
                raise TypeError("tool, message, language and model must be strings")
            result: dict[str, Any] = analyze(**fields, family=tool_family(fields["tool"])).to_dict()
        except (ValueError, TypeError) as exc:
            bad += 1
            result = {"line": number, "error": str(exc)}
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    return EXIT_USAGE if bad else EXIT_OK


def cmd_fingerprint(ctx: CliContext) -> int:
    if ctx.args.jsonl:
        return _batch(ctx)
    message = sys.stdin.read() if ctx.args.message == "-" else ctx.args.message
    args = ctx.args
    if args.local:
        from slmactor.harnesses import tool_family
        from slmactor.logic.failures.fingerprint import analyze

        result = analyze(args.tool, message, args.language, args.model,
                         family=tool_family(args.tool)).to_dict()
    else:
        from slmactor.client import DaemonUnavailable, RequestFailed
        from slmactor.protocol.messages import EvolveFingerprint

        try:
            with ctx.client() as client:
                result = client.ask(EvolveFingerprint(tool=args.tool, message=message,
                                                      language=args.language, model=args.model))
        except DaemonUnavailable as exc:
            return ctx.fail(str(exc), EXIT_UNREACHABLE)
        except RequestFailed as exc:
            return ctx.fail(f"evolve fingerprint: {exc}", exit_code_for(exc))
    ctx.emit(result, render_fingerprint(result))
    return EXIT_OK


def render_rules(result: dict[str, Any], show_all: bool) -> str:
    rules = result.get("rules", [])
    if not rules:
        return ("no repair rules used or learned yet "
                f"({result.get('total', 0)} known; --all lists the shipped ones)")
    lines = []
    for rule in rules:
        trig = rule.get("trigger", {})
        when = "/".join(trig.get(k) or "*" for k in ("class", "tool", "language", "model_family"))
        if trig.get("message_contains"):
            when += " ∋ " + ", ".join(repr(c) for c in trig["message_contains"])
        repair = rule.get("repair", {})
        what = {"transform_args": f"transform {repair.get('transform')}",
                "action": f"action {repair.get('action')}",
                "edit_format": f"edit format {repair.get('edit_format')}",
                "switch_tool": f"switch tool {repair.get('tool')}",
                "config": f"set {repair.get('config_key')}={repair.get('config_value')}",
                "shell": f"run {repair.get('command')}"}.get(repair.get("kind", ""), "guidance")
        n = rule.get("successes", 0) + rule.get("failures", 0)
        flags = " retired" if rule.get("retired") else ""
        if rule.get("verified") is False:
            flags += " unverified repository content (review: slmactor trust)"
        lines.append(f"{rule['id']}  {rule.get('scope', ''):<7} {100 * rule.get('confidence', 0):3.0f}% "
                     f"{rule.get('successes', 0)}✓ {rule.get('failures', 0)}✗ (n={n})  "
                     f"{when} → {what}{flags}")
    hidden = result.get("total", len(rules)) - len(rules)
    if hidden and not show_all:
        lines.append(f"({hidden} unused shipped or retired rule(s) not shown; --all lists them)")
    return "\n".join(lines)


def cmd_rules(ctx: CliContext) -> int:
    from slmactor.client import DaemonUnavailable, RequestFailed
    from slmactor.protocol.messages import EvolveRules

    try:
        with ctx.client() as client:
            result = client.ask(EvolveRules(include_all=ctx.args.all))
    except DaemonUnavailable as exc:
        return ctx.fail(str(exc), EXIT_UNREACHABLE)
    except RequestFailed as exc:
        return ctx.fail(f"evolve rules: {exc}", exit_code_for(exc))
    ctx.emit(result, render_rules(result, ctx.args.all))
    return EXIT_OK
