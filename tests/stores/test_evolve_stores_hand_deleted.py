"""rules.json and regressions.json removed or edited by hand are re-read, never written back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from slmactor.logic.evolve.repairs import Repair
from slmactor.logic.failures.fingerprint import analyze
from slmactor.logic.loop.regressions import new_check
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.regressions import RegressionStore
from slmactor.stores.rules import RuleStore

NOW = 1_780_000_000.0
STRIP = Repair("transform_args", guidance="strip", transform="strip_line_number_prefix")


def test_rule_store_forgets_a_project_file_deleted_by_hand(tmp_path: Path) -> None:
    project = tmp_path / "proj" / ".slmcode" / "evolve" / "rules.json"
    store = RuleStore(project, tmp_path / "home" / "rules.json", WarningLog(), now=lambda: NOW)
    fp = analyze("edit", "old_str not found", "python", model="qwen2.5-coder:7b")
    old = store.book.learn(fp, STRIP, NOW, proven=True)
    assert old is not None and store.save() and project.exists()
    assert not store.sync()  # our own write is not a change
    shutil.rmtree(tmp_path / "proj" / ".slmcode")
    assert store.sync() and store.book.get(old.id) is None
    other = analyze("bash", "pytest: command not found", "python", model="gpt-4o")
    new = store.book.learn(other, Repair("shell", guidance="g", command="pip install pytest"),
                           NOW, proven=True)
    assert new is not None and store.save()
    assert [r["id"] for r in json.loads(project.read_text())["rules"]] == [new.id]


def test_rule_store_rereads_a_project_file_edited_by_hand(tmp_path: Path) -> None:
    project = tmp_path / "proj" / "rules.json"
    store = RuleStore(project, None, WarningLog(), now=lambda: NOW)
    fp = analyze("edit", "old_str not found", "python", model="qwen2.5-coder:7b")
    rule = store.book.learn(fp, STRIP, NOW, proven=True)
    assert rule is not None and store.save()
    data = json.loads(project.read_text())
    data["rules"] = [r for r in data["rules"] if r["id"] != rule.id]
    project.write_text(json.dumps(data))
    assert store.sync() and store.book.get(rule.id) is None


def test_regression_store_forgets_a_file_deleted_by_hand(tmp_path: Path) -> None:
    path = tmp_path / ".slmcode" / "evolve" / "regressions.json"
    store = RegressionStore(path, WarningLog(), now=lambda: NOW)
    check = new_check(description="keeps the fix", now=NOW, path="a.py", substring="x = 2")
    assert check is not None and store.add(check) and store.save()
    assert not store.sync()
    shutil.rmtree(tmp_path / ".slmcode")
    (tmp_path / "a.py").write_text("x = 2\n")
    assert store.checks() == [] and store.run_offline(tmp_path) == []
    assert not store.save() and not path.exists()
    later = new_check(description="another", now=NOW + 1, path="b.py", substring="y")
    assert later is not None and store.add(later) and store.save()
    assert [c["id"] for c in json.loads(path.read_text())["checks"]] == [later.id]
