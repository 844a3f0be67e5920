"""The bounded table of live runs: per (project, run id), LRU eviction, idle expiry."""

from __future__ import annotations

import pytest

from slmactor.logic.working.runs import WorkingRuns


def test_runs_are_per_project_and_run_id() -> None:
    runs = WorkingRuns()
    a, _ = runs.ensure("/p1", "r", 1.0)
    b, _ = runs.ensure("/p2", "r", 1.0)
    a.record_tool("read", "x")
    assert a is not b
    assert runs.ensure("/p1", "r", 2.0)[0] is a
    assert b.calls == 0
    assert runs.get("/p1", "r") is a and runs.get("/p1", "other") is None
    assert len(runs) == 2 and runs.created == 2


def test_least_recently_touched_run_is_evicted_at_the_cap() -> None:
    runs = WorkingRuns(max_runs=3)
    for i in range(3):
        runs.ensure("/p", f"r{i}", float(i))
    runs.ensure("/p", "r0", 10.0)  # r0 is now the most recent; r1 the least
    memory, evicted = runs.ensure("/p", "r3", 11.0)
    assert [key for key, _ in evicted] == [("/p", "r1")]
    assert runs.keys() == [("/p", "r2"), ("/p", "r0"), ("/p", "r3")]
    assert memory.run_id == "r3"
    assert runs.stats()["evicted"] == 1


def test_idle_runs_expire_oldest_first() -> None:
    runs = WorkingRuns(idle_seconds=100.0)
    runs.ensure("/p", "old", 0.0)
    runs.ensure("/p", "mid", 50.0)
    runs.ensure("/p", "new", 120.0)
    assert runs.expire(100.0) == []  # idle exactly 100 s: not yet
    gone = runs.expire(160.0)
    assert [key for key, _ in gone] == [("/p", "old"), ("/p", "mid")]
    assert runs.keys() == [("/p", "new")]
    assert runs.stats()["expired"] == 2


def test_drop_and_drop_project() -> None:
    runs = WorkingRuns()
    runs.ensure("/p", "a", 0.0)
    runs.ensure("/p", "b", 0.0)
    runs.ensure("/q", "a", 0.0)
    assert runs.drop("/p", "a") is not None
    assert runs.drop("/p", "a") is None
    assert runs.drop_project("/p") == 1
    assert runs.keys() == [("/q", "a")]


def test_max_runs_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_runs"):
        WorkingRuns(max_runs=0)
