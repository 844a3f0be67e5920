"""The fault suite of the front door, on a real daemon and real sockets.

Each case failed on the code before two huge counters killed the daemon, NUL bytes
(now replaced at the door) crashed actors past their restart budget, a full inbox left asks unanswered (and the log full of
tracebacks), a stale socket made clients wait out their deadline.
"""

from __future__ import annotations

import math
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import msgpack
import pytest
import zmq

from slmactor.client import Client, DaemonUnavailable
from slmactor.protocol import MAX_TELL_BYTES, PROTOCOL_VERSION, ErrorCode, codec
from slmactor.protocol.messages import CalibrationGet, MetricsShow, Ping, RunReset
from slmactor.testing import DaemonProcess, slack, spawn_daemon, stop_quietly, wait_for

pytestmark = pytest.mark.timeout(120)


def restarts(client: Client) -> int:
    return sum(row["restarts"] for row in client.status()["actors"])


def body(**fields: Any) -> bytes:
    return msgpack.packb({"v": PROTOCOL_VERSION, **fields})


_sockets: list[zmq.Socket[Any]] = []


@pytest.fixture
def zctx() -> Iterator[zmq.Context[Any]]:
    ctx: zmq.Context[Any] = zmq.Context()
    yield ctx
    while _sockets:
        _sockets.pop().close(linger=0)
    ctx.destroy(linger=0)


def dealer(ctx: zmq.Context[Any], daemon: DaemonProcess) -> zmq.Socket[Any]:
    sock = ctx.socket(zmq.DEALER)
    _sockets.append(sock)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVHWM, 0)
    sock.setsockopt(zmq.SNDHWM, 0)
    sock.connect(f"ipc://{daemon.runtime_dir / 'ctl.sock'}")
    return sock


def collect(socks: list[zmq.Socket[Any]], expected: int, timeout: float = 30.0) -> list[codec.Reply]:
    """Every reply the sockets receive until `expected` arrived (or the deadline)."""
    poller = zmq.Poller()
    for sock in socks:
        poller.register(sock, zmq.POLLIN)
    replies: list[codec.Reply] = []
    deadline = time.monotonic() + timeout
    while len(replies) < expected and time.monotonic() < deadline:
        for sock, _ in poller.poll(200):
            while True:
                try:
                    frames = sock.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                replies.append(codec.load_reply(frames))
    return replies


def test_huge_counters_cannot_make_status_unencodable(daemon: DaemonProcess, zctx: zmq.Context[Any]) -> None:
    push = zctx.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 2000)
    push.connect(f"ipc://{daemon.runtime_dir / 'events.sock'}")
    for _ in range(2):
        push.send_multipart([b"client.dropped", body(client="x", count=2**63)])
    push.close()
    with daemon.client() as client:
        wait_for(lambda: client.status()["events"]["invalid"] >= 2, "two invalid events counted")
        status = client.status()
        assert status["events"]["dropped_by_clients"] == 0
        assert status["health"] == "healthy"
    assert daemon.proc.poll() is None


def test_nul_bytes_are_replaced_and_bad_numbers_refused_before_any_actor(daemon: DaemonProcess,
                                                                zctx: zmq.Context[Any]) -> None:
    project = str(daemon.project)
    # 1,000 tells with NUL bytes on events.sock, every kind of working-memory tell.
    push = zctx.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 5000)
    push.connect(f"ipc://{daemon.runtime_dir / 'events.sock'}")
    shapes: list[tuple[bytes, dict[str, Any]]] = [
        (b"focus", {"project": project + "\x00x", "run_id": "r", "paths": ["a"]}),
        (b"focus", {"project": project, "run_id": "r\x00", "paths": ["a\x00"]}),
        (b"fail", {"project": project, "run_id": "r", "key": "k\x00"}),
        (b"decide", {"project": project, "run_id": "r\x00", "text": "t"}),
        (b"record_tool", {"project": "/nope\x00", "run_id": "r", "tool": "Bash"}),
    ]
    for i in range(1000):
        kind, fields = shapes[i % len(shapes)]
        push.send_multipart([kind, body(**fields)])
    # Left open until the daemon has read them (closed by the fixture): libzmq's linger covers
    # its queue, not bytes its I/O thread still holds when the daemon's inbox is full.
    _sockets.append(push)
    # 1,000 asks with numbers out of range or NaN (refused), or NUL bytes in a text (replaced:
    # a NUL is what a test's output carried, no reason to lose the call), through the front door.
    sock = dealer(zctx, daemon)
    bad_asks: list[tuple[bytes, dict[str, Any]]] = [
        (b"metrics.record", {"run": {"run_id": "a", "tokens_in": 2**64 - 1}}),
        (b"metrics.record", {"run": {"run_id": "b", "cost": math.nan}}),
        (b"calibration.get", {"model": "m", "context_window": 2**63}),
        (b"calibration.report", {"profile": {"model": "m", "p50_ms": math.inf}}),
        (b"run.reset", {"run_id": "x\x00"}),
        (b"focus", {"run_id": "r", "paths": ["\x00"]}),
    ]
    for i in range(1000):
        kind, fields = bad_asks[i % len(bad_asks)]
        sock.send_multipart([kind, body(id=f"b.{i}", project=project, **fields)])
    replies = collect([sock], 1000)
    assert len(replies) == 1000
    assert {r.id for r in replies} == {f"b.{i}" for i in range(1000)}
    by_id = {r.id: r for r in replies}
    for i in range(1000):
        nul = i % len(bad_asks) >= 4
        assert (by_id[f"b.{i}"].ok, by_id[f"b.{i}"].code) == ((True, 0) if nul else (False, int(ErrorCode.BAD_FIELD)))
    with daemon.client() as client:
        wait_for(lambda: client.status()["events"]["received"] >= 1000, "1,000 events received")
        status = client.status()
        assert status["events"]["invalid"] >= 400  # the tells whose project holds a NUL
        assert restarts(client) == 0
        assert status["health"] == "healthy"
        assert client.ask(MetricsShow(last=0)) is not None
        assert client.ask(CalibrationGet(model="m")) is not None
        client.run_reset("x\x00")  # answered: the NUL became U+FFFD


