"""runs.jsonl: append/load round trip, corrupt lines skipped, pruning to the newest runs."""

from __future__ import annotations

from pathlib import Path

from slmactor.logic.loop.metrics import Gate, Run
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.metrics import PRUNE_SLACK, MetricsStore


def _store(path: Path, **kw: int) -> MetricsStore:
    return MetricsStore(path / "metrics" / "runs.jsonl", WarningLog(), **kw)


def test_missing_file_is_no_runs(tmp_path: Path) -> None:
    assert _store(tmp_path).load() == []


def test_append_normalises_and_round_trips(tmp_path: Path) -> None:
    store = _store(tmp_path)
    stored = store.append(Run(run_id="r1", at=1_700_000_000.9, language="Go", tasks=1,
                              tasks_passed=2, gates=(Gate("tests", True),)))
    assert stored is not None and stored.tasks == 2 and stored.language == "go"
    again = MetricsStore(store.path, WarningLog())
    assert again.load() == [stored]
    line = store.path.read_text().splitlines()[0]
    assert '"at":"2023-11-14T22:13:20Z"' in line


def test_corrupt_lines_are_skipped_and_neighbours_kept(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.append(Run(run_id="a", at=1))
    with store.path.open("a") as handle:
        handle.write("{not json\n[1,2]\n")
    store.append(Run(run_id="b", at=2))
    warnings = WarningLog()
    runs = MetricsStore(store.path, warnings).load()
    assert [r.run_id for r in runs] == ["a", "b"]
    assert any("corrupt" in w["text"] for w in warnings.recent())


def test_runs_load_oldest_first_by_time(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for run_id, at in [("late", 30), ("early", 10), ("mid", 20)]:
        store.append(Run(run_id=run_id, at=at))
    assert [r.run_id for r in store.load()] == ["early", "mid", "late"]


def test_the_log_is_pruned_to_the_newest_runs(tmp_path: Path) -> None:
    store = _store(tmp_path, max_runs=10)
    for i in range(10 + PRUNE_SLACK + 1):
        store.append(Run(run_id=f"r{i}", at=float(i)))
    runs = store.load()
    assert len(runs) == 10
    assert runs[0].run_id == f"r{PRUNE_SLACK + 1}"
    size = store.path.stat().st_size
    assert store.prune() == 0 and store.path.stat().st_size == size  # no-op prune, no rewrite
    assert store.prune(3) == 7 and len(store.load()) == 3


def test_forget_removes_the_log(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.append(Run(run_id="a"))
    store.forget()
    assert not store.path.exists() and store.load() == []


def test_a_run_id_is_recorded_once(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.append(Run(run_id="r1", at=1)) is not None
    assert store.append(Run(run_id="r1", at=2)) is None
    assert MetricsStore(store.path, WarningLog()).append(Run(run_id="r1", at=3)) is None
    assert store.append(Run(at=4)) is not None and store.append(Run(at=5)) is not None
    assert len(store.load()) == 3  # runs without an id are never merged


def test_the_cache_notices_hand_edits_and_deletion(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.append(Run(run_id="a", at=1))
    store.append(Run(run_id="b", at=2))
    assert [r.run_id for r in store.load()] == ["a", "b"]
    store.append(Run(run_id="c", at=3))  # our own append extends the cached list
    assert [r.run_id for r in store.load()] == ["a", "b", "c"]
    lines = store.path.read_text().splitlines()
    store.path.write_text(lines[0] + "\n")  # a person trims the log by hand
    assert [r.run_id for r in store.load()] == ["a"]
    store.path.unlink()
    assert store.load() == []
    store.append(Run(run_id="d", at=4))
    assert [r.run_id for r in store.load()] == ["d"]
