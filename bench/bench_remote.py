"""Local hooks while a remote client floods the tcp endpoints (CurveZMQ, per-key limits).

A daemon with tcp ctl and events endpoints (CURVE, one allowed key) on loopback. Measured on
the local ipc sockets, first idle, then while another process floods both tcp endpoints with
the allowed key at full speed (pipelined `status` asks, up to 256 in flight, and record_tool
tells) for FLOOD_SECONDS:

* `status` p99 over SAMPLES asks (what a hook's ask waits);
* tell cost: the client's µs per record_tool, and the ms until the daemon applied a batch of
  2,000 tells (`working.applied`), i.e. what a session's tells take to reach its working memory.

Two floors from the same run: the idle figures, and the figures while a process that touches no
socket keeps one core busy (what the flooding process itself costs a 2-core machine, whatever it
sends). The target is the flood costing local hooks at most 2× the busy-core floor (status p99
≤ 50 ms in any case); the ratio to idle is shown beside it. The flood's admitted / limited counts come from the
daemon's `status.remote`.
"""

from __future__ import annotations

import multiprocessing as mp
import socket
import time
from pathlib import Path
from typing import Any

import msgpack
import zmq

from slmactor.client import Client
from slmactor.protocol import PROTOCOL_VERSION
from slmactor.protocol.messages import Status, WorkingApplied
from slmactor.stores.keys import allow, create, keys_dir, load_pair
from slmactor.testing import spawn_daemon, stop_quietly

Row = dict[str, Any]
FLOOD_SECONDS = 12.0
#: `status` asks per measurement (5 ms apart: within a flood of FLOOD_SECONDS).
SAMPLES = 400
BATCH = 2000


def _row(name: str, value: float, unit: str, floor: float | None, target: str) -> Row:
    return {"name": name, "value": value, "unit": unit, "floor": floor,
            "ratio": value / floor if floor else None, "target": target}


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _flood(ctl: str, events: str, server: bytes, secret_file: str, project: str,
           seconds: float, asks: bool, tells: bool, out: Any) -> None:
    """Pipelined asks and a stream of tells on the tcp endpoints with one allowed key."""
    public, secret = load_pair(Path(secret_file))
    zctx: zmq.Context[Any] = zmq.Context()
    socks = []
    for kind, endpoint in ((zmq.DEALER, ctl), (zmq.PUSH, events)):
        sock = zctx.socket(kind)
        sock.setsockopt(zmq.LINGER, 0)
        sock.curve_serverkey, sock.curve_publickey, sock.curve_secretkey = server, public, secret
        sock.connect(endpoint)
        socks.append(sock)
    dealer, push = socks
    tell = msgpack.packb({"v": PROTOCOL_VERSION, "project": project, "run_id": "remote-flood",
                          "tool": "Bash", "command": "pytest -q", "ok": True, "client": "rf"})
    counts = {"asks": 0, "replies": 0, "busy": 0, "tells": 0, "tells_eagain": 0}
    inflight, n = 0, 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        while asks and inflight < 256:
            n += 1
            dealer.send_multipart([b"status", msgpack.packb({"v": PROTOCOL_VERSION, "id": f"f{n}"})])
            inflight += 1
            counts["asks"] += 1
        for _ in range(200 if tells else 0):
            try:
                push.send_multipart([b"record_tool", tell], zmq.NOBLOCK)
                counts["tells"] += 1
            except zmq.Again:
                counts["tells_eagain"] += 1
                break
        if not asks:
            time.sleep(0.0002)  # a tell-only flood: the PUSH queue is full, let it drain
        while dealer.poll(0):
            reply = msgpack.unpackb(dealer.recv_multipart()[1], strict_map_key=False)
            inflight -= 1
            counts["replies"] += 1
            counts["busy"] += int(not reply.get("ok"))
    for sock in socks:
        sock.close(linger=0)
    zctx.term()
    out.put(counts)


def _spin(seconds: float) -> None:
    """Keep one core busy, touching no socket: what the flooding process costs the machine."""
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0


