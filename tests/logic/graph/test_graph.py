"""The knowledge graph's pure core: node ids, edges, the index, queries, walks and the file chain
(SPEC S-21.1–S-21.8), with the spec's worked rules."""

from __future__ import annotations

import hashlib
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.graph.core import (
    DEPTH_CLAMP_WARNING,
    MAX_NODE_BYTES,
    VOCABULARY,
    Edge,
    GraphIndex,
    attempt_node,
    canonical_file,
    canonical_node,
    edge_id,
    file_node,
    make_edge,
    node_id,
    node_kind,
    node_value,
    parse_node_arg,
    refresh,
    symbol_node,
    task_node,
    validate_edge,
)
from slmactor.logic.graph.query import (
    WalkOptions,
    failure_classes_for_files,
    known_about_file,
    resolve_walk,
    walk,
)

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


# ---------------------------------------------------------------- S-21.1 node ids
@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("pkg/loop/runner.go", "pkg/loop/runner.go"),
        ("./pkg/loop/runner.go", "pkg/loop/runner.go"),
        ("pkg\\loop\\runner.go", "pkg/loop/runner.go"),
        ("pkg//loop/./x/../runner.go", "pkg/loop/runner.go"),
        ("/abs/path.go", "/abs/path.go"),
        ("//abs/path.go", "/abs/path.go"),
        ("../outside.go", "../outside.go"),
        (".", ""),
        ("./", ""),
        ("a/..", ""),
        ("", ""),
    ],
)
def test_file_paths_are_canonicalised(raw: str, canonical: str) -> None:
    assert canonical_file(raw) == canonical
    assert file_node(raw) == (f"file:{canonical}" if canonical else "")


def test_absolute_and_relative_paths_are_different_nodes() -> None:
    assert file_node("/repo/a.py") != file_node("a.py")


def test_node_ids_are_capped_at_512_bytes() -> None:
    value = "x" * (MAX_NODE_BYTES - len("rule:"))
    assert node_id("rule", value) == f"rule:{value}"
    assert node_id("rule", value + "y") == ""
    assert len(node_id("rule", "é" * 253).encode()) == 511
    assert node_id("rule", "é" * 254) == ""


def test_node_kind_is_the_text_before_the_first_colon() -> None:
    assert node_kind("file:a.py") == "file"
    assert node_kind("symbol:a.py#f:g") == "symbol"
    assert node_kind(":nothing") == "other"
    assert node_kind("plain") == "other"
    assert node_value("failure:fp_1") == "fp_1"
    assert node_value("plain") == "plain"


def test_compound_node_ids() -> None:
    assert symbol_node("./pkg/a.go", "Run") == "symbol:pkg/a.go#Run"
    assert task_node("run-1", "T7") == "task:run-1/T7"
    assert attempt_node("run-1", "T7", 2) == "attempt:run-1/T7/2"
    assert task_node("", "T7") == "" and symbol_node(".", "f") == ""


def test_canonical_node_lowercases_the_kind_and_cleans_files() -> None:
    assert canonical_node(" FILE:./a/b.py ") == "file:a/b.py"
    assert canonical_node("file:.") == ""
    assert canonical_node("whatever") == "whatever"


# ---------------------------------------------------------------- S-21.2 edges
def test_edge_id_is_sha256_of_from_to_type() -> None:
    digest = hashlib.sha256(b"episode:ep_1\x00file:a.py\x00touched").hexdigest()[:12]
    assert edge_id("episode:ep_1", "file:a.py", "touched") == "e_" + digest
    assert make_edge("episode:ep_1", "file:a.py", "touched").id == "e_" + digest


def test_make_edge_normalises() -> None:
    edge = make_edge("episode:ep_1", "file:./a.py", " TOUCHED ", T0 + 0.75, confidence=3.0,
                     note="n" * 400)
    assert edge.type == "touched" and edge.target == "file:a.py"
    assert edge.at == T0 and edge.confidence == 1.0
    assert len(edge.note.encode()) == 240
    assert make_edge("a:x", "b:y", "t", confidence=float("nan")).confidence == 0.0
    assert make_edge("a:x", "b:y", "t", at=-5).at == 0.0


@pytest.mark.parametrize(
    ("edge", "problem"),
    [
        (make_edge("", "file:a", "touched"), "from"),
        (make_edge("episode:e", "", "touched"), "to"),
        (make_edge("episode:e", "file:.", "touched"), "to"),
        (make_edge("episode:e", "file:a", "  "), "type"),
        (make_edge("episode:e", "episode:e", "parent_of"), "self-edge"),
        (make_edge("episode:e", "rule:" + "x" * 600, "resolved_by"), "to"),
    ],
)
def test_invalid_edges(edge: Edge, problem: str) -> None:
    assert problem in validate_edge(edge)


