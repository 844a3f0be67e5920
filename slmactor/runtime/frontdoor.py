"""The front door: what takes asks off `ctl.sock` (and the tcp door's ROUTER) and hands them to
actor mailboxes.

Every request is read within whole-message bounds — at most REQUEST_FRAMES frames and
REQUEST_BYTES bytes: the rest of a message over either bound is discarded as it is read, never
kept, and answered BAD_FRAMES / TOO_LARGE (with the request id when a body was read). On
`ctl.sock` (`ZmtpDoor`) the bounds apply as the bytes arrive (`runtime.zmtp`); on a libzmq ROUTER
(`FrontDoor`, the tcp door) as the message is read out of libzmq, which holds it whole first. The
door validates each request with the codec (so a malformed message is answered here and never
reaches an actor), finds the owning actor by kind, and forwards the original frames with a reply
route. Replies come back through the door's reply sink and go out without waiting: a vanished or
stalled client costs a counter, never a block.
"""

from __future__ import annotations

import abc
import asyncio
import logging
from typing import Any

import zmq
import zmq.asyncio

from slmactor.config import Settings
from slmactor.logic.text.redact import redact
from slmactor.logic.text.safecut import cut_chars
from slmactor.protocol import MAX_MESSAGE_BYTES, ErrorCode, ProtocolError, codec
from slmactor.protocol.messages import ClientDropped, DebugCrash, Ping

from .control import INLINE_KINDS, ROUTED_BY_FIELD, DaemonInfo
from .projects import project_problem
from .router import FRONT, PROMPT_KINDS, Router, make_route
from .stats import ActorState
from .zmtp import ZmtpRouter

log = logging.getLogger("slmactor.frontdoor")

REQUEST_BATCH = 64
#: Frames of the largest legal request: routing id, REQ's empty delimiter, kind, body.
REQUEST_FRAMES = 4
#: Bytes of the largest legal request: a MAX_MESSAGE_BYTES body, its kind and routing id.
REQUEST_BYTES = MAX_MESSAGE_BYTES + 4096
_NOBLOCK = int(zmq.NOBLOCK)
#: The retry hint sent with BUSY (milliseconds); `Client` waits this long before resending.
BUSY_RETRY_MS = 100
#: Clients whose unanswered asks the door counts at once (see `Door._in_flight`).
IN_FLIGHT_CLIENTS = 4096
_REQ_STYLE = b"R"  # the client sent an empty delimiter frame (REQ socket): echo it back
_DEALER_STYLE = b"D"


def read_bounded(first: zmq.Frame, recv: Any, max_frames: int, max_bytes: int) -> tuple[list[bytes], str]:
    """The frames of one message starting with `first` (the rest read with `recv(NOBLOCK,
    copy=False)`: a multipart message is queued whole, so its frames are all there), and "" —
    or, over a bound, the frames kept before it and "frames" / "bytes". Frames past a bound are
    read and dropped one by one: at most one of them is alive at a time, none is copied."""
    frames: list[bytes] = []
    total = 0
    over = ""
    frame = first
    while True:
        if not over:
            total += len(frame)
            if len(frames) >= max_frames:
                over = "frames"
            elif total > max_bytes:
                over = "bytes"
            else:
                frames.append(frame.bytes)
        if not frame.more:
            return frames, over
        frame = recv(_NOBLOCK, copy=False)


