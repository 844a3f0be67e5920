"""Remote endpoints on loopback tcp with CurveZMQ: an allowed key is served and records a session
into the host's project; an unknown key and a client without CURVE get nothing and are counted;
non-loopback tcp without CURVE, or tcp without the server key, refuses to start."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from slmactor.client import Client, DaemonUnavailable, RequestFailed
from slmactor.protocol import codec
from slmactor.protocol.messages import DaemonStop, Status
from slmactor.remote import Target, TargetProblem, target
from slmactor.stores.keys import allow, create, keys_dir, load_pair
from slmactor.testing import (
    DaemonFailedToStart,
    DaemonProcess,
    spawn_daemon,
    stop_quietly,
    wait_for,
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[tuple[DaemonProcess, dict[str, Any]]]:
    base = tmp_path / "d"
    home = base / "home"
    server = create(home, "server")
    alice_home = tmp_path / "alice"
    create(alice_home, "client")
    allow(home, str(keys_dir(alice_home) / "client.key"), name="alice")
    mallory_home = tmp_path / "mallory"
    create(mallory_home, "client")
    ctl, events = f"tcp://127.0.0.1:{free_port()}", f"tcp://127.0.0.1:{free_port()}"
    daemon = spawn_daemon(base=base, home=home, env={
        "SLMACTOR_TCP_CTL": ctl, "SLMACTOR_TCP_EVENTS": events})
    info = {"ctl": ctl, "events": events, "server": server.public, "alice": alice_home,
            "mallory": mallory_home}
    try:
        yield daemon, info
    finally:
        stop_quietly(daemon)


def remote_env(info: dict[str, Any], who: str, **extra: str) -> dict[str, str]:
    return {"SLMACTOR_CONNECT_CTL": info["ctl"], "SLMACTOR_CONNECT_EVENTS": info["events"],
            "SLMACTOR_SERVER_KEY": info["server"],
            "SLMACTOR_CLIENT_KEY": str(keys_dir(info[who]) / "client.key_secret"), **extra}


def raw_ask(endpoint: str, curve: tuple[bytes, bytes, bytes] | None) -> list[bytes] | None:
    """One status ask on a bare DEALER; the reply, or None when nothing came in 1.5 s."""
    zctx = zmq.Context()
    sock = zctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    if curve is not None:
        sock.curve_serverkey, sock.curve_publickey, sock.curve_secretkey = curve
    sock.connect(endpoint)
    try:
        sock.send_multipart(codec.dump(Status(id="probe-1")))
        if not sock.poll(1500, zmq.POLLIN):
            return None
        return list(sock.recv_multipart())
    finally:
        sock.close(linger=0)
        zctx.term()


def remote_status(daemon: DaemonProcess) -> dict[str, Any]:
    with daemon.client() as local:
        status = local.ask(Status())
    return dict(status["remote"])


def test_an_allowed_key_records_a_session_into_the_hosts_project(
    keyed: tuple[DaemonProcess, dict[str, Any]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    daemon, info = keyed
    for name, value in remote_env(info, "alice",
                                  SLMACTOR_PATH_MAP=f"/workspace={daemon.project}").items():
        monkeypatch.setenv(name, value)
    found = target()
    assert found is not None and found.map_path("/workspace") == str(daemon.project)
    # The container's view of the project; the daemon files it under the host's path.
    with Client(daemon.runtime_dir / "nowhere", project="/workspace", remote=found,
                timeout=5.0) as remote:
        assert remote.project == str(daemon.project)
        assert remote.ask(Status())["health"] in ("healthy", "degraded")
        run = remote.start_run("fix the flaky parser test")
        assert remote.record_tool(run.run_id, "Bash", command="pytest -q", ok=False,
                                  error="1 failed")
        assert remote.record_tool(run.run_id, "Edit", path="src/parser.py", ok=True)
        finished = remote.finish_run(run.run_id, success=True, wait=True)
        assert finished.accepted and finished.success
        with pytest.raises(RequestFailed, match="FORBIDDEN"):
            remote.ask(DaemonStop())  # the host's daemon is the host user's to stop
    episodes = daemon.project / ".slmcode/memory/episodes.jsonl"
    assert run.run_id in episodes.read_text()
    report = remote_status(daemon)
    assert report["asks"]["alice"]["admitted"] >= 3
    assert report["events"]["forwarded"] >= 2
    assert report["refused"] == {"unknown_key": 0, "handshake": 0}


def test_an_unknown_key_and_a_client_without_curve_get_nothing_and_are_counted(
    keyed: tuple[DaemonProcess, dict[str, Any]],
) -> None:
    daemon, info = keyed
    public, secret = load_pair(keys_dir(info["mallory"]) / "client.key_secret")
    assert raw_ask(info["ctl"], (info["server"].encode(), public, secret)) is None
    wait_for(lambda: remote_status(daemon)["refused"]["unknown_key"] >= 1, "unknown key counted")
    assert raw_ask(info["ctl"], None) is None
    wait_for(lambda: remote_status(daemon)["refused"]["handshake"] >= 1, "no-CURVE counted")
    report = remote_status(daemon)
    assert report["last_unknown_key"] == public.decode()
    assert "mallory" not in report["asks"] and report["asks"] == {}
    # The allowed key still gets its answer on the same endpoint.
    alice_public, alice_secret = load_pair(keys_dir(info["alice"]) / "client.key_secret")
    reply = raw_ask(info["ctl"], (info["server"].encode(), alice_public, alice_secret))
    assert reply is not None and codec.load_reply(reply).ok


def test_a_revoked_key_is_refused_at_its_next_connection(
    keyed: tuple[DaemonProcess, dict[str, Any]],
) -> None:
    daemon, info = keyed
    done = subprocess.run([sys.executable, "-m", "slmactor", "--json", "keys", "revoke", "alice"],
                          capture_output=True, text=True, env=daemon.env, timeout=30, check=False)
    assert done.returncode == 0 and '"revoked": true' in done.stdout
    public, secret = load_pair(keys_dir(info["alice"]) / "client.key_secret")
    assert raw_ask(info["ctl"], (info["server"].encode(), public, secret)) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1", "[::1]", "localhost"])
def test_tcp_without_curve_refuses_to_start_loopback_included(tmp_path: Path, host: str) -> None:
    with pytest.raises(DaemonFailedToStart, match="without CURVE"):
        spawn_daemon(base=tmp_path / "d", ready_timeout=10, env={
            "SLMACTOR_TCP_CTL": f"tcp://{host}:{free_port()}", "SLMACTOR_TCP_CURVE": "false"})


def test_tcp_with_curve_but_no_server_key_refuses_to_start(tmp_path: Path) -> None:
    with pytest.raises(DaemonFailedToStart, match="keys create server"):
        spawn_daemon(base=tmp_path / "d", ready_timeout=10, env={
            "SLMACTOR_TCP_CTL": f"tcp://127.0.0.1:{free_port()}"})


def test_a_client_refuses_a_network_daemon_without_its_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    network = {"SLMACTOR_CONNECT_CTL": "tcp://10.1.2.3:7000",
               "SLMACTOR_CONNECT_EVENTS": "tcp://10.1.2.3:7001", "SLMACTOR_CONFIG": "/nonexistent"}
    with pytest.raises(TargetProblem, match="without CURVE"):
        target(network)
    loopback = {**network, "SLMACTOR_CONNECT_CTL": "tcp://127.0.0.1:7000",
                "SLMACTOR_CONNECT_EVENTS": "tcp://127.0.0.1:7001"}
    with pytest.raises(TargetProblem, match="without CURVE"):
        target(loopback)  # any local account can reach a loopback port
    for name, value in network.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SLMACTOR_SERVER_KEY", raising=False)
    with pytest.raises(DaemonUnavailable, match="misconfigured"):
        Client("/nonexistent")


def test_path_map_prefers_the_longest_prefix() -> None:
    mapped = Target("tcp://h:1", "tcp://h:2", path_map=(("/workspace/sub", "/srv/sub"),
                                                        ("/workspace", "/home/me/app")))
    assert mapped.map_path("/workspace/sub/x") == "/srv/sub/x"
    assert mapped.map_path("/workspace/src") == "/home/me/app/src"
    assert mapped.map_path("/workspaces") == "/workspaces"


def test_a_key_over_its_limit_is_answered_busy_with_its_request_ids(tmp_path: Path) -> None:
    base = tmp_path / "d"
    home = base / "home"
    server = create(home, "server")
    create(tmp_path / "ci", "client")
    allow(home, str(keys_dir(tmp_path / "ci") / "client.key"), name="ci")
    ctl = f"tcp://127.0.0.1:{free_port()}"
    daemon = spawn_daemon(base=base, home=home, env={
        "SLMACTOR_TCP_CTL": ctl, "SLMACTOR_REMOTE_RATE": "0.5", "SLMACTOR_REMOTE_BURST": "3"})
    try:
        public, secret = load_pair(keys_dir(tmp_path / "ci") / "client.key_secret")
        zctx = zmq.Context()
        sock = zctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.curve_serverkey, sock.curve_publickey, sock.curve_secretkey = (
            server.public.encode(), public, secret)
        sock.connect(ctl)
        for i in range(10):
            sock.send_multipart(codec.dump(Status(id=f"ask-{i}")))
        replies: list[codec.Reply] = []
        while len(replies) < 10 and sock.poll(5000, zmq.POLLIN):
            replies.append(codec.load_reply(list(sock.recv_multipart())))
        sock.close(linger=0)
        zctx.term()
        assert sorted(r.id for r in replies) == sorted(f"ask-{i}" for i in range(10))
        assert sum(r.ok for r in replies) == 3  # the burst; the rate adds nothing in time
        assert all(r.code == 7 and r.retry_ms > 0 for r in replies if not r.ok)  # BUSY
        assert remote_status(daemon)["asks"]["ci"]["limited"] == 7
    finally:
        stop_quietly(daemon)


def test_the_async_client_is_served_over_tcp_with_its_key(
    keyed: tuple[DaemonProcess, dict[str, Any]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio

    from slmactor.client import AsyncClient

    daemon, info = keyed
    for name, value in remote_env(info, "alice").items():
        monkeypatch.setenv(name, value)

    async def overlapping() -> list[Any]:
        client = AsyncClient(daemon.runtime_dir / "nowhere", timeout=5.0)
        try:
            return list(await asyncio.gather(*(client.ask(Status()) for _ in range(5))))
        finally:
            client.close()

    answers = asyncio.run(overlapping())
    assert len(answers) == 5 and all("remote" in a for a in answers)
