"""The harness library: talk to the slmactor daemon from Python, synchronously or with asyncio.

    from slmactor.client import Client
    from slmactor.protocol.messages import MemoryRecall

    with Client(project="/path/to/repo") as c:
        c.record_tool("run-1", "Bash", command="pytest -q", ok=False, error="1 failed")  # tell
        hits = c.ask(MemoryRecall(query="fix flaky test", files=["tests/test_x.py"]))   # ask

Asks go to `ctl.sock` on a DEALER socket with a receive deadline and Lazy-Pirate retries (the
socket is recreated after a timeout; the request id stays the same, so a retried ask is
recognised). Tells go to `events.sock` on a PUSH socket with `send(NOBLOCK)`: a tell never
blocks and never raises because the daemon is down — it is counted in `dropped` and reported to
the daemon later. Sockets have LINGER=0 except for a 100 ms grace period; a client that sent a
backlog of tells first has the daemon confirm them on close (`working.applied`, at most
CLOSE_CONFIRM_SECONDS) and counts what stays unconfirmed, so closing never hangs and never loses
tells silently.
"""

from __future__ import annotations

import abc
import itertools
import os
import time
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import msgpack
import zmq

from slmactor.protocol import MAX_TELL_BYTES, PROTOCOL_VERSION, ErrorCode, ProtocolError, codec
from slmactor.remote import remote_configured
from slmactor.verbs import AsyncVerbs, SyncVerbs

if TYPE_CHECKING:
    from slmactor.protocol.messages import (
        Message,
        Tell,
        WorkingMirror,
        WorkingRender,
        WorkingSnapshot,
    )
    from slmactor.remote import Target

# The message classes are imported where a method builds one, not here: creating them is most of
# the start-up of a short-lived client (`slmactor status`, a hook), which may never need them.

__all__ = ["AsyncClient", "Client", "DaemonNotRunning", "DaemonUnavailable", "RequestFailed",
           "UntrustedDaemon"]

# Kind.RECORD_TOOL / Kind.CLIENT_DROPPED (a protocol test keeps them equal).
_RECORD_TOOL = b"record_tool"
_CLIENT_DROPPED = b"client.dropped"
_NOBLOCK_MORE = zmq.NOBLOCK | zmq.SNDMORE


def _ping_fields(actor: str) -> dict[str, Any]:
    return {} if actor == "control" else {"actor": actor}  # "control" is Ping's default


#: Milliseconds queued tells may take to leave when the client closes.
CLOSE_LINGER_MS = 100
#: close() asks the daemon to confirm queued tells when more than this many were sent since the
#: last confirmation: a few tells always fit in the daemon's inbox for this connection, a backlog
#: may not, and libzmq's linger does not cover bytes its I/O thread still holds.
CONFIRM_AFTER_TELLS = 64
#: Longest close() waits for that confirmation (seconds); what is unconfirmed then is counted.
CLOSE_CONFIRM_SECONDS = 2.0
#: Milliseconds the first tell waits for the connection to a daemon whose socket exists.
CONNECT_WAIT_MS = 200
#: The same for a daemon over tcp (a connect and a CURVE handshake, possibly across hosts).
REMOTE_CONNECT_WAIT_MS = 1000

class DaemonUnavailable(Exception):
    """No reply from the daemon within the deadline and retries (not running, or wedged)."""


class DaemonNotRunning(DaemonUnavailable):
    """Nothing listens on ctl.sock (no socket, or one left by a crash): known at once, no wait —
    unlike a timeout, which is what a wedged daemon costs."""


class UntrustedDaemon(DaemonUnavailable):
    """The runtime directory or the process listening in it is not the user's own (another
    user created it first): nothing was sent. The message says why, in one line."""


class RequestFailed(Exception):
    """The daemon answered with an error reply."""

    def __init__(self, code: int, reason: str, retry_ms: int = 0) -> None:
        name = ErrorCode(code).name if code in ErrorCode._value2member_map_ else str(code)
        super().__init__(f"{name}: {reason}")
        self.code = code
        self.reason = reason
        #: For BUSY: how long the daemon suggested waiting before a retry.
        self.retry_ms = retry_ms


#: Longest wait a BUSY retry hint can impose (milliseconds).
MAX_BUSY_WAIT_MS = 1000


def _local_path_map() -> tuple[tuple[str, str], ...]:
    """`SLMACTOR_PATH_MAP` for a daemon reached through a bind-mounted ipc directory."""
    if not os.environ.get("SLMACTOR_PATH_MAP"):
        return ()
    from slmactor.remote import TargetProblem, local_path_map

    try:
        return local_path_map()
    except TargetProblem as exc:
        raise DaemonUnavailable(f"SLMACTOR_PATH_MAP cannot be used: {exc}") from None


