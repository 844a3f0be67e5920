"""ZMTP 3 with the CURVE mechanism on a tcp port: the ROUTER end of the remote ctl endpoint, read
within the same whole-message bounds as `ctl.sock`.

libzmq's own CURVE socket hands a multipart message over only once all of it has arrived and
decrypted: an allowed key's asks of 300 frames of 1 MiB peaked the daemon at 784–899 MiB over
tcp against 56 MiB over ipc. So the daemon speaks CurveZMQ itself (rfc.zeromq.org
26/CURVEZMQ and 25/ZMTP-CURVE, as libzmq 4.3's `curve_server.cpp` and `curve_mechanism_base.cpp`
implement it; read, not copied), with PyNaCl's `crypto_box` and `crypto_secretbox`: clients keep
their libzmq DEALER with `curve_serverkey`, and each frame is decrypted and kept or dropped as it
arrives — at most one frame (`max_frame`) is held per connection beyond the kept ones.

Handshake, server side: greeting (mechanism CURVE, as-server); HELLO (the client's short-term
key C' and a box of 64 zero bytes for C'→S); WELCOME (our short-term key S' and a cookie: C' and
s' boxed under a key of this connection); INITIATE (the cookie back, and in a C'→S' box the
client's long-term key C, its vouch — C' and S boxed C→S' — and its metadata); READY. The client
is admitted only when C is on the allow-list (`AllowList.lookup`): an unknown key, a vouch that
does not open, a replayed nonce or a non-CURVE greeting ends the connection before any ask is
read, and is counted. After it every ZMTP frame is a MESSAGE: an 8-byte nonce (strictly rising)
and a box of one flags byte (MORE, COMMAND) and the part.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from nacl.exceptions import CryptoError
from nacl.public import Box, PrivateKey, PublicKey
from nacl.secret import SecretBox
from zmq.utils import z85

from slmactor.runtime.zmtp import (
    FLAG_COMMAND,
    HANDSHAKE_S,
    PEER_TYPES,
    Received,
    ZmtpError,
    ZmtpRouter,
    _Peer,
    frame,
    properties,
)

#: Our greeting: signature, version 3.0, the CURVE mechanism, as-server, filler (64 bytes).
CURVE_GREETING = (b"\xff" + bytes(8) + b"\x7f" + bytes([3, 0]) + b"CURVE".ljust(20, b"\x00")
                  + b"\x01" + bytes(31))
_HELLO = b"\x05HELLO"
_WELCOME = b"\x07WELCOME"
_INITIATE = b"\x08INITIATE"
_READY = b"\x05READY"
_MESSAGE = b"\x07MESSAGE"
_ERROR = b"\x05ERROR"
_HELLO_SIZE = 200
_INITIATE_MIN = len(_INITIATE) + 96 + 8 + 16 + 32 + 96
#: A MESSAGE frame's overhead over its part: name, nonce, MAC, flags.
MESSAGE_OVERHEAD = len(_MESSAGE) + 8 + 16 + 1
_INNER_MORE = 0x01
_INNER_COMMAND = 0x02


def _nonce(prefix: bytes, counter: int) -> bytes:
    return prefix + counter.to_bytes(8, "big")


@dataclass(slots=True)
class _Session:
    """One admitted connection's message keys and nonces."""

    box: Box
    key_name: str
    sent: int = 1
    received: int = 1

    def seal(self, part: bytes, flags: int) -> bytes:
        self.sent += 1
        nonce = _nonce(b"CurveZMQMESSAGES", self.sent)
        sealed = self.box.encrypt(bytes((flags,)) + part, nonce).ciphertext
        return _MESSAGE + nonce[16:] + sealed

    def open(self, body: bytes) -> tuple[int, bytes]:
        if len(body) < MESSAGE_OVERHEAD or not body.startswith(_MESSAGE):
            raise ZmtpError("expected a CURVE MESSAGE")
        counter = int.from_bytes(body[8:16], "big")
        if counter <= self.received:
            raise ZmtpError("a CURVE nonce that does not rise (replay)")
        self.received = counter
        try:
            plain = self.box.decrypt(body[16:], _nonce(b"CurveZMQMESSAGEC", counter))
        except CryptoError:
            raise ZmtpError("a CURVE MESSAGE that does not open") from None
        return plain[0], plain[1:]