def _local(runtime: Path, project: Path, n: int) -> tuple[float, float, float]:
    """(status p99 ms, µs per tell on the client, ms until a batch of tells was applied)."""
    lat: list[float] = []
    with Client(runtime, project=project, timeout=10.0, remote=False) as client:
        for _ in range(n):
            started = time.perf_counter()
            client.ask(Status())
            lat.append((time.perf_counter() - started) * 1000)
            time.sleep(0.005)
        run = f"local-{time.monotonic_ns()}"
        client.record_tool(run, "Read", path="warm.py")
        started = time.perf_counter()
        for i in range(BATCH):
            client.record_tool(run, "Read", path=f"src/m{i % 50}.py")
        sent = time.perf_counter()
        seq = client.last_seq
        while True:
            reply = client.ask(WorkingApplied(client=client.client_id, seq=seq))
            if reply["applied"] >= seq:
                break
        applied = time.perf_counter()
    return _p99(lat), (sent - started) / BATCH * 1e6, (applied - started) * 1000


def run(quick: bool) -> list[Row]:
    seconds = 4.0 if quick else FLOOD_SECONDS
    base = Path(f"/tmp/slm-bench-remote-{time.monotonic_ns()}")
    home = base / "home"
    server = create(home, "server")
    create(base / "flood", "client")
    allow(home, str(keys_dir(base / "flood") / "client.key"), name="flood")
    ctl, events = f"tcp://127.0.0.1:{_port()}", f"tcp://127.0.0.1:{_port()}"
    daemon = spawn_daemon(base=base, home=home, debug_hooks=False,
                          env={"SLMACTOR_TCP_CTL": ctl, "SLMACTOR_TCP_EVENTS": events})
    rows: list[Row] = []
    try:
        # Warm up first: a daemon's first asks load their handlers (the idle p99 would be that).
        _local(daemon.runtime_dir, daemon.project, 100)
        idle = _local(daemon.runtime_dir, daemon.project, SAMPLES)
        names = ("local status p99", "local tell cost (client side)",
                 f"local {BATCH} tells applied")
        units = ("ms", "µs/tell", "ms")
        for name, unit, value in zip(names, units, idle, strict=True):
            rows.append(_row(f"{name}, idle", value, unit, None, "floor"))
        mpctx = mp.get_context("spawn")
        # A second floor: the same machine with one core kept busy by a process that sends
        # nothing (a flooding client is such a process), so what the flood costs the daemon is
        # told apart from what a busy 2-core machine costs every process on it.
        spinner = mpctx.Process(target=_spin, args=(seconds,))
        spinner.start()
        time.sleep(1.0)
        busy = _local(daemon.runtime_dir, daemon.project, SAMPLES)
        spinner.join()
        for name, unit, before, during in zip(names, units, idle, busy, strict=True):
            rows.append(_row(f"{name}, one core busy (no flood)", during, unit, before, "info"))
        out = mpctx.Queue()
        totals = {"asks": 0, "tells": 0}
        for label, asks, tells in (("asks", True, False), ("tells", False, True),
                                   ("asks+tells", True, True)):
            flooder = mpctx.Process(target=_flood, args=(
                ctl, events, server.public.encode(),
                str(keys_dir(base / "flood") / "client.key_secret"), str(daemon.project),
                seconds, asks, tells, out))
            flooder.start()
            time.sleep(1.0)  # the flood is under way (handshake done, queues full)
            flooded = _local(daemon.runtime_dir, daemon.project, SAMPLES)
            counts = out.get()
            flooder.join()
            totals["asks"] += counts["asks"]
            totals["tells"] += counts["tells"]
            for name, unit, before, loaded, during in zip(names, units, idle, busy, flooded,
                                                          strict=True):
                rows.append(_row(f"{name}, remote {label} flood", during, unit, before,
                                 "info (vs idle)"))
                rows.append(_row(f"{name}, remote {label} flood vs one core busy", during, unit,
                                 loaded, "≤ 2×"))
        counts = totals
        with daemon.client(remote=False) as client:
            remote = client.ask(Status())["remote"]
        asks = remote["asks"].get("flood", {})
        rows.append(_row("remote asks sent / admitted / limited (BUSY)", counts["asks"],
                         f"asks ({asks.get('admitted', 0)} admitted, {asks.get('limited', 0)} "
                         "limited)", None, "bounded by remote_rate"))
        rows.append(_row("remote tells sent / forwarded / limited", counts["tells"],
                         f"tells ({remote['events']['forwarded']} fwd, "
                         f"{remote['events']['limited']} limited)", None,
                         "bounded by remote_events_rate"))
    finally:
        stop_quietly(daemon)
    return rows
