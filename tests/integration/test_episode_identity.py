"""Idempotent finishes against a real daemon: the same `run.finish` sent twice —
also across a daemon restart, when the daemon no longer remembers the first — is one episode;
two runs of one task in one second are two; a client's retry of a report without a run id
(same request id) is one episode."""

from __future__ import annotations

import json
from typing import Any

from slmactor.protocol.messages import EpisodeRecent, RunFinish
from slmactor.testing import DaemonProcess, spawn_daemon


def _report(run_id: str) -> dict[str, Any]:
    return {
        "run_id": run_id, "query": "fix the flaky test in a.py", "language": "python",
        "planned_tasks": 1, "completed_tasks": 1, "files_changed": ["a.py"],
        "model": "qwen2.5-coder:7b",
    }  # fmt: skip


def _episodes(daemon: DaemonProcess) -> list[dict[str, Any]]:
    """The episodes on disk (every line of the log), and the daemon's count agrees."""
    path = daemon.project / ".slmcode" / "memory" / "episodes.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    with daemon.client(timeout=30) as client:
        assert client.ask(EpisodeRecent(n=50))["total"] == len(records)
    return records


def test_the_same_finish_twice_even_across_a_restart_is_one_episode(
    daemon: DaemonProcess,
) -> None:
    with daemon.client(timeout=30) as client:
        client.ask(RunFinish(report=_report("run-a"), wait=True))
        client.ask(RunFinish(report=_report("run-a"), wait=True))
    assert [e["run_id"] for e in _episodes(daemon)] == ["run-a"]
    assert daemon.stop() == 0
    again = spawn_daemon(
        base=daemon.base / "again", runtime_dir=daemon.runtime_dir, home=daemon.home,
        project=daemon.project,
    )
    try:
        with again.client(timeout=30) as client:
            client.ask(RunFinish(report=_report("run-a"), wait=True))
        assert [e["run_id"] for e in _episodes(again)] == ["run-a"]
    finally:
        again.stop()


def test_two_runs_of_one_task_in_one_second_are_two_episodes(daemon: DaemonProcess) -> None:
    with daemon.client(timeout=30) as client:
        client.ask(RunFinish(report=_report("run-1"), wait=True))
        client.ask(RunFinish(report=_report("run-2"), wait=True))
    assert sorted(e["run_id"] for e in _episodes(daemon)) == ["run-1", "run-2"]


def test_a_retried_request_without_run_id_is_one_episode(daemon: DaemonProcess) -> None:
    with daemon.client(timeout=30) as client:
        # A client retry resends the same frames (same request id), as Lazy Pirate does.
        rid, frames = client._frames(RunFinish(report=_report(""), wait=True))
        first = client._ask_frames(rid, frames)
        second = client._ask_frames(rid, frames)
        assert first["accepted"] and second["duplicate"] is True
        client.ask(RunFinish(report=_report(""), wait=True))  # a new request: a new run
    assert len(_episodes(daemon)) == 2