def _remote_target(remote: Target | bool | None) -> Target | None:
    """The tcp daemon a client talks to (None: the local sockets); raises DaemonUnavailable
    for a remote setting that cannot be used."""
    if remote is False:
        return None
    if remote is not None and remote is not True:
        return remote
    if not remote_configured():
        return None  # the common case: a lookup and a read, nothing imported
    from slmactor.remote import TargetProblem, target

    try:
        return target()
    except TargetProblem as exc:
        raise DaemonUnavailable(f"the remote daemon is misconfigured: {exc}") from None


def listener_alive(path: Path) -> bool:
    """Whether a process listens on the unix socket `path` (False for a file left by a crash).

    A connect to a socket file nobody listens on fails at once with ECONNREFUSED, so a stale
    `ctl.sock` is told from a live one without waiting for a reply.
    """
    from slmactor import peer

    return peer.listener_uid(str(path)) != peer.NOBODY


def _log_refusal(problem: str) -> None:
    import logging  # only on this path: a refused daemon is rare, and logging is not cheap

    logging.getLogger("slmactor.client").warning("%s", problem)


def _busy_wait(exc: RequestFailed, deadline: float) -> float:
    """Seconds to wait before resending after BUSY, or -1 when the overall deadline is too near."""
    if exc.code != ErrorCode.BUSY:
        return -1.0
    pause = min(max(exc.retry_ms, 10), MAX_BUSY_WAIT_MS) / 1000
    return pause if time.monotonic() + pause < deadline else -1.0


def _tells_problem(socket_file: str) -> str:
    """Why tells must not go to `socket_file` ("" when they may): its directory or its listener
    is another user's. A missing directory is made (0700, ours) first, so that nobody else can
    create it while this client waits for a daemon to start."""
    from slmactor import peer

    root = os.path.dirname(socket_file)
    if not os.path.lexists(root):
        try:
            os.makedirs(root, mode=0o700, exist_ok=True)
        except OSError:
            pass  # not creatable here: the daemon cannot bind there either; tells are dropped
    problem = peer.runtime_dir_problem(root)
    if problem or not os.path.exists(socket_file):
        return problem
    return peer.peer_problem(socket_file, peer.listener_uid(socket_file))


