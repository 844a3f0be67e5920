"""`slmactor trust [--list | --all | ID …]`: review and adopt what a repository brought.

A project store can arrive with the repository (a committed `.slmcode/`): episodes, repair
rules, environment facts, facts, do/don't lessons, `MEMORY.md` lines and regression checks nobody
on this machine learned. The daemon never applies them, labels
them "unverified repository content" wherever a model sees them and withholds their commands.
This command is how the user takes them as their own:

* `slmactor trust` / `--list` shows every unverified record whole — commands included, so the
  user can read what they would adopt — grouped by kind, with its id;
* `slmactor trust ID …` adopts the named records (an episode, rule, environment fact, fact,
  lesson or check id);
* `slmactor trust --all` adopts every one.

Adopting signs the records with the user's key; from then on they are used like learned ones.
"""

from __future__ import annotations

import argparse
from typing import Any

from slmactor.cli.context import EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE, CliContext, exit_code_for

#: (label, reply key of the listed records) per trust message, in the order shown.
SECTIONS = (("episodes", "episodes"), ("rules", "repair rules"), ("environment", "environment facts"),
            ("facts", "facts"), ("lessons", "do/don't lessons"), ("memory_md", "MEMORY.md lines"),
            ("regressions", "regression checks"))


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "trust", help="review and adopt memory a repository brought (unverified content)",
        description=__doc__.split("\n\n")[1] if __doc__ else None)
    parser.add_argument("ids", nargs="*", metavar="ID", help="adopt these records")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--list", action="store_true", help="only list (the default without IDs)")
    how.add_argument("--all", action="store_true", help="adopt every unverified record")
    parser.set_defaults(func=cmd_trust)


def _messages(ids: list[str], every: bool, adopt: bool) -> list[tuple[str, Any]]:
    from slmactor.protocol.messages import (
        EpisodeTrust,
        EvolveTrust,
        FactTrust,
        RegressionsTrust,
    )

    fields: dict[str, Any] = {"ids": ids, "every": every, "adopt": adopt}
    return [("episodes", EpisodeTrust(**fields)), ("rules", EvolveTrust(**fields)), ("facts", FactTrust(**fields)),
            ("regressions", RegressionsTrust(**fields))]


def _describe(kind: str, record: dict[str, Any]) -> str:
    if kind == "rules":
        trig = record.get("trigger") or {}
        repair = record.get("repair") or {}
        what = repair.get("command") or repair.get("transform") or repair.get("action") or ""
        when = "/".join(str(trig.get(k) or "*") for k in ("class", "tool", "language"))
        return (f"{when} → {repair.get('kind', '')} {what}".rstrip()
                + f"; guidance: {repair.get('guidance', '')}")
    if kind == "environment":  # what it would run before or instead of the failing command
        fix = record.get("fix") or {}
        was = f" instead of {fix['was']}" if fix.get("was") else ""
        return (f"{record.get('topic', '')} ({record.get('class', '')}): {fix.get('kind', '')} "
                f"{fix.get('words', '')}{was}").rstrip()
    if kind == "episodes":
        ok = "✓" if record.get("success") else "✗"
        return f"{ok} {record.get('query', '')} — {record.get('summary', '')}".rstrip(" —")
    if kind == "facts":
        return f"[{record.get('kind', '')}] {record.get('subject', '')}: {record.get('text', '')}"
    if kind == "memory_md":
        return str(record.get("text", ""))
    if kind == "lessons":
        return (f"[{record.get('polarity', '')}] when {record.get('trigger', '')}: "
                f"{record.get('fix', '')}")
    what = record.get("command") or f"{record.get('path', '')} ∋ {record.get('substring', '')}"
    return f"[{record.get('kind', '')}] {what}"


def render(result: dict[str, Any], adopting: bool) -> str:
    lines: list[str] = []
    for key, label in SECTIONS:
        part = result.get(key) or {}
        adopted = part.get("adopted") or []
        if adopted:
            lines.append(f"adopted {len(adopted)} {label}: {', '.join(map(str, adopted))}")
        pending = part.get("unverified") or []
        if pending:
            lines.append(f"unverified {label} ({len(pending)}):")
            lines.extend(f"  {r.get('id', '')}  {_describe(key, r)}" for r in pending)
    if not lines:
        return "nothing to adopt: every record in this project's store is your own"
    if not adopting and any((result.get(k) or {}).get("unverified") for k, _ in SECTIONS):
        lines.append("adopt with `slmactor trust ID …` or `slmactor trust --all`")
    return "\n".join(lines)


def cmd_trust(ctx: CliContext) -> int:
    from slmactor.client import DaemonUnavailable, RequestFailed

    args: argparse.Namespace = ctx.args
    if args.list and args.ids:
        return ctx.fail("trust: --list takes no IDs", EXIT_USAGE)
    adopt = bool(args.all or args.ids)
    result: dict[str, Any] = {}
    try:
        with ctx.client() as client:
            for key, message in _messages(list(args.ids), bool(args.all), adopt):
                result[key] = client.ask(message)
        for key in ("lessons", "memory_md"):  # answered with the facts
            result[key] = result["facts"].pop(key, {})
        result["environment"] = result["rules"].pop("environment", {})  # with the rules
    except DaemonUnavailable as exc:
        return ctx.fail(str(exc), EXIT_UNREACHABLE)
    except RequestFailed as exc:
        return ctx.fail(f"trust: {exc}", exit_code_for(exc))
    if args.ids:
        found = {str(i) for part in result.values() for i in (part.get("adopted") or [])}
        missing = [i for i in args.ids if i not in found]
        result["not_found"] = missing
        if missing:
            ctx.emit(result, render(result, adopt) + f"\nnot unverified here: {', '.join(missing)}")
            return EXIT_USAGE
    ctx.emit(result, render(result, adopt))
    return EXIT_OK