class Door(abc.ABC):
    """What every door does with a request, whatever carries it: bounds, checks, routing,
    exactly one answer. A subclass reads requests and transmits replies."""

    def __init__(self, router: Router, settings: Settings, info: DaemonInfo, *, sink: str = FRONT) -> None:
        self._router = router
        self._settings = settings
        # A second door (the tcp one, `runtime.remote`) gets replies through its own sink.
        self._sink_name = sink
        self._sink = router.add_front(sink)
        self._info = info
        self.accepting = True
        #: Asks delivered and not yet answered, per client token. A prompt's ask takes the
        #: actor's prompt lane only from a client with none: one that sent a write and, without
        #: waiting, a `memory.block` gets a block that shows the write.
        self._in_flight: dict[bytes, int] = {}

    @abc.abstractmethod
    async def serve_requests(self) -> None:
        """Read requests off the transport and `_handle` each, forever."""

    @abc.abstractmethod
    def _transmit(self, identity: bytes, frames: list[bytes]) -> bool:
        """Send one reply without waiting; False when it was dropped."""

    async def serve_replies(self) -> None:
        while True:
            frames = await self._sink.recv_multipart()
            if len(frames) != 3:
                continue
            token, kind, body = frames
            left = self._in_flight.pop(token, 0) - 1
            if left > 0:
                self._in_flight[token] = left
            self._send(token, [kind, body])

    def _handle(self, frames: list[bytes], over: str) -> None:
        """Handle one request read within the bounds (`frames`: routing id first); over a bound,
        answer it (the rest was discarded unkept)."""
        if not over:
            self._guarded(frames)
            return
        self._info.requests += 1
        self._info.requests_oversize += 1
        if len(frames) < 2:
            return  # not even a routing id and one frame: nobody to answer
        style = _REQ_STYLE if frames[1] == b"" else _DEALER_STYLE
        rest = frames[2:] if style == _REQ_STYLE else frames[1:]  # [kind, body, ...]
        request_id = codec.peek_request_id(rest[1]) if len(rest) > 1 else ""
        if over == "frames":
            self._reject(style + frames[0], request_id, ErrorCode.BAD_FRAMES,
                         f"a request has at most {REQUEST_FRAMES - 1} frames [kind, body]; this had more")
        else:
            self._reject(style + frames[0], request_id, ErrorCode.TOO_LARGE,
                         f"request over {REQUEST_BYTES} bytes in all")

    def _guarded(self, frames: list[bytes]) -> None:
        """`_on_request`, never raising: the front door's task must outlive any request."""
        try:
            self._on_request(frames)
        except Exception as exc:  # noqa: BLE001 - a bug on one request must not stop the door
            self._info.door_errors += 1
            self._info.last_door_error = cut_chars(f"{type(exc).__name__}: {exc}", 500)
            if len(frames) >= 2:
                style = _REQ_STYLE if frames[1] == b"" else _DEALER_STYLE
                self._send(style + frames[0], codec.dump_error("", ErrorCode.INTERNAL, "front door error"))

    def _send(self, token: bytes, frames: list[bytes]) -> None:
        style, identity = token[:1], token[1:]
        if not self._transmit(identity, [b"", *frames] if style == _REQ_STYLE else frames):
            self._info.replies_dropped += 1  # the client is gone or not reading: never block

    def _reject(self, token: bytes, request_id: str, code: ErrorCode, reason: str, retry_ms: int = 0) -> None:
        self._info.requests_rejected += 1
        self._send(token, codec.dump_error(request_id, code, redact(reason), retry_ms))

    def _on_request(self, frames: list[bytes]) -> None:
        self._info.requests += 1
        identity, rest = frames[0], frames[1:]
        style = _DEALER_STYLE
        if rest and rest[0] == b"":
            style, rest = _REQ_STYLE, rest[1:]
        token = style + identity
        if not self.accepting:
            self._reject(token, "", ErrorCode.SHUTTING_DOWN, "the daemon is shutting down")
            return
        try:
            cls, fields = codec.load_fields(rest)
        except ProtocolError as exc:
            self._reject(token, exc.request_id, exc.code, exc.reason)
            return
        kind = str(cls.KIND)
        request_id: str = fields["id"]
        project = fields.get("project", "")
        if project or (cls.TELL and cls is not ClientDropped):
            problem = project_problem(project)  # the project rule, the same for every kind
            if problem:
                self._reject(token, request_id, ErrorCode.BAD_PROJECT, problem)
                return
        route = make_route(self._sink_name, token)
        if kind in ROUTED_BY_FIELD:
            owner = str(fields.get("actor", "control" if cls is Ping else ""))
            if cls is DebugCrash:
                if not self._settings.debug_hooks:
                    self._reject(token, request_id, ErrorCode.FORBIDDEN, "debug hooks are disabled")
                    return
                how = fields.get("how", "tell")
                if how == "tell":
                    route = b""  # deliver as a failing tell; answer for the actor
                elif how == "release":  # end a `stall` without going through the full inbox
                    self._info.release_stall(owner)
                    self._send(token, codec.dump_result(request_id, {"released": owner}))
                    return
        else:
            owner = self._router.owners.get(kind, "")
            if not owner:
                self._reject(token, request_id, ErrorCode.UNKNOWN_KIND, f"no actor handles {kind}")
                return
        stats = self._router.stats.get(owner)
        if stats is None:
            self._reject(token, request_id, ErrorCode.NOT_FOUND, f"no actor named {owner!r}")
            return
        if stats.state in (ActorState.FAILED, ActorState.STOPPED, ActorState.STOPPING):
            self._reject(token, request_id, ErrorCode.UNAVAILABLE, f"actor {owner} is {stats.state}")
            return
        if owner == "control" and kind in INLINE_KINDS:
            try:
                answer = codec.dump_result(request_id, self._info.answer(kind))
            except Exception as exc:  # noqa: BLE001 - answer an error, keep the door open
                answer = codec.dump_error(request_id, ErrorCode.INTERNAL, f"{type(exc).__name__}: {exc}")
            self._send(token, answer)
            return
        if cls.TELL:
            route = b""  # a tell sent on ctl.sock: deliver it, acknowledge receipt
        prompt = kind in PROMPT_KINDS and route != b"" and token not in self._in_flight
        if not self._router.deliver(owner, route, rest[0], rest[1], prompt=prompt):
            self._info.requests_busy += 1
            self._reject(token, request_id, ErrorCode.BUSY, f"actor {owner} inbox is full; retry",
                         BUSY_RETRY_MS)
            return
        if not route:
            self._send(token, codec.dump_result(request_id, {"accepted": True}))
            return
        if len(self._in_flight) >= IN_FLIGHT_CLIENTS and token not in self._in_flight:
            # Replies lost with a crashed handler leave counts behind; forgetting them only lets
            # those clients' prompts take the lane again.
            self._in_flight.clear()
        self._in_flight[token] = self._in_flight.get(token, 0) + 1


