"""The one DEALER socket an `AsyncClient` shares between all its concurrent asks.

Owns the socket to `ctl.sock`, the single task that reads replies off it, and the table of asks
waiting for a reply, keyed by request id. No ask ever receives from the socket itself: the reader
hands each reply to the future of the ask it answers and drops a reply nobody waits for any more
(a late answer to a cancelled or timed-out ask). So

* every reply reaches its own ask, whatever the order the daemon answers in;
* an ask waits on its own future only, with its own deadline: cancelling it (a task cancelled, a
  `wait_for` expiring) removes its entry and touches neither the socket nor the other asks;
* a send is a non-blocking call that completes before the ask can be cancelled, so a cancelled
  ask never leaves half a message on the socket.

Lazy Pirate over a shared socket: an attempt that got no reply replaces the socket only when
nothing at all arrived on it since that attempt was sent (the daemon, or the connection, is gone);
while other replies keep coming the connection is healthy, and the ask is simply sent again with
the same request id. When the socket is replaced, the replies still owed on the old one can no
longer arrive, so every other waiting ask is resent at once on the new one (same frames, same id,
its deadline unchanged) — or, when no daemon listens any more, every waiting ask ends with
DealerGone instead of waiting out its own deadline.

The socket and the reader belong to the event loop that made them; an ask from another loop
(a second `asyncio.run` with the same client) starts over with a fresh socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any, NamedTuple, cast

import zmq
from zmq import asyncio as zmq_asyncio

from slmactor.protocol import ProtocolError, codec
from slmactor.protocol.codec import Reply

__all__ = ["DealerClosed", "DealerGone", "SharedDealer"]


class DealerClosed(Exception):
    """The client was closed while the ask waited, or before it was sent."""


class DealerGone(Exception):
    """No daemon listens on the socket any more (found when an unanswered socket was replaced)."""


class _Waiter(NamedTuple):
    future: asyncio.Future[Reply]
    frames: list[bytes]


class SharedDealer:
    """A DEALER to `endpoint` whose replies are dispatched by request id (one event loop)."""

    def __init__(self, zctx: zmq_asyncio.Context, endpoint: str, alive: Callable[[], bool],
                 secure: Callable[[Any], None] | None = None) -> None:
        self._zctx = zctx
        self._endpoint = endpoint
        #: Makes a new socket a CURVE client of a daemon over tcp (`slmactor.remote.Target`).
        self._secure = secure
        #: Whether a daemon listens on the endpoint (asked only when a socket is replaced).
        self._alive = alive
        self._sock: zmq_asyncio.Socket | None = None
        self._reader: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiters: dict[str, _Waiter] = {}
        #: When the reader last took a message off the socket (monotonic seconds).
        self._last_rx = -1.0
        self.closed = False
        #: Sockets replaced after an attempt that nothing answered (Lazy Pirate), for tests/stats.
        self.resets = 0

    @property
    def waiting(self) -> int:
        """Asks waiting for a reply now."""
        return len(self._waiters)

    async def request(self, request_id: str, frames: list[bytes], wait: float) -> Reply | None:
        """Send `frames` and wait up to `wait` seconds for the reply carrying `request_id`.

        None when no reply came in time (or the send was refused: the daemon reads nothing);
        raises DealerClosed when the client is closed meanwhile.
        """
        if self.closed:
            raise DealerClosed("the client is closed")
        loop = asyncio.get_running_loop()
        sock = self._socket(loop)
        waiter: asyncio.Future[Reply] = loop.create_future()
        self._waiters[request_id] = _Waiter(waiter, frames)
        sent_at = time.monotonic()
        try:
            if not _send(sock, frames):  # the high-water mark: the daemon has stopped reading
                self._stale(request_id, sock, sent_at - wait)
                return None
            done, _ = await asyncio.wait((waiter,), timeout=max(wait, 0.0))
            if not done:
                self._stale(request_id, sock, sent_at)
                return None
            return waiter.result()
        finally:
            entry = self._waiters.get(request_id)
            if entry is not None and entry.future is waiter:
                del self._waiters[request_id]
            if not waiter.done():
                waiter.cancel()
            elif not waiter.cancelled():
                waiter.exception()  # an error set after this ask stopped waiting: seen, not logged

    def close(self) -> None:
        """Fail every waiting ask with DealerClosed, stop the reader and close the socket."""
        self.closed = True
        self._fail_all(DealerClosed, "the client was closed while the ask waited")
        self._drop_socket()

    # ---------------------------------------------------------------- internals

    def _socket(self, loop: asyncio.AbstractEventLoop) -> zmq_asyncio.Socket:
        if self._loop is not loop or (self._reader is not None and self._reader.done()):
            self._drop_socket()  # another event loop's socket, or a reader that was stopped
            self._loop = loop
        if self._sock is None:
            sock = self._zctx.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            if self._secure is not None:
                self._secure(sock)
            sock.connect(self._endpoint)
            self._sock = sock
            self._reader = loop.create_task(self._read(sock), name="slmactor-client-replies")
        return self._sock

    async def _read(self, sock: zmq_asyncio.Socket) -> None:
        """Take every reply off `sock` and resolve the future of the ask it answers."""
        while True:
            try:
                frames = await sock.recv_multipart()
            except zmq.ZMQError:  # the socket was closed under us (reset or close)
                return
            self._last_rx = time.monotonic()
            try:
                reply = codec.load_reply(frames)
            except ProtocolError:
                continue  # not a reply we can read: nobody can be waiting for it
            entry = self._waiters.get(reply.id)
            if entry is not None and not entry.future.done():
                entry.future.set_result(reply)

    def _stale(self, request_id: str, sock: zmq_asyncio.Socket, since: float) -> None:
        """The attempt of `request_id` on `sock` went unanswered. Replace `sock` when nothing
        arrived on it since `since` (and nobody replaced it already), then resend the other
        waiting asks on the new socket — or end them all when no daemon listens."""
        if self._sock is not sock or self._last_rx >= since:
            return
        self.resets += 1
        self._drop_socket()
        assert self._loop is not None
        others = [w for rid, w in self._waiters.items() if rid != request_id and not w.future.done()]
        if not others:
            return
        if not self._alive():
            self._fail_all(DealerGone, "no daemon listening any more")
            return
        fresh = self._socket(self._loop)
        for entry in others:
            _send(fresh, entry.frames)

    def _fail_all(self, error: type[Exception], why: str) -> None:
        waiters, self._waiters = self._waiters, {}
        for entry in waiters.values():
            if not entry.future.done():
                with contextlib.suppress(RuntimeError):  # its event loop has already closed
                    entry.future.set_exception(error(why))  # one each: tracebacks are per raise

    def _drop_socket(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None and not reader.done():
            with contextlib.suppress(RuntimeError):  # its event loop has already closed
                reader.cancel()
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(RuntimeError):  # pyzmq unhooks from a closed loop
                sock.close(linger=0)


def _send(sock: zmq_asyncio.Socket, frames: list[bytes]) -> bool:
    """Send without blocking; False when the queue is full (the daemon reads nothing).

    With DONTWAIT pyzmq sends at once and returns a finished future: nothing is awaited, so no
    cancellation can fall between the frames of a message."""
    try:
        sent = sock.send_multipart(frames, zmq.NOBLOCK)
        cast("asyncio.Future[Any]", sent).result()  # typed as an Awaitable; it is a done Future
    except zmq.Again:
        return False
    return True