class _Teller:
    """The PUSH side shared by both clients: numbered, non-blocking, drop-counting tells."""

    def __init__(self, zctx: zmq.Context[Any], endpoint: str, project: str, hwm: int, client_id: str,
                 remote: Target | None = None) -> None:
        self._sock: zmq.Socket[Any] = zctx.socket(zmq.PUSH)
        self._sock.setsockopt(zmq.LINGER, 0)
        self._sock.setsockopt(zmq.SNDHWM, hwm)
        # Queue only on a completed connection: with the daemon down a tell fails at once
        # (EAGAIN) and is counted in `dropped`, instead of filling a queue that close() discards.
        self._sock.setsockopt(zmq.IMMEDIATE, 1)
        if remote is not None:
            remote.secure(self._sock)
        # "" for tcp: no socket file says whether a daemon is there, so the first tell waits for
        # the (CURVE) handshake up to REMOTE_CONNECT_WAIT_MS.
        self._socket_file = endpoint.removeprefix("ipc://") if endpoint.startswith("ipc://") else ""
        #: Why events.sock is not to be trusted ("" when it is): every tell is dropped, unsent.
        #: A daemon over tcp is trusted by its CURVE key instead of its socket file's owner.
        self.refused = _tells_problem(self._socket_file) if self._socket_file else ""
        if self.refused:
            _log_refusal(self.refused)
        else:
            self._sock.connect(endpoint)
        self._connecting = True
        self.client_id = client_id
        self.project = project
        self.seq = 0
        self.dropped = 0
        #: Tells not sent because they name a path the project excludes (`slmactor.privacy`).
        self.withheld = 0
        #: Whether the project has an exclude list, as last read (at the first tell, then
        #: every EXCLUDE_RECHECK_TELLS tells).
        self._excludes = self._excluding() if project else False
        self._unreported = 0
        #: Seq of the last tell queued, and how many were queued since the daemon last confirmed.
        self.last_sent = 0
        self.pending = 0
        # One reused Packer (`packb` builds a new one per call) and two plain sends instead of
        # `send_multipart` (a Python loop): together they halve the cost of a tell. Same bytes as
        # `codec.pack`; the two frames stay atomic (libzmq checks the HWM on the first part only).
        self._pack = msgpack.Packer(use_bin_type=True).pack

    def send(self, kind: bytes, body: dict[str, Any]) -> bool:
        if self.refused or (not self.project and not body.get("project") and kind != _CLIENT_DROPPED):
            # The daemon files no tell without a project (the project rule): undeliverable.
            self.dropped += 1
            self._unreported += 1
            return False
        self.seq += 1
        body["client"] = self.client_id
        body["seq"] = self.seq
        if self.project and "project" not in body:
            body["project"] = self.project
        try:
            data = self._pack(body)
            # The privacy door (`slmactor.privacy`), at the price of one byte search when the
            # project excludes nothing and the body has no `<` (the hot path of `record_tool`);
            # whether it excludes is read again every EXCLUDE_RECHECK_TELLS tells. The tag is
            # looked for as people write it (lower, upper, title case); the cut takes any case.
            if not self.seq & _EXCLUDE_RECHECK_MASK:
                self._excludes = self._excluding()
            if self._excludes or (b"<" in data and (b"<private" in data or b"<PRIVATE" in data
                                                     or b"<Private" in data)):
                kept = _kept_private(kind, data, body.get("project") or self.project)
                if kept is None:
                    self.withheld += 1  # a call on an excluded path: not sent, and not lost
                    return True
                data = kept
            if len(data) > MAX_TELL_BYTES:
                # The daemon refuses it anyway, and a frame this far over its limit costs the
                # connection (and the tells queued with it): drop it here, counted.
                self.dropped += 1
                self._unreported += 1
                return False
            if self._connecting:
                self._await_connection()
            self._sock.send(kind, _NOBLOCK_MORE)
            self._sock.send(data, zmq.NOBLOCK)
        except zmq.ZMQError:  # EAGAIN (no daemon, or the high-water mark), or the context is gone
            self.dropped += 1
            self._unreported += 1
            return False
        self.last_sent = self.seq
        self.pending += 1
        if self._unreported:
            self._report_drops()
        return True

    def _excluding(self) -> bool:
        """Whether this client's project has an exclude list (a tell naming another project is
        looked at whole by `_kept_private` anyway when it carries a private span)."""
        from slmactor import privacy

        return bool(privacy.excluder_for(self.project))

    def settle(self, applied: int, caught_up: bool) -> int:
        """The daemon confirmed tells up to `applied`; what it did not is counted as dropped and
        returned (at most `pending`: a tell the client already counted is not counted twice)."""
        lost = 0 if caught_up else min(self.pending, max(self.last_sent - applied, 0))
        self.dropped += lost
        self.pending = 0
        return lost

    def _await_connection(self) -> None:
        """Once, before the first tell: give the connection to a daemon whose socket exists up to
        CONNECT_WAIT_MS to complete (ipc takes well under a millisecond), so the first tells of
        a new client are not dropped for being sent before it."""
        self._connecting = False
        if not self._socket_file:
            self._sock.poll(REMOTE_CONNECT_WAIT_MS, zmq.POLLOUT)
        elif os.path.exists(self._socket_file):
            self._sock.poll(CONNECT_WAIT_MS, zmq.POLLOUT)

    def _report_drops(self) -> None:
        if self.refused:
            return
        body = {"v": PROTOCOL_VERSION, "client": self.client_id, "count": self._unreported}
        try:
            self._sock.send_multipart((_CLIENT_DROPPED, codec.pack(body)), zmq.NOBLOCK)
        except zmq.ZMQError:
            return
        self._unreported = 0

    def close(self) -> None:
        # Tells still queued locally get a short grace period to reach a live daemon; with the
        # daemon down this bounds close() at CLOSE_LINGER_MS instead of hanging.
        self._sock.close(linger=CLOSE_LINGER_MS)


#: Tells sent between two looks at the project's exclude list (a power of two); a hook, the
#: MCP server's asks and every ask look each time.
EXCLUDE_RECHECK_TELLS = 64
_EXCLUDE_RECHECK_MASK = EXCLUDE_RECHECK_TELLS - 1


def _kept_private(kind: bytes, data: bytes, project: str) -> bytes | None:
    """An encoded body as it may leave this process: without `<private>` spans and the
    project's excluded paths (`slmactor.privacy`); None when it is not to be sent at all."""
    from slmactor import privacy

    excluder = privacy.excluder_for(project)
    if not privacy.needs_look(data, excluder):
        return data
    body = msgpack.unpackb(data, raw=False)
    kept = privacy.withheld(kind.decode("ascii", "replace"), body, excluder) \
        if isinstance(body, dict) else body
    return None if kept is None else codec.pack(kept)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json  # only for non-string tool arguments, off the import path of `slmactor status`

    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