class FrontDoor(Door):
    """A door on a ZeroMQ ROUTER (the tcp door, `runtime.remote`): libzmq hands a message over
    whole, so its bounds apply while it is read out of libzmq (`read_bounded`)."""

    def __init__(
        self, router: Router, settings: Settings, ctl: zmq.asyncio.Socket, info: DaemonInfo,
        *, sink: str = FRONT,
    ) -> None:
        super().__init__(router, settings, info, sink=sink)
        self._ctl = ctl
        self._ctl_shadow: zmq.Socket[bytes] = zmq.Socket.shadow(ctl.underlying)

    async def serve_requests(self) -> None:
        sock = self._ctl
        recv = self._ctl_shadow.recv
        while True:
            first = await sock.recv(copy=False)
            self._take(first, recv)
            for _ in range(REQUEST_BATCH):
                try:
                    first = recv(_NOBLOCK, copy=False)
                except zmq.Again:
                    break
                self._take(first, recv)

    def _take(self, first: zmq.Frame, recv: Any) -> None:
        frames, over = read_bounded(first, recv, REQUEST_FRAMES, REQUEST_BYTES)
        self._handle(frames, over)

    def _transmit(self, identity: bytes, frames: list[bytes]) -> bool:
        try:
            self._ctl_shadow.send_multipart([identity, *frames], flags=zmq.NOBLOCK)
        except zmq.ZMQError:
            return False  # EHOSTUNREACH (client gone) or EAGAIN (client not reading)
        finally:
            # ZMQ_FD is edge-triggered and shared by both directions: the send may have
            # consumed the signal of a request that arrived meanwhile, while `serve_requests`
            # awaits that signal — and a non-empty pipe never signals again, so the door went
            # deaf. Reading ZMQ_EVENTS through the asyncio socket makes pyzmq schedule the
            # waiting receive when a request is there (what its own sends do after a send).
            self._ctl.get(zmq.EVENTS)
        return True


class ZmtpDoor(Door):
    """The local door, on `ctl.sock` read by `runtime.zmtp`: a request's bounds apply as its
    bytes arrive, so nothing over them is ever held (docs/DOOR.md)."""

    def __init__(self, router: Router, settings: Settings, ctl: ZmtpRouter, info: DaemonInfo) -> None:
        super().__init__(router, settings, info)
        self._ctl = ctl

    async def serve_requests(self) -> None:
        sock = self._ctl
        while True:
            got = await sock.recv()
            self._handle([got.identity, *got.frames], got.over)
            for _ in range(REQUEST_BATCH):
                more = sock.recv_nowait()
                if more is None:
                    break
                self._handle([more.identity, *more.frames], more.over)
            await asyncio.sleep(0)  # a queue always full must not keep the loop from the actors

    def _transmit(self, identity: bytes, frames: list[bytes]) -> bool:
        return self._ctl.send(identity, frames)
