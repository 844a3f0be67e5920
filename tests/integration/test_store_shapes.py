"""Faults of a project store that must show as faults, through the real daemon: valid JSON of
the wrong shape in any store is quarantined as `<name>.corrupt` with a warning naming the
project (one mechanism, `JsonDoc`'s `Shape`), a `.lock/` directory a repository committed is
reclaimed with a warning instead of leaving the project unwritable, and temp files a crash left
are swept when the project's store is opened."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from slmactor.protocol.messages import (
    EpisodeRecent,
    EvolveRegressions,
    EvolveRules,
    FactList,
    FactObserve,
    PolicyWhy,
)
from slmactor.stores.base.fsutil import STALE_TEMP_SECONDS
from slmactor.testing import DaemonProcess

WRONG = {
    "evolve/rules.json": {"version": 1, "rules": "not a list"},
    "evolve/policy.json": {"version": 1, "keys": "not a map"},
    "evolve/regressions.json": {"version": 1, "checks": {"a": 1}},
    "evolve/pending/fin_0123456789ab.json": ["a journal that is a list"],
    "memory/facts.json": {"version": 1, "facts": "nope"},
    "memory/episodes.index.json": {"version": 1, "entries": 7},
}


def test_wrong_shaped_json_of_every_store_is_quarantined_with_a_warning(
        daemon: DaemonProcess) -> None:
    store = daemon.project / ".slmcode"
    for name, data in WRONG.items():
        (store / name).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        (store / name).write_text(json.dumps(data))
    with daemon.client(timeout=30) as client:
        client.ask(EvolveRules())
        client.ask(PolicyWhy(decision="edit_format", scope="project"))
        client.ask(EvolveRegressions())
        client.ask(FactList())
        client.ask(EpisodeRecent(n=3))
        status: dict[str, Any] = client.status()
    texts = [w["text"] for w in status["warnings"]]
    for name, data in WRONG.items():
        path = store / name
        assert not path.exists(), name
        corrupt = path.with_name(path.name + ".corrupt")
        assert json.loads(corrupt.read_text()) == data, name  # kept byte for byte, not lost
        assert any(f"{path.name} has the wrong shape" in t for t in texts), (name, texts)
    shaped = [w for w in status["warnings"] if "wrong shape" in w["text"]]
    assert all(w.get("project") == str(daemon.project) for w in shaped), shaped


def test_a_committed_lock_directory_is_reclaimed(daemon: DaemonProcess) -> None:
    lock = daemon.project / ".slmcode" / ".lock"
    lock.mkdir(parents=True)
    (lock / "README").write_text("committed by accident\n")
    with daemon.client(timeout=30) as client:
        client.ask(FactObserve(kind="gotcha", subject="tz", text="tests need TZ=UTC"))
        status: dict[str, Any] = client.status()
    assert lock.is_file()
    assert (lock.parent / ".lock.corrupt" / "README").read_text() == "committed by accident\n"
    reclaimed = [w for w in status["warnings"] if ".lock was not a lock file" in w["text"]]
    assert reclaimed and reclaimed[0]["project"] == str(daemon.project)
    assert (daemon.project / ".slmcode/memory/facts.json").is_file()


def test_stale_temp_files_are_swept_when_the_store_is_opened(daemon: DaemonProcess) -> None:
    memory = daemon.project / ".slmcode" / "memory"
    pending = daemon.project / ".slmcode" / "evolve" / "pending"
    memory.mkdir(parents=True)
    pending.mkdir(parents=True)
    old = time.time() - STALE_TEMP_SECONDS - 60
    stale = [memory / ".facts.json.tmp-abc123", pending / ".fin_0123456789ab.json.tmp-x1"]
    fresh = memory / ".episodes.index.json.tmp-now"  # maybe a write in flight: kept
    for path in [*stale, fresh]:
        path.write_text("half a write")
    for path in stale:
        os.utime(path, (old, old))
    with daemon.client(timeout=30) as client:
        client.ask(FactList())
    assert [p.exists() for p in stale] == [False, False]
    assert fresh.exists()