def test_any_non_empty_type_is_accepted() -> None:
    assert not validate_edge(make_edge("a:1", "b:2", "my_own_type"))
    assert VOCABULARY[:4] == ("derived_from", "resolved_by", "touched", "produced")


def test_edge_json_round_trip_and_omitted_defaults() -> None:
    edge = make_edge("episode:ep_1", "failure:fp_1", "produced", T0, run_id="r1", note="compile")
    data = edge.to_dict()
    assert data == {"from": "episode:ep_1", "to": "failure:fp_1", "type": "produced",
                    "at": "2026-01-01T00:00:00Z", "run_id": "r1", "note": "compile"}
    assert Edge.from_dict(data) == edge
    assert "confidence" not in data
    assert Edge.from_dict({"from": "a:1", "to": "a:1", "type": "x"}) is None
    assert Edge.from_dict({"from": 3, "to": "a:1", "type": "x"}) is None
    assert Edge.from_dict({"from": "a:1", "to": "b:1", "type": "x", "at": 1e30}) is not None


def test_refresh_keeps_the_newest_observation() -> None:
    old = make_edge("a:1", "b:1", "t", T0, run_id="r1", confidence=0.5, note="old")
    newer = make_edge("a:1", "b:1", "t", T0 + 60, run_id="r2", note="new")
    merged = refresh(old, newer)
    assert (merged.at, merged.run_id, merged.confidence, merged.note) == (T0 + 60, "r2", 0.5, "new")
    older = make_edge("a:1", "b:1", "t", T0 - 60, run_id="r0", confidence=0.9, note="older")
    back = refresh(merged, older)
    assert (back.at, back.run_id, back.note) == (T0 + 60, "r2", "new")
    assert back.confidence == 0.9  # a set confidence always replaces
    assert refresh(merged, merged) == merged


# ---------------------------------------------------------------- index and queries
def _index(*edges: Edge) -> GraphIndex:
    index = GraphIndex()
    for offset, edge in enumerate(edges):
        index.add(edge, offset * 100)
    return index


def test_readding_refreshes_in_place() -> None:
    index = GraphIndex()
    first = make_edge("a:1", "b:1", "t", T0)
    assert index.add(first, 0) == "added"
    assert index.add(first, 999) == "unchanged"
    assert index.add(make_edge("a:1", "b:1", "t", T0 + 5), 999) == "refreshed"
    (entry,) = index.entries()
    assert entry.offset == 0 and entry.edge.at == T0 + 5
    assert len(index) == 1


def test_out_and_in_are_sorted_by_far_end_then_type() -> None:
    index = _index(
        make_edge("episode:e", "file:z.py", "touched"),
        make_edge("episode:e", "file:a.py", "touched"),
        make_edge("episode:e", "file:a.py", "mentions"),
        make_edge("run:r", "episode:e", "parent_of"),
        make_edge("fact:f", "episode:e", "derived_from"),
    )
    out = index.out_edges("episode:e")
    assert [(e.target, e.type) for e in out] == [
        ("file:a.py", "mentions"), ("file:a.py", "touched"), ("file:z.py", "touched")]
    assert [e.target for e in index.out_edges("episode:e", ["TOUCHED"])] == ["file:a.py", "file:z.py"]
    assert [e.source for e in index.in_edges("episode:e")] == ["fact:f", "run:r"]
    assert index.neighbors("episode:e") == ["fact:f", "file:a.py", "file:z.py", "run:r"]
    assert index.neighbors("episode:e", "out") == ["file:a.py", "file:z.py"]
    assert index.neighbors("episode:e", "in", ["parent_of"]) == ["run:r"]
    assert index.counts() == {"edges": 5, "nodes": 5,
                              "by_type": {"derived_from": 1, "mentions": 1, "parent_of": 1,
                                          "touched": 2}}


def test_document_round_trip_recomputes_adjacency() -> None:
    index = _index(make_edge("a:1", "b:1", "t", T0), make_edge("b:1", "c:1", "u", T0 + 1))
    doc = index.to_document(T0, 200)
    assert doc["out"] == {"a:1": [0], "b:1": [1]} and doc["in"] == {"b:1": [0], "c:1": [1]}
    doc["out"] = {"bogus": [7]}  # adjacency on disk is never trusted
    loaded = GraphIndex.from_document(doc)
    assert loaded is not None
    again, size = loaded
    assert size == 200
    assert [(e.edge, e.offset) for e in again.entries()] == [(e.edge, e.offset) for e in index.entries()]
    assert again.neighbors("b:1") == ["a:1", "c:1"]


