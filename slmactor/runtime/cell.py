"""One actor's life: its mailbox loop, reply loop, events loop, drain on stop.

A cell outlives actor instances: the mailbox socket and the counters belong to the cell, so a
restarted actor finds the messages that were waiting and `status` keeps the history.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import zmq
import zmq.asyncio

from slmactor.logic.text.redact import redact, redact_reply
from slmactor.protocol import MAX_TELL_BYTES, ErrorCode, ProtocolError, RequestError, codec
from slmactor.stores.base.errors import STORAGE_ERRNOS, StoreError

from .actor import IN_HANDLER, IN_PROMPT, Actor, ActorContext, Later, store_failure
from .router import WAKE_UP
from .stats import ActorState

#: Messages taken from a socket per wake-up before yielding to the event loop.
MAILBOX_BATCH = 64
#: Event-loop turns a cell waits for a message counted in its prompt lane to become readable.
LANE_MISSES = 1000
#: Longest a mailbox keeps the event loop to itself between handlers (seconds) before yielding.
MAILBOX_SLICE = 0.0005
EVENTS_BATCH = 256
EVENTS_BATCH_BYTES = 4 << 20
#: Longest the events loop keeps the event loop to itself (seconds): it hands `on_events` batches
#: of up to EVENTS_BATCH until the socket is empty or this slice is used up, then yields.
EVENTS_SLICE = 0.0005
#: Event-loop turns given away after each slice. Under a flood the next recv completes at once
#: and never yields, and an ask needs several turns (front door → mailbox → reply sink, each a
#: socket wake-up and a task step), so a single yield would make an ask wait for several slices.
YIELDS_PER_SLICE = 6
#: Frames of a tell on events.sock: [kind, body]. More is refused whole, unread.
TELL_FRAMES = 2
#: Longest kind frame of a tell (kinds are short names).
TELL_KIND_BYTES = 256
_NOBLOCK = int(zmq.NOBLOCK)  # a plain int: the Flag enum is converted on every call otherwise


def _fill(batch: list[list[bytes]], recv: Callable[..., Any]) -> tuple[bool, int, int]:
    """Add queued messages to `batch` without blocking, up to EVENTS_BATCH messages or
    EVENTS_BATCH_BYTES of bodies in all. Returns (more, too_large, too_many): more is True when
    it stopped at a limit (more may be queued), False when the socket ran dry; too_large counts
    tells with a kind frame over TELL_KIND_BYTES or a body over MAX_TELL_BYTES, too_many tells of
    more than TELL_FRAMES frames. Those are dropped here whole, frame by frame, without copying or
    decoding a frame past the bound — so a flood of huge or many-framed tells is shed as fast as
    ZeroMQ hands it over, never backs up the inbox and never holds more than one such frame.

    `recv_multipart` inlined with zero-copy frames: it asks RCVMORE through getsockopt, which
    builds an enum per call (measured 2.5 → 1.5 µs per two-frame event, bench/bench_working.py).
    The byte bound keeps a flood of 1 MiB tells from holding 256 of them (and their decoded
    copies) at once.
    """
    append = batch.append
    size = sum(len(parts[-1]) for parts in batch)
    too_large = too_many = 0
    try:
        while len(batch) < EVENTS_BATCH and size < EVENTS_BATCH_BYTES:
            frame = recv(_NOBLOCK, copy=False)
            large = len(frame) > TELL_KIND_BYTES
            many = False
            parts = [] if large else [frame.bytes]
            while frame.more:
                frame = recv(_NOBLOCK, copy=False)
                if large or many:
                    continue  # dropping the rest: each frame is freed as the next is read
                if len(parts) >= TELL_FRAMES:
                    many = True
                elif len(frame) > MAX_TELL_BYTES:
                    large = True
                else:
                    parts.append(frame.bytes)
            if large or many:
                too_large += large
                too_many += many
                continue
            size += len(parts[-1])
            append(parts)
    except zmq.Again:
        return False, too_large, too_many
    return True, too_large, too_many


def _taker(lane: zmq.Socket[bytes], mailbox: zmq.Socket[bytes]
           ) -> Callable[[bool], tuple[list[bytes], bool] | None]:
    """The next message without waiting, the prompt lane's first (and only the lane's unless
    `also_mailbox`): (frames, from the lane), or None when there is none."""

    def take(also_mailbox: bool) -> tuple[list[bytes], bool] | None:
        try:
            return lane.recv_multipart(_NOBLOCK), True
        except zmq.Again:
            if not also_mailbox:
                return None
        try:
            return mailbox.recv_multipart(_NOBLOCK), False
        except zmq.Again:
            return None

    return take


def _refused(actor: Actor, too_large: int, too_many: int) -> None:
    if too_large:
        actor.on_events_refused(too_large, f"tell body over {MAX_TELL_BYTES} bytes")
    if too_many:
        actor.on_events_refused(too_many, f"tell of more than {TELL_FRAMES} frames [kind, body]")


def _result_frames(msg: Any, result: Any) -> list[bytes]:
    # Every reply leaves through the redactor (C-20): working memory, blocks and errors can quote
    # what a harness sent, secrets included.
    try:
        return codec.dump_result(msg.id, redact_reply(result))
    except Exception as exc:  # noqa: BLE001 - still exactly one reply, and the actor lives on
        return codec.dump_error(msg.id, ErrorCode.INTERNAL, f"the result could not be sent: {type(exc).__name__}")


def describe(exc: BaseException) -> str:
    """One line for `status`: the innermost exception of a group, with where it was raised."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    where = ""
    tb = traceback.extract_tb(exc.__traceback__)
    if tb:
        frame = tb[-1]
        where = f" (at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno})"
    return f"{type(exc).__name__}: {exc}{where}"


