"""The runtime end to end: a real daemon on temp ipc sockets, driven by the real client."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from slmactor.client import Client, DaemonUnavailable, RequestFailed
from slmactor.protocol import ErrorCode
from slmactor.protocol.messages import DaemonStop, DebugCrash, Ping, RecordTool
from slmactor.testing import DaemonProcess, actor_row, slack, spawn_daemon, stop_quietly, wait_for


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
    assert elapsed < slack(3.0)  # start-up included; the lock check itself is immediate
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
    assert time.monotonic() - started < slack(3.0)


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
    assert time.monotonic() - started < slack(3.0)


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
    assert time.monotonic() - started < slack(2.0)
    assert results.count(False) == client.dropped > 0
    close_started = time.monotonic()
    client.close()
    assert time.monotonic() - close_started < slack(1.0)


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


def test_close_confirms_a_backlog_of_tells(daemon: DaemonProcess) -> None:
    # More tells than the daemon's inbox for one connection (256) holds: close() returns once the
    # daemon confirmed them — nothing dropped or unconfirmed, every tell applied.
    sender = daemon.client(tell_hwm=100_000)
    for i in range(30_000):
        sender.record_tool("run-confirm", "Bash", command=f"echo {i}")
    dropped_while_sending = sender.dropped
    sender.close()
    assert sender.unconfirmed == 0
    assert sender.dropped == dropped_while_sending
    with daemon.client() as client:
        calls = client.working_snapshot("run-confirm", wait=False)["snapshot"]["counters"]["calls"]
    assert calls == 30_000 - dropped_while_sending


def test_close_counts_tells_a_stalled_daemon_could_not_confirm(daemon: DaemonProcess) -> None:
    # The working actor held by a debug stall cannot answer: close() gives up within its budget
    # and counts the backlog as unconfirmed (and in `dropped`) instead of losing it silently.
    holder = daemon.client(timeout=10.0, retries=1)
    with daemon.client() as client:
        before = actor_row(client, "working")["processed"]
        holding = threading.Thread(target=lambda: holder.ask(DebugCrash(actor="working", how="stall")))
        holding.start()
        try:
            wait_for(lambda: actor_row(client, "working")["processed"] > before, "the working actor stalled")
            sender = daemon.client(timeout=0.3, retries=1)
            sent = sum(sender.record_tool("run-stalled", "Bash", command=f"echo {i}") for i in range(1_000))
            started = time.monotonic()
            sender.close()
            took = time.monotonic() - started
            assert sender.unconfirmed == sent
            assert sender.dropped == 1_000
            assert took < slack(3.0), f"close() took {took:.1f} s"
        finally:
            client.ask(DebugCrash(actor="working", how="release"))
            holding.join(10)
            holder.close()
