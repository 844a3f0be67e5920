"""Whole-message bounds at both sockets, on a real daemon: a request or tell with too many frames
or too many bytes in all is refused whole — answered on ctl.sock (with its request id), counted
on events.sock — and what arrives next is served as usual."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq

from slmactor.protocol import MAX_TELL_BYTES, PROTOCOL_VERSION, ErrorCode, codec
from slmactor.runtime.frontdoor import REQUEST_BYTES
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly, wait_for

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def daemon() -> Iterator[DaemonProcess]:
    proc = spawn_daemon()
    try:
        yield proc
    finally:
        stop_quietly(proc)


_sockets: list[zmq.Socket[Any]] = []


@pytest.fixture
def zctx() -> Iterator[zmq.Context[Any]]:
    ctx: zmq.Context[Any] = zmq.Context()
    yield ctx
    while _sockets:
        _sockets.pop().close(linger=0)
    ctx.destroy(linger=0)


def _push(ctx: zmq.Context[Any], daemon: DaemonProcess) -> zmq.Socket[Any]:
    sock: zmq.Socket[Any] = ctx.socket(zmq.PUSH)
    _sockets.append(sock)
    sock.setsockopt(zmq.LINGER, 2000)
    sock.connect(f"ipc://{daemon.runtime_dir / 'events.sock'}")
    return sock


def body(**fields: Any) -> bytes:
    return bytes(msgpack.packb({"v": PROTOCOL_VERSION, **fields}))


def _dealer(ctx: zmq.Context[Any], daemon: DaemonProcess) -> zmq.Socket[Any]:
    sock: zmq.Socket[Any] = ctx.socket(zmq.DEALER)
    _sockets.append(sock)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(f"ipc://{daemon.runtime_dir / 'ctl.sock'}")
    return sock


def _reply(sock: zmq.Socket[Any]) -> codec.Reply:
    assert sock.poll(20_000), "no reply"
    return codec.load_reply(sock.recv_multipart())


def _status(daemon: DaemonProcess) -> dict[str, Any]:
    with daemon.client() as client:
        return dict(client.status())


def test_a_request_of_too_many_frames_is_bad_frames_with_its_id(daemon: DaemonProcess,
                                                                 zctx: zmq.Context[Any]) -> None:
    before = _status(daemon)["requests_oversize"]
    sock = _dealer(zctx, daemon)
    sock.send_multipart([b"ping", body(id="f1"), *([b"x" * 1024] * 50)])
    reply = _reply(sock)
    assert (reply.ok, reply.code, reply.id) == (False, int(ErrorCode.BAD_FRAMES), "f1")
    sock.send_multipart([b"ping", body(id="f2")])
    assert _reply(sock).ok
    assert _status(daemon)["requests_oversize"] == before + 1


def test_a_request_over_the_byte_bound_in_all_is_too_large_with_its_id(daemon: DaemonProcess,
                                                                        zctx: zmq.Context[Any]) -> None:
    # Every frame is within the per-frame limit; together they are not.
    sock = _dealer(zctx, daemon)
    half = REQUEST_BYTES // 2 + 1
    sock.send_multipart([b"memory.recall", body(id="b1", query="y" * half), b"z" * half])
    reply = _reply(sock)
    assert (reply.ok, reply.code, reply.id) == (False, int(ErrorCode.TOO_LARGE), "b1")
    sock.send_multipart([b"ping", b"p" * half, b"q" * half])  # no readable body: still answered
    reply = _reply(sock)
    assert (reply.ok, reply.code, reply.id) == (False, int(ErrorCode.TOO_LARGE), "")


def test_a_tell_of_too_many_frames_is_refused_whole_and_counted(daemon: DaemonProcess,
                                                                 zctx: zmq.Context[Any]) -> None:
    project = str(daemon.project)
    before = _status(daemon)["events"]
    push = _push(zctx, daemon)
    tell = body(project=project, run_id="many", tool="Read", path="a.py")
    for _ in range(20):
        push.send_multipart([b"record_tool", tell, *([b"x" * 4096] * 30)])
    push.send_multipart([b"record_tool", tell])
    with daemon.client() as client:
        wait_for(lambda: client.status()["events"]["received"] >= before["received"] + 21, "21 tells taken in")
        after = client.status()["events"]
        assert after["invalid"] - before["invalid"] == 20
        assert client.working_snapshot("many", wait=False)["snapshot"]["counters"]["calls"] == 1


def test_a_frame_far_over_the_tell_limit_costs_its_sender_the_connection_only(
        daemon: DaemonProcess, zctx: zmq.Context[Any]) -> None:
    push = _push(zctx, daemon)
    push.send_multipart([b"record_tool", b"x" * (1 << 20), *([b"y" * (1 << 20)] * 8)])
    with daemon.client(project=daemon.project) as client:
        # Our own client never sends such a tell: it is dropped before the socket, counted.
        assert client.record_tool("far", "Bash", error="e" * (MAX_TELL_BYTES + 1)) is False
        assert client.dropped == 1
        assert client.record_tool("far", "Read", path="b.py") is True
        # Not waiting for the tells: until the first is applied the run has no snapshot yet.
        wait_for(lambda: client.working_snapshot("far", wait=False)["snapshot"]
                 .get("counters", {}).get("calls") == 1, "the next tell applied")
        assert sum(row["restarts"] for row in client.status()["actors"]) == 0


def _peak_rss_reset(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # resets VmHWM (proc(5))
    except OSError:
        return False
    return True


def _peak_rss(pid: int) -> int:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


@pytest.mark.timeout(120)
def test_many_framed_asks_from_six_connections_at_once_hold_no_more_than_their_bounds(
        daemon: DaemonProcess, zctx: zmq.Context[Any]) -> None:
    # Every frame is within the per-frame limit, each ask is 300 MiB: libzmq assembled each one
    # whole (1.8 GB for six at once) before the daemon could refuse it. Read as it arrives, an
    # ask over its bound is kept only up to the bound and the rest dropped unread.
    if not _peak_rss_reset(daemon.pid):
        pytest.skip("no /proc/PID/clear_refs: the peak RSS cannot be measured here")
    blob = b"x" * (1 << 20)
    socks = [_dealer(zctx, daemon) for _ in range(6)]
    for i, sock in enumerate(socks):
        sock.setsockopt(zmq.SNDHWM, 0)
        sock.send_multipart([b"ping", body(id=f"flood{i}"), *([blob] * 300)], copy=False)
    for i, sock in enumerate(socks):
        reply = _reply(sock)
        assert (reply.ok, reply.code, reply.id) == (False, int(ErrorCode.BAD_FRAMES), f"flood{i}")
    assert _peak_rss(daemon.pid) < 256 * (1 << 20)
    socks[0].send_multipart([b"ping", body(id="after")])
    assert _reply(socks[0]).ok


def test_a_peer_breaking_the_protocol_is_closed_and_counted(daemon: DaemonProcess,
                                                             zctx: zmq.Context[Any]) -> None:
    before = _status(daemon)["connections"]["refused"]
    pub: zmq.Socket[Any] = zctx.socket(zmq.PUB)  # a ROUTER takes asks from DEALER and REQ only
    _sockets.append(pub)
    pub.setsockopt(zmq.LINGER, 0)
    pub.connect(f"ipc://{daemon.runtime_dir / 'ctl.sock'}")
    far = _dealer(zctx, daemon)
    far.send_multipart([b"ping", b"x" * (REQUEST_BYTES + 1)])  # one frame over the frame limit
    with daemon.client() as client:
        wait_for(lambda: client.status()["connections"]["refused"] >= before + 2, "both refused")
        assert client.status()["health"] == "healthy"
