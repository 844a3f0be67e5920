"""rules.json persistence (SPEC S-10.12): seeds → user → project, corrupt files, retired seeds."""

from __future__ import annotations

import json
from pathlib import Path

from slmactor.logic.evolve.repairs import Repair
from slmactor.logic.evolve.rule_seeds import seed_rules
from slmactor.logic.evolve.suggest import lookup
from slmactor.logic.failures.fingerprint import analyze
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.rules import RuleStore

NOW = 1_780_000_000.0
STRIP = Repair("transform_args", guidance="strip", transform="strip_line_number_prefix")


def open_store(tmp_path: Path, warnings: WarningLog | None = None, **kw: object) -> RuleStore:
    return RuleStore(tmp_path / "proj" / ".slmcode" / "evolve" / "rules.json",
                     tmp_path / "home" / "evolve" / "rules.json",
                     warnings if warnings is not None else WarningLog(),
                     now=lambda: NOW, **kw)  # type: ignore[arg-type]


def test_fresh_store_has_the_seeds_and_writes_nothing(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    assert len(store.book.rules) == len(seed_rules())
    assert store.save() is False
    assert not (tmp_path / "proj").exists() and not (tmp_path / "home").exists()
    assert len(open_store(tmp_path, seeds=False).book.rules) == 0


def test_learned_rules_survive_a_restart_in_their_scope_file(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    fp = analyze("edit", "old_str not found", "python", model="qwen2.5-coder:7b")
    project_rule = store.book.learn(fp, STRIP, NOW, proven=True)
    user_rule = store.book.learn(fp, Repair("action", guidance="g", action="reread_file"), NOW,
                                 scope="user")
    assert project_rule and user_rule and store.save()
    project = json.loads((tmp_path / "proj/.slmcode/evolve/rules.json").read_text())
    user = json.loads((tmp_path / "home/evolve/rules.json").read_text())
    assert [r["id"] for r in project["rules"]] == [project_rule.id]
    assert [r["id"] for r in user["rules"]] == [user_rule.id]
    again = open_store(tmp_path)
    assert again.book.get(project_rule.id) == project_rule
    assert again.book.get(user_rule.id) == user_rule
    assert again.save() is False  # nothing changed


def test_seed_stats_are_saved_in_the_project_file_and_overlaid(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    seed = seed_rules()[0]
    store.book.observe(seed.id, True, NOW)
    store.book.bind(seed.id, "fp_abc")
    assert store.save()
    saved = json.loads((tmp_path / "proj/.slmcode/evolve/rules.json").read_text())["rules"]
    assert [r["id"] for r in saved] == [seed.id]
    rule = open_store(tmp_path).book.get(seed.id)
    assert rule is not None and rule.seeded and rule.scope == "builtin"
    assert rule.successes == 1 and rule.fingerprint == "fp_abc" and rule.repair == seed.repair


def test_deleted_seeds_are_re_merged_and_retired_seeds_stay_retired(tmp_path: Path) -> None:
    path = tmp_path / "proj/.slmcode/evolve/rules.json"
    path.parent.mkdir(parents=True)
    seeds = seed_rules()
    # The user disables seed 0 by hand with a partial entry and "deletes" every other seed.
    path.write_text(json.dumps({"version": 1, "rules": [{"id": seeds[0].id, "retired": True}]}))
    store = open_store(tmp_path)
    assert len(store.book.rules) == len(seed_rules())
    assert store.book.get(seeds[0].id).retired  # type: ignore[union-attr]
    fp = analyze("edit", "old_str still has a line-number prefix", "go")
    pick = lookup(store.book, fp, "line-number prefix")
    assert pick is None or pick.rule.id != seeds[0].id
    # Still retired after a save/load cycle triggered by other changes.
    store.book.observe(seeds[1].id, True, NOW)
    store.save()
    assert open_store(tmp_path).book.get(seeds[0].id).retired  # type: ignore[union-attr]


def test_persisted_seed_definition_cannot_be_overridden(tmp_path: Path) -> None:
    path = tmp_path / "proj/.slmcode/evolve/rules.json"
    path.parent.mkdir(parents=True)
    seed = seed_rules()[8]
    entry = {**seed.to_dict(), "repair": {"kind": "shell", "guidance": "x", "command": "rm -rf /"},
             "successes": 2}
    path.write_text(json.dumps({"version": 1, "rules": [entry]}))
    rule = open_store(tmp_path).book.get(seed.id)
    assert rule is not None and rule.repair == seed.repair and rule.successes == 2


def test_corrupt_rules_json_is_set_aside_and_seeds_still_work(tmp_path: Path) -> None:
    path = tmp_path / "proj/.slmcode/evolve/rules.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"rules": [ {"id": ')
    warnings = WarningLog()
    store = open_store(tmp_path, warnings)
    assert len(store.book.rules) == len(seed_rules())
    assert (path.parent / "rules.json.corrupt").exists() and not path.exists()
    assert any("rules.json" in str(w["text"]) for w in warnings.recent())
    store.book.learn(analyze("edit", "old_str not found", "go"), STRIP, NOW)
    assert store.save() and json.loads(path.read_text())["rules"]


def test_garbage_entries_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "proj/.slmcode/evolve/rules.json"
    path.parent.mkdir(parents=True)
    good = {"id": "rule_x", "trigger": {"class": "timeout"},
            "repair": {"kind": "guidance", "guidance": "wait"}, "successes": 1}
    path.write_text(json.dumps({"rules": [1, "x", {"id": "rule_nothing"}, good, None]}))
    store = open_store(tmp_path)
    assert len(store.book.rules) == len(seed_rules()) + 1 and store.book.get("rule_x") is not None


def test_forget_deletes_both_files_and_restores_the_seeds(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    fp = analyze("edit", "old_str not found", "go", model="m")
    store.book.learn(fp, STRIP, NOW)
    store.book.learn(fp, STRIP, NOW, scope="user")
    store.book.retire(seed_rules()[0].id)
    store.save()
    assert store.forget() == 2
    assert not (tmp_path / "proj/.slmcode/evolve/rules.json").exists()
    assert not (tmp_path / "home/evolve/rules.json").exists()
    assert len(store.book.rules) == len(seed_rules()) and not any(r.retired for r in store.book.rules.values())


def test_user_rules_are_shared_between_project_stores(tmp_path: Path) -> None:
    home = tmp_path / "home/evolve/rules.json"
    a = RuleStore(tmp_path / "a/rules.json", home, WarningLog(), now=lambda: NOW)
    b = RuleStore(tmp_path / "b/rules.json", home, WarningLog(), now=lambda: NOW)
    fp = analyze("edit", "old_str not found", "go", model="qwen2.5-coder:7b")
    rule = a.book.learn(fp, STRIP, NOW, scope="user")
    assert rule is not None and a.save()
    assert b.refresh_user() and b.book.get(rule.id) == rule
    assert not b.refresh_user()
    b.book.observe(rule.id, True, NOW)
    b.save()
    assert a.refresh_user() and a.book.get(rule.id).successes == 1  # type: ignore[union-attr]
    assert not (tmp_path / "a/rules.json").exists()


def test_read_only_store_never_writes(tmp_path: Path) -> None:
    store = open_store(tmp_path, read_only=True)
    store.book.learn(analyze("edit", "old_str not found", "go"), STRIP, NOW)
    assert store.save() is False
    assert not (tmp_path / "proj").exists()


def test_a_typed_repair_spec_is_a_record_and_text_only_in_the_file(tmp_path: Path) -> None:
    from slmactor.logic.evolve import typed_repairs as tr

    store = open_store(tmp_path)
    fp = analyze("Bash", "pytest: command not found", family="shell")
    rule = tr.learn(store.book, fp, tr.Call("Bash", {"command": "pytest -q"}, "shell"),
                    tr.Call("Bash", {"command": "uv run pytest -q"}, "shell"), NOW, run="r1")
    assert rule is not None and rule.repair.spec is not None and store.save()
    [stored] = json.loads((tmp_path / "proj/.slmcode/evolve/rules.json").read_text())["rules"]
    # On disk the canonical text files have always held (old files and signatures read as
    # before); everywhere else a record.
    assert json.loads(stored["repair"]["spec"]) == rule.repair.spec.to_dict()
    again = open_store(tmp_path).book.get(rule.id)
    assert again == rule and again.repair.spec == rule.repair.spec
    # A file written before specs were records: its rule keeps its id and its content.
    legacy = {**stored, "repair": {**stored["repair"], "spec": json.dumps(
        {"what": dict(rule.repair.spec.what), "when": dict(rule.repair.spec.when)})}}
    (tmp_path / "proj/.slmcode/evolve/rules.json").write_text(json.dumps({"version": 1,
                                                                          "rules": [legacy]}))
    assert open_store(tmp_path).book.get(rule.id) == rule