def test_full_inbox_answers_busy_to_every_excess_ask(zctx: zmq.Context[Any]) -> None:
    daemon = spawn_daemon(env={"SLMACTOR_INBOX_SIZE": "8"})
    try:
        with daemon.client() as client:
            before = {row["name"]: row for row in client.status()["actors"]}["metrics"]["processed"]
            stall = dealer(zctx, daemon)
            stall.send_multipart([b"debug.crash", body(id="stall", actor="metrics", how="stall")])
            wait_for(lambda: {r["name"]: r for r in client.status()["actors"]}["metrics"]["processed"] > before,
                     "the metrics actor stalled")
            baseline = client.status()["requests"]
            socks = [dealer(zctx, daemon) for _ in range(3)]
            for n, sock in enumerate(socks):
                for i in range(1000):
                    sock.send_multipart([b"ping", body(id=f"p{n}.{i}", actor="metrics")])
            # Every ask reached the door (BUSY answers are already on their way), then let go.
            wait_for(lambda: client.status()["requests"] >= baseline + 3000, "3,000 asks at the door")
            client.ask(Ping(actor="control"))
            release = dealer(zctx, daemon)
            release.send_multipart([b"debug.crash", body(id="rel", actor="metrics", how="release")])
            replies = collect(socks, 3000)
            assert len(replies) == 3000
            assert len({r.id for r in replies}) == 3000
            busy = [r for r in replies if not r.ok]
            assert {r.code for r in busy} == {int(ErrorCode.BUSY)}
            assert all(r.retry_ms > 0 for r in busy)
            assert 3000 - 2 * 8 - 64 <= len(busy) < 3000  # all but what fits in the inbox
            assert client.status()["requests_busy"] == len(busy)
            assert collect([stall], 1)[0].ok
        log = daemon.log()
        assert "Traceback" not in log and "never retrieved" not in log
    finally:
        stop_quietly(daemon)


def test_the_client_waits_out_busy_with_the_daemons_hint(zctx: zmq.Context[Any]) -> None:
    daemon = spawn_daemon(env={"SLMACTOR_INBOX_SIZE": "4"})
    try:
        with daemon.client() as client:
            before = {row["name"]: row for row in client.status()["actors"]}["metrics"]["processed"]
            stall = dealer(zctx, daemon)
            stall.send_multipart([b"debug.crash", body(id="stall", actor="metrics", how="stall")])
            wait_for(lambda: {r["name"]: r for r in client.status()["actors"]}["metrics"]["processed"] > before,
                     "the metrics actor stalled")
            filler = dealer(zctx, daemon)
            for i in range(64):
                filler.send_multipart([b"ping", body(id=f"f.{i}", actor="metrics")])
            wait_for(lambda: client.status()["requests_busy"] > 0, "the inbox is full")
            busy_before = client.status()["requests_busy"]
            answer: list[Any] = []

            def ask() -> None:
                with daemon.client(timeout=20.0, retries=1) as asker:
                    try:
                        answer.append(asker.ask(Ping(actor="metrics")))
                    except Exception as exc:  # noqa: BLE001 - shown by the assertion below
                        answer.append(exc)

            thread = threading.Thread(target=ask)
            thread.start()
            # The asker is refused, waits the hinted 100 ms, and asks again: twice at least.
            wait_for(lambda: client.status()["requests_busy"] >= busy_before + 2, "the client retried")
            release = dealer(zctx, daemon)
            release.send_multipart([b"debug.crash", body(id="rel", actor="metrics", how="release")])
            thread.join(30)
            assert answer and isinstance(answer[0], dict) and answer[0]["pong"] is True, (answer, client.status())
    finally:
        stop_quietly(daemon)