@pytest.mark.parametrize(
    "doc",
    [
        [], {"version": 2, "entries": []}, {"version": 1},
        {"version": 1, "entries": [{"from": "a:1", "to": "b:1", "type": "t"}]},  # no offset
        {"version": 1, "entries": [{"from": "a:1", "to": "a:1", "type": "t", "offset": 0}]},
        {"version": 1, "entries": [{"from": "a:1", "to": "b:1", "type": "t", "offset": 0},
                                   {"from": "a:1", "to": "b:1", "type": "t", "offset": 9}]},
    ],
)
def test_unusable_documents_are_rejected(doc: object) -> None:
    assert GraphIndex.from_document(doc) is None


# ---------------------------------------------------------------- S-21.7 walk
def _chain() -> GraphIndex:
    # a -> b -> c -> d -> e -> f -> g -> h (7 hops), plus a -> x
    nodes = "abcdefgh"
    edges = [make_edge(f"n:{x}", f"n:{y}", "next") for x, y in itertools.pairwise(nodes)]
    return _index(*edges, make_edge("n:a", "n:x", "side"))


def test_walk_defaults_to_depth_3_outgoing() -> None:
    result = walk(_chain(), "n:a")
    assert [(s.node, s.depth) for s in result.steps] == [
        ("n:b", 1), ("n:x", 1), ("n:c", 2), ("n:d", 3)]
    assert result.options.direction == "out" and result.options.depth == 3
    assert result.steps[-1].path("n:a") == "n:a -next-> n:b -next-> n:c -next-> n:d"
    assert "n:a" not in result.reachable()


def test_walk_depth_is_clamped_to_6_with_the_warning() -> None:
    result = walk(_chain(), "n:a", WalkOptions(depth=50))
    assert result.options.depth == 6
    assert result.warnings == (DEPTH_CLAMP_WARNING,)
    assert DEPTH_CLAMP_WARNING == "--depth clamped to the package ceiling of 6"
    assert max(s.depth for s in result.steps) == 6
    assert "n:h" not in result.reachable() and "n:g" in result.reachable()
    assert resolve_walk(WalkOptions(depth=-1))[0].depth == 3
    assert resolve_walk(WalkOptions(depth=6))[1] == []


@pytest.mark.parametrize(("max_nodes", "found"), [(1, 0), (2, 1), (3, 2), (0, 4)])
def test_walk_max_nodes_counts_the_origin(max_nodes: int, found: int) -> None:
    result = walk(_chain(), "n:a", WalkOptions(max_nodes=max_nodes))
    assert len(result.steps) == found
    assert result.truncated is (0 < max_nodes < 5)


def test_walk_max_nodes_ceiling() -> None:
    opts, warnings = resolve_walk(WalkOptions(max_nodes=10_000))
    assert opts.max_nodes == 2000 and warnings
    assert resolve_walk(WalkOptions())[0].max_nodes == 200


def test_walk_incoming_either_and_types() -> None:
    index = _chain()
    back = walk(index, "n:c", WalkOptions(direction="in"))
    assert [s.node for s in back.steps] == ["n:b", "n:a"]
    assert back.steps[-1].path("n:c") == "n:c <-next- n:b <-next- n:a"
    either = walk(index, "n:b", WalkOptions(direction="either", depth=1))
    assert [s.node for s in either.steps] == ["n:a", "n:c"]
    typed = walk(index, "n:a", WalkOptions(types=("side",)))
    assert [s.node for s in typed.steps] == ["n:x"]
    with pytest.raises(ValueError, match="direction"):
        resolve_walk(WalkOptions(direction="sideways"))


def test_walk_handles_cycles_and_unknown_starts() -> None:
    index = _index(make_edge("n:a", "n:b", "t"), make_edge("n:b", "n:a", "t"))
    assert [s.node for s in walk(index, "n:a", WalkOptions(depth=6)).steps] == ["n:b"]
    assert walk(index, "n:zzz").steps == ()


def test_walk_output_is_by_depth_then_id() -> None:
    index = _index(make_edge("s:0", "n:z", "t"), make_edge("s:0", "n:m", "t"),
                   make_edge("n:z", "n:a", "t"), make_edge("n:m", "n:b", "t"))
    result = walk(index, "s:0")
    assert [s.node for s in result.steps] == ["n:m", "n:z", "n:a", "n:b"]
    assert result.to_dict()["nodes"][2] == {"node": "n:a", "kind": "n", "depth": 2,
                                           "path": "s:0 -t-> n:z -t-> n:a"}