class _Base(abc.ABC):
    def __init__(
        self,
        runtime_dir: str | os.PathLike[str] | None,
        project: str | os.PathLike[str] | None,
        timeout: float,
        retries: int,
        tell_hwm: int,
        remote: Target | bool | None = None,
    ) -> None:
        if runtime_dir is None:
            from slmactor.config import client_runtime_dir

            runtime_dir = client_runtime_dir()
        root = Path(runtime_dir)
        self.ctl_path = root / "ctl.sock"
        self.ctl_endpoint = f"ipc://{self.ctl_path}"
        self.events_endpoint = f"ipc://{root / 'events.sock'}"
        #: The daemon over tcp (`slmactor.remote`): given, or from the environment / config
        #: unless `remote=False`; None = the local ipc sockets.
        self.remote: Target | None = _remote_target(remote)
        if self.remote is not None:
            self.ctl_endpoint = self.remote.ctl
            self.events_endpoint = self.remote.events
        #: Container path → daemon (host) path prefixes (`SLMACTOR_PATH_MAP`, or the target's).
        self._path_map = self.remote.path_map if self.remote is not None else _local_path_map()
        self.project = str(Path(project).resolve()) if project is not None else ""
        if self._path_map and self.project:
            self.project = self._map_path(self.project)
        self.timeout = timeout
        self.retries = max(retries, 1)
        self._tell_hwm = tell_hwm
        self._ids = itertools.count(1)
        self._teller: _Teller | None = None
        #: A daemon answered the last listener check (see `_check_listener`).
        self._listener_seen = False
        #: Drops of a PUSH side already closed (so `dropped` still counts them after close()).
        self._dropped_closed = 0
        #: Tells close() could not get confirmed by the daemon (also counted in `dropped`).
        self.unconfirmed = 0
        #: Random per client instance: names its tells (`client`) and prefixes its request ids.
        #: Made here, not by the PUSH side, so an ask-only client never opens events.sock.
        self._client_id = os.urandom(6).hex()

    def _map_path(self, path: str) -> str:
        from slmactor.remote import map_path

        return map_path(path, self._path_map)

    # ---- tells (sync in both clients: a non-blocking send never needs the event loop)

    @abc.abstractmethod
    def _tells(self) -> _Teller:
        """The client's PUSH side, created on first use."""

    @property
    def dropped(self) -> int:
        """Tells this client could not deliver (daemon down, queue full, no project)."""
        return self._dropped_closed + (self._teller.dropped if self._teller else 0)

    @property
    def client_id(self) -> str:
        return self._client_id

    def _needs_confirmation(self) -> bool:
        return self._teller is not None and self._teller.pending > CONFIRM_AFTER_TELLS

    def _applied_fields(self) -> dict[str, Any]:
        assert self._teller is not None
        return {"client": self._client_id, "seq": self._teller.last_sent}

    def _settled(self, applied: int, caught_up: bool) -> None:
        assert self._teller is not None
        self.unconfirmed += self._teller.settle(applied, caught_up)

    @property
    def last_seq(self) -> int:
        """Sequence number of the last tell sent; pass it to an ask to read your own writes."""
        return self._teller.seq if self._teller else 0

    def tell(self, msg: Tell) -> bool:
        """Send a fire-and-forget message; False when it had to be dropped."""
        body = {"v": PROTOCOL_VERSION, **codec.wire_fields(msg)}
        for name in ("client", "seq", "id"):
            body.pop(name, None)  # the teller numbers tells itself
        return self._tells().send(msg.KIND.value.encode("ascii"), body)

    def record_tool(
        self,
        run_id: str,
        tool: str,
        *,
        path: str = "",
        args: Any = "",
        command: str = "",
        ok: bool = True,
        error: str = "",
        key: str = "",
        at: float = 0.0,
    ) -> bool:
        """Record one tool call (the hot path: encode + non-blocking send, nothing else)."""
        body: dict[str, Any] = {"v": PROTOCOL_VERSION, "run_id": run_id, "tool": tool}
        if path:
            # A file of the container's view is a file of the daemon's (host's) project.
            body["path"] = self._map_path(path) if self._path_map else path
        if args:
            body["args"] = args if type(args) is str else _as_text(args)
        if command:
            body["command"] = command
        if not ok:
            body["ok"] = False
        if error:
            body["error"] = error
        if key:
            body["key"] = key
        if at:
            body["at"] = float(at)
        return self._tells().send(_RECORD_TOOL, body)

    # ---- working memory tells (SPEC S-1); each returns False when it had to be dropped

    def focus(self, run_id: str, paths: list[str] | tuple[str, ...]) -> bool:
        """Put `paths` (in order) in front of the run's focus files."""
        from slmactor.protocol.messages import Focus

        return self.tell(Focus(run_id=run_id, paths=list(paths)))

    def fail(self, run_id: str, *, key: str = "", tool: str = "", path: str = "", message: str = "") -> bool:
        """Open a failure (or count another attempt of the open one with the same key)."""
        from slmactor.protocol.messages import Fail

        return self.tell(Fail(run_id=run_id, key=key, tool=tool, path=path, message=message))

    def resolve(self, run_id: str, key: str, *, resolution: str = "", resolved_by: str = "") -> bool:
        """Move an open failure to resolved (`resolved_by` e.g. `rule:<id>`, `llm`, `retry`)."""
        from slmactor.protocol.messages import Resolve

        return self.tell(Resolve(run_id=run_id, key=key, resolution=resolution, resolved_by=resolved_by))

    def decide(self, run_id: str, text: str) -> bool:
        """Record a decision (its first line; the run keeps the last five)."""
        from slmactor.protocol.messages import Decide

        return self.tell(Decide(run_id=run_id, text=text))

    def summarize(self, run_id: str, text: str) -> bool:
        """Replace the run's rolling summary (≤ 600 bytes)."""
        from slmactor.protocol.messages import Summarize

        return self.tell(Summarize(run_id=run_id, text=text))

    def _working_ask(
        self, msg: WorkingRender | WorkingSnapshot | WorkingMirror, wait: bool
    ) -> WorkingRender | WorkingSnapshot | WorkingMirror:
        """`msg` naming this client's last tell, so the daemon answers after applying it."""
        if wait and self._teller is not None and self._teller.seq:
            import dataclasses

            return dataclasses.replace(msg, client=self._teller.client_id, seq=self._teller.seq)
        return msg

    # ---- asks

    def _frames(self, msg: Message) -> tuple[str, list[bytes]]:
        import dataclasses  # already loaded by the message classes: a dict lookup

        request_id = f"{self._client_id}.{next(self._ids)}"
        changes: dict[str, Any] = {"id": request_id}
        if self.project and not msg.project:
            changes["project"] = self.project
        frames = codec.dump(dataclasses.replace(msg, **changes))
        return request_id, self._private_kept(frames, msg.project or self.project)

    @staticmethod
    def _private_kept(frames: list[bytes], project: str) -> list[bytes]:
        """The ask's frames without what the user keeps out of memory (an ask is always sent:
        its excluded paths become `«excluded»`)."""
        kept = _kept_private(b"", frames[1], project)
        return frames if kept is None or kept is frames[1] else [frames[0], kept]

    def _raw_frames(self, kind: str, fields: dict[str, Any],
                    project: bool = True) -> tuple[str, list[bytes]]:
        """`[kind, body]` for an ask built without its message class (what `_frames` would give);
        without `project` for the daemon-wide kinds (ping, status), which are about no project."""
        request_id = f"{self._client_id}.{next(self._ids)}"
        body: dict[str, Any] = {"v": PROTOCOL_VERSION, "id": request_id}
        if self.project and project:
            body["project"] = self.project
        body.update(fields)
        frames = [kind.encode("ascii"), codec.pack(body)]
        if not project:  # ping, status: about no project, nothing of a harness's in them
            return request_id, frames
        return request_id, self._private_kept(frames, str(body.get("project") or ""))

    def _unavailable(self, why: str, kind: type[DaemonUnavailable] = DaemonUnavailable) -> DaemonUnavailable:
        return kind(f"slmactor daemon not reachable at {self.ctl_endpoint}: {why}")

    @staticmethod
    def _result(request_id: str, frames: list[bytes]) -> tuple[bool, Any]:
        """(matched, result) for a reply; raises RequestFailed for an error reply to us."""
        try:
            reply = codec.load_reply(frames)
        except ProtocolError:
            return False, None
        if reply.id != request_id:
            return False, None  # a late reply to an earlier attempt or ask
        if not reply.ok:
            raise RequestFailed(reply.code, reply.reason, reply.retry_ms)
        return True, reply.result

    def _check_listener(self) -> None:
        """Fail fast when nothing listens on ctl.sock (missing, or stale after a crash), and
        refuse a runtime directory or listener that is another user's (UntrustedDaemon).

        Checked before a client's first ask and before every retry after a timeout (the daemon
        may have died since), not before every ask. A daemon over tcp has no socket file to
        look at: its deadline says it is not there."""
        if self.remote is not None:
            self._listener_seen = True
            return
        from slmactor import peer

        self._listener_seen = False
        # Who serves the socket, before ZeroMQ connects and sends anything (`slmactor.peer`).
        problem = peer.runtime_dir_problem(str(self.ctl_path.parent))
        if problem:
            raise UntrustedDaemon(problem)
        if not self.ctl_path.exists():
            raise self._unavailable("no socket (is the daemon running?)", DaemonNotRunning)
        uid = peer.listener_uid(str(self.ctl_path))
        if uid == peer.NOBODY:
            raise self._unavailable("no daemon listening (a socket file left by a crash?)", DaemonNotRunning)
        problem = peer.peer_problem(str(self.ctl_path), uid)
        if problem:
            raise UntrustedDaemon(problem)
        self._listener_seen = True