class ActorCell:
    """Runs instances of one actor class over a persistent mailbox."""

    def __init__(
        self,
        actor_cls: type[Actor],
        ctx: ActorContext,
        events: zmq.asyncio.Socket | None = None,
    ) -> None:
        self.actor_cls = actor_cls
        self.ctx = ctx
        self.name = actor_cls.name
        self._events = events
        self._stop = anyio.Event()
        self.instance: Actor | None = None

    def request_stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    async def run(self, on_running: Callable[[], None]) -> None:
        """Run one instance until stop is requested (returns) or it crashes (raises)."""
        stats = self.ctx.stats
        stats.state = ActorState.STARTING
        actor = self.actor_cls(self.ctx)
        self.instance = actor
        await actor.on_start()
        async with anyio.create_task_group() as tg:
            actor._attach(tg)
            tg.start_soon(self._reply_loop, actor)
            work = anyio.CancelScope()

            async def work_loops() -> None:
                with work:
                    async with anyio.create_task_group() as loops:
                        loops.start_soon(self._mailbox_loop, actor)
                        if self._events is not None:
                            loops.start_soon(self._events_loop, actor)
                        for loop in actor.loops():
                            loops.start_soon(loop)

            tg.start_soon(work_loops)
            stats.state = ActorState.RUNNING
            on_running()
            await self._stop.wait()
            stats.state = ActorState.STOPPING
            work.cancel()
            with anyio.move_on_after(self.ctx.settings.stop_deadline, shield=True):
                await self._drain(actor)
                await actor.on_stop()
            tg.cancel_scope.cancel()
        stats.state = ActorState.STOPPED

    # ---------------------------------------------------------------- loops

    async def _mailbox_loop(self, actor: Actor) -> None:
        router = self.ctx.router
        mailbox = router.mailboxes[self.name]
        # The prompt lane first, at every message: a block waits behind one handler at most.
        take = _taker(zmq.Socket.shadow(router.prompt_lanes[self.name].underlying),
                      zmq.Socket.shadow(mailbox.underlying))
        clock = time.monotonic
        idle = True
        misses = 0  # turns the lane was counted but read empty (a message still on its way)
        while True:
            # One socket awaited, as before the lane (no poller on every hop): a message put
            # in an empty lane is followed by a WAKE_UP frame here (`Router.deliver`).
            first: list[bytes] | None = await mailbox.recv_multipart() if idle else None
            slice_end = clock() + MAILBOX_SLICE
            idle = False
            for _ in range(MAILBOX_BATCH):
                taken = take(first is None)
                if taken is None:
                    if first is None:
                        # Both empty: wait for the mailbox — unless a lane message is on its
                        # way (counted, not yet readable), which a next turn takes. A count
                        # that never comes true is dropped rather than spun on.
                        idle = router.lane_queued[self.name] == 0
                        misses = 0 if idle else misses + 1
                        if misses > LANE_MISSES:
                            router.lane_queued[self.name] = 0
                            idle, misses = True, 0
                        break
                    taken, first = (first, False), None
                if taken[1]:
                    router.taken_from_lane(self.name)
                if taken[0] != WAKE_UP:
                    await self._handle(actor, *taken)
                if clock() >= slice_end:
                    # A backlog of writes (episode appends at hundreds a second) ran this long
                    # without a turn for anyone else; the other actors and the door get theirs
                    # now, and the batch goes on after them.
                    await anyio.lowlevel.checkpoint()
                    slice_end = clock() + MAILBOX_SLICE
            if first is not None and first != WAKE_UP:
                await self._handle(actor, first)
            if not idle:
                await anyio.lowlevel.checkpoint()

    async def _events_loop(self, actor: Actor) -> None:
        assert self._events is not None
        sock = self._events
        shadow: zmq.Socket[bytes] = zmq.Socket.shadow(sock.underlying)
        recv = shadow.recv
        stats = self.ctx.stats
        clock = time.monotonic
        while True:
            batch = [await sock.recv_multipart()]
            slice_end = clock() + EVENTS_SLICE
            while True:
                more, too_large, too_many = _fill(batch, recv)
                if too_large or too_many:
                    _refused(actor, too_large, too_many)
                if batch:
                    actor.on_events(batch)  # a raise here crashes the actor (events are tells)
                    stats.processed += len(batch)
                if not more or clock() >= slice_end:
                    break
                batch = []
            # Six turns even when the socket ran dry: measured (bench_working, paired runs) it
            # costs less CPU per event than one turn, because the senders refill the socket
            # meanwhile and the next wake-up drains a bigger batch.
            for _ in range(YIELDS_PER_SLICE):
                await anyio.lowlevel.checkpoint()

    async def _reply_loop(self, actor: Actor) -> None:
        sink = self.ctx.router.reply_sinks[self.name]
        while True:
            frames = await sink.recv_multipart()
            if len(frames) == 3:
                actor._deliver_reply(frames[0], frames[1:])

    async def _drain(self, actor: Actor) -> None:
        """On stop: handle what is already queued, so acknowledged tells are not lost."""
        if self._events is not None:
            shadow: zmq.Socket[bytes] = zmq.Socket.shadow(self._events.underlying)
            while True:
                batch: list[list[bytes]] = []
                more, too_large, too_many = _fill(batch, shadow.recv)
                if too_large or too_many:
                    _refused(actor, too_large, too_many)
                if batch:
                    actor.on_events(batch)
                    self.ctx.stats.processed += len(batch)
                if not more:
                    break
        router = self.ctx.router
        take = _taker(*(zmq.Socket.shadow(inbox.underlying)
                        for inbox in (router.prompt_lanes[self.name], router.mailboxes[self.name])))
        while (taken := take(True)) is not None:
            if taken[1]:
                router.taken_from_lane(self.name)
            if taken[0] != WAKE_UP:
                await self._handle(actor, *taken)

    # ---------------------------------------------------------------- one message

    async def _handle(self, actor: Actor, frames: list[bytes], prompt: bool = False) -> None:
        stats = self.ctx.stats
        stats.dequeued += 1
        if len(frames) != 3:
            stats.record_error(f"malformed mailbox message with {len(frames)} frames")
            return
        route, kind, body = frames
        self.ctx.router.dequeued(body)
        reply = self.ctx.router.reply
        try:
            msg = codec.load([kind, body])
        except ProtocolError as exc:
            if route:
                reply(route, codec.dump_error(exc.request_id, exc.code, exc.reason))
            else:
                stats.extra["tells_invalid"] = stats.extra.get("tells_invalid", 0) + 1
            return
        handler = actor.handler_for(str(msg.KIND))
        if handler is None:
            if route:
                reason = f"actor {self.name!r} does not handle {msg.KIND}"
                reply(route, codec.dump_error(msg.id, ErrorCode.UNKNOWN_KIND, reason))
            else:
                stats.extra["tells_invalid"] = stats.extra.get("tells_invalid", 0) + 1
            return
        marker = IN_HANDLER.set(self.name)  # our asks from here on hold the mailbox
        lane = IN_PROMPT.set(prompt)
        try:
            if not route:
                await handler(msg)  # a failing tell crashes the actor: the supervisor restarts it
                stats.processed += 1
                return
            stats.processed += 1
            try:
                result: Any = await handler(msg)
            except Exception as exc:  # noqa: BLE001 - a failing ask answers an error; the actor lives on
                reply(route, self._error_frames(msg, exc))
                return
        finally:
            IN_PROMPT.reset(lane)
            IN_HANDLER.reset(marker)
        if isinstance(result, Later):
            actor.spawn_reply(self._finish_later(msg, route, result), f"{msg.KIND} (later)")
            return
        reply(route, _result_frames(msg, result))

    def _error_frames(self, msg: Any, exc: Exception) -> list[bytes]:
        if isinstance(exc, RequestError):
            return codec.dump_error(msg.id, exc.code, redact(exc.reason))
        if isinstance(exc, StoreError) or (isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS):
            # Nothing was acknowledged: the store said why (disk full, read-only, too large).
            failure = store_failure(exc)
            return codec.dump_error(msg.id, failure.code, redact(failure.reason))
        text = redact(describe(exc))
        self.ctx.stats.record_error(f"{msg.KIND}: {text}")
        return codec.dump_error(msg.id, ErrorCode.INTERNAL, text)

    async def _finish_later(self, msg: Any, route: bytes, later: Later) -> None:
        """Run a handler's `later` work beside the mailbox; its outcome is the one reply."""
        reply = self.ctx.router.reply
        try:
            result = await later.work
        except Exception as exc:  # noqa: BLE001 - as for any ask: an error reply, the actor lives on
            reply(route, self._error_frames(msg, exc))
            return
        except BaseException:  # cancelled: the actor is stopping — still exactly one reply
            reply(route, codec.dump_error(msg.id, ErrorCode.SHUTTING_DOWN, "the actor stopped first"))
            raise
        reply(route, _result_frames(msg, result))
