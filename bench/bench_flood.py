"""Floods against one daemon: memory stays bounded, `status` keeps answering.

Three floods, each at full speed from a separate process for FLOOD_SECONDS: ordinary record_tool
tells (up to 1M), tells just over the tell limit (257 KiB: read, refused unread and counted; a
frame far over it, such as a 1 MiB tell, costs its sender the connection instead — the
multi-frame tell row below) and large asks
(256 KiB `memory.recall` queries, answered BUSY once the mailbox budget is spent). Meanwhile a
`status` ask every 50 ms (latency p99) and the daemon's RSS every 100 ms (peak). After the floods,
RSS is sampled for SETTLE_SECONDS; the row compares it with the idle RSS before the floods.

Then the multi-frame floods (whole-message bounds, docs/DOOR.md): six asks of 300 × 1 MiB frames
on ctl.sock — from one connection, then from six at once — and six such tells on events.sock.
Their peak is the kernel's high-water mark of the daemon's RSS (VmHWM, reset through
/proc/PID/clear_refs before each; psutil's 100 ms samples miss a peak this short). The same two
ask floods then go to the daemon's tcp ctl endpoint with an allowed CURVE key: their peak is
reported against the ipc peak of the same flood in the same daemon (target ≤ 1.5×).
Targets: peak ≤ 256 MB, settled ≤ 1.5 × idle, status p99 ≤ 50 ms, drops counted (sent =
applied + invalid + dropped). The floor column is the idle RSS / an idle status p99.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from pathlib import Path
from typing import Any

import msgpack
import psutil
import zmq

from slmactor.client import Client
from slmactor.protocol import MAX_TELL_BYTES, PROTOCOL_VERSION
from slmactor.testing import spawn_daemon, stop_quietly

Row = dict[str, Any]
FLOOD_SECONDS = 20.0
SETTLE_SECONDS = 60.0
MB = 1 << 20


def _row(name: str, value: float, unit: str, floor: float | None, floor_name: str, target: str) -> Row:
    ratio = value / floor if floor else None
    return {"name": name, "value": value, "unit": unit, "floor": floor, "floor_name": floor_name,
            "ratio": ratio, "target": target}


def _tells(runtime: str, project: str, seconds: float, limit: int, size: int, out: Any) -> None:
    """Send record_tool tells (pre-encoded) until `limit` or `seconds`; report sent/dropped."""
    ctx: zmq.Context[Any] = zmq.Context()
    push = ctx.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 0)
    push.setsockopt(zmq.SNDHWM, 10_000)
    push.connect(f"ipc://{runtime}/events.sock")
    body = msgpack.packb({"v": PROTOCOL_VERSION, "project": project, "run_id": "flood", "tool": "Bash",
                          "command": "pytest -q", "error": "x" * size, "ok": size == 0, "client": "f"})
    with Client(runtime, timeout=5.0) as client:
        taken_before = client.status()["events"]["received"]
        sent = dropped = 0
        end = time.monotonic() + seconds
        while sent + dropped < limit and time.monotonic() < end:
            try:
                push.send_multipart([b"record_tool", body], zmq.NOBLOCK)
                sent += 1
            except zmq.Again:
                dropped += 1
                time.sleep(0.0005)
        # Stay connected until the daemon took in what was queued: libzmq's linger covers its
        # queue, not the bytes its I/O thread still holds when the daemon's inbox is full.
        deadline = time.monotonic() + 30
        while client.status()["events"]["received"] < taken_before + sent and time.monotonic() < deadline:
            time.sleep(0.05)
    push.close(linger=0)
    ctx.term()
    out.put((sent, dropped))


def _asks(runtime: str, project: str, seconds: float, size: int, out: Any) -> None:
    """Pipelined large asks (up to 200 in flight) until `seconds`; report ok/busy/other."""
    ctx: zmq.Context[Any] = zmq.Context()
    dealer = ctx.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(f"ipc://{runtime}/ctl.sock")
    query = "flaky test " * (size // 11)
    counts = {"sent": 0, "ok": 0, "busy": 0, "other": 0}
    end = time.monotonic() + seconds
    inflight = 0
    n = 0
    while time.monotonic() < end or inflight:
        while inflight < 200 and time.monotonic() < end:
            n += 1
            body = {"v": PROTOCOL_VERSION, "id": f"a{n}", "project": project, "query": query[:60_000]}
            dealer.send_multipart([b"memory.recall", msgpack.packb(body)])
            inflight += 1
            counts["sent"] += 1
        if not dealer.poll(2000):
            break
        reply = msgpack.unpackb(dealer.recv_multipart()[1], strict_map_key=False)
        inflight -= 1
        if reply.get("ok"):
            counts["ok"] += 1
        elif reply.get("error", {}).get("code") == 7:
            counts["busy"] += 1
        else:
            counts["other"] += 1
    out.put(counts)
    dealer.close(linger=0)
    ctx.term()


def _multiframe(endpoint: str, sock_type: int, connections: int, messages: int, frames: int,
                curve: tuple[bytes, bytes, bytes] | None, out: Any) -> None:
    """`messages` messages of [kind, body, `frames` - 2 × 1 MiB] over each of `connections` sockets
    (CURVE with `curve` = server public, client public, client secret); for asks, wait for every
    reply. Reports the replies' error codes."""
    ctx: zmq.Context[Any] = zmq.Context()
    socks = []
    for _ in range(connections):
        sock = ctx.socket(sock_type)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.SNDHWM, 0)
        if curve is not None:
            sock.curve_serverkey, sock.curve_publickey, sock.curve_secretkey = curve
        sock.connect(endpoint)
        socks.append(sock)
    blob = b"x" * MB
    for n in range(messages):
        for i, sock in enumerate(socks):
            body = msgpack.packb({"v": PROTOCOL_VERSION, "id": f"m{i}.{n}"})
            sock.send_multipart([b"ping", body, *([blob] * (frames - 2))], copy=False)
    codes: dict[str, int] = {}
    if sock_type == zmq.DEALER:
        poller = zmq.Poller()
        for sock in socks:
            poller.register(sock, zmq.POLLIN)
        deadline = time.monotonic() + 120
        while sum(codes.values()) < connections * messages and time.monotonic() < deadline:
            for sock, _ in poller.poll(1000):
                reply = msgpack.unpackb(sock.recv_multipart()[1], strict_map_key=False)
                code = str(reply.get("error", {}).get("name", "ok"))
                codes[code] = codes.get(code, 0) + 1
    else:
        time.sleep(2.0)  # the daemon cuts each such connection at its first frame; give it time
    for sock in socks:
        sock.close(linger=0)
    ctx.term()
    out.put(codes)


