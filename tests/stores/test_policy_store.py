"""policy.json on disk: round trip, scopes, corrupt → .corrupt + priors, read-only, hand edits."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from slmactor.logic.policy.bandit import PolicyKey
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.layout import ProjectLayout, UserLayout
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.policy import UNREADABLE_WARNING, PolicyStore

NOW = 1_790_000_000.0
KEY = PolicyKey.make("edit_format", "qwen2.5-coder", "go")


def _store(path: Path, **kwargs: object) -> PolicyStore:
    return PolicyStore(path, WarningLog(), now=lambda: NOW, **kwargs)  # type: ignore[arg-type]


def test_scopes_pick_the_seed_paths(tmp_path: Path) -> None:
    user = PolicyStore.for_user(UserLayout(tmp_path / "home"), WarningLog())
    assert user.path == tmp_path / "home" / "evolve" / "policy.json"
    project = PolicyStore.for_project(ProjectLayout(tmp_path / "repo"), WarningLog())
    assert project.path == tmp_path / "repo" / ".slmcode" / "evolve" / "policy.json"


def test_missing_file_starts_from_priors_without_warning(tmp_path: Path) -> None:
    store = _store(tmp_path / "evolve" / "policy.json")
    assert store.policy.keys == {} and len(store.warnings) == 0
    assert store.policy.arm(KEY, "search_replace").alpha == 8.0


def test_flush_writes_only_when_dirty_and_reloads_identically(tmp_path: Path) -> None:
    path = tmp_path / "evolve" / "policy.json"
    store = _store(path)
    store.flush()
    assert not path.exists()
    store.policy.update(KEY, "search_replace", 0.925, NOW)
    store.touch()
    store.flush()
    doc = json.loads(path.read_text())
    assert doc["keys"]["edit_format|qwen2.5-coder|go"]["arms"]["search_replace"]["alpha"] == 8.925
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    again = _store(path)
    assert again.policy.arm(KEY, "search_replace") == store.policy.arm(KEY, "search_replace")


def test_corrupt_file_is_quarantined_and_priors_apply(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text('{"version": 1, "keys": {')
    store = _store(path)
    assert store.policy.keys == {}
    assert UNREADABLE_WARNING in store.warnings.texts()
    assert not path.exists() and (tmp_path / "policy.json.corrupt").read_text().startswith("{")
    store.policy.update(KEY, "whole_file", 1.0, NOW)
    store.touch()
    store.flush()
    assert json.loads(path.read_text())["keys"]


def test_invalid_arms_are_dropped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"version": 1, "keys": {"edit_format|*|*": {
        "arms": {"good": {"alpha": 2, "beta": 2}, "bad": {"alpha": 0, "beta": 2}}, "pulls": 3}}}))
    store = _store(path)
    assert list(store.policy.keys["edit_format|*|*"].arms) == ["good"]
    assert any("invalid posterior" in w for w in store.warnings.texts())


def test_read_only_never_writes_creates_or_quarantines(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text("garbage")
    store = _store(path, read_only=True)
    assert path.read_text() == "garbage"  # left in place
    assert not (tmp_path / "policy.json.corrupt").exists()
    store.policy.update(KEY, "x", 1.0, NOW)
    store.touch()
    store.flush()
    assert path.read_text() == "garbage"
    with pytest.raises(StoreError):
        store.write({"version": 1, "keys": {}})
    store.forget()
    assert path.exists()
    fresh = _store(tmp_path / "none" / "policy.json", read_only=True)
    fresh.touch()
    fresh.flush()
    assert not (tmp_path / "none").exists()


def test_hand_edit_and_deletion_are_noticed(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    store = _store(path)
    store.policy.update(KEY, "search_replace", 1.0, NOW)
    store.touch()
    store.flush()
    assert not store.sync()
    doc = json.loads(path.read_text())
    doc["keys"]["edit_format|qwen2.5-coder|go"]["arms"]["search_replace"]["alpha"] = 50.0
    path.write_text(json.dumps(doc))
    os.utime(path, ns=(1, 1))  # make sure the signature differs even within one mtime tick
    assert store.sync()
    assert store.policy.arm(KEY, "search_replace").alpha == 50.0
    path.unlink()
    assert store.sync()
    assert store.policy.keys == {}
    store.flush()
    assert not path.exists()  # a deleted policy stays forgotten


def test_forget_deletes_file_and_corrupt_copies(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    (tmp_path / "policy.json.corrupt").write_text("old")
    store = _store(path)
    store.policy.update(KEY, "x", 1.0, NOW)
    store.touch()
    store.flush()
    store.forget()
    assert not path.exists() and not (tmp_path / "policy.json.corrupt").exists()
    assert store.policy.keys == {}
