"""Reply codes a sender can act on, through the real daemon: a value the stores cannot keep is
the sender's mistake (BAD_FIELD, TOO_LARGE) with its request id, never INTERNAL or STORE_ERROR."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgpack
import pytest
import zmq

from slmactor.protocol import PROTOCOL_VERSION, ErrorCode, codec
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def daemon() -> Iterator[DaemonProcess]:
    proc = spawn_daemon()
    try:
        yield proc
    finally:
        stop_quietly(proc)


@pytest.fixture
def ask(daemon: DaemonProcess) -> Iterator[Any]:
    ctx: zmq.Context[Any] = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(f"ipc://{daemon.runtime_dir / 'ctl.sock'}")

    def send(kind: str, fields: dict[Any, Any]) -> codec.Reply:
        body = {"v": PROTOCOL_VERSION, "project": str(daemon.project), **fields}
        sock.send_multipart([kind.encode(), msgpack.packb(body, use_bin_type=True)])
        assert sock.poll(20_000), f"no reply to {kind}"
        return codec.load_reply(sock.recv_multipart())

    yield send
    sock.close(linger=0)
    ctx.destroy(linger=0)


def test_a_bytes_map_key_is_a_bad_field_with_the_request_id(ask: Any) -> None:
    reply = ask("run.finish", {"id": "k1", "report": {b"outcome": "success", "run_id": "r"}})
    assert (reply.ok, reply.code, reply.id) == (False, int(ErrorCode.BAD_FIELD), "k1")
    assert "key" in reply.reason and "report" in reply.reason
    nested = ask("metrics.record", {"id": "k2", "run": {"run_id": "r", "x": {b"k": 1}}})
    assert (nested.code, nested.id) == (int(ErrorCode.BAD_FIELD), "k2")


def test_a_binary_value_in_a_run_report_is_a_bad_field(ask: Any) -> None:
    reply = ask("run.finish", {"id": "b1", "report": {"run_id": "r", "summary": b"\x89PNG\r\n"}})
    assert (reply.ok, reply.code, reply.id) == (False, int(ErrorCode.BAD_FIELD), "b1")
    assert "binary" in reply.reason
    # The daemon is unharmed and the same report as text is taken.
    ok = ask("run.finish", {"id": "b2", "report": {"run_id": "r", "summary": "text"}})
    assert ok.ok, ok.reason


def test_an_oversize_record_is_too_large_not_a_store_error(ask: Any) -> None:
    # A phase-budget line is bounded by its store (32 KiB); one over it is refused unwritten.
    tags = [f"tag{i}-" + "x" * 60 for i in range(1000)]
    reply = ask("budgets.record", {"id": "o1", "phase": "edit", "rounds": 3, "tags": tags})
    assert (reply.ok, reply.code, reply.id) == (False, int(ErrorCode.TOO_LARGE), "o1"), reply.reason
    assert "limit" in reply.reason
    small = ask("budgets.record", {"id": "o2", "phase": "edit", "rounds": 3, "tags": ["parser"]})
    assert small.ok, small.reason
