"""The runtime end to end: a real daemon on temp ipc sockets, driven by the real client."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from slmactor.client import Client, DaemonUnavailable, RequestFailed
from slmactor.protocol import ErrorCode
from slmactor.protocol.messages import DaemonStop, DebugCrash, Ping, RecordTool
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly


def wait_for(predicate: Callable[[], Any], what: str, timeout: float = 10.0) -> Any:
    """Poll a real query (each poll is a round trip to the daemon) until it holds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")


def actor_row(client: Client, name: str) -> dict[str, Any]:
    rows = {row["name"]: row for row in client.status()["actors"]}
    return rows[name]


def test_ask_round_trip_and_tells_reach_the_events_actor(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        assert client.ask(Ping(actor="recall"))["actor"] == "recall"
        for i in range(200):
            assert client.record_tool("run-1", "Bash", command=f"echo {i}")
        assert client.tell(RecordTool(run_id="run-1", tool="Read", path="a.py"))
        assert client.dropped == 0
        wait_for(lambda: actor_row(client, "working")["processed"] >= 201, "201 events processed")


def test_unknown_actor_and_tell_on_ctl_socket(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        with pytest.raises(RequestFailed) as info:
            client.ask(Ping(actor="nobody"))
        assert info.value.code == ErrorCode.NOT_FOUND
        # A tell sent as an ask on ctl.sock is delivered and acknowledged.
        assert client.ask(RecordTool(run_id="r", tool="Bash")) == {"accepted": True}


def test_second_daemon_on_the_same_store_is_refused_quickly(daemon: DaemonProcess) -> None:
    started = time.monotonic()
    second = subprocess.run(
        [sys.executable, "-m", "slmactor", "serve"],
        env=daemon.env | {"NOTIFY_SOCKET": ""},
        check=False,
        capture_output=True,
        text=True,
        timeout=10,
    )
    elapsed = time.monotonic() - started
    assert second.returncode != 0
    assert f"already running as pid {daemon.pid}" in second.stderr
    assert elapsed < 3.0  # Python start-up included; the lock check itself is immediate
    with daemon.client() as client:  # the first daemon still owns its sockets
        assert client.ping()["pong"] is True


def test_sigterm_drains_flushes_and_exits_zero(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        for _ in range(1000):
            client.record_tool("run-t", "Edit", path="x.py", ok=True)
    assert daemon.stop(signal.SIGTERM) == 0
    log = daemon.log()
    assert "stopping: draining inboxes and flushing stores" in log
    assert "stopped (exit 0)" in log
    assert not (daemon.runtime_dir / "ctl.sock").exists()
    # The locks went with the process: a new daemon starts on the same store.
    again = spawn_daemon(base=daemon.base / "again", runtime_dir=daemon.runtime_dir, home=daemon.home,
                         project=daemon.project)
    try:
        with again.client() as client:
            assert client.ping()["pong"] is True
    finally:
        stop_quietly(again)


def test_daemon_stop_request(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        assert client.ask(DaemonStop())["pid"] == daemon.pid
    assert daemon.wait() == 0


def test_failing_ask_answers_an_error_and_the_actor_keeps_running(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        with pytest.raises(RequestFailed) as info:
            client.ask(DebugCrash(actor="bandit", how="ask"))
        assert info.value.code == ErrorCode.INTERNAL
        assert "debug crash requested" in info.value.reason
        row = actor_row(client, "bandit")
        assert row["state"] == "running"
        assert row["restarts"] == 0
        assert row["errors"] == 1
        assert client.ping("bandit")["pong"] is True


def test_crashed_actor_is_restarted_and_shown_in_status(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        assert client.ask(DebugCrash(actor="graph", how="tell")) == {"accepted": True}
        row = wait_for(
            lambda: (r := actor_row(client, "graph"))["restarts"] >= 1 and r["state"] == "running" and r,
            "graph restarted",
        )
        assert "debug crash requested" in row["last_error"]
        assert row["last_error_at"] > 0
        assert client.ping("graph")["pong"] is True
        status = client.status()
        assert status["health"] == "degraded"  # a restart inside the restart window
    cli = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "status"],
        capture_output=True, text=True, env=daemon.env, timeout=30, check=False,
    )
    assert cli.returncode == 150  # degraded has its own code (usage errors are 2)
    assert "debug crash requested" in cli.stdout


def metrics_back_or_daemon_gone(proc: DaemonProcess, client: Client) -> bool:
    if proc.proc.poll() is not None:
        return True
    try:
        return bool(actor_row(client, "metrics")["state"] == "running")
    except DaemonUnavailable:
        # A daemon past its budget is draining and flushing on its way out; it stops
        # answering before its pid is reaped. Keep polling until the exit is visible.
        return False


def test_crashing_past_the_restart_budget_takes_the_daemon_down() -> None:
    proc = spawn_daemon(env={"SLMACTOR_MAX_RESTARTS": "2", "SLMACTOR_RESTART_WINDOW": "60"})
    try:
        with proc.client(timeout=1.0, retries=1) as client:
            for _ in range(3):
                try:
                    client.ask(DebugCrash(actor="metrics", how="tell"))
                except (RequestFailed, DaemonUnavailable):
                    break  # the actor or the daemon is already gone
                wait_for(lambda: metrics_back_or_daemon_gone(proc, client), "metrics back or daemon gone")
        assert proc.wait(timeout=15) == 3
        assert "exhausted its restart budget" in proc.log()
    finally:
        stop_quietly(proc)


def test_status_without_a_daemon_exits_1_quickly(tmp_path: Any) -> None:
    runtime = tmp_path / "rt"
    runtime.mkdir()
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(runtime), "status"],
        capture_output=True, text=True, timeout=30, check=False,
    )
    assert result.returncode == 1
    assert "not running" in result.stdout
    assert time.monotonic() - started < 3.0


def test_status_with_a_stale_socket_file_exits_1_within_3s(tmp_path: Any) -> None:
    import socket as pysocket

    runtime = tmp_path / "rt"
    runtime.mkdir()
    stale = pysocket.socket(pysocket.AF_UNIX, pysocket.SOCK_STREAM)
    stale.bind(str(runtime / "ctl.sock"))
    stale.close()  # the file stays; nobody listens (a daemon that was SIGKILLed)
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(runtime), "--json", "status"],
        capture_output=True, text=True, timeout=30, check=False,
    )
    assert result.returncode == 1
    assert '"running": false' in result.stdout
    assert time.monotonic() - started < 3.0