class Client(SyncVerbs, _Base):
    """Blocking client. Safe to use from one thread at a time. Verbs: `slmactor.verbs`."""

    def __init__(
        self,
        runtime_dir: str | os.PathLike[str] | None = None,
        *,
        project: str | os.PathLike[str] | None = None,
        timeout: float = 2.5,
        retries: int = 3,
        tell_hwm: int = 10_000,
        remote: Target | bool | None = None,
    ) -> None:
        super().__init__(runtime_dir, project, timeout, retries, tell_hwm, remote)
        self._zctx: zmq.Context[Any] = zmq.Context()
        self._dealer: zmq.Socket[Any] | None = None

    def _tells(self) -> _Teller:
        if self._teller is None:
            self._teller = _Teller(self._zctx, self.events_endpoint, self.project, self._tell_hwm,
                                   self._client_id, self.remote)
        return self._teller

    def _socket(self) -> zmq.Socket[Any]:
        if self._dealer is None:
            sock = self._zctx.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            if self.remote is not None:
                self.remote.secure(sock)
            sock.connect(self.ctl_endpoint)
            self._dealer = sock
        return self._dealer

    def _reset(self) -> None:
        if self._dealer is not None:
            self._dealer.close(linger=0)
            self._dealer = None

    def ask(self, msg: Message, *, timeout: float | None = None, retries: int | None = None) -> Any:
        """Send an ask and return its result. Raises RequestFailed or DaemonUnavailable."""
        return self._ask_frames(*self._frames(msg), timeout=timeout, retries=retries)

    def _ask_frames(
        self, request_id: str, frames: list[bytes], *, timeout: float | None = None, retries: int | None = None
    ) -> Any:
        if not self._listener_seen:
            self._check_listener()  # once per client: a connect costs ~0.1 ms, an ask ~0.1 ms
        wait = self.timeout if timeout is None else timeout
        attempts = self.retries if retries is None else max(retries, 1)
        overall = time.monotonic() + wait * attempts  # BUSY retries fit in the same budget
        for attempt in range(attempts):
            if attempt:
                self._check_listener()  # the daemon died meanwhile: say so now, not after `wait`
            sock = self._socket()
            try:
                sock.send_multipart(frames, zmq.NOBLOCK)
            except zmq.Again:
                self._reset()
                continue
            deadline = time.monotonic() + wait
            while (left := deadline - time.monotonic()) > 0:
                if not sock.poll(int(left * 1000) + 1, zmq.POLLIN):
                    break
                try:
                    matched, result = self._result(request_id, sock.recv_multipart())
                except RequestFailed as exc:
                    pause = _busy_wait(exc, overall)
                    if pause < 0:
                        raise
                    time.sleep(pause)  # the daemon's hint: its inbox is full, try again later
                    sock.send_multipart(frames, zmq.NOBLOCK)
                    deadline = time.monotonic() + wait
                    continue
                if matched:
                    return result
            self._reset()  # Lazy Pirate: a fresh socket drops whatever the old one had queued
        raise self._unavailable(f"no reply within {wait:g}s")

    def ask_raw(self, kind: str, fields: dict[str, Any], *, timeout: float | None = None,
                retries: int | None = None) -> Any:
        """An ask given as its kind name and wire fields, without building the message record.

        For short-lived processes (hooks, scripts): creating the message classes costs more than
        the round trip. Leave out fields at their default; the daemon validates the rest exactly
        as for `ask`. Raises RequestFailed or DaemonUnavailable.
        """
        return self._ask_frames(*self._raw_frames(kind, fields), timeout=timeout, retries=retries)

    def ping(self, actor: str = "control") -> dict[str, Any]:
        result: dict[str, Any] = self._ask_frames(*self._raw_frames("ping", _ping_fields(actor), False))
        return result

    def status(self) -> dict[str, Any]:
        result: dict[str, Any] = self._ask_frames(*self._raw_frames("status", {}, False))
        return result

    # ---- working memory asks (SPEC S-1)

    def run_start(self, run_id: str, task: str = "", role: str = "") -> dict[str, Any]:
        """Start (or re-start) a run: new task and role; counters, files and failures are kept."""
        from slmactor.protocol.messages import RunStart

        result: dict[str, Any] = self.ask(RunStart(run_id=run_id, task=task, role=role))
        return result

    def run_reset(self, run_id: str) -> dict[str, Any]:
        """Forget the run's working memory, counters included."""
        from slmactor.protocol.messages import RunReset

        result: dict[str, Any] = self.ask(RunReset(run_id=run_id))
        return result

    def working_render(self, run_id: str, budget: int = 0, *, wait: bool = True) -> str:
        """The run's working-memory block within `budget` tokens (0 = 700); "" when nothing is
        known. With `wait`, the daemon first applies this client's tells sent so far."""
        from slmactor.protocol.messages import WorkingRender

        msg = self._working_ask(WorkingRender(run_id=run_id, budget=budget), wait)
        text: str = self.ask(msg)["text"]
        return text

    def working_snapshot(self, run_id: str, *, wait: bool = True) -> dict[str, Any]:
        """Every field of the run's working memory (`{"live", "caught_up", "snapshot"}`)."""
        from slmactor.protocol.messages import WorkingSnapshot

        result: dict[str, Any] = self.ask(self._working_ask(WorkingSnapshot(run_id=run_id), wait))
        return result

    def working_mirror(self, run_id: str) -> dict[str, Any]:
        """Write the run's `WORKING.md` now; `{"written", "path", "bytes"}`."""
        from slmactor.protocol.messages import WorkingMirror

        result: dict[str, Any] = self.ask(self._working_ask(WorkingMirror(run_id=run_id), True))
        return result

    def close(self) -> None:
        """Close the sockets. A backlog of tells is first confirmed by the daemon (at most
        CLOSE_CONFIRM_SECONDS); tells still unconfirmed then are counted in `dropped` and
        `unconfirmed` — a tell that arrives later is still applied."""
        if self._needs_confirmation():
            self._confirm_tells(time.monotonic() + CLOSE_CONFIRM_SECONDS)
        self._reset()
        if self._teller is not None:
            self._dropped_closed += self._teller.dropped
            self._teller.close()
            self._teller = None
        self._zctx.term()

    def _confirm_tells(self, deadline: float) -> None:
        applied, caught_up = 0, False
        while (left := deadline - time.monotonic()) > 0:
            try:
                reply = self.ask_raw("working.applied", self._applied_fields(),
                                     timeout=min(left, self.timeout), retries=1)
            except (RequestFailed, DaemonUnavailable):
                break
            applied, caught_up = int(reply["applied"]), bool(reply["caught_up"])
            if caught_up:
                break
            time.sleep(min(0.01, max(deadline - time.monotonic(), 0)))  # a backlog: let it drain
        self._settled(applied, caught_up)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(AsyncVerbs, _Base):
    """asyncio client: asks are awaited; tells stay synchronous and non-blocking.

    Any number of asks may run at once from tasks of one event loop (`asyncio.gather`, an MCP
    server's parallel tool calls): they share one socket whose replies a single reader hands to
    the ask each one answers (`slmactor.async_dealer`). Every ask keeps its own deadline and
    retries; cancelling one cancels nothing else, and `close()` fails the asks still waiting with
    DaemonUnavailable instead of leaving them to hang.
    """

    def __init__(
        self,
        runtime_dir: str | os.PathLike[str] | None = None,
        *,
        project: str | os.PathLike[str] | None = None,
        timeout: float = 2.5,
        retries: int = 3,
        tell_hwm: int = 10_000,
        remote: Target | bool | None = None,
    ) -> None:
        # Imported here: asyncio costs a blocking client (and `slmactor status`) ~20 ms of start-up.
        from zmq import asyncio as zmq_asyncio

        from slmactor.async_dealer import SharedDealer

        super().__init__(runtime_dir, project, timeout, retries, tell_hwm, remote)
        self._sync_ctx: zmq.Context[Any] = zmq.Context()
        self._zctx = zmq_asyncio.Context.shadow(self._sync_ctx.underlying)
        # A daemon over tcp has no socket file to probe: its deadline says whether it is there.
        self._dealer = SharedDealer(
            self._zctx, self.ctl_endpoint,
            (lambda: True) if self.remote is not None else (lambda: listener_alive(self.ctl_path)),
            self.remote.secure if self.remote is not None else None)

    def _tells(self) -> _Teller:
        if self._teller is None:
            self._teller = _Teller(self._sync_ctx, self.events_endpoint, self.project, self._tell_hwm,
                                   self._client_id, self.remote)
        return self._teller

    async def ask(
        self,
        msg: Message,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the per-attempt Lazy-Pirate deadline
        retries: int | None = None,
    ) -> Any:
        """Send an ask and await its result. Raises RequestFailed or DaemonUnavailable."""
        return await self._ask_frames(*self._frames(msg), timeout=timeout, retries=retries)

    async def _ask_frames(
        self,
        request_id: str,
        frames: list[bytes],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the per-attempt Lazy-Pirate deadline
        retries: int | None = None,
    ) -> Any:
        import asyncio

        from slmactor.async_dealer import DealerClosed, DealerGone

        if self._dealer.closed:
            raise self._unavailable("the client is closed")
        if not self._listener_seen:
            self._check_listener()
        wait = self.timeout if timeout is None else timeout
        attempts = self.retries if retries is None else max(retries, 1)
        overall = time.monotonic() + wait * attempts
        attempt = 0
        while attempt < attempts:
            if attempt:
                self._check_listener()  # the daemon died meanwhile: say so now, not after `wait`
            try:
                reply = await self._dealer.request(request_id, frames, wait)
            except DealerClosed as exc:
                raise self._unavailable(str(exc)) from None
            except DealerGone as exc:  # the daemon stopped listening while asks waited
                raise self._unavailable(str(exc), DaemonNotRunning) from None
            if reply is None:
                attempt += 1  # Lazy Pirate: sent again (same id) on a socket that still answers
                continue
            if reply.ok:
                return reply.result
            failure = RequestFailed(reply.code, reply.reason, reply.retry_ms)
            pause = _busy_wait(failure, overall)
            if pause < 0:
                raise failure
            await asyncio.sleep(pause)  # the daemon's hint: its inbox is full, try again later
        raise self._unavailable(f"no reply within {wait:g}s")

    async def ask_raw(
        self,
        kind: str,
        fields: dict[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the per-attempt Lazy-Pirate deadline
        retries: int | None = None,
    ) -> Any:
        """`Client.ask_raw`, awaited."""
        return await self._ask_frames(*self._raw_frames(kind, fields), timeout=timeout, retries=retries)

    async def ping(self, actor: str = "control") -> dict[str, Any]:
        result: dict[str, Any] = await self._ask_frames(*self._raw_frames("ping", _ping_fields(actor), False))
        return result

    async def status(self) -> dict[str, Any]:
        result: dict[str, Any] = await self._ask_frames(*self._raw_frames("status", {}, False))
        return result

    # ---- working memory asks (SPEC S-1); see `Client` for the semantics

    async def run_start(self, run_id: str, task: str = "", role: str = "") -> dict[str, Any]:
        from slmactor.protocol.messages import RunStart

        result: dict[str, Any] = await self.ask(RunStart(run_id=run_id, task=task, role=role))
        return result

    async def run_reset(self, run_id: str) -> dict[str, Any]:
        from slmactor.protocol.messages import RunReset

        result: dict[str, Any] = await self.ask(RunReset(run_id=run_id))
        return result

    async def working_render(self, run_id: str, budget: int = 0, *, wait: bool = True) -> str:
        from slmactor.protocol.messages import WorkingRender

        msg = self._working_ask(WorkingRender(run_id=run_id, budget=budget), wait)
        text: str = (await self.ask(msg))["text"]
        return text

    async def working_snapshot(self, run_id: str, *, wait: bool = True) -> dict[str, Any]:
        from slmactor.protocol.messages import WorkingSnapshot

        result: dict[str, Any] = await self.ask(self._working_ask(WorkingSnapshot(run_id=run_id), wait))
        return result

    async def working_mirror(self, run_id: str) -> dict[str, Any]:
        from slmactor.protocol.messages import WorkingMirror

        result: dict[str, Any] = await self.ask(self._working_ask(WorkingMirror(run_id=run_id), True))
        return result

    def close(self) -> None:
        """Close without waiting (a backlog of tells gets libzmq's short linger only);
        `aclose()` (and `async with`) first has the daemon confirm them, as `Client.close()`.
        Asks still waiting raise DaemonUnavailable; so does any ask after close."""
        if self._dealer.closed:
            return
        self._dealer.close()
        if self._teller is not None:
            self._dropped_closed += self._teller.dropped
            self._teller.close()
            self._teller = None
        self._sync_ctx.term()

    async def aclose(self) -> None:
        """Have the daemon confirm a backlog of tells (at most CLOSE_CONFIRM_SECONDS; what stays
        unconfirmed is counted in `dropped` and `unconfirmed`), then close."""
        if self._needs_confirmation():
            import asyncio

            deadline = time.monotonic() + CLOSE_CONFIRM_SECONDS
            applied, caught_up = 0, False
            while (left := deadline - time.monotonic()) > 0:
                try:
                    reply = await self.ask_raw("working.applied", self._applied_fields(),
                                               timeout=min(left, self.timeout), retries=1)
                except (RequestFailed, DaemonUnavailable):
                    break
                applied, caught_up = int(reply["applied"]), bool(reply["caught_up"])
                if caught_up:
                    break
                await asyncio.sleep(min(0.01, max(deadline - time.monotonic(), 0)))
            self._settled(applied, caught_up)
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: types.TracebackType | None
    ) -> None:
        await self.aclose()
