"""Backfill (S-21.9): the edges implied by the other stores' records, as a pure function.

`backfill_edges(episodes, facts, rules)` takes plain records (what `episode.get`, `fact.list` and
`evolve.rules` answer) and returns every edge they imply:

* run → episode `parent_of`; episode → file `touched` (canonical repo-relative paths);
* episode → failure `produced` (failure = fingerprint id, note = failure class);
* failure → rule `resolved_by` only when the failure was resolved by `rule:<id>` or a bare
  `rule_…` id (note = the resolution text) — an LLM, a human or a retry is no node;
* fact → episode/run `derived_from` for each source (note = the fact kind);
* rule → evidence `derived_from` for each evidence entry, for project rules only (seeded,
  builtin and user-scope rules are not the project's records).

`record_node` resolves a source string: an id that already is an episode/run/task/attempt node is
kept; a known episode or run id gets its prefix; otherwise `ep_…` means an episode and `run-…` a
run; anything else is dropped rather than invented. Each edge's `at` is its record's time
(episode `at`, fact `last_seen`, rule `last_used` or `created_at`), so the output is a function of
the records only. Duplicate ids (the same failure fixed by the same rule in two episodes) are merged
as a re-observation would be (`at` = newest, run id and note of the newest), and the result is
sorted oldest first, then from, to, type — so a second backfill adds nothing and leaves the log
byte-identical.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from slmactor.logic.graph.core import (
    MAX_EPOCH,
    NOTE_CAP,
    Edge,
    canonical_node,
    file_node,
    node_id,
    node_kind,
    refresh,
    validate_edge,
)
from slmactor.logic.recall.episode import Episode
from slmactor.logic.text.strings import clip
from slmactor.logic.text.timefmt import parse_rfc3339

RECORD_KINDS = ("episode", "run", "task", "attempt")


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value.strip() if isinstance(value, str) else ""


def _strings(data: Mapping[str, Any], key: str) -> list[str]:
    value = data.get(key)
    if not isinstance(value, list | tuple):
        return []
    return [v.strip() for v in value if isinstance(v, str) and v.strip()]


def _time(data: Mapping[str, Any], *keys: str) -> float:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and (parsed := parse_rfc3339(value)):
            return parsed
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return float(value)
    return 0.0


def record_node(src: str, episode_ids: set[str], run_ids: set[str]) -> str:
    """The node a fact source or rule evidence names, or "" when it names no known record."""
    src = src.strip()
    if not src:
        return ""
    if node_kind(src) in RECORD_KINDS:
        return canonical_node(src)
    if src in episode_ids:
        return node_id("episode", src)
    if src in run_ids:
        return node_id("run", src)
    if src.startswith("ep_"):
        return node_id("episode", src)
    if src.startswith("run-"):
        return node_id("run", src)
    return ""


def resolving_rule(resolved_by: str) -> str:
    """The rule id a failure's `resolved_by` names (`rule:<id>` or a bare `rule_…`), else ""."""
    by = resolved_by.strip()
    if by.lower().startswith("rule:"):
        return by[5:].strip()
    return by if by.startswith("rule_") else ""


def _edge(source: str, target: str, edge_type: str, at: float, run_id: str = "",
          note: str = "") -> Edge:
    """`make_edge` for ends that are already canonical node ids (built by `node_id`)."""
    return Edge(source, target, edge_type, float(int(at)) if 0 < at <= MAX_EPOCH else 0.0,
                clip(run_id, 160) if run_id else "", 0.0, clip(note, NOTE_CAP) if note else "")


def episode_edges(episode: Episode) -> list[Edge]:
    """parent_of, touched, produced and resolved_by edges of one episode."""
    if not episode.id:
        return []
    ep = node_id("episode", episode.id)
    at, run = episode.at, episode.run_id.strip()
    out: list[Edge] = []
    if run:
        out.append(_edge(node_id("run", run), ep, "parent_of", at, run_id=run))
    out.extend(_edge(ep, file_node(f), "touched", at, run_id=run)
               for f in episode.files_changed)
    for failure in episode.failures:
        fp = node_id("failure", failure.fingerprint)
        if not fp:
            continue
        out.append(_edge(ep, fp, "produced", at, run_id=run, note=failure.failure_class))
        rule = resolving_rule(failure.resolved_by)
        if rule:
            out.append(_edge(fp, node_id("rule", rule), "resolved_by", at, run_id=run,
                                 note=failure.resolution))
    return out


def backfill_edges(
    episodes: Iterable[Any],
    facts: Iterable[Any] = (),
    rules: Iterable[Any] = (),
) -> list[Edge]:
    """Every valid edge the records imply, merged by id, oldest first then from, to, type."""
    parsed = [Episode.from_dict(e) for e in episodes if isinstance(e, Mapping)]
    episode_ids = {e.id for e in parsed if e.id}
    run_ids = {e.run_id.strip() for e in parsed if e.run_id.strip()}
    edges: list[Edge] = []
    for episode in parsed:
        edges.extend(episode_edges(episode))
    for fact in facts:
        if not isinstance(fact, Mapping):
            continue
        node = node_id("fact", _text(fact, "id"))
        at = _time(fact, "last_seen", "first_seen")
        kind = _text(fact, "kind")
        edges.extend(_edge(node, record_node(src, episode_ids, run_ids), "derived_from", at,
                           note=kind) for src in _strings(fact, "sources"))
    for rule in rules:
        if not isinstance(rule, Mapping) or rule.get("seeded") is True:
            continue
        if (_text(rule, "scope") or "project") != "project":
            continue
        node = node_id("rule", _text(rule, "id"))
        at = _time(rule, "last_used", "created_at")
        edges.extend(_edge(node, record_node(src, episode_ids, run_ids), "derived_from", at)
                     for src in _strings(rule, "evidence"))
    return merge_edges(e for e in edges if not validate_edge(e))


def merge_edges(edges: Iterable[Edge]) -> list[Edge]:
    """One edge per id (re-observations folded in, newest wins), oldest first."""
    merged: dict[str, Edge] = {}
    for edge in sorted(edges, key=lambda e: (e.at, e.source, e.target, e.type)):
        known = merged.get(edge.id)
        merged[edge.id] = edge if known is None else refresh(known, edge)
    return sorted(merged.values(), key=lambda e: (e.at, e.source, e.target, e.type))