class CurveRouter(ZmtpRouter):
    """A ZMTP ROUTER on tcp speaking CURVE as the server with `public`/`secret` (z85), admitting
    the clients whose long-term key `admit` names (the allow-list: name, or None)."""

    def __init__(self, *, public: bytes, secret: bytes, admit: Callable[[str], str | None],
                 max_frames: int, max_bytes: int, max_frame: int, hwm: int,
                 out_bytes: int) -> None:
        super().__init__(max_frames=max_frames, max_bytes=max_bytes,
                         max_frame=max_frame + MESSAGE_OVERHEAD, hwm=hwm, out_bytes=out_bytes)
        self._public = z85.decode(public)
        self._secret = PrivateKey(z85.decode(secret))
        self._admit = admit
        self._sessions: dict[bytes, _Session] = {}
        #: Handshakes completed, refused for a key not on the allow-list, refused otherwise.
        self.handshakes_ok = 0
        self.unknown_key = 0
        self.last_unknown_key = ""
        self.bound: tuple[str, int] | None = None

    def listen_tcp(self, host: str, port: int, backlog: int = 256) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._take(listener, lambda: listener.bind((host, port)), backlog)
        self.bound = listener.getsockname()[:2]

    def key_of(self, identity: bytes) -> str:
        session = self._sessions.get(identity)
        return session.key_name if session is not None else ""

    def send(self, identity: bytes, frames: Iterable[bytes]) -> bool:
        peer = self._peers.get(identity)
        session = self._sessions.get(identity)
        if peer is None or session is None or peer.writer.is_closing():
            return False
        if peer.writer.transport.get_write_buffer_size() > self.out_bytes:
            return False
        parts = list(frames)
        peer.writer.write(b"".join(
            frame(session.seal(p, _INNER_MORE if i < len(parts) - 1 else 0))
            for i, p in enumerate(parts)))
        return True

    # ------------------------------------------------------------------------------ per peer

    async def _converse(self, identity: bytes, peer: _Peer, reader: asyncio.StreamReader,
                        writer: asyncio.StreamWriter) -> None:
        try:
            try:
                async with asyncio.timeout(HANDSHAKE_S):
                    session = await self._curve_handshake(reader, writer)
            except (asyncio.IncompleteReadError, ConnectionError) as exc:
                # A libzmq NULL client hangs up on reading our CURVE greeting: refused too.
                raise ZmtpError("the peer left during the handshake") from exc
            self._sessions[identity] = session
            self._peers[identity] = peer
            self.handshakes_ok += 1
            await self._curve_messages(identity, peer, session, reader, writer)
        except ZmtpError:
            self.refused += 1
        finally:
            self._sessions.pop(identity, None)

    async def _command_body(self, reader: asyncio.StreamReader, name: bytes,
                            limit: int) -> bytes:
        flags, size = await self._header(reader)
        if not flags & FLAG_COMMAND or size > limit:
            raise ZmtpError(f"expected {name[1:].decode()}")
        body = await reader.readexactly(size)
        if not body.startswith(name):
            raise ZmtpError(f"expected {name[1:].decode()}")
        return body

    async def _curve_handshake(self, reader: asyncio.StreamReader,
                               writer: asyncio.StreamWriter) -> _Session:
        writer.write(CURVE_GREETING)
        greeting = await reader.readexactly(64)
        if greeting[0] != 0xFF or greeting[9] != 0x7F or greeting[10] < 3:
            raise ZmtpError("not a ZMTP 3 greeting")
        if greeting[12:32].rstrip(b"\x00") != b"CURVE" or greeting[32] != 0:
            raise ZmtpError("only CURVE clients are served over tcp")
        hello = await self._command_body(reader, _HELLO, _HELLO_SIZE)
        if len(hello) != _HELLO_SIZE or hello[6:8] != b"\x01\x00":
            raise ZmtpError("malformed HELLO")
        client_short = PublicKey(hello[80:112])
        try:
            zeros = Box(self._secret, client_short).decrypt(
                hello[120:200], b"CurveZMQHELLO---" + hello[112:120])
        except CryptoError:
            raise ZmtpError("a HELLO that does not open") from None
        if not hmac.compare_digest(zeros, bytes(64)):
            raise ZmtpError("malformed HELLO")
        our_short = PrivateKey.generate()
        cookie_key = SecretBox(os.urandom(32))
        cookie_nonce = os.urandom(16)
        cookie = cookie_nonce + cookie_key.encrypt(
            bytes(client_short) + bytes(our_short), b"COOKIE--" + cookie_nonce).ciphertext
        welcome_nonce = os.urandom(16)
        welcome = Box(self._secret, client_short).encrypt(
            bytes(our_short.public_key) + cookie, b"WELCOME-" + welcome_nonce).ciphertext
        writer.write(frame(_WELCOME + welcome_nonce + welcome, FLAG_COMMAND))
        initiate = await self._command_body(reader, _INITIATE, 4096)
        if len(initiate) < _INITIATE_MIN or not hmac.compare_digest(
                initiate[9:105], cookie):
            raise ZmtpError("an INITIATE without our cookie")
        box = Box(our_short, client_short)
        try:
            plain = box.decrypt(initiate[113:], b"CurveZMQINITIATE" + initiate[105:113])
            client_long = PublicKey(plain[:32])
            vouch = Box(our_short, client_long).decrypt(plain[48:128], b"VOUCH---" + plain[32:48])
        except CryptoError:
            raise ZmtpError("an INITIATE or vouch that does not open") from None
        if not hmac.compare_digest(vouch, bytes(client_short) + self._public):
            raise ZmtpError("a vouch for another key")
        if properties(plain[128:]).get(b"socket-type") not in PEER_TYPES:
            raise ZmtpError("a ROUTER takes asks from REQ and DEALER sockets only")
        public = z85.encode(bytes(client_long)).decode("ascii")
        name = self._admit(public)
        if name is None:
            self.unknown_key += 1
            self.last_unknown_key = public
            writer.write(frame(_ERROR + b"\x0cunknown key.", FLAG_COMMAND))
            raise ZmtpError("a client key not on the allow-list")
        session = _Session(box, name)
        metadata = b"\x0bSocket-Type" + (6).to_bytes(4, "big") + b"ROUTER"
        ready = box.encrypt(metadata, _nonce(b"CurveZMQREADY---", session.sent)).ciphertext
        writer.write(frame(_READY + session.sent.to_bytes(8, "big") + ready, FLAG_COMMAND))
        return session

    async def _curve_messages(self, identity: bytes, peer: _Peer, session: _Session,
                              reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            frames: list[bytes] = []
            total = len(identity)
            over = ""
            while True:
                _outer, size = await self._header(reader)
                inner, part = session.open(await reader.readexactly(size))
                if inner & _INNER_COMMAND:
                    self._curve_command(session, part, writer)
                    continue
                if not over:
                    total += len(part)
                    if len(frames) + 1 >= self.max_frames:  # the routing id counts as one
                        over = "frames"
                    elif total > self.max_bytes:
                        over = "bytes"
                if not over:
                    frames.append(part)
                del part  # a part over the bounds is let go at once
                if not inner & _INNER_MORE:
                    break
            await peer.waiting.acquire()  # this connection is not read while hwm asks wait
            self._queue.put_nowait(Received(identity, frames, over))

    @staticmethod
    def _curve_command(session: _Session, body: bytes, writer: asyncio.StreamWriter) -> None:
        name = body[1:1 + body[0]] if body else b""
        if name == b"PING":
            pong = b"\x04PONG" + body[1 + len(name) + 2:]
            writer.write(frame(session.seal(pong, _INNER_COMMAND)))

