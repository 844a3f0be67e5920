"""ZMTP 3 on the daemon's own unix socket: the ROUTER end of `ctl.sock`, reading every message
within whole-message bounds as its bytes arrive.

libzmq hands a multipart message over only once all of it has arrived, and its size limit is per
frame: an ask of 300 frames of 1 MiB was assembled whole (300 MiB) inside libzmq before the
daemon could refuse it, six of them at once 1.8 GB (docs/DOOR.md). Clients keep their ZeroMQ
DEALER (or REQ) sockets — the wire is ZMTP 3.1 (rfc.zeromq.org 23/ZMTP and 37/ZMTP), NULL
mechanism — but the daemon reads the frames itself, so a message is kept only up to
`max_frames` frames and `max_bytes` bytes; the rest is read and dropped as it arrives, and the
message is handed over marked as over its bound, for the door to refuse. A frame larger than
`max_frame` ends the connection at its header (what ZMQ_MAXMSGSIZE did).

What the ROUTER did and this does too: each connection gets a routing id; at most `hwm`
messages of one connection wait for the door (then that connection is not read, and its sender
waits, held back by the kernel's socket buffer); a reply to a connection that is gone, or whose
unread replies pass `out_bytes`, is dropped (`send` returns False), never waited on. PING is
answered with PONG (ZMTP 3.1 heartbeats); other commands are ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from slmactor.runtime.rundir import bind_private

FLAG_MORE = 0x01
FLAG_LONG = 0x02
FLAG_COMMAND = 0x04
#: Our greeting: signature, version 3.1, the NULL mechanism, not as-server, filler (64 bytes).
GREETING = b"\xff" + bytes(8) + b"\x7f" + bytes([3, 1]) + b"NULL".ljust(20, b"\x00") + b"\x00" + bytes(31)
#: The socket types a ROUTER talks to that send asks.
PEER_TYPES = frozenset({b"REQ", b"DEALER"})
#: A connection that has not finished its handshake by then is closed (a raw connect reading
#: our credentials, `slmactor.peer`, closes at once; a silent one must not stay forever).
HANDSHAKE_S = 10.0
_SKIP_CHUNK = 1 << 16


class ZmtpError(Exception):
    """The peer broke the protocol; its connection is closed."""


def frame(data: bytes, flags: int = 0) -> bytes:
    """One frame's header and body."""
    size = len(data)
    if size <= 255:
        return bytes((flags, size)) + data
    return bytes((flags | FLAG_LONG,)) + size.to_bytes(8, "big") + data


def command(name: bytes, body: bytes = b"") -> bytes:
    return frame(bytes((len(name),)) + name + body, FLAG_COMMAND)


def ready(socket_type: bytes) -> bytes:
    name = b"Socket-Type"
    return command(b"READY", bytes((len(name),)) + name + len(socket_type).to_bytes(4, "big") + socket_type)


def properties(body: bytes) -> dict[bytes, bytes]:
    """The metadata of a READY command's body (after its name); ZmtpError when malformed."""
    out: dict[bytes, bytes] = {}
    at = 0
    while at < len(body):
        size = body[at]
        name = body[at + 1:at + 1 + size]
        at += 1 + size
        if len(name) != size or at + 4 > len(body):
            raise ZmtpError("malformed READY metadata")
        length = int.from_bytes(body[at:at + 4], "big")
        value = body[at + 4:at + 4 + length]
        if len(value) != length:
            raise ZmtpError("malformed READY metadata")
        out[name.lower()] = value
        at += 4 + length
    return out


@dataclass(slots=True)
class Received:
    """One message of one connection: its frames (kept ones only, when `over`)."""

    identity: bytes
    frames: list[bytes]
    #: "" or the bound it went over: "frames" / "bytes".
    over: str = ""


@dataclass(slots=True)
class _Peer:
    writer: asyncio.StreamWriter
    waiting: asyncio.Semaphore


