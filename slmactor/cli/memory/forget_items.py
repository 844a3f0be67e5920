"""`memory forget --session ID | --rule ID | --line ID | --query TEXT`: forget what a user names.

Each form is one daemon ask, the same the `slmactor ui` page sends: a session's episodes go
(`episode.drop`), a rule is retired (`evolve.retire`: never applied or advised again), a block line
is retired (`memory.retire`: no block of the project says it again; `memory show --lines` lists
the ids). `--query TEXT` finds first, then forgets: the sessions recall returns for TEXT and the
lines of the block for TEXT that mention it — listed before anything goes, and asked like every
destructive command (`--yes` to skip; required with `--json` or without a terminal).
"""

from __future__ import annotations

import sys
from typing import Any

from slmactor.cli.context import EXIT_FAILED, EXIT_OK, CliContext

#: Sessions `--query` looks at, at most.
QUERY_SESSIONS = 20


def named_items(args: Any) -> bool:
    return bool(args.session or args.rule or args.line or args.query.strip())


def _confirmed(what: str) -> bool:
    if not sys.stdin.isatty():
        return False
    answer = input(f"forget {what}? This cannot be undone. [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def matches(client: Any, text: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(sessions, lines) a task text finds: recall's episodes for it, and the lines of its block
    that mention it (every word of it, in any case)."""
    from slmactor.protocol.messages import MemoryLines, MemoryRecall

    reply = client.ask(MemoryRecall(query=text, n=QUERY_SESSIONS))
    sessions = [h["episode"] for h in reply.get("hits", [])
                if isinstance(h, dict) and isinstance(h.get("episode"), dict)]
    words = text.lower().split()
    lines = [line for line in client.ask(MemoryLines(query=text))["lines"]
             if all(w in line["text"].lower() for w in words)]
    return sessions, lines


def forget_items(client: Any, *, sessions: list[str], rules: list[str],
                 lines: list[str]) -> dict[str, Any]:
    """Forget what is named; each part's reply, keyed by part."""
    from slmactor.protocol.messages import EpisodeDrop, EvolveRetire, MemoryRetire

    out: dict[str, Any] = {}
    if sessions:
        out["sessions"] = client.ask(EpisodeDrop(ids=sessions))
    if rules:
        out["rules"] = client.ask(EvolveRetire(ids=rules))
    if lines:
        out["lines"] = client.ask(MemoryRetire(ids=lines))
    return out


def render(out: dict[str, Any]) -> str:
    parts = []
    if "sessions" in out:
        dropped = out["sessions"]["dropped"]
        parts.append(f"sessions forgotten: {len(dropped)}" + (f" ({', '.join(dropped)})" if dropped else ""))
    if "rules" in out:
        parts.append(f"rules retired: {len(out['rules']['retired'])}"
                     + (f"; unknown: {', '.join(out['rules']['unknown'])}" if out["rules"]["unknown"] else ""))
    if "lines" in out:
        parts.append(f"lines retired: {len(out['lines']['retired'])}"
                     + (f" (already retired: {len(out['lines']['unchanged'])})"
                        if out["lines"]["unchanged"] else ""))
    return "\n".join(parts) or "nothing to forget"


def cmd_forget_items(ctx: CliContext) -> int:
    args = ctx.args
    if not args.yes and ctx.json:
        return ctx.fail("memory forget: --json requires --yes")

    def run() -> int:
        with ctx.client() as client:
            sessions, rules, lines = list(args.session), list(args.rule), list(args.line)
            found: dict[str, Any] = {}
            if args.query.strip():
                matched_sessions, matched_lines = matches(client, args.query.strip())
                sessions += [str(s.get("id", "")) for s in matched_sessions]
                lines += [line["id"] for line in matched_lines]
                found = {"sessions": [{"id": s.get("id"), "query": s.get("query")}
                                      for s in matched_sessions],
                         "lines": [{"id": ln["id"], "text": ln["text"]} for ln in matched_lines]}
                if not ctx.json:
                    for s in matched_sessions:
                        print(f"  session {s.get('id')}: {s.get('query', '')}")
                    for ln in matched_lines:
                        print(f"  line {ln['id']}: {ln['text']}")
            what = ", ".join(f"{len(v)} {k}" for k, v in
                             (("session(s)", sessions), ("rule(s)", rules), ("line(s)", lines)) if v)
            if not what:
                ctx.emit({"ok": True, "found": found}, "nothing matches: nothing forgotten")
                return EXIT_OK
            if not args.yes and not _confirmed(what):
                return ctx.fail(f"memory forget {what}: not confirmed (pass --yes)")
            out = forget_items(client, sessions=sessions, rules=rules, lines=lines)
        ok = not (out.get("rules", {}).get("unknown"))
        ctx.emit({"ok": ok, "found": found, **out}, render(out))
        return EXIT_OK if ok else EXIT_FAILED

    return ctx.call(run)
