"""A team's learning merges through git: two branches each learn a rule and strengthen a shared
one; `git merge` runs the slmactor merge driver (registered by `slmactor git setup`) and the real
daemon serves both rules with the evidence of both branches. Bundles carry the same records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from slmactor.logic.evolve.repairs import Repair
from slmactor.logic.failures.fingerprint import Fingerprint
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.rules import RuleStore
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

NOW = 1_780_000_000.0


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def slm(repo: Path, *argv: str, env: dict[str, str] | None = None,
        ok: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "slmactor", "--project", str(repo), "--json",
                           *argv], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})}, check=False)
    if ok:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


def fp(tool: str) -> Fingerprint:
    return Fingerprint(id=f"fp_{tool}", cls="edit_no_match", tool=tool, language="python",
                       model_family="", norm="", salient="")


STRIP = Repair(kind="transform_args", transform="strip_line_number_prefix",
               guidance="remove the line-number gutter from old_str")


def learn(repo: Path, home: Path, tool: str, run: str, now: float) -> None:
    store = RuleStore(repo / ".slmcode/evolve/rules.json", home / "evolve/rules.json",
                      WarningLog(), now=lambda: now)
    assert store.book.learn(fp(tool), STRIP, now, evidence=run, proven=True) is not None
    store.save()


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README").write_text("app\n")
    yield root


def rules_by_tool(data: Any) -> dict[str, dict[str, Any]]:
    rules = data.get("rules", data) if isinstance(data, dict) else data
    return {r["trigger"]["tool"]: r for r in rules if r.get("scope") == "project"}


def test_git_merge_of_two_learning_branches_gives_the_daemon_both_rules_and_summed_evidence(
    repo: Path, tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    learn(repo, home, "edit", "run-base", NOW)
    setup = json.loads(slm(repo, "git", "setup").stdout)
    assert setup["gitignore"] == "written" and len(setup["attributes_added"]) == 5
    (repo / ".slmcode/memory").mkdir(parents=True, exist_ok=True)
    (repo / ".slmcode/memory/episodes.jsonl").write_text('{"secret": "per machine"}\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    tracked = git(repo, "ls-files").split()
    assert ".slmcode/evolve/rules.json" in tracked
    assert ".slmcode/memory/episodes.jsonl" not in tracked  # episodes never leave the machine

    git(repo, "checkout", "-q", "-b", "alice")
    learn(repo, home, "write", "run-alice-1", NOW + 10)   # a new rule
    learn(repo, home, "edit", "run-alice-2", NOW + 20)    # the shared rule strengthened
    git(repo, "commit", "-q", "-am", "alice learned")
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", "bob")
    learn(repo, home, "apply_patch", "run-bob-1", NOW + 30)
    learn(repo, home, "edit", "run-bob-2", NOW + 40)
    git(repo, "commit", "-q", "-am", "bob learned")

    git(repo, "checkout", "-q", "alice")
    git(repo, "merge", "-q", "--no-edit", "bob")  # fails (assert) on a conflict
    assert "<<<<<<<" not in (repo / ".slmcode/evolve/rules.json").read_text()

    daemon: DaemonProcess = spawn_daemon(base=tmp_path / "d", project=repo)
    try:
        listed = subprocess.run(
            [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
             "--project", str(repo), "--json", "evolve", "rules"], capture_output=True,
            text=True, timeout=60, env=daemon.env, check=False)
        assert listed.returncode == 0, listed.stderr
        rules = rules_by_tool(json.loads(listed.stdout))
    finally:
        stop_quietly(daemon)
    assert set(rules) == {"edit", "write", "apply_patch"}
    # base: 1 success (proven); each branch: one more, from its own run: 1 + 1 + 1.
    assert rules["edit"]["successes"] == 3
    assert sorted(rules["edit"]["evidence"]) == ["run-alice-2", "run-base", "run-bob-2"]


def test_merge_driver_writes_one_rule_per_line_and_a_self_merge_is_byte_identical(
    repo: Path, tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    learn(repo, home, "edit", "r1", NOW)
    learn(repo, home, "write", "r2", NOW + 1)
    path = repo / ".slmcode/evolve/rules.json"
    before = path.read_bytes()
    lines = before.decode().splitlines()
    assert sum(1 for line in lines if line.lstrip().startswith('{"confidence"')) == 2
    copy = tmp_path / "copy.json"
    copy.write_bytes(before)
    slm(repo, "merge-driver", str(path), str(copy), str(path), ".slmcode/evolve/rules.json")
    assert copy.read_bytes() == before


def test_merge_driver_leaves_a_conflict_for_a_side_that_is_not_a_store(
    repo: Path, tmp_path: Path,
) -> None:
    ours = tmp_path / "ours.json"
    ours.write_text('{"rules": []}\n')
    theirs = tmp_path / "theirs.json"
    theirs.write_text("<<<<<<< not json\n")
    done = slm(repo, "merge-driver", str(ours), str(ours), str(theirs),
               ".slmcode/evolve/rules.json", ok=False)
    assert done.returncode == 1 and "not JSON" in done.stdout
    assert ours.read_text() == '{"rules": []}\n'


def test_bundle_round_trip_counts_evidence_once_however_often_imported(tmp_path: Path) -> None:
    home = tmp_path / "home"
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    for root in (alice, bob):
        root.mkdir()
    learn(alice, home, "edit", "a1", NOW)
    learn(bob, home, "write", "b1", NOW)
    bundle = tmp_path / "alice.bundle"
    exported = json.loads(slm(alice, "export", "--bundle", str(bundle)).stdout)
    assert exported["records"]["rules"] == 1
    first = json.loads(slm(bob, "import", "--bundle", str(bundle)).stdout)
    assert first["stores"]["rules"] == {"before": 1, "after": 2, "changed": 1}
    again = json.loads(slm(bob, "import", "bundle", str(bundle)).stdout)
    assert again["stores"]["rules"]["changed"] == 0
    learn(alice, home, "edit", "a2", NOW + 5)  # alice learns more, exports again
    slm(alice, "export", "--bundle", str(bundle))
    slm(bob, "import", "--bundle", str(bundle))
    store = RuleStore(bob / ".slmcode/evolve/rules.json", None, WarningLog(), seeds=False)
    edit = next(r for r in store.book.rules.values() if r.trigger.tool == "edit")
    assert edit.successes == 2 and set(edit.evidence) == {"a1", "a2"}


def test_import_refuses_a_file_that_is_not_a_bundle(tmp_path: Path) -> None:
    bad = tmp_path / "x.bundle"
    bad.write_text('{"hello": 1}\n')
    done = slm(tmp_path, "import", "--bundle", str(bad), ok=False)
    assert done.returncode == 2 and "not an slmactor bundle" in done.stdout


def test_import_is_refused_while_the_daemon_holds_the_project(tmp_path: Path) -> None:
    home = tmp_path / "home"
    source = tmp_path / "source"
    source.mkdir()
    learn(source, home, "edit", "s1", NOW)
    bundle = tmp_path / "s.bundle"
    slm(source, "export", "--bundle", str(bundle))
    daemon = spawn_daemon(base=tmp_path / "d")
    try:
        with daemon.client(project=daemon.project) as client:
            client.recall("anything")  # the daemon claims the project's store
        done = subprocess.run(
            [sys.executable, "-m", "slmactor", "--project", str(daemon.project), "--json",
             "import", "--bundle", str(bundle)], capture_output=True, text=True, timeout=60,
            env=daemon.env, check=False)
        assert done.returncode == 1 and "slmactor stop" in done.stdout
        assert not (daemon.project / ".slmcode/evolve/rules.json").exists()  # nothing written
    finally:
        stop_quietly(daemon)