def test_an_ask_to_a_stale_socket_fails_at_once(tmp_path: Any) -> None:
    runtime = tmp_path / "rt"
    runtime.mkdir()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(runtime / "ctl.sock"))
    stale.close()  # the file stays, nobody listens: what SIGKILL leaves behind
    with Client(runtime, timeout=5.0, retries=3) as client:
        started = time.monotonic()
        with pytest.raises(DaemonUnavailable, match="no daemon listening"):
            client.ask(RunReset(run_id="r"))
        assert time.monotonic() - started < slack(1.0)  # not 3 retries × 5 s each, plus start-up


def test_stored_records_no_reply_can_carry_are_quarantined_across_a_restart() -> None:
    import json

    from slmactor.protocol.messages import CalibrationReport, MetricsRecord

    first = spawn_daemon()
    try:
        with first.client() as client:
            client.ask(MetricsRecord(run={"run_id": "ok", "tokens_in": 5}))
            client.ask(CalibrationReport(profile={
                "model": "m", "endpoint": "e", "p50_ms": 20, "p95_ms": 30, "decode_tps": 10,
                "context_window": 1000, "efficiency": {"1": 1.0, "2": 1.5}}))
        assert first.stop() == 0
        # What a daemon before the door checks stored, or a hand edit: 2**64 - 1, NaN, Infinity.
        runs = next(first.project.rglob("runs.jsonl"))
        good = json.loads(runs.read_text().splitlines()[0])
        with runs.open("a") as log:
            for n, poison in enumerate(('{"tokens_in": 18446744073709551615}', '{"wall_ms": NaN}')):
                record = json.dumps({**good, "run_id": f"bad{n}"})
                log.write(record[:-1] + ", " + poison[1:] + "\n")
        calibration = next(first.home.rglob("calibration.json"))
        calibration.write_text(calibration.read_text().replace('"p50_ms": 20.0', '"p50_ms": Infinity'))
        (first.base / "notify.sock").unlink()
        second = spawn_daemon(base=first.base, runtime_dir=first.runtime_dir, home=first.home,
                              project=first.project)
        try:
            with second.client() as client:
                shown = client.ask(MetricsShow(last=0))
                assert [r["run_id"] for r in shown["runs"]] == ["ok"]
                assert client.ask(CalibrationGet(model="m", endpoint="e"))["found"] is False
                texts = " ".join(w["text"] for w in client.status()["warnings"])
                assert "runs.jsonl" in texts and "calibration.json" in texts
                assert restarts(client) == 0
            assert list(calibration.parent.glob("calibration.json.corrupt*"))  # kept aside, not lost
        finally:
            stop_quietly(second)
    finally:
        stop_quietly(first)


def test_pipelined_asks_keep_being_answered_while_replies_go_out(daemon: DaemonProcess,
                                                                 zctx: zmq.Context[Any]) -> None:
    """One client with four routed asks in flight: a reply sent by the reply task could consume
    the ctl socket's edge of a request that had just arrived, and the door went deaf for good
    (before the fix: a hang within 15-421 asks in 3 of 3 runs)."""
    sock = dealer(zctx, daemon)
    kinds = [b"metrics.show", b"calibration.get", b"status", b"memory.recall"]
    sent = 0

    def send() -> None:
        nonlocal sent
        sent += 1
        kind = kinds[sent % len(kinds)]
        fields: dict[str, Any] = {"id": f"a{sent}", "project": str(daemon.project)}
        if kind == b"memory.recall":
            fields["query"] = "x"
        sock.send_multipart([kind, body(**fields)])

    for _ in range(4):
        send()
    answered = 0
    while answered < 3000:
        assert sock.poll(10_000), f"ask a{answered + 1}.. unanswered for 10 s after {answered} replies"
        reply = codec.load_reply(sock.recv_multipart())
        assert reply.ok, reply
        answered += 1
        send()


def test_tells_over_the_tell_limit_are_dropped_unread_and_counted(daemon: DaemonProcess,
                                                                   zctx: zmq.Context[Any]) -> None:
    project = str(daemon.project)
    push = zctx.socket(zmq.PUSH)
    _sockets.append(push)
    push.connect(f"ipc://{daemon.runtime_dir / 'events.sock'}")
    huge = body(project=project, run_id="big", tool="Bash", error="x" * (MAX_TELL_BYTES + 1))
    for _ in range(50):
        push.send_multipart([b"record_tool", huge])
    push.send_multipart([b"record_tool", body(project=project, run_id="big", tool="Read", path="a.py")])
    with daemon.client() as client:
        wait_for(lambda: client.status()["events"]["received"] >= 51, "51 tells taken in")
        assert client.status()["events"]["invalid"] == 50
        snapshot = client.working_snapshot("big", wait=False)["snapshot"]
        assert snapshot["counters"]["calls"] == 1
        assert restarts(client) == 0
    # The same tell sent on ctl.sock is answered, not dropped.
    sock = dealer(zctx, daemon)
    sock.send_multipart([b"record_tool", body(id="t1", project=project, run_id="big", tool="Bash",
                                              error="x" * (MAX_TELL_BYTES + 1))])
    (reply,) = collect([sock], 1)
    assert (reply.ok, reply.code) == (False, int(ErrorCode.TOO_LARGE))