def _reset_peak(pid: int) -> bool:
    """Reset the kernel's peak RSS of `pid` (VmHWM); False where that is not possible."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _peak(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def _multiframe_floods(daemon_pid: int, runtime: str, mpctx: Any, out: Any, idle_rss: int,
                       tcp: tuple[str, tuple[bytes, bytes, bytes]] | None = None) -> list[Row]:
    rows: list[Row] = []
    ipc_peaks: dict[int, int] = {}
    for label, sock_type, path, connections in (
            ("six asks of 300 × 1 MiB frames, one connection", zmq.DEALER, "ctl.sock", 1),
            ("six asks of 300 × 1 MiB frames, six connections at once", zmq.DEALER, "ctl.sock", 6),
            ("six tells of 300 × 1 MiB frames", zmq.PUSH, "events.sock", 1)):
        if not _reset_peak(daemon_pid):
            return rows  # not Linux, or not allowed: no exact peak to report
        messages = 6 // connections
        sender = mpctx.Process(target=_multiframe, args=(f"ipc://{runtime}/{path}", sock_type,
                                                         connections, messages, 302, None, out))
        sender.start()
        codes = out.get()
        sender.join()
        answered = ", ".join(f"{n} × {code}" for code, n in sorted(codes.items())) or "no replies (tells)"
        peak = _peak(daemon_pid)
        if sock_type == zmq.DEALER:
            ipc_peaks[connections] = peak
        rows.append(_row(f"peak RSS during {label} ({answered})", peak / MB, "MB", idle_rss / MB,
                         "idle RSS", "≤ 256 MB"))
    if tcp is None:
        return rows
    endpoint, curve = tcp
    for connections in (1, 6):
        _reset_peak(daemon_pid)
        sender = mpctx.Process(target=_multiframe, args=(endpoint, zmq.DEALER, connections,
                                                         6 // connections, 302, curve, out))
        sender.start()
        codes = out.get()
        sender.join()
        answered = ", ".join(f"{n} × {code}" for code, n in sorted(codes.items())) or "no replies"
        how = "one connection" if connections == 1 else "six connections at once"
        rows.append(_row(f"peak RSS during six asks of 300 × 1 MiB frames over tcp with an allowed "
                         f"CURVE key, {how} ({answered})", _peak(daemon_pid) / MB, "MB",
                         ipc_peaks[connections] / MB, "the same flood's ipc peak", "≤ 1.5×"))
    return rows


def _keyed_daemon(base: Path) -> tuple[Any, tuple[str, tuple[bytes, bytes, bytes]]]:
    """A daemon with a tcp ctl endpoint and one allowed client key: (daemon, (endpoint, curve))."""
    import socket

    from slmactor.stores.keys import allow, create, keys_dir, load_pair

    home = base / "home"
    server = create(home, "server")
    client_home = base / "client"
    create(client_home, "client")
    allow(home, str(keys_dir(client_home) / "client.key"), name="bench")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"tcp://127.0.0.1:{port}"
    daemon = spawn_daemon(base=base, home=home, debug_hooks=False,
                          env={"SLMACTOR_TCP_CTL": endpoint})
    public, secret = load_pair(keys_dir(client_home) / "client.key_secret")
    return daemon, (endpoint, (server.public.encode(), public, secret))


def _watch(pid: int, runtime: Path, project: Path, stop: threading.Event, rss: list[tuple[str, int]],
           latencies: dict[str, list[float]], phase: list[str]) -> None:
    proc = psutil.Process(pid)
    with Client(runtime, project=project, timeout=5.0, retries=1) as client:
        last_rss = 0.0
        while not stop.is_set():
            if time.monotonic() - last_rss >= 0.1:
                rss.append((phase[0], proc.memory_info().rss))
                last_rss = time.monotonic()
            started = time.perf_counter()
            client.status()
            latencies.setdefault(phase[0], []).append((time.perf_counter() - started) * 1000)
            time.sleep(0.05)


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0


def run(quick: bool) -> list[Row]:
    seconds = 4.0 if quick else FLOOD_SECONDS
    settle = 10.0 if quick else SETTLE_SECONDS
    import tempfile

    daemon, tcp = _keyed_daemon(Path(tempfile.mkdtemp(prefix="sa-", dir="/tmp")))
    rows: list[Row] = []
    try:
        runtime, project = str(daemon.runtime_dir), str(daemon.project)
        idle_lat: list[float] = []
        with daemon.client() as client:
            for _ in range(50):
                started = time.perf_counter()
                client.status()
                idle_lat.append((time.perf_counter() - started) * 1000)
        idle_rss = psutil.Process(daemon.pid).memory_info().rss
        rss: list[tuple[str, int]] = []
        lat: dict[str, list[float]] = {}
        phase = ["small tells"]
        stop = threading.Event()
        watcher = threading.Thread(target=_watch, args=(daemon.pid, daemon.runtime_dir, daemon.project,
                                                         stop, rss, lat, phase), daemon=True)
        watcher.start()
        mpctx = mp.get_context("spawn")
        out = mpctx.Queue()
        totals = {"sent": 0, "dropped": 0}
        for label, limit, size in (("small tells", 1_000_000, 0), ("257 KiB tells", 10**9, MAX_TELL_BYTES + 1024)):
            phase[0] = label
            sender = mpctx.Process(target=_tells, args=(runtime, project, seconds, limit, size, out))
            sender.start()
            sent, dropped = out.get()
            sender.join()
            totals["sent"] += sent
            totals["dropped"] += dropped
        phase[0] = "large asks"
        asker = mpctx.Process(target=_asks, args=(runtime, project, seconds, 256 * 1024, out))
        asker.start()
        asks = out.get()
        asker.join()
        phase[0] = "multi-frame"
        multiframe_rows = _multiframe_floods(daemon.pid, runtime, mpctx, out, idle_rss, tcp)
        peaks: dict[str, int] = {}
        for label, value in rss:
            peaks[label] = max(peaks.get(label, 0), value)
        flood_lat = {label: list(values) for label, values in lat.items()}
        phase[0] = "settling"
        time.sleep(settle)  # the point of the row: memory given back while idle
        stop.set()
        watcher.join()
        settled = psutil.Process(daemon.pid).memory_info().rss
        with daemon.client() as client:
            status = client.status()
        applied = status["events"]["received"]
        rows.extend(multiframe_rows)
        for label, peak in peaks.items():
            if label == "multi-frame":
                continue  # reported exactly above
            rows.append(_row(f"peak RSS during the {label} flood", peak / MB, "MB", idle_rss / MB, "idle RSS",
                             "≤ 256 MB"))
        rows.append(_row(f"RSS {settle:.0f} s after the floods", settled / MB, "MB", idle_rss / MB,
                         "idle RSS", "≤ 1.5× idle"))
        for label, values in flood_lat.items():
            rows.append(_row(f"status p99 during the {label} flood ({len(values)} asks)", _p99(values), "ms",
                             _p99(idle_lat), "idle status p99", "≤ 50 ms"))
        rows.append(_row("tells sent", totals["sent"], "tells", None, "", "info"))
        rows.append(_row("tells dropped by the sender (EAGAIN, counted)", totals["dropped"], "tells", None,
                         "", "counted"))
        rows.append(_row("tells taken in by the daemon (applied + invalid)", applied, "tells", None, "",
                         "= sent"))
        rows.append(_row("large asks sent / answered BUSY", asks["sent"], f"asks ({asks['busy']} BUSY, "
                         f"{asks['other']} other errors)", None, "", "every one answered"))
    finally:
        stop_quietly(daemon)
    return rows
