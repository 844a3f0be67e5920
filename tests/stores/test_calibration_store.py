"""calibration.json + CALIBRATION.md on disk: round trip, ≤ 50, corrupt → .corrupt, hand removal."""

from __future__ import annotations

import json
from pathlib import Path

from slmactor.logic.policy.calibration import CalibrationProfile
from slmactor.stores.base.layout import UserLayout
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.calibration import CalibrationStore

NOW = 1_790_000_000.0
DAY = 86_400.0


def _profile(model: str, at: float = NOW) -> CalibrationProfile:
    return CalibrationProfile.from_dict({"model": model, "endpoint": "http://localhost:8000",
                                         "efficiency": {"2": 0.9, "4": 0.65}, "p50_ms": 300,
                                         "p95_ms": 450, "decode_tps": 55, "context_window": 8192,
                                         "measured_at": at}, NOW)


def _store(home: Path) -> CalibrationStore:
    return CalibrationStore.for_user(UserLayout(home), WarningLog(), now=lambda: NOW)


def test_round_trip_with_mirror(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.book.put(_profile("qwen3-coder:30b"))
    store.touch()
    store.flush()
    doc = json.loads((tmp_path / "memory" / "calibration.json").read_text())
    assert doc["version"] == 1 and doc["profiles"][0]["knee"] == 4
    mirror = (tmp_path / "memory" / "CALIBRATION.md").read_text()
    assert "| qwen3-coder:30b | http://localhost:8000 | 4 |" in mirror
    again = _store(tmp_path)
    assert again.book.get("qwen3-coder:30b") == _profile("qwen3-coder:30b")


def test_prune_keeps_fifty_and_drops_expired(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for i in range(55):
        store.book.put(_profile(f"m{i}", NOW - i))
    store.book.put(_profile("old", NOW - 31 * DAY))
    dropped = store.book.prune(NOW)
    store.touch()
    store.flush()
    assert len(dropped) == 6 and len(_store(tmp_path).book) == 50


def test_corrupt_document_is_set_aside(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "calibration.json").write_text("{not json")
    store = _store(tmp_path)
    assert len(store.book) == 0 and (memory / "calibration.json.corrupt").exists()
    assert store.warnings.total >= 1


def test_removed_by_hand_stays_removed(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.book.put(_profile("m"))
    store.touch()
    store.flush()
    (tmp_path / "memory" / "calibration.json").unlink()
    assert store.sync() and len(store.book) == 0