def test_cli_status_json_all_nine_running(daemon: DaemonProcess) -> None:
    import json

    result = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "--json", "status"],
        capture_output=True, text=True, env=daemon.env, timeout=30, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    status = json.loads(result.stdout)
    assert len(status["actors"]) == 9
    assert {row["state"] for row in status["actors"]} == {"running"}
    assert status["pid"] == daemon.pid
    assert status["version_mismatch"] is False


def test_tells_never_block_or_raise_without_a_daemon(tmp_path: Any) -> None:
    runtime = tmp_path / "rt"
    runtime.mkdir()
    client = Client(runtime, tell_hwm=100)
    started = time.monotonic()
    results = [client.record_tool("r", "Bash", command="ls") for _ in range(5000)]
    assert time.monotonic() - started < 2.0
    assert results.count(False) == client.dropped > 0
    close_started = time.monotonic()
    client.close()
    assert time.monotonic() - close_started < 1.0


def test_ask_without_a_daemon_fails_fast_with_a_clear_error(tmp_path: Any) -> None:
    with Client(tmp_path, timeout=0.2, retries=2) as client, pytest.raises(DaemonUnavailable, match="no socket"):
        client.ping()


def test_runtime_dir_with_loose_mode_is_tightened(tmp_path: Any) -> None:
    from slmactor.runtime.rundir import RuntimeDirError, ensure_runtime_dir

    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    os.chmod(loose, 0o777)
    ensure_runtime_dir(loose)
    assert (loose.stat().st_mode & 0o777) == 0o700
    link = tmp_path / "link"
    link.symlink_to(loose)
    with pytest.raises(RuntimeDirError, match="symlink"):
        ensure_runtime_dir(link)
    with pytest.raises(RuntimeDirError, match="longer than"):
        ensure_runtime_dir(tmp_path / ("x" * 120))


def test_tells_queued_at_close_still_reach_the_daemon(daemon: DaemonProcess) -> None:
    # Fewer tells than the client's queue holds (tell_hwm 10,000): none may be dropped however
    # slowly a loaded machine lets the daemon read, and many are still queued at close.
    sender = daemon.client()
    try:
        for i in range(8_000):
            sender.record_tool("run-close", "Bash", command=f"echo {i}")
        assert sender.dropped == 0
    finally:
        sender.close()  # right away: some tells are still in the client's queue
    with daemon.client() as client:
        wait_for(lambda: actor_row(client, "working")["processed"] >= 8_000, "all 8000 tells applied")
