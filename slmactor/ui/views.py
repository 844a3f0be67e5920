"""What the page shows, read through the daemon's asks (the page is no second reader of the stores
and never a writer: every action is an ask the CLI sends too).

One function per part of the page, each taking a connected `Client` and returning plain data:

    told        what a model would be told now (`memory.lines`): each line with its evidence and
                verdict, and the lines retired
    rules       the repair rules with their outcomes and where they came from (`evolve.rules`)
    failures    the failures that repeat most, and what fixed them (episodes' failure notes)
    sessions    sessions (episodes), the newest or those a search recalls (`memory.recall`)
    pending     repository content awaiting `trust` (`evolve.trust`, `fact.trust`,
                `regressions.trust`, listing only)
    runs        the replay/run figures over time (`metrics.show`)
    projects    the projects this daemon has open (`memory.projects`)

A claim record of memory that checks itself (text, evidence ids, verdict) is a line of `told`
with its verdict filled: the page renders whatever verdict the ask carries.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

#: Sessions listed without a search, and episodes read for the failure table.
SESSIONS_SHOWN = 50
FAILURE_EPISODES = 200
#: Failure kinds listed, most repeated first.
FAILURES_SHOWN = 15


@dataclass(slots=True)
class FailureRow:
    """One kind of failure (its fingerprint when it has one) across the remembered sessions."""

    key: str
    cls: str
    tool: str
    example: str
    times: int = 0
    sessions: int = 0
    unresolved: int = 0
    fixes: Counter[str] = field(default_factory=Counter)
    rules: list[str] = field(default_factory=list)


def told(client: Any, task: str = "") -> dict[str, Any]:
    from slmactor.protocol.messages import MemoryLines

    reply: dict[str, Any] = client.ask(MemoryLines(query=task))
    return reply


def rules(client: Any) -> list[dict[str, Any]]:
    from slmactor.protocol.messages import EvolveRules

    listed: list[dict[str, Any]] = client.ask(EvolveRules())["rules"]
    return sorted(listed, key=lambda r: (-(int(r.get("successes", 0)) + int(r.get("failures", 0))),
                                         str(r.get("id", ""))))


def origin_of(rule: dict[str, Any]) -> str:
    """Where a rule came from, in words."""
    if rule.get("verified") is False:
        return "this repository's store (unverified)"
    if rule.get("seeded"):
        return "shipped with slmactor"
    if rule.get("origin"):
        return f"carried over from {rule['origin']}"
    evidence = [str(e) for e in rule.get("evidence") or []]
    runs = ", ".join(evidence[-3:])
    return f"learned here{' from ' + runs if runs else ''}"


def _episodes(client: Any, n: int) -> list[dict[str, Any]]:
    from slmactor.client import RequestFailed
    from slmactor.protocol.messages import EpisodeGet, EpisodeRecent

    out = []
    for episode_id in client.ask(EpisodeRecent(n=n, ids_only=True))["ids"]:
        try:
            episode = client.ask(EpisodeGet(episode_id=episode_id))
        except RequestFailed:
            continue  # pruned between the listing and the read
        if isinstance(episode, dict):
            out.append(episode)
    return out


def failures(client: Any, rule_list: list[dict[str, Any]]) -> list[FailureRow]:
    """The failures that repeat most across remembered sessions, with what fixed them (the
    resolutions the sessions recorded, and the rules bound to the same fingerprint)."""
    rows: dict[str, FailureRow] = {}
    for episode in _episodes(client, FAILURE_EPISODES):
        seen: set[str] = set()
        for note in episode.get("failures") or []:
            if not isinstance(note, dict):
                continue
            cls = str(note.get("class") or "unknown")
            key = str(note.get("fingerprint") or f"{cls}/{note.get('tool', '')}")
            row = rows.get(key)
            if row is None:
                example = str(note.get("said") or note.get("salient") or note.get("message") or "")
                row = rows[key] = FailureRow(key, cls, str(note.get("tool", "")),
                                             example.splitlines()[0][:200] if example else "")
            row.times += 1
            if key not in seen:
                row.sessions += 1
                seen.add(key)
            fix = str(note.get("resolution") or "").strip() or fixed_by(note.get("resolved_by"))
            if fix:
                row.fixes[fix[:200]] += 1
            else:
                row.unresolved += 1
    by_fingerprint: dict[str, list[str]] = {}
    for rule in rule_list:
        if rule.get("fingerprint"):
            by_fingerprint.setdefault(str(rule["fingerprint"]), []).append(str(rule["id"]))
    for row in rows.values():
        row.rules = by_fingerprint.get(row.key, [])
    ordered = sorted(rows.values(), key=lambda r: (-r.times, -r.sessions, r.key))
    return ordered[:FAILURES_SHOWN]


def fixed_by(resolver: Any) -> str:
    """Who fixed a failure, in words ("" when nobody did)."""
    by = str(resolver or "").strip()
    if not by:
        return ""
    if by.startswith("rule:"):
        return f"repaired from memory by {by[5:]}"
    return {"llm": "the model's next call", "human": "a person", "retry": "running it again",
            "lesson": "a remembered lesson"}.get(by.lower(), by)


def sessions(client: Any, search: str = "") -> list[dict[str, Any]]:
    """The newest sessions, or with `search` those recall finds for it (best first)."""
    from slmactor.protocol.messages import EpisodeRecent, MemoryRecall

    if search.strip():
        reply = client.ask(MemoryRecall(query=search, n=SESSIONS_SHOWN))
        return [{**h["episode"], "score": h.get("score")} for h in reply.get("hits", [])
                if isinstance(h, dict) and isinstance(h.get("episode"), dict)]
    listed: list[dict[str, Any]] = client.ask(EpisodeRecent(n=SESSIONS_SHOWN))["episodes"]
    return listed


def pending(client: Any) -> dict[str, list[dict[str, Any]]]:
    """Repository content awaiting `trust`, by kind (what `slmactor trust --list` lists)."""
    from slmactor.cli.trust import _messages

    out: dict[str, list[dict[str, Any]]] = {}
    for key, message in _messages([], False, False):
        reply = client.ask(message)
        out[key] = list(reply.get("unverified") or [])
        if key == "facts":
            for sub in ("lessons", "memory_md"):
                out[sub] = list((reply.get(sub) or {}).get("unverified") or [])
    return out


def runs(client: Any) -> list[Any]:
    from slmactor.logic.loop.metrics import Run
    from slmactor.protocol.messages import MetricsShow

    return [Run.from_dict(r) for r in client.ask(MetricsShow(last=0))["runs"]]


def projects(client: Any) -> list[str]:
    from slmactor.protocol.messages import MemoryProjects

    listed: list[str] = client.ask(MemoryProjects())["projects"]
    return listed


def overview(client: Any) -> dict[str, Any]:
    """One project's figures for the page across projects: lines told, rules, sessions,
    repository records awaiting trust, and the newest run."""
    from slmactor.protocol.messages import EpisodeRecent

    told_now = told(client)
    waiting = pending(client)
    measured = runs(client)
    return {"lines": len(told_now.get("lines") or []), "retired": len(told_now.get("retired") or []),
            "rules": len(rules(client)),
            "sessions": client.ask(EpisodeRecent(n=1, ids_only=True))["total"],
            "pending": sum(len(v) for v in waiting.values()),
            "runs": len(measured),
            "last_run": max((r.at for r in measured), default=0.0)}
