"""Backfill edge derivation (SPEC S-21.9) as a pure function over plain records."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.graph.backfill import backfill_edges, record_node, resolving_rule
from slmactor.logic.graph.core import GraphIndex, make_edge
from slmactor.logic.graph.query import known_about_file


def _episode(eid: str, at: str, run: str = "run-1", files: list[str] | None = None,
             failures: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": eid, "at": at, "run_id": run, "files_changed": files or [],
            "failures": failures or []}


EPISODES = [
    _episode("ep_new", "2026-01-02T00:00:00Z", "run-2", ["pkg/a.go", "./pkg/b.go", "."], [
        {"fingerprint": "fp_1", "class": "compile_error", "resolved_by": "rule:rule_aa",
         "resolution": "add the import"},
        {"fingerprint": "fp_2", "class": "edit_not_found", "resolved_by": "llm"},
    ]),
    _episode("ep_old", "2026-01-01T00:00:00Z", "run-1", ["pkg/a.go"], [
        {"fingerprint": "fp_1", "class": "compile_error", "resolved_by": "rule_aa",
         "resolution": "older words"},
        {"fingerprint": "", "class": "unknown", "resolved_by": "rule:rule_zz"},
    ]),
]
FACTS = [
    {"id": "f_cmd", "kind": "command", "sources": ["ep_old", "run-2", "episode:ep_x", "junk",
                                                   "task:run-1/T1"],
     "last_seen": "2026-01-03T00:00:00Z"},
    {"id": "f_none", "kind": "layout", "sources": []},
]
RULES = [
    {"id": "rule_aa", "evidence": ["run-1", "nothing-known"], "scope": "project",
     "created_at": "2026-01-01T00:00:00Z", "last_used": "2026-01-02T00:00:00Z"},
    {"id": "rule_seed", "evidence": ["run-1"], "seeded": True},
    {"id": "rule_user", "evidence": ["run-1"], "scope": "user"},
]


def _triples(edges: list[Any]) -> set[tuple[str, str, str]]:
    return {(e.source, e.type, e.target) for e in edges}


def test_backfill_emits_the_five_edge_types() -> None:
    edges = backfill_edges(EPISODES, FACTS, RULES)
    assert _triples(edges) == {
        ("run:run-2", "parent_of", "episode:ep_new"),
        ("run:run-1", "parent_of", "episode:ep_old"),
        ("episode:ep_new", "touched", "file:pkg/a.go"),
        ("episode:ep_new", "touched", "file:pkg/b.go"),
        ("episode:ep_old", "touched", "file:pkg/a.go"),
        ("episode:ep_new", "produced", "failure:fp_1"),
        ("episode:ep_new", "produced", "failure:fp_2"),
        ("episode:ep_old", "produced", "failure:fp_1"),
        ("failure:fp_1", "resolved_by", "rule:rule_aa"),
        ("fact:f_cmd", "derived_from", "episode:ep_old"),
        ("fact:f_cmd", "derived_from", "run:run-2"),
        ("fact:f_cmd", "derived_from", "episode:ep_x"),
        ("fact:f_cmd", "derived_from", "task:run-1/T1"),
        ("rule:rule_aa", "derived_from", "run:run-1"),
    }


def test_backfill_notes_times_and_merged_duplicates() -> None:
    edges = {(e.source, e.type, e.target): e for e in backfill_edges(EPISODES, FACTS, RULES)}
    produced = edges[("episode:ep_new", "produced", "failure:fp_1")]
    assert produced.note == "compile_error" and produced.run_id == "run-2"
    # The same failure fixed by the same rule in two episodes is one edge, newest wins.
    resolved = edges[("failure:fp_1", "resolved_by", "rule:rule_aa")]
    assert resolved.note == "add the import" and resolved.run_id == "run-2"
    assert resolved.at == produced.at
    fact = edges[("fact:f_cmd", "derived_from", "episode:ep_old")]
    assert fact.note == "command" and fact.at > produced.at
    assert edges[("rule:rule_aa", "derived_from", "run:run-1")].at == produced.at  # last_used


def test_backfill_is_sorted_oldest_first_then_from_to_type() -> None:
    edges = backfill_edges(EPISODES, FACTS, RULES)
    keys = [(e.at, e.source, e.target, e.type) for e in edges]
    assert keys == sorted(keys)
    assert len({e.id for e in edges}) == len(edges)
    # Input order does not matter.
    assert backfill_edges(list(reversed(EPISODES)), FACTS[::-1], RULES[::-1]) == edges


def test_backfill_drops_what_it_cannot_resolve() -> None:
    assert backfill_edges([{"id": "", "files_changed": ["a.py"]}, "junk", 3]) == []
    assert backfill_edges([], [{"id": "f", "kind": "k", "sources": ["unknown-thing"]}]) == []
    assert backfill_edges([], [], [{"id": "", "evidence": ["run-1"]}]) == []


def test_record_node() -> None:
    episodes, runs = {"e1"}, {"r1", "e1-run"}
    assert record_node("episode:ep_9", episodes, runs) == "episode:ep_9"
    assert record_node("attempt:r/t/1", episodes, runs) == "attempt:r/t/1"
    assert record_node("e1", episodes, runs) == "episode:e1"
    assert record_node("r1", episodes, runs) == "run:r1"
    assert record_node("ep_abc", set(), set()) == "episode:ep_abc"
    assert record_node("run-7", set(), set()) == "run:run-7"
    assert record_node("rule:rule_1", episodes, runs) == ""  # not a record kind
    assert record_node("  ", episodes, runs) == ""


def test_resolving_rule() -> None:
    assert resolving_rule("rule:rule_1") == "rule_1"
    assert resolving_rule("RULE: r9 ") == "r9"
    assert resolving_rule("rule_abc") == "rule_abc"
    assert resolving_rule("llm") == resolving_rule("retry") == resolving_rule("rule:") == ""


def test_backfilled_graph_answers_the_file_question() -> None:
    index = GraphIndex()
    for n, edge in enumerate(backfill_edges(EPISODES, FACTS, RULES)):
        index.add(edge, n)
    known = known_about_file(index, "pkg/a.go")
    assert known.classes == {"compile_error": 2, "edit_not_found": 1}
    assert known.fixed_by == {"fp_1": ["rule_aa"]}


_episode_st = st.builds(
    _episode,
    st.sampled_from(["ep_1", "ep_2", "ep_3", "e4"]),
    st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "", "garbage"]),
    st.sampled_from(["run-1", "r2", ""]),
    st.lists(st.sampled_from(["a.py", "./a.py", "b/c.py", ".", "/abs.py"]), max_size=3),
    st.lists(st.fixed_dictionaries({
        "fingerprint": st.sampled_from(["fp_1", "fp_2", ""]),
        "class": st.sampled_from(["compile_error", ""]),
        "resolved_by": st.sampled_from(["rule:rule_1", "rule_2", "llm", ""]),
        "resolution": st.sampled_from(["x", ""]),
    }), max_size=3),
)


@settings(derandomize=True, max_examples=120)
@given(st.lists(_episode_st, max_size=6))
def test_backfill_is_idempotent_through_an_index(episodes: list[dict[str, Any]]) -> None:
    edges = backfill_edges(episodes)
    index = GraphIndex()
    results = [index.add(e, n) for n, e in enumerate(edges)]
    assert set(results) <= {"added"}
    assert [index.add(e, 0) for e in backfill_edges(episodes)] == ["unchanged"] * len(edges)
    assert all(make_edge(e.source, e.target, e.type, e.at, run_id=e.run_id, note=e.note) == e
               for e in edges)