# ---------------------------------------------------------------- S-21.8 file chain
def _file_graph() -> GraphIndex:
    return _index(
        make_edge("episode:ep_1", "file:pkg/a.go", "touched", T0),
        make_edge("episode:ep_2", "file:pkg/a.go", "touched", T0 + 1),
        make_edge("episode:ep_1", "failure:fp_x", "produced", T0, note="compile_error"),
        make_edge("episode:ep_2", "failure:fp_x", "produced", T0 + 1, note="compile_error"),
        make_edge("episode:ep_2", "failure:fp_y", "produced", T0 + 1, note="edit_not_found"),
        make_edge("failure:fp_x", "rule:rule_1", "resolved_by", T0, note="add the import"),
        make_edge("failure:fp_x", "rule:rule_2", "resolved_by", T0 + 1),
        # decoys: wrong kinds at every hop
        make_edge("run:r1", "file:pkg/a.go", "touched", T0),
        make_edge("run:r1", "failure:fp_z", "produced", T0, note="decoy"),
        make_edge("episode:ep_1", "rule:rule_9", "produced", T0, note="decoy"),
        make_edge("failure:fp_x", "fact:f1", "resolved_by", T0),
        make_edge("episode:ep_3", "file:pkg/a.go", "mentions", T0),
        make_edge("episode:ep_3", "failure:fp_w", "produced", T0, note="decoy"),
    )


def test_known_about_file_follows_the_chain_and_ignores_decoys() -> None:
    known = known_about_file(_file_graph(), "./pkg/a.go")
    assert known.file == "pkg/a.go"
    assert known.episodes == ("ep_1", "ep_2")
    assert known.failures == ("fp_x", "fp_y")
    assert known.rules == ("rule_1", "rule_2")
    assert known.fixed_by == {"fp_x": ["rule_1", "rule_2"]}
    assert known.failure_class == {"fp_x": "compile_error", "fp_y": "edit_not_found"}
    assert known.fixes["fp_x"]["rule_1"] == "add the import"
    assert known.classes == {"compile_error": 2, "edit_not_found": 1}


def test_failure_classes_count_distinct_episode_failure_pairs() -> None:
    index = _file_graph()
    index.add(make_edge("episode:ep_2", "file:pkg/b.go", "touched", T0 + 1), 5000)
    # ep_2 touched both files: its pairs are counted once.
    assert failure_classes_for_files(index, ["pkg/a.go", "pkg/b.go"]) == {
        "compile_error": 2, "edit_not_found": 1}
    assert failure_classes_for_files(index, ["pkg/b.go"]) == {
        "compile_error": 1, "edit_not_found": 1}
    assert failure_classes_for_files(index, ["nope.go", "."]) == {}


def test_unknown_file_knows_nothing() -> None:
    known = known_about_file(_file_graph(), "other.go")
    assert known.episodes == () and known.classes == {} and known.fixed_by == {}


# ---------------------------------------------------------------- properties
_node = st.sampled_from([f"{k}:{v}" for k in ("episode", "file", "rule") for v in "abcd"])


@settings(derandomize=True, max_examples=150)
@given(st.lists(st.tuples(_node, _node, st.sampled_from(["t", "u"]), st.integers(0, 5)),
                max_size=30))
def test_neighbors_agree_with_out_and_in(raw: list[tuple[str, str, str, int]]) -> None:
    index = GraphIndex()
    for n, (a, b, t, dt) in enumerate(raw):
        edge = make_edge(a, b, t, T0 + dt)
        if not validate_edge(edge):
            index.add(edge, n)
    for node in index.nodes():
        outs = {e.target for e in index.out_edges(node)}
        ins = {e.source for e in index.in_edges(node)}
        assert index.neighbors(node) == sorted(outs | ins)
        reached = walk(index, node, WalkOptions(direction="either", depth=1, max_nodes=2000))
        assert reached.reachable() == sorted(outs | ins)
    assert len({e.id for e in index.edges()}) == len(index)


def test_parse_node_arg() -> None:
    assert parse_node_arg("file:./a.py") == "file:a.py"
    assert parse_node_arg("Episode:ep_1") == "episode:ep_1"
    assert parse_node_arg("ep_123") == "episode:ep_123"
    assert parse_node_arg("rule_9") == "rule:rule_9"
    assert parse_node_arg("fp_77") == "failure:fp_77"
    assert parse_node_arg("f_1") == "fact:f_1"
    assert parse_node_arg("./pkg/x.go") == "file:pkg/x.go"
    assert parse_node_arg("C:\\repo\\x.go") == "file:C:/repo/x.go"
    assert parse_node_arg(".") == ""