class ZmtpRouter:
    """The ROUTER end of a unix socket: `listen` (sync, so the daemon binds before it serves),
    `serve` (the accept loop, a task), `recv` / `send`, `close`."""

    def __init__(self, *, max_frames: int, max_bytes: int, max_frame: int, hwm: int,
                 out_bytes: int) -> None:
        self.max_frames = max_frames
        self.max_bytes = max_bytes
        self.max_frame = max_frame
        self.hwm = hwm
        self.out_bytes = out_bytes
        self._queue: asyncio.Queue[Received] = asyncio.Queue()
        self._peers: dict[bytes, _Peer] = {}
        self._ids = itertools.count(1)
        self._listener: socket.socket | None = None
        self._server: asyncio.AbstractServer | None = None
        #: Connections closed for breaking the protocol (an oversize frame, a bad greeting).
        self.refused = 0

    def listen(self, path: Path, backlog: int = 256) -> None:
        """Bind the socket file, private to this user (umask 077, then 0600)."""
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._take(listener, lambda: bind_private(path, lambda: listener.bind(str(path))), backlog)

    def _take(self, listener: socket.socket, bind: Callable[[], object], backlog: int) -> None:
        """Bind `listener` (closed when that fails) and listen on it, non-blocking."""
        try:
            bind()
        except OSError:
            listener.close()
            raise
        listener.listen(backlog)
        listener.setblocking(False)
        self._listener = listener

    async def serve(self) -> None:
        """Accept connections until cancelled."""
        if self._listener is None:
            raise RuntimeError("listen first")
        start = asyncio.start_unix_server if self._listener.family == socket.AF_UNIX \
            else asyncio.start_server
        self._server = await start(self._connection, sock=self._listener)
        async with self._server:
            await self._server.serve_forever()

    def counts(self) -> dict[str, int]:
        """Connections open now, and those closed for breaking the protocol."""
        return {"open": len(self._peers), "refused": self.refused}

    async def recv(self) -> Received:
        return self._taken(await self._queue.get())

    def recv_nowait(self) -> Received | None:
        try:
            return self._taken(self._queue.get_nowait())
        except asyncio.QueueEmpty:
            return None

    def _taken(self, got: Received) -> Received:
        """A message the door took: its connection may be read again."""
        peer = self._peers.get(got.identity)
        if peer is not None:
            peer.waiting.release()
        return got

    def send(self, identity: bytes, frames: Iterable[bytes]) -> bool:
        """Queue a reply to one connection; False (dropped) when it is gone or not reading."""
        peer = self._peers.get(identity)
        if peer is None or peer.writer.is_closing():
            return False
        transport = peer.writer.transport
        if transport.get_write_buffer_size() > self.out_bytes:
            return False
        parts = list(frames)
        peer.writer.write(b"".join(frame(p, FLAG_MORE if i < len(parts) - 1 else 0)
                                   for i, p in enumerate(parts)))
        return True

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for peer in list(self._peers.values()):
            peer.writer.close()
        self._peers.clear()
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    # ------------------------------------------------------------------------------ per peer

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        identity = next(self._ids).to_bytes(8, "big")  # never reused while the daemon runs
        peer = _Peer(writer, asyncio.Semaphore(self.hwm))
        try:
            # A peer that went (or never spoke) leaves nothing behind.
            with contextlib.suppress(asyncio.IncompleteReadError, TimeoutError, OSError):
                await self._converse(identity, peer, reader, writer)
        finally:
            self._peers.pop(identity, None)
            writer.close()  # not awaited: a cancelled handler must end at once (daemon stop)

    async def _converse(self, identity: bytes, peer: _Peer, reader: asyncio.StreamReader,
                        writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(HANDSHAKE_S):
                await self._handshake(reader, writer)
            self._peers[identity] = peer
            await self._messages(identity, peer, reader, writer)
        except ZmtpError:
            self.refused += 1

    async def _handshake(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(GREETING)
        greeting = await reader.readexactly(64)
        if greeting[0] != 0xFF or greeting[9] != 0x7F or greeting[10] < 3:
            raise ZmtpError("not a ZMTP 3 greeting")
        if greeting[12:32].rstrip(b"\x00") != b"NULL":
            raise ZmtpError("only the NULL mechanism is spoken here")
        writer.write(ready(b"ROUTER"))
        flags, size = await self._header(reader)
        if not flags & FLAG_COMMAND or size > 4096:
            raise ZmtpError("expected READY")
        body = await reader.readexactly(size)
        name = body[1:1 + body[0]] if body else b""
        if name != b"READY":
            raise ZmtpError("expected READY")
        if properties(body[1 + len(name):]).get(b"socket-type") not in PEER_TYPES:
            raise ZmtpError("a ROUTER takes asks from REQ and DEALER sockets only")

    async def _header(self, reader: asyncio.StreamReader) -> tuple[int, int]:
        head = await reader.readexactly(2)
        flags = head[0]
        if flags & FLAG_LONG:
            size = int.from_bytes(head[1:2] + await reader.readexactly(7), "big")
        else:
            size = head[1]
        if size > self.max_frame:
            raise ZmtpError("frame over the size limit")
        return flags, size

    async def _messages(self, identity: bytes, peer: _Peer, reader: asyncio.StreamReader,
                        writer: asyncio.StreamWriter) -> None:
        while True:
            frames: list[bytes] = []
            total = len(identity)
            over = ""
            while True:
                flags, size = await self._header(reader)
                if flags & FLAG_COMMAND:
                    self._command(await reader.readexactly(size), writer)
                    continue
                if not over:
                    total += size
                    if len(frames) + 1 >= self.max_frames:  # the routing id counts as one
                        over = "frames"
                    elif total > self.max_bytes:
                        over = "bytes"
                if over:
                    await _skip(reader, size)
                else:
                    frames.append(await reader.readexactly(size))
                if not flags & FLAG_MORE:
                    break
            await peer.waiting.acquire()  # this connection is not read while hwm asks wait
            self._queue.put_nowait(Received(identity, frames, over))

    @staticmethod
    def _command(body: bytes, writer: asyncio.StreamWriter) -> None:
        name = body[1:1 + body[0]] if body else b""
        if name == b"PING":
            # PING = TTL (2 bytes) + context; PONG echoes the context.
            writer.write(command(b"PONG", body[1 + len(name) + 2:]))


async def _skip(reader: asyncio.StreamReader, size: int) -> None:
    """Read `size` bytes and keep none of them."""
    while size:
        chunk = await reader.read(min(size, _SKIP_CHUNK))
        if not chunk:
            raise asyncio.IncompleteReadError(b"", size)
        size -= len(chunk)
