"""regressions.json: persistence, corrupt file, offline runs confined to the project root."""

from __future__ import annotations

import os
from pathlib import Path

from slmactor.logic.loop.regressions import Check, new_check
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.regressions import RegressionStore


def _check(desc: str, now: float, **kw: str) -> Check:
    check = new_check(description=desc, now=now, **kw)
    assert check is not None
    return check


def _store(root: Path, warnings: WarningLog | None = None) -> RegressionStore:
    return RegressionStore(root / ".slmcode" / "evolve" / "regressions.json",
                           warnings if warnings is not None else WarningLog(),
                           now=lambda: 1_700_000_000.0)


def test_add_save_reload(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert not store.save()  # nothing to save → no file
    assert not store.path.exists()
    a = _check("older", 10, path="a.py", substring="fix")
    b = _check("newer", 20, command="pytest -q tests/test_a.py")
    assert store.add(b) and store.add(a) and not store.add(a)
    assert store.save()
    again = _store(tmp_path)
    assert [c.description for c in again.checks()] == ["newer", "older"]
    assert [c.id for c in again.command_checks()] == [b.id]
    data = store.path.read_text()
    assert data.index('"older"') < data.index('"newer"')  # saved sorted by added_at


def test_corrupt_file_is_set_aside_and_the_store_starts_empty(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.add(_check("x", 1, path="a"))
    store.save()
    store.path.write_text("{ not json")
    warnings = WarningLog()
    again = _store(tmp_path, warnings)
    assert again.checks() == []
    assert any("regressions.json" in w["text"] for w in warnings.recent())
    assert list(store.path.parent.glob("regressions.json.corrupt*"))


def test_run_offline_evaluates_file_checks_only_and_records_results(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def f():\n    return 1\n")
    (tmp_path.parent / "outside.txt").write_text("return 1\n")
    (tmp_path / "escape.txt").symlink_to(tmp_path.parent / "outside.txt")
    os.mkfifo(tmp_path / "fifo")
    store = _store(tmp_path)
    checks = {
        "contains": _check("has fix", 1, path="src/app.py", substring="return 1"),
        "regressed": _check("lost fix", 2, path="src/app.py", substring="return 2"),
        "absent": _check("no eval", 3, path="src/app.py", substring="eval(", kind="file_absent"),
        "missing": _check("exists", 4, path="src/gone.py"),
        "dotdot": _check("escape", 5, path="../outside.txt", substring="return 1"),
        "symlink": _check("link", 6, path="escape.txt", substring="return 1"),
        "fifo": _check("fifo", 7, path="fifo", substring="x"),
        "command": _check("tests", 8, command="rm -rf /"),
    }
    for check in checks.values():
        store.add(check)
    results = {c.id: r for c, r in store.run_offline(tmp_path)}
    status = {name: results[c.id].status for name, c in checks.items() if c.id in results}
    assert status == {
        "contains": "pass", "regressed": "fail", "absent": "pass", "missing": "fail",
        "dotdot": "skipped", "symlink": "skipped", "fifo": "skipped",
    }
    assert checks["command"].id not in results  # never executed
    assert store.save()
    again = {c.id: c for c in _store(tmp_path).checks()}
    assert again[checks["regressed"].id].fails == 1
    assert again[checks["contains"].id].last_ok
    assert again[checks["symlink"].id].runs == 0  # a skipped check is not a run


def test_prune_and_forget(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for i in range(5):
        store.add(_check(f"c{i}", float(i), path=f"f{i}"))
    assert store.prune(2) == 3
    assert [c.description for c in store.checks()] == ["c4", "c3"]
    store.save()
    assert store.forget() == 2
    assert not store.path.exists() and _store(tmp_path).checks() == []
