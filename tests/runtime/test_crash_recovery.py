"""Recovery after SIGKILL: the stale ctl.sock is replaced by an autostarting command, a
live run's working memory comes back from its checkpoint, and finish reports saved before the
crash are replayed at start for every project that has them — no ask to those projects needed.

Before: autostart saw the stale socket file and started nothing (commands failed after ~10 s),
working memory was lost on every restart, and saved reports waited for the project's next use.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq

from slmactor.client import Client
from slmactor.protocol import PROTOCOL_VERSION
from slmactor.protocol.messages import RunFinish
from slmactor.testing import slack, spawn_daemon, stop_quietly, wait_for

pytestmark = pytest.mark.timeout(120)


def extra(client: Client, actor: str) -> dict[str, Any]:
    rows = {row["name"]: row for row in client.status()["actors"]}
    return dict(rows[actor].get("extra", {}))


def pending(project: Path) -> list[Path]:
    return sorted((project / ".slmcode" / "evolve" / "pending").glob("fin_*.json"))


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_sigkill_then_an_autostarting_command_restores_everything() -> None:
    first = spawn_daemon(env={"SLMACTOR_WORKING_CHECKPOINT_SECONDS": "0.2"})
    other = first.base / "project2"
    other.mkdir()
    restarted_pid = 0
    ctx: zmq.Context[Any] = zmq.Context()
    stall = ctx.socket(zmq.DEALER)
    stall.setsockopt(zmq.LINGER, 0)
    try:
        with first.client() as client:
            client.run_start("live", task="fix the flaky test")
            client.record_tool("live", "Read", path="src/app.py")
            client.record_tool("live", "Bash", command="pytest -q", ok=False, error="1 failed")
            client.decide("live", "use a fixture")
            before = client.working_snapshot("live")
            assert before["caught_up"] and before["snapshot"]["counters"]["calls"] == 2
            applied = {r["name"]: r for r in client.status()["actors"]}["working"]["processed"]
            wait_for(lambda: extra(client, "working").get("checkpoint_processed", 0) >= applied,
                     "a checkpoint holding the run")
            # Hold recall so the finish pipelines (episode.append first) cannot finish before the
            # kill: their reports stay saved in each project's pending journal.
            stall.connect(f"ipc://{first.runtime_dir / 'ctl.sock'}")
            stall.send_multipart([b"debug.crash", msgpack.packb(
                {"v": PROTOCOL_VERSION, "id": "stall", "actor": "recall", "how": "stall"})])
            for n, project in enumerate((first.project, other)):
                with Client(first.runtime_dir, project=project) as asker:
                    assert asker.ask(RunFinish(report={"run_id": f"fin-{n}", "query": "q",
                                                       "planned_tasks": 1, "completed_tasks": 1}))
        assert pending(first.project) and pending(other)
        os.kill(first.pid, signal.SIGKILL)
        first.proc.wait(10)
        assert (first.runtime_dir / "ctl.sock").exists()  # what SIGKILL leaves behind

        started = time.monotonic()
        env = first.env | {"XDG_STATE_HOME": str(first.base / "state"), "NOTIFY_SOCKET": ""}
        done = subprocess.run(
            [sys.executable, "-m", "slmactor", "--runtime-dir", str(first.runtime_dir),
             "--project", str(first.project), "--json", "metrics", "show"],
            capture_output=True, text=True, env=env, timeout=60, check=False,
        )
        took = time.monotonic() - started
        assert done.returncode == 0, done.stdout + done.stderr
        assert took < slack(3.0), f"autostart took {took:.2f} s"
        with Client(first.runtime_dir, project=first.project) as client:
            status = client.status()
            restarted_pid = status["pid"]
            assert restarted_pid != first.pid
            assert status["health"] == "healthy"
            # Both projects' saved reports are replayed without anyone asking about project2.
            wait_for(lambda: not pending(first.project) and not pending(other), "the replays")
            replayed_by = client.status()["uptime_s"]
            print(f"autostart {took:.2f} s; replays done by uptime {replayed_by:.2f} s")
            assert extra(client, "reflector")["replays_at_start"] == 2
            assert extra(client, "working")["runs_restored"] == 1
            after = client.working_snapshot("live")
            assert after["snapshot"] == before["snapshot"]
            assert "use a fixture" in client.working_render("live")
    finally:
        stall.close(linger=0)
        ctx.term()
        if restarted_pid:
            os.kill(restarted_pid, signal.SIGTERM)
            wait_for(lambda: _gone(restarted_pid), "the restarted daemon to exit")
        stop_quietly(first)


def test_a_checkpoint_round_trips_through_a_clean_restart_and_a_reset_is_not_resurrected() -> None:
    first = spawn_daemon()
    try:
        with first.client() as client:
            client.run_start("keep", task="t1")
            client.run_start("drop", task="t2")
            client.record_tool("keep", "Edit", path="a.py")
            kept = client.working_snapshot("keep")
            client.run_reset("drop")
        assert first.stop() == 0
        checkpoint = json.loads(next(first.home.rglob("working.checkpoint.json")).read_text())
        assert [run["run_id"] for run in checkpoint["runs"]] == ["keep"]
        (first.base / "notify.sock").unlink()
        second = spawn_daemon(base=first.base, runtime_dir=first.runtime_dir, home=first.home,
                              project=first.project)
        try:
            with second.client() as client:
                assert client.working_snapshot("keep")["snapshot"] == kept["snapshot"]
                assert client.working_snapshot("drop")["live"] is False
        finally:
            stop_quietly(second)
    finally:
        stop_quietly(first)


def test_the_working_table_size_is_configurable_and_eviction_shows_in_status() -> None:
    daemon = spawn_daemon(env={"SLMACTOR_WORKING_RUNS": "2"})
    try:
        with daemon.client() as client:
            for run_id in ("a", "b", "c"):
                client.run_start(run_id)
            working = extra(client, "working")
            assert (working["runs_max"], working["runs_live"], working["runs_evicted"]) == (2, 2, 1)
            assert client.working_snapshot("a")["live"] is False
    finally:
        stop_quietly(daemon)
