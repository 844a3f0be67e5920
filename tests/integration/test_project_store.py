"""One writer per project store, and a project's store is not trusted blindly.

Real daemons on real sockets: two daemons with different homes on one project — the second is
refused with a message naming the first, and no fact the first acknowledged is lost; a
`.slmcode` that is a symlink (or holds one), or belongs to another user, is refused and nothing
is written outside the project."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from slmactor.client import RequestFailed
from slmactor.protocol import ErrorCode
from slmactor.protocol.messages import FactList, FactObserve, LessonAdd, RunFinish
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly


def _facts_on_disk(project: Path) -> set[str]:
    data = json.loads((project / ".slmcode" / "memory" / "facts.json").read_text())
    return {fact["subject"] for fact in data["facts"]}


def test_two_daemons_two_homes_one_project_the_second_refuses(daemon: DaemonProcess) -> None:
    other = spawn_daemon(base=daemon.base / "other", project=daemon.project)
    acknowledged: set[str] = set()
    refused: list[str] = []
    try:
        with daemon.client(timeout=30) as first, other.client(timeout=30) as second:
            for i in range(100):
                client = first if i % 2 == 0 else second
                subject = f"module-{i}"
                try:
                    client.ask(FactObserve(kind="convention", subject=subject, text=f"uses {i}"))
                    acknowledged.add(subject)
                except RequestFailed as exc:
                    assert exc.code == ErrorCode.BAD_PROJECT
                    refused.append(exc.reason)
        assert len(acknowledged) == 50 and len(refused) == 50
        assert all(s.endswith(("0", "2", "4", "6", "8")) for s in acknowledged)
        assert f"pid {daemon.pid}" in refused[0] and str(daemon.home) in refused[0]
        assert "in use by another slmactor daemon" in refused[0]
    finally:
        assert daemon.stop() == 0
        stop_quietly(other)
    assert acknowledged <= _facts_on_disk(daemon.project)  # 0 acknowledged facts lost


def test_the_lock_is_released_when_its_daemon_dies(daemon: DaemonProcess) -> None:
    with daemon.client(timeout=30) as client:
        client.ask(FactObserve(kind="convention", subject="before", text="kill"))
    daemon.proc.kill()
    daemon.proc.wait()
    after = spawn_daemon(base=daemon.base / "after", project=daemon.project)
    try:
        with after.client(timeout=30) as client:
            client.ask(FactObserve(kind="convention", subject="after", text="the kill"))
    finally:
        assert after.stop() == 0
        stop_quietly(after)
    assert {"before", "after"} <= _facts_on_disk(daemon.project)  # acknowledged = written


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("link", [".slmcode", ".slmcode/memory"])
def test_a_symlinked_store_is_refused_and_nothing_is_written_outside(
    daemon: DaemonProcess, tmp_path: Path, link: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = daemon.project / link
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(outside, target_is_directory=True)
    with daemon.client(timeout=30) as client:
        for message in (
            FactObserve(kind="convention", subject="s", text="a fact"),
            LessonAdd(lessons=[{"text": "a lesson"}]),
            RunFinish(report={"run_id": "r1", "query": "q", "files_changed": ["a.py"]}, wait=True),
        ):
            with pytest.raises(RequestFailed) as failed:
                client.ask(message)
            assert failed.value.code == ErrorCode.BAD_PROJECT
            assert "symlink" in failed.value.reason
        client.record_tool("r1", "bash", path="a.py", command="make")
        with pytest.raises(RequestFailed):
            client.working_mirror("r1")
    assert daemon.stop() == 0
    assert _files(outside) == []


def test_a_store_owned_by_another_user_is_refused(daemon: DaemonProcess) -> None:
    if os.getuid() != 0:
        pytest.skip("only root can give a directory to another user")
    store = daemon.project / ".slmcode"
    store.mkdir()
    os.chown(store, 54321, 54321)
    with daemon.client(timeout=30) as client, pytest.raises(RequestFailed) as failed:
        client.ask(FactObserve(kind="convention", subject="s", text="a fact"))
    assert failed.value.code == ErrorCode.BAD_PROJECT
    assert "uid 54321" in failed.value.reason
    assert _files(store) == []


def test_a_project_whose_store_is_the_daemons_own_user_store_is_served(tmp_path: Path) -> None:
    # `slmactor` run in the home directory (no git repository): the project's `.slmcode` is the
    # user store, which the daemon already holds; it must not refuse it as another daemon's.
    project = tmp_path / "home"
    project.mkdir()
    daemon = spawn_daemon(base=tmp_path / "d", project=project, home=project / ".slmcode")
    try:
        with daemon.client() as client:
            client.ask(FactObserve(kind="convention", subject="lint", text="run make lint"))
            assert any("make lint" in f["text"] for f in client.ask(FactList())["facts"])
    finally:
        stop_quietly(daemon)
