"""Remote endpoints: ctl and events over tcp, secured with CurveZMQ, limited per client key.

Off unless `tcp_ctl` / `tcp_events` name a `tcp://host:port`. Each is its own socket beside the
private ipc one (CURVE is a property of a socket, and the ipc sockets stay as they are):

* security: CURVE server with the daemon's key pair (`$SLMACTOR_HOME/keys/server.key_secret`):
  the ctl endpoint is read by the daemon's own CurveZMQ reader (`runtime.zmtp.curve`), which
  admits a client only with a key on the allow-list and applies the ipc door's whole-message
  bounds frame by frame as they arrive (libzmq's CURVE socket held a multipart ask whole first);
  the events endpoint is a libzmq CURVE PULL behind pyzmq's ZAP authenticator, whose callback
  accepts only the keys on the allow-list
  (`slmactor.stores.keys.AllowList`, re-read when it changes). tcp is never served without
  CURVE — not even on loopback, which every local account can reach — so `tcp_curve = false`
  refuses to start (`check`), as does a missing server key. A client with an unknown key, or speaking without CURVE, never completes its
  handshake: it gets nothing, and the refusal is counted (`status` → `remote`);
* fairness: every request carries its key's name (ZAP's User-Id). Asks pass the per-key
  `Quota` (rate, burst, asks in flight) before the ordinary front door handles them — over the
  limit they are answered BUSY; tells over their key's rate are dropped and counted. A remote
  flood therefore occupies a bounded share of the actors and never the local sockets;
* events: admitted tells are forwarded unchanged to the local events socket, so frame bounds,
  validation and the events loop are the ones local hooks get.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import zmq
import zmq.asyncio
from zmq.auth.asyncio import AsyncioAuthenticator
from zmq.utils.monitor import parse_monitor_message

from slmactor.config import Settings
from slmactor.logic.policy.quota import Quota
from slmactor.protocol import ErrorCode, codec
from slmactor.stores.keys import SERVER_KEY, AllowList, KeyProblem, keys_dir, load_pair

from .control import DaemonInfo
from .frontdoor import BUSY_RETRY_MS, REQUEST_BYTES, REQUEST_FRAMES, Door
from .router import Router
from .zmtp import Received
from .zmtp.curve import CurveRouter

log = logging.getLogger("slmactor.remote")

#: The reply sink of the remote front door (actors' sinks are named after the actors).
REMOTE_FRONT = "front.remote"
#: The name of a request that carries no allowed key (never served: tcp is CURVE-only).
ANONYMOUS = "anonymous"
#: The ZAP domain of the tcp sockets (enforced: no connection skips the allow-list).
ZAP_DOMAIN = b"slmactor"
#: The daemon's context gets a second I/O thread when tcp endpoints are open (`IO_THREADS`);
#: the tcp sockets' connections (and their CURVE crypto) run on it, the ipc ones on the first.
IO_THREADS = 2
REMOTE_IO_AFFINITY = 0b10
LOCAL_IO_AFFINITY = 0b01
#: Seconds a remote socket is not read after a batch mostly over its keys' limits; doubled for
#: each such batch in a row up to MAX_BACKOFF_SECONDS, back to none after a batch mostly within
#: them. A client that keeps flooding past its BUSY answers is held back by ZeroMQ's queue and
#: costs the daemon fewer refusals each second (each one is a reply to build and encrypt), while
#: other remote keys wait at most the longest pause.
BACKOFF_SECONDS = 0.01
MAX_BACKOFF_SECONDS = 0.1


def next_backoff(current: float, mostly_limited: bool) -> float:
    """The pause after a batch: longer while a flood goes on, none once it has stopped."""
    if not mostly_limited:
        return 0.0
    return min(max(current * 2, BACKOFF_SECONDS), MAX_BACKOFF_SECONDS)
#: Kinds a remote key may not send: stopping the host's daemon is the host user's decision.
REMOTE_FORBIDDEN = frozenset({b"daemon.stop", b"debug.crash"})
#: Tells forwarded per turn of the event loop.
FORWARD_BATCH = 64
#: Remote asks taken per turn of the event loop: a quarter of the local door's batch, so a local
#: hook's ask waits behind at most this many remote ones (each a decode, a quota check and,
#: under a flood, a BUSY reply to build and encrypt).
REMOTE_BATCH = 16
#: Connections tracked for their unanswered asks before the table is reset.
MAX_ASKERS = 10_000
_REFUSED_EVENTS = (zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
                   | zmq.EVENT_HANDSHAKE_FAILED_AUTH)


class RemoteRefused(ValueError):
    """The remote endpoints as configured would not be safe (or cannot work): do not start."""


def is_loopback(endpoint: str) -> bool:
    """True for `tcp://127.x.y.z:port`, `tcp://[::1]:port` and `tcp://localhost:port`."""
    host = urlsplit(endpoint).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a wildcard (*), an interface name or another host name


def check(settings: Settings) -> list[str]:
    """The tcp endpoints to open; raises RemoteRefused for an unsafe or broken configuration."""
    endpoints = [e for e in (settings.tcp_ctl, settings.tcp_events) if e]
    for endpoint in endpoints:
        parts = urlsplit(endpoint)
        if parts.scheme != "tcp" or not parts.hostname or not parts.port:
            raise RemoteRefused(f"{endpoint!r} is not tcp://HOST:PORT")
        if not settings.tcp_curve:
            where = "a loopback port every local account can reach" if is_loopback(endpoint) \
                else "a network"
            raise RemoteRefused(
                f"refusing to listen on {endpoint} without CURVE: {where} would serve this "
                "user's memory to anyone who connects (remove tcp_curve = false and run "
                "`slmactor keys create server`; local harnesses use the private ipc sockets)")
    if endpoints:
        secret = keys_dir(settings.home) / f"{SERVER_KEY}.key_secret"
        try:
            load_pair(secret)
        except KeyProblem as exc:
            raise RemoteRefused(f"tcp endpoints need the daemon's key pair: {exc} "
                                "(run `slmactor keys create server`)") from None
    return endpoints


@dataclass(slots=True)
class RemoteCounters:
    """What `status` says about remote clients."""

    unknown_key: int = 0
    handshakes_refused: int = 0
    handshakes_ok: int = 0
    events_forwarded: int = 0
    events_limited: int = 0
    events_dropped: int = 0
    last_unknown_key: str = ""
    by_key: dict[str, int] = field(default_factory=dict)


class Gatekeeper(AsyncioAuthenticator):
    """The ZAP handler: a CURVE client is let in only with a key on the allow-list."""

    def __init__(self, zctx: zmq.asyncio.Context, allow: AllowList, counters: RemoteCounters) -> None:
        super().__init__(zctx)
        self._allow = allow
        self._counters = counters
        self.configure_curve_callback(ZAP_DOMAIN.decode(), self)

    def callback(self, domain: str, key: bytes) -> bool:
        if self._allow.lookup(key.decode("ascii", "replace")) is not None:
            return True
        self._counters.unknown_key += 1
        # A public key is not a secret: naming it tells the user what to `keys allow`.
        self._counters.last_unknown_key = key.decode("ascii", "replace")
        return False

    def curve_user_id(self, client_public_key: bytes) -> str:
        from zmq.utils import z85

        return self._allow.lookup(z85.encode(client_public_key).decode("ascii")) or ANONYMOUS


def _key_of(frame: zmq.Frame) -> str:
    try:
        return str(frame.get("User-Id")) or ANONYMOUS
    except zmq.ZMQError:
        return ANONYMOUS  # a NULL-mechanism connection carries no User-Id


class RemoteDoor(Door):
    """The front door of the tcp ctl endpoint: the local door's handling behind a per-key quota,
    on the daemon's own CURVE reader (`runtime.zmtp.curve`), so a request's whole-message bounds
    apply as its frames arrive, as on `ctl.sock`."""

    def __init__(self, router: Router, settings: Settings, ctl: CurveRouter,
                 info: DaemonInfo, quota: Quota, clock: Callable[[], float]) -> None:
        super().__init__(router, settings, info, sink=REMOTE_FRONT)
        self._ctl = ctl
        self.quota = quota
        self._clock = clock
        #: connection identity → (key, its asks still waiting for their reply).
        self._asker: dict[bytes, tuple[str, int]] = {}

    async def serve_requests(self) -> None:
        ctl = self._ctl
        backoff = 0.0
        while True:
            limited = int(not self._admit(await ctl.recv()))
            for _ in range(REMOTE_BATCH):
                got = ctl.recv_nowait()
                if got is None:
                    break
                limited += int(not self._admit(got))
            # A batch mostly over its keys' limits pauses the reading: the client's frames wait
            # in the kernel's buffers, at no cost to the daemon; otherwise yield to the loop.
            backoff = next_backoff(backoff, limited > REMOTE_BATCH // 2)
            await asyncio.sleep(backoff)

    def _admit(self, got: Received) -> bool:
        """Hand an ask to the door, or answer BUSY; False when its key was over the limit."""
        raw = [got.identity, *got.frames]
        if len(raw) < 2:
            return True
        key = self._ctl.key_of(got.identity) or ANONYMOUS
        identity = raw[0]
        rest = raw[2:] if raw[1] == b"" else raw[1:]
        kind = rest[0] if rest else b""
        if key == ANONYMOUS:  # no allowed key behind it: nothing is served
            self._refuse(raw, ErrorCode.FORBIDDEN, "no allowed client key")
            return True
        if kind in REMOTE_FORBIDDEN:
            self._refuse(raw, ErrorCode.FORBIDDEN,
                         f"{kind.decode('ascii', 'replace')} is for local clients only")
            return True
        if not self.quota.admit(key, self._clock(), ask=True):
            self._info.requests_busy += 1
            self._refuse(raw, ErrorCode.BUSY, f"remote key {key!r} is over its limit; retry",
                         BUSY_RETRY_MS)
            return False
        if len(self._asker) > MAX_ASKERS:
            self._asker.clear()  # connections gone with asks unanswered: the quota expires them
        _, waiting = self._asker.get(identity, (key, 0))
        self._asker[identity] = (key, waiting + 1)
        self._handle(raw, got.over)
        return True

    def _refuse(self, raw: list[bytes], code: ErrorCode, reason: str, retry_ms: int = 0) -> None:
        """Answer an ask that does not reach the door (its id read from the body, so the client
        matches the answer: a BUSY it can back off on, not a timeout)."""
        style = b"R" if raw[1] == b"" else b"D"
        body = raw[-1] if len(raw) >= 3 else b""
        self._info.requests_rejected += 1
        # Not `_send`: this ask never took a slot of its key.
        Door._send(self, style + raw[0], codec.dump_error(
            codec.peek_request_id(body)[:200], code, reason, retry_ms))

    def _send(self, token: bytes, frames: list[bytes]) -> None:
        # Every admitted request is answered exactly once (result, error or acknowledgement).
        identity = token[1:]
        held = self._asker.get(identity)
        if held is not None:
            key, waiting = held
            self.quota.done(key)
            if waiting > 1:
                self._asker[identity] = (key, waiting - 1)
            else:
                del self._asker[identity]
        super()._send(token, frames)

    def _transmit(self, identity: bytes, frames: list[bytes]) -> bool:
        return self._ctl.send(identity, frames)


class RemoteEndpoints:
    """The tcp sockets, their authenticator and monitors, and the tasks that serve them."""

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.endpoints = check(settings)
        self.counters = RemoteCounters()
        self.allow = AllowList(settings.home)
        self._clock = clock
        self.ask_quota = Quota(settings.remote_rate, settings.remote_burst,
                               settings.remote_inflight)
        self.tell_quota = Quota(settings.remote_events_rate, settings.remote_events_burst)
        self._sockets: list[zmq.asyncio.Socket] = []
        self._ctl: CurveRouter | None = None
        self._monitors: list[zmq.asyncio.Socket] = []
        self._gate: Gatekeeper | None = None
        self.door: RemoteDoor | None = None
        self._events: zmq.asyncio.Socket | None = None
        self._forward: zmq.asyncio.Socket | None = None

    def _secure(self, sock: zmq.asyncio.Socket) -> None:
        public, secret = load_pair(keys_dir(self.settings.home) / f"{SERVER_KEY}.key_secret")
        sock.curve_server = True
        sock.curve_publickey = public
        sock.curve_secretkey = secret
        sock.setsockopt(zmq.ZAP_DOMAIN, ZAP_DOMAIN)
        sock.setsockopt(zmq.ZAP_ENFORCE_DOMAIN, 1)

    def bind(self, zctx: zmq.asyncio.Context, router: Router, info: DaemonInfo,
             make_socket: Callable[[int, int], zmq.asyncio.Socket], *, ctl_frame: int,
             ctl_hwm: int, ctl_out_bytes: int) -> None:
        """Create, secure and bind the tcp endpoints (in the running event loop): the ctl one
        read by the daemon's own CURVE reader within the ipc door's bounds (`ctl_frame` per
        frame), the events one a libzmq CURVE PULL. Raises zmq.ZMQError / OSError / KeyProblem."""
        settings = self.settings
        self._gate = Gatekeeper(zctx, self.allow, self.counters)
        self._gate.start()
        if settings.tcp_ctl:
            public, secret = load_pair(keys_dir(settings.home) / f"{SERVER_KEY}.key_secret")
            ctl = CurveRouter(public=public, secret=secret, admit=self.allow.lookup,
                              max_frames=REQUEST_FRAMES, max_bytes=REQUEST_BYTES,
                              max_frame=ctl_frame, hwm=ctl_hwm, out_bytes=ctl_out_bytes)
            parts = urlsplit(settings.tcp_ctl)
            host = parts.hostname or "127.0.0.1"
            ctl.listen_tcp("0.0.0.0" if host == "*" else host, int(parts.port or 0))
            self._ctl = ctl
            self.door = RemoteDoor(router, settings, ctl, info, self.ask_quota, self._clock)
        if settings.tcp_events:
            events = make_socket(zmq.PULL, settings.events_hwm)
            events.setsockopt(zmq.AFFINITY, REMOTE_IO_AFFINITY)
            self._secure(events)
            self._watch(events)
            events.bind(settings.tcp_events)
            self._sockets.append(events)
            self._events = events
            forward = zctx.socket(zmq.PUSH)
            forward.setsockopt(zmq.LINGER, 0)
            forward.setsockopt(zmq.SNDHWM, settings.events_hwm)
            forward.connect(settings.events_endpoint)
            self._forward = forward
        log.info("remote endpoints: %s (CURVE, allow-list)", ", ".join(self.endpoints))

    def _watch(self, sock: zmq.asyncio.Socket) -> None:
        monitor = sock.get_monitor_socket(_REFUSED_EVENTS | zmq.EVENT_HANDSHAKE_SUCCEEDED)
        self._monitors.append(monitor)

    def tasks(self) -> list[Callable[[], Any]]:
        out: list[Callable[[], Any]] = [functools.partial(self._count, m) for m in self._monitors]
        if self._ctl is not None and self.door is not None:
            out += [self._ctl.serve, self.door.serve_requests, self.door.serve_replies]
        if self._events is not None:
            out.append(self._forward_events)
        return out

    async def _count(self, monitor: zmq.asyncio.Socket) -> None:
        while True:
            try:
                event = parse_monitor_message(await monitor.recv_multipart())["event"]
            except (zmq.ZMQError, ValueError, KeyError):
                return
            if event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self.counters.handshakes_ok += 1
            elif event != zmq.EVENT_HANDSHAKE_FAILED_AUTH:  # counted as unknown_key by ZAP
                self.counters.handshakes_refused += 1

    async def _forward_events(self) -> None:
        assert self._events is not None and self._forward is not None
        source, sink = self._events, self._forward
        shadow: zmq.Socket[bytes] = zmq.Socket.shadow(source.underlying)
        counters = self.counters
        backoff = 0.0
        while True:
            limited = int(not self._forward_one(await source.recv_multipart(copy=False), sink,
                                                counters))
            for _ in range(FORWARD_BATCH):
                try:
                    frames = shadow.recv_multipart(zmq.NOBLOCK, copy=False)
                except zmq.Again:
                    break
                limited += int(not self._forward_one(frames, sink, counters))
            # Let the local sockets in between batches; pause when over the limits (RemoteDoor).
            backoff = next_backoff(backoff, limited > FORWARD_BATCH // 2)
            await asyncio.sleep(backoff)

    def _forward_one(self, frames: list[zmq.Frame], sink: zmq.asyncio.Socket,
                     counters: RemoteCounters) -> bool:
        """Forward one tell; False when its key was over the limit (dropped, counted)."""
        key = _key_of(frames[0])
        if key == ANONYMOUS:
            counters.events_dropped += 1
            return True
        if not self.tell_quota.admit(key, self._clock(), ask=False):
            counters.events_limited += 1
            return False
        try:
            sink.send_multipart(frames, flags=zmq.NOBLOCK, copy=False)
        except zmq.Again:
            counters.events_dropped += 1
        else:
            counters.events_forwarded += 1
        return True

    def status(self) -> dict[str, Any]:
        c = self.counters
        ctl = self._ctl
        unknown = c.unknown_key + (ctl.unknown_key if ctl is not None else 0)
        last = (ctl.last_unknown_key if ctl is not None else "") or c.last_unknown_key
        return {
            "endpoints": {"ctl": self.settings.tcp_ctl, "events": self.settings.tcp_events},
            "curve": True,
            "allowed_keys": len(self.allow.keys),
            "refused": {"unknown_key": unknown, "handshake": c.handshakes_refused
                        + (ctl.refused - ctl.unknown_key if ctl is not None else 0)},
            **({"last_unknown_key": last} if last else {}),
            "handshakes_ok": c.handshakes_ok + (ctl.handshakes_ok if ctl is not None else 0),
            "asks": self.ask_quota.report(),
            "events": {"forwarded": c.events_forwarded, "limited": c.events_limited,
                       "dropped": c.events_dropped, "by_key": self.tell_quota.report()},
        }

    def close(self) -> None:
        if self._ctl is not None:
            self._ctl.close()
        if self._gate is not None:
            self._gate.stop()
        for sock in [*self._monitors, *self._sockets,
                     *([self._forward] if self._forward is not None else [])]:
            sock.close(linger=0)
