"""Hostile input on both sockets: every ask gets an error reply (or, oversize, a disconnect),
no actor crashes, and the daemon stays healthy (docs/ACTORS.md, SPEC T11)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import msgpack
import pytest
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slmactor.protocol import MAX_MESSAGE_BYTES, PROTOCOL_VERSION, ErrorCode, codec
from slmactor.protocol.messages import MESSAGES, Kind
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

#: Kinds a fuzzer must not send with valid bodies: they stop or crash things on purpose.
EXCLUDED = {Kind.DAEMON_STOP.value, Kind.DEBUG_CRASH.value}
KINDS = sorted(set(MESSAGES) - EXCLUDED)

FUZZ = settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module")
def shared_daemon() -> Iterator[DaemonProcess]:
    proc = spawn_daemon(debug_hooks=False)
    try:
        yield proc
    finally:
        stop_quietly(proc)


@pytest.fixture(scope="module")
def zctx() -> Iterator[zmq.Context[Any]]:
    ctx: zmq.Context[Any] = zmq.Context()
    yield ctx
    ctx.destroy(linger=0)


def ask_raw(ctx: zmq.Context[Any], daemon: DaemonProcess, frames: list[bytes], wait: float = 3.0) -> list[bytes] | None:
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(f"ipc://{daemon.runtime_dir / 'ctl.sock'}")
    try:
        sock.send_multipart(frames)
        if sock.poll(int(wait * 1000)):
            return sock.recv_multipart()
        return None
    finally:
        sock.close(linger=0)


def assert_error_reply(frames: list[bytes] | None) -> codec.Reply:
    assert frames is not None, "the daemon did not answer"
    if frames and frames[0] == b"":
        frames = frames[1:]  # we sent an empty first frame: answered REQ-style, delimiter echoed
    return codec.load_reply(frames)


def assert_healthy(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        status = client.status()
    crashed = [(r["name"], r["last_error"]) for r in status["actors"] if r["restarts"] or r["state"] != "running"]
    assert crashed == []
    assert status["health"] == "healthy"


hostile_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text(max_size=40)
    | st.binary(max_size=40),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=20,
)


@FUZZ
@given(frames=st.lists(st.binary(max_size=200), min_size=0, max_size=4))
def test_random_frames_get_error_replies(shared_daemon: DaemonProcess, zctx: zmq.Context[Any], frames: list[bytes]) -> None:
    if not frames:
        frames = [b""]
    reply = assert_error_reply(ask_raw(zctx, shared_daemon, frames))
    assert not reply.ok
    assert reply.code in {int(c) for c in ErrorCode}
    assert reply.code != ErrorCode.INTERNAL


@FUZZ
@given(
    kind=st.sampled_from(KINDS) | st.text(max_size=30).map(str),
    version=st.sampled_from([PROTOCOL_VERSION, 0, 2, -1, "1", None, 1.0]),
    fields=st.dictionaries(st.sampled_from(["query", "run_id", "n", "arms", "episode", "report", "scope",
                                            "budget", "message", "args", "tool", "outcome", "profile",
                                            "lessons", "candidates", "files", "id", "project"]),
                           hostile_values, max_size=6),
)
def test_hostile_bodies_never_crash_an_actor(
    shared_daemon: DaemonProcess, zctx: zmq.Context[Any], kind: str, version: Any, fields: dict[str, Any]
) -> None:
    body = {"v": version, **fields}
    if "project" in fields and fields["project"] == "":
        body["project"] = str(shared_daemon.project)
    try:
        raw = msgpack.packb(body, use_bin_type=True)
    except (OverflowError, ValueError, TypeError):
        return
    reply = assert_error_reply(ask_raw(zctx, shared_daemon, [kind.encode("utf-8", "replace"), raw]))
    if not reply.ok:
        assert reply.code != ErrorCode.INTERNAL, reply.reason


@pytest.mark.parametrize(
    ("frames", "code"),
    [
        ([b"ping", b"\x92\x01"], ErrorCode.BAD_MSGPACK),  # an array, not a map
        ([b"ping", b"\x81\xa1v"], ErrorCode.BAD_MSGPACK),  # truncated
        ([b"ping", msgpack.packb({"v": 99})], ErrorCode.BAD_VERSION),
        ([b"no.such.kind", msgpack.packb({"v": 1, "id": "x"})], ErrorCode.UNKNOWN_KIND),
        ([b"memory.recall", msgpack.packb({"v": 1, "n": "three"})], ErrorCode.BAD_FIELD),
        ([b"ping", msgpack.packb({"v": 1, "x": msgpack.ExtType(5, b"ab")})], ErrorCode.BAD_MSGPACK),
        ([b"ping"], ErrorCode.BAD_FRAMES),
        ([b"ping", b"", b""], ErrorCode.BAD_FRAMES),
        ([b"memory.recall", msgpack.packb({"v": 1, "project": "relative/dir"})], ErrorCode.BAD_PROJECT),
        ([b"memory.recall", msgpack.packb({"v": 1, "project": "/no/such/dir"})], ErrorCode.BAD_PROJECT),
    ],
)
def test_each_kind_of_bad_input_has_its_error_code(
    shared_daemon: DaemonProcess, zctx: zmq.Context[Any], frames: list[bytes], code: ErrorCode
) -> None:
    reply = assert_error_reply(ask_raw(zctx, shared_daemon, frames))
    assert not reply.ok
    assert reply.code == code


def test_request_id_is_echoed_on_errors(shared_daemon: DaemonProcess, zctx: zmq.Context[Any]) -> None:
    reply = assert_error_reply(ask_raw(zctx, shared_daemon, [b"nope", msgpack.packb({"v": 1, "id": "req-7"})]))
    assert reply.id == "req-7"


def test_deep_nesting_is_refused(shared_daemon: DaemonProcess, zctx: zmq.Context[Any]) -> None:
    deep: Any = "leaf"
    for _ in range(200):
        deep = {"k": deep}
    frames = [b"episode.append", msgpack.packb({"v": 1, "episode": deep, "project": str(shared_daemon.project)})]
    reply = assert_error_reply(ask_raw(zctx, shared_daemon, frames))
    assert reply.code == ErrorCode.BAD_FIELD


def test_oversize_frame_disconnects_the_sender_only(shared_daemon: DaemonProcess, zctx: zmq.Context[Any]) -> None:
    huge = [b"ping", b"\x00" * (MAX_MESSAGE_BYTES + 64 * 1024)]
    assert ask_raw(zctx, shared_daemon, huge, wait=1.0) is None  # dropped by libzmq: no reply
    with shared_daemon.client() as client:
        assert client.ping()["pong"] is True


def test_garbage_on_the_events_socket_is_counted_not_fatal(shared_daemon: DaemonProcess, zctx: zmq.Context[Any]) -> None:
    push = zctx.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 0)
    push.connect(f"ipc://{shared_daemon.runtime_dir / 'events.sock'}")
    garbage: list[list[bytes]] = [
        [b"record_tool", b"\xc1"],
        [b"record_tool", msgpack.packb({"v": 1, "tool": 5})],
        [b"record_tool", msgpack.packb({"v": 7, "tool": "Bash"})],
        [b"record_tool", msgpack.packb({"v": 1, "ok": "yes"})],
        [b"no.such.kind", msgpack.packb({"v": 1})],
        [b"status", msgpack.packb({"v": 1})],  # an ask kind on the tell socket
        [b"one frame only"],
        [b"record_tool", msgpack.packb({"v": 1, "run_id": "r", "tool": "Bash", "error": "x" * 200_000})],
    ]
    for frames in garbage:
        push.send_multipart(frames)
    with shared_daemon.client() as client:
        client.record_tool("run-after-garbage", "Bash", command="true")
        deadline = time.monotonic() + 10
        while True:
            rows = {r["name"]: r for r in client.status()["actors"]}
            if rows["working"]["processed"] >= len(garbage) + 1 or time.monotonic() > deadline:
                break
    push.close(linger=0)
    assert rows["working"]["restarts"] == 0
    assert rows["working"]["state"] == "running"
    assert_healthy(shared_daemon)


def test_daemon_is_healthy_after_the_fuzzing(shared_daemon: DaemonProcess) -> None:
    assert_healthy(shared_daemon)
