"""The graph store on disk: append-only log + index, repair, prune, forget (SPEC S-21.4–S-21.10)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slmactor.logic.graph.core import Edge, GraphIndex, make_edge
from slmactor.logic.text.timefmt import SECONDS_PER_DAY
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.graph import (
    INDEX_NAME,
    LOG_NAME,
    STALE_WARNING,
    UNREADABLE_WARNING,
    GraphStore,
)

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def _clock() -> float:
    return NOW


def _store(directory: Path | None, **kw: object) -> tuple[GraphStore, WarningLog]:
    warnings = WarningLog()
    return GraphStore(directory, warnings, now=_clock, **kw), warnings  # type: ignore[arg-type]


def _edge(n: int, at: float = NOW, **kw: object) -> Edge:
    return make_edge(f"episode:ep_{n}", f"file:f{n}.py", "touched", at, **kw)  # type: ignore[arg-type]


def _snapshot(index: GraphIndex) -> list[tuple[Edge, int]]:
    return [(e.edge, e.offset) for e in index.entries()]


def test_add_appends_one_line_per_new_edge(tmp_path: Path) -> None:
    store, warnings = _store(tmp_path)
    result = store.add_many([_edge(1), _edge(2), _edge(1)])
    assert (result.added, result.unchanged, result.errors) == (2, 1, [])
    lines = (tmp_path / LOG_NAME).read_text().splitlines()
    assert [json.loads(line)["from"] for line in lines] == ["episode:ep_1", "episode:ep_2"]
    assert json.loads(lines[0]) == {"from": "episode:ep_1", "to": "file:f1.py", "type": "touched",
                                    "at": "2026-01-01T00:00:00Z"}
    assert store.stats() == {"edges": 2, "nodes": 4, "by_type": {"touched": 2},
                             "bytes": (tmp_path / LOG_NAME).stat().st_size}
    assert not warnings.texts()


def test_readding_refreshes_the_index_only(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    store.add(_edge(1, run_id="r1"))
    store.flush()
    log = (tmp_path / LOG_NAME).read_bytes()
    result = store.add(_edge(1, NOW + 60, run_id="r2", note="again", confidence=0.5))
    assert result.refreshed == 1 and result.added == 0
    assert (tmp_path / LOG_NAME).read_bytes() == log
    (edge,) = store.edges()
    assert (edge.at, edge.run_id, edge.note, edge.confidence) == (NOW + 60, "r2", "again", 0.5)
    store.close()
    reopened, warnings = _store(tmp_path)
    assert reopened.edges() == [edge]  # the refresh survives in the index document
    assert not warnings.texts()


def test_a_batch_with_invalid_edges_keeps_the_valid_ones(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    result = store.add_many([_edge(1), make_edge("a:1", "a:1", "t"), make_edge("", "b:1", "t")])
    assert result.added == 1 and len(result.errors) == 2
    assert "self-edge" in result.error and "; " in result.error
    assert len(store) == 1


def test_reopen_trusts_a_good_index(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    store.add_many([_edge(n) for n in range(5)])
    store.close()
    assert (tmp_path / INDEX_NAME).exists()
    reopened, warnings = _store(tmp_path)
    assert _snapshot(reopened.index()) == _snapshot(store.index())
    assert not warnings.texts() and not reopened.dirty


def test_corrupt_index_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    store.add_many([_edge(n) for n in range(3)])
    store.close()
    (tmp_path / INDEX_NAME).write_text("{not json")
    reopened, warnings = _store(tmp_path)
    assert warnings.texts() == [UNREADABLE_WARNING]
    assert UNREADABLE_WARNING == "edges.index.json unreadable; moved aside and rebuilt from log"
    assert (tmp_path / (INDEX_NAME + ".corrupt")).read_text() == "{not json"
    assert _snapshot(reopened.index()) == _snapshot(store.index())
    reopened.close()
    assert json.loads((tmp_path / INDEX_NAME).read_text())["version"] == 1


def test_stale_index_is_rebuilt(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    store.add_many([_edge(n) for n in range(3)])
    store.close()
    lines = (tmp_path / LOG_NAME).read_text().splitlines(keepends=True)
    (tmp_path / LOG_NAME).write_text(lines[2] + lines[0])  # reordered by hand
    reopened, warnings = _store(tmp_path)
    assert warnings.texts() == [STALE_WARNING]
    assert STALE_WARNING == "graph index stale; rebuilt from log"
    assert [e.source for e in reopened.edges()] == ["episode:ep_2", "episode:ep_0"]


def test_edges_appended_after_the_last_flush_are_caught_up(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    store.add_many([_edge(1), _edge(2)])
    store.flush()
    store.add(_edge(3))  # a crash now: the index on disk does not know edge 3
    reopened, warnings = _store(tmp_path)
    assert [e.source for e in reopened.edges()] == ["episode:ep_1", "episode:ep_2", "episode:ep_3"]
    assert not warnings.texts()


def test_corrupt_log_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    good = [json.dumps(_edge(n).to_dict()) for n in range(2)]
    lines = [good[0], "garbage{", "", json.dumps({"from": "a:1", "to": "a:1", "type": "t"}),
             json.dumps({"from": "a:1", "to": "b:1"}), "   ", good[1],
             json.dumps({"from": "a:1", "to": "b:1", "type": "x" * 40_000})]
    (tmp_path / LOG_NAME).write_text("\n".join(lines) + "\n")
    store, warnings = _store(tmp_path)
    assert [e.source for e in store.edges()] == ["episode:ep_0", "episode:ep_1"]
    assert "skipped 4 corrupt edge record(s) in edges.jsonl" in warnings.texts()


def test_read_only_never_writes_creates_or_quarantines(tmp_path: Path) -> None:
    empty, _ = _store(tmp_path / "none", read_only=True)
    assert len(empty) == 0 and not (tmp_path / "none").exists()
    store, _ = _store(tmp_path)
    store.add(_edge(1))
    store.close()
    (tmp_path / INDEX_NAME).write_text("[broken")
    before = sorted(os.listdir(tmp_path))
    ro, warnings = _store(tmp_path, read_only=True)
    assert len(ro) == 1 and "read-only" in warnings.texts()[0]
    ro.close()
    assert sorted(os.listdir(tmp_path)) == before
    assert (tmp_path / INDEX_NAME).read_text() == "[broken"
    with pytest.raises(StoreError):
        ro.add(_edge(2))
    with pytest.raises(StoreError):
        ro.prune()


def test_prune_by_age_and_count_rewrites_the_log(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    old = NOW - 200 * SECONDS_PER_DAY
    store.add_many([_edge(1, old), _edge(2, old), _edge(3, NOW - 10), _edge(4, NOW - 5), _edge(5)])
    size = (tmp_path / LOG_NAME).stat().st_size
    assert store.prune(0, 0) == 2  # 0 → defaults: 20000 edges, 180 days
    assert (tmp_path / LOG_NAME).stat().st_size < size
    assert store.prune(2, -1) == 1
    assert [e.source for e in store.edges()] == ["episode:ep_4", "episode:ep_5"]
    reopened, warnings = _store(tmp_path)
    assert _snapshot(reopened.index()) == _snapshot(store.index()) and not warnings.texts()


def test_prune_keeps_what_was_re_observed_and_persists_refreshes(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    old = NOW - 200 * SECONDS_PER_DAY
    store.add_many([_edge(1, old), _edge(2, old)])
    store.add(_edge(1, NOW, note="seen again"))  # re-observed: refreshed in the index only
    assert store.prune() == 1
    (line,) = (tmp_path / LOG_NAME).read_text().splitlines()
    assert json.loads(line)["note"] == "seen again"  # the rewrite made the refresh durable


def test_noop_prune_does_not_rewrite(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    store.add_many([_edge(1), _edge(2)])
    inode = (tmp_path / LOG_NAME).stat().st_ino
    assert store.prune(-1, -1) == 0 and store.prune() == 0
    assert (tmp_path / LOG_NAME).stat().st_ino == inode


def test_hard_backstop_prunes_at_twice_the_cap(tmp_path: Path) -> None:
    store, _ = _store(tmp_path, max_edges=3)
    for n in range(6):
        store.add(_edge(n, NOW + n))
    assert len(store) == 6
    result = store.add(_edge(6, NOW + 6))
    assert result.pruned == 4 and len(store) == 3
    assert [e.source for e in store.edges()] == ["episode:ep_4", "episode:ep_5", "episode:ep_6"]
    assert len((tmp_path / LOG_NAME).read_text().splitlines()) == 3


def test_forget_removes_both_files(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    store.add_many([_edge(1), _edge(2)])
    store.flush()
    assert store.forget() == 2
    assert not (tmp_path / LOG_NAME).exists() and not (tmp_path / INDEX_NAME).exists()
    assert store.add(_edge(3)).added == 1 and len(store) == 1


def test_graph_removed_while_open_starts_empty_and_is_rebuilt(tmp_path: Path) -> None:
    directory = tmp_path / "graph"
    store, warnings = _store(directory)
    store.add_many([_edge(1), _edge(2)])
    store.flush()
    shutil.rmtree(directory)
    assert len(store.edges()) == 0
    assert any("removed" in t for t in warnings.texts())
    assert store.add_many([_edge(1), _edge(2)]).added == 2
    assert len((directory / LOG_NAME).read_text().splitlines()) == 2


def test_take_removed_reports_an_external_delete_once(tmp_path: Path) -> None:
    store, _ = _store(tmp_path / "g")
    store.add(_edge(1))
    assert store.take_removed() is False
    shutil.rmtree(tmp_path / "g")
    assert store.take_removed() is True
    assert store.take_removed() is False


def test_in_memory_store(tmp_path: Path) -> None:
    store, _ = _store(None)
    store.add_many([_edge(1, NOW - 400 * SECONDS_PER_DAY), _edge(2)])
    assert store.stats()["bytes"] == 0 and len(store) == 2
    assert store.prune() == 1 and store.flush() is False
    assert store.forget() == 1
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- property: rebuild == incremental
_edges_st = st.lists(
    st.builds(
        lambda a, b, t, dt, note: make_edge(f"episode:{a}", f"file:{b}", t, NOW + dt, note=note),
        st.sampled_from("abc"), st.sampled_from("xyz"), st.sampled_from(["touched", "mentions"]),
        st.integers(0, 3), st.sampled_from(["", "n1", "n2"]),
    ),
    max_size=25,
)


@settings(derandomize=True, max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_edges_st, max_size=4))
def test_index_rebuilt_from_the_log_equals_the_incremental_one(
    tmp_path: Path, batches: list[list[Edge]]
) -> None:
    directory = tmp_path / f"g{len(list(tmp_path.iterdir()))}"
    store, _ = _store(directory)
    for batch in batches:
        store.add_many(batch)
    incremental = _snapshot(store.index())
    store.close()
    # The document on disk reloads to exactly the incremental index.
    reloaded, _ = _store(directory)
    assert _snapshot(reloaded.index()) == incremental
    # A rebuild from the log has the same edges at the same offsets; refreshed metadata lives in
    # the index only (S-21.4), so the rebuild holds each edge as first written.
    first_seen: dict[str, Edge] = {}
    for batch in batches:
        for edge in batch:
            first_seen.setdefault(edge.id, edge)
    (directory / INDEX_NAME).unlink(missing_ok=True)
    rebuilt, warnings = _store(directory)
    assert [(first_seen[e.id], off) for e, off in incremental] == _snapshot(rebuilt.index())
    assert not warnings.texts()
    # After a prune rewrite (an old sentinel edge ages out), the log holds the refreshed
    # values too: a rebuild then equals the incremental index exactly.
    rebuilt.add(make_edge("run:old", "episode:a", "parent_of", NOW - 400 * SECONDS_PER_DAY))
    for batch in batches:
        rebuilt.add_many(batch)
    assert rebuilt.prune() == 1
    after = _snapshot(rebuilt.index())
    rebuilt.close()
    (directory / INDEX_NAME).unlink()
    again, _ = _store(directory)
    assert _snapshot(again.index()) == after
