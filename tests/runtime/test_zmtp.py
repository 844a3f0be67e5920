"""The daemon's own ZMTP reading of ctl.sock, against libzmq's sockets and raw bytes.

The wire is ZMTP 3.1 as rfc.zeromq.org/spec/23 (ZMTP 3.0: greeting, NULL mechanism, READY
metadata, frame flags MORE / LONG / COMMAND) and /spec/37 (3.1: PING / PONG) define it; the peers
are pyzmq's bundled libzmq DEALER, REQ and PUB sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq
import zmq.asyncio
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.runtime import zmtp

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def door() -> AsyncIterator[tuple[zmtp.ZmtpRouter, Path]]:
    router = zmtp.ZmtpRouter(max_frames=4, max_bytes=64 * 1024, max_frame=128 * 1024, hwm=8,
                             out_bytes=1 << 20)
    with tempfile.TemporaryDirectory(dir="/tmp") as short:  # a unix socket path has ~107 bytes
        path = Path(short) / "ctl.sock"
        router.listen(path)
        server = asyncio.create_task(router.serve())
        try:
            yield router, path
        finally:
            router.close()
            server.cancel()


@contextlib.contextmanager
def peers(path: Path, *kinds: int) -> Iterator[list[zmq.asyncio.Socket]]:
    """libzmq sockets of these kinds connected to the door, closed with their context after
    (inside the test, while its event loop runs)."""
    ctx = zmq.asyncio.Context()
    try:
        socks = [ctx.socket(kind) for kind in kinds]
        for sock in socks:
            sock.setsockopt(zmq.LINGER, 0)
            sock.connect(f"ipc://{path}")
        yield socks
    finally:
        ctx.destroy(linger=0)


async def _echo_once(router: zmtp.ZmtpRouter) -> zmtp.Received:
    got = await asyncio.wait_for(router.recv(), 10)
    assert router.send(got.identity, got.frames)
    return got


@pytest.mark.anyio
async def test_dealer_and_req_peers_are_served_with_their_own_envelopes(door: Any) -> None:
    router, path = door
    with peers(path, zmq.DEALER, zmq.REQ) as (dealer, req):
        await _dealer_and_req(router, dealer, req)


async def _dealer_and_req(router: zmtp.ZmtpRouter, dealer: zmq.asyncio.Socket,
                          req: zmq.asyncio.Socket) -> None:
    await dealer.send_multipart([b"ping", b"x" * 300])
    got = await _echo_once(router)
    assert got.frames == [b"ping", b"x" * 300] and got.over == ""
    assert await asyncio.wait_for(dealer.recv_multipart(), 10) == [b"ping", b"x" * 300]
    await req.send_multipart([b"ping", b"body"])
    got = await _echo_once(router)
    assert got.frames == [b"", b"ping", b"body"]  # REQ's empty delimiter, echoed back
    assert await asyncio.wait_for(req.recv_multipart(), 10) == [b"ping", b"body"]
    assert got.identity != (await _identity_of(router, dealer))


async def _identity_of(router: zmtp.ZmtpRouter, sock: zmq.asyncio.Socket) -> bytes:
    await sock.send_multipart([b"who"])
    got = await _echo_once(router)
    await sock.recv_multipart()
    return got.identity


@pytest.mark.anyio
async def test_a_message_over_its_bounds_is_kept_only_up_to_them(door: Any) -> None:
    router, path = door
    with peers(path, zmq.DEALER) as (sock,):
        await _over_bounds(router, sock)


async def _over_bounds(router: zmtp.ZmtpRouter, sock: zmq.asyncio.Socket) -> None:
    chunk = b"y" * (100 * 1024)  # within the frame limit; 50 of them far over the message's
    await sock.send_multipart([b"k", *([chunk] * 50)])
    got = await asyncio.wait_for(router.recv(), 10)
    assert got.over == "bytes" and sum(map(len, got.frames)) <= router.max_bytes
    await sock.send_multipart([b"k", b"a", b"b", b"c"])
    got = await asyncio.wait_for(router.recv(), 10)
    assert got.over == "frames" and got.frames == [b"k", b"a", b"b"]
    await sock.send_multipart([b"ping", b"next"])  # the connection goes on
    assert (await asyncio.wait_for(router.recv(), 10)).frames == [b"ping", b"next"]


async def _refused(router: zmtp.ZmtpRouter, count: int) -> int:
    for _ in range(500):
        if router.refused >= count:
            break
        await asyncio.sleep(0.01)  # a refusal is the peer's close, seen by polling (bounded)
    return router.refused


@pytest.mark.anyio
async def test_a_frame_over_the_frame_limit_ends_only_that_connection(door: Any) -> None:
    router, path = door
    with peers(path, zmq.DEALER, zmq.DEALER) as (bad, good):
        await bad.send_multipart([b"k", b"z" * (router.max_frame + 1)])
        await good.send_multipart([b"ping", b"ok"])
        assert (await asyncio.wait_for(router.recv(), 10)).frames == [b"ping", b"ok"]
        assert await _refused(router, 1) == 1


@pytest.mark.anyio
async def test_a_peer_that_is_no_asker_or_no_zmtp_is_closed(door: Any) -> None:
    router, path = door
    with peers(path, zmq.PUB):  # a ROUTER does not talk to a PUB
        await _raw_bytes_refused(path)
        assert await _refused(router, 2) >= 2


async def _raw_bytes_refused(path: Path) -> None:
    loop = asyncio.get_running_loop()
    raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    raw.setblocking(False)
    try:
        await loop.sock_connect(raw, str(path))
        await loop.sock_sendall(raw, b"GET / HTTP/1.0\r\n\r\n" + bytes(64))
        assert (await asyncio.wait_for(loop.sock_recv(raw, 64), 10))[:1] == b"\xff"  # our greeting
        while await asyncio.wait_for(loop.sock_recv(raw, 4096), 10):
            pass  # until the door closes it
    finally:
        raw.close()


@pytest.mark.anyio
async def test_ping_is_answered_with_pong(door: Any) -> None:
    _, path = door
    loop = asyncio.get_running_loop()
    raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    raw.setblocking(False)
    try:
        await loop.sock_connect(raw, str(path))
        await loop.sock_sendall(raw, zmtp.GREETING + zmtp.ready(b"DEALER"))
        await loop.sock_sendall(raw, zmtp.command(b"PING", b"\x00\x0aCTX"))
        wanted = zmtp.GREETING + zmtp.ready(b"ROUTER") + zmtp.command(b"PONG", b"CTX")
        seen = b""
        while len(seen) < len(wanted):
            seen += await asyncio.wait_for(loop.sock_recv(raw, 4096), 10)
        assert seen == wanted
    finally:
        raw.close()


@settings(max_examples=300, derandomize=True)
@given(st.dictionaries(st.binary(min_size=1, max_size=255).map(bytes.lower), st.binary(max_size=300),
                       max_size=5))
def test_ready_metadata_reads_back_what_was_written(props: dict[bytes, bytes]) -> None:
    body = b"".join(bytes((len(k),)) + k + len(v).to_bytes(4, "big") + v for k, v in props.items())
    assert zmtp.properties(body) == props


@settings(max_examples=500, derandomize=True)
@given(st.binary(max_size=600))
def test_metadata_of_any_bytes_is_read_or_refused_never_crashes(body: bytes) -> None:
    with contextlib.suppress(zmtp.ZmtpError):
        zmtp.properties(body)


@settings(max_examples=300, derandomize=True)
@given(st.binary(max_size=700), st.sampled_from([0, zmtp.FLAG_MORE, zmtp.FLAG_COMMAND]))
def test_a_frame_header_says_its_size_and_flags(data: bytes, flags: int) -> None:
    out = zmtp.frame(data, flags)
    if len(data) <= 255:
        assert out[0] == flags and out[1] == len(data) and out[2:] == data
    else:
        assert out[0] == flags | zmtp.FLAG_LONG and int.from_bytes(out[1:9], "big") == len(data)
        assert out[9:] == data
