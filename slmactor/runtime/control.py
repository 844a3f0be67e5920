"""The control actor: `status` and `daemon.stop`. Part of the runtime, present in every daemon."""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from slmactor import __version__
from slmactor.logic.text.redact import redact
from slmactor.protocol import PROTOCOL_VERSION
from slmactor.protocol.messages import DaemonStop, Status
from slmactor.stores.base import health as store_health

from .actor import Actor, handles
from .router import Router
from .stats import ActorState

#: Kinds routed by a field rather than by owner (every actor answers them).
ROUTED_BY_FIELD = frozenset({"ping", "debug.crash"})
#: Control kinds the front door answers itself: they only read runtime counters, so a round
#: trip through the control actor's mailbox would add two inproc hops and nothing else.
INLINE_KINDS = frozenset({"status", "ping", "daemon.stop"})


@dataclass(slots=True)
class DaemonInfo:
    """Facts about this daemon process that `status` reports."""

    router: Router
    endpoints: dict[str, str]
    stores: dict[str, str]
    request_stop: Callable[[], None]
    started_at: float = field(default_factory=time.time)
    started_monotonic: float = field(default_factory=time.monotonic)
    warnings: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=50))
    restart_window: float = 60.0
    requests: int = 0
    requests_rejected: int = 0
    #: Asks answered BUSY because the owner's inbox was full (also in `requests_rejected`).
    requests_busy: int = 0
    #: Replies dropped because the client was gone or not reading.
    replies_dropped: int = 0
    #: Requests over the whole-message bounds (frames or bytes), discarded unread and answered.
    requests_oversize: int = 0
    #: Requests whose handling in the front door raised (answered INTERNAL).
    door_errors: int = 0
    last_door_error: str = ""
    #: Debug `stall` asks waiting for their `release` (actor name → event).
    stalls: dict[str, Any] = field(default_factory=dict)
    #: ctl.sock's connections: open, and closed for breaking the protocol (`runtime.zmtp`).
    connections: Callable[[], dict[str, int]] | None = None
    #: The remote endpoints' report (`runtime.remote`), when tcp endpoints are open.
    remote: Callable[[], dict[str, Any]] | None = None
    _process: Any = None  # psutil.Process, imported on the first status (10 ms off start-up)

    def answer(self, kind: str) -> Any:
        """The control kinds, answered from runtime state alone (see `INLINE_KINDS`)."""
        self.router.stats["control"].processed += 1
        if kind == "status":
            return self.status()
        if kind == "daemon.stop":
            self.request_stop()
            return {"stopping": True, "pid": os.getpid()}
        return {"actor": "control", "pong": True, "state": str(self.router.stats["control"].state)}

    def rss_bytes(self) -> int:
        if self._process is None:
            import psutil

            self._process = psutil.Process()
        return int(self._process.memory_info().rss)

    def stall_event(self, actor: str) -> Any:
        """The event a debug `stall` of `actor` waits on (an anyio.Event)."""
        import anyio

        event = self.stalls.get(actor)
        if event is None:
            event = self.stalls[actor] = anyio.Event()
        return event

    def release_stall(self, actor: str) -> None:
        """End `actor`'s stall; one that has not begun yet ends as soon as it does."""
        self.stall_event(actor).set()

    def warn(self, actor: str, text: str, project: str = "") -> None:
        entry: dict[str, Any] = {"actor": actor, "text": redact(text), "at": time.time()}
        if project:
            entry["project"] = project
        self.warnings.append(entry)

    def health(self) -> str:
        """"healthy", or "degraded" when an actor is not running or restarted recently, or a
        store cannot be written (`store_faults` says which and why)."""
        if store_health.faults():
            return "degraded"
        now = time.time()
        for stats in self.router.stats.values():
            if stats.state != ActorState.RUNNING:
                return "degraded"
            if any(now - t < self.restart_window for t in stats.restart_times):
                return "degraded"
        return "healthy"

    def status(self) -> dict[str, Any]:
        actors = [s.to_dict() for s in self.router.stats.values()]
        extra_totals: dict[str, int] = {}
        for stats in self.router.stats.values():
            for key, value in stats.extra.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    extra_totals[key] = extra_totals.get(key, 0) + value
        return {
            "health": self.health(),
            "version": __version__,
            "protocol": PROTOCOL_VERSION,
            "pid": os.getpid(),
            "started_at": self.started_at,
            "uptime_s": round(time.monotonic() - self.started_monotonic, 3),
            "rss_bytes": self.rss_bytes(),
            "endpoints": dict(self.endpoints),
            "stores": dict(self.stores),
            "actors": actors,
            "events": {
                "received": extra_totals.get("events_received", 0),
                "invalid": extra_totals.get("events_invalid", 0),
                "dropped_by_clients": extra_totals.get("client_dropped", 0),
            },
            "requests": self.requests,
            "requests_rejected": self.requests_rejected,
            "requests_busy": self.requests_busy,
            "requests_oversize": self.requests_oversize,
            "mailbox_bytes": self.router.queued_bytes,
            "replies_dropped": self.replies_dropped,
            **({"connections": self.connections()} if self.connections is not None else {}),
            "door_errors": self.door_errors,
            **({"last_door_error": self.last_door_error} if self.last_door_error else {}),
            "warnings": list(self.warnings),
            "store_faults": store_health.faults(),
            **({"remote": self.remote()} if self.remote is not None else {}),
        }


class ControlActor(Actor):
    """Owns: nothing persistent. Consumes: status, daemon.stop. Emits: nothing."""

    name = "control"

    @property
    def info(self) -> DaemonInfo:
        info = self.ctx.daemon
        assert isinstance(info, DaemonInfo)
        return info

    # Clients' control asks are answered inline by the front door; these handlers serve the
    # same answers to other actors, which reach control through its mailbox.

    @handles(Status)
    async def status(self, msg: Status) -> dict[str, Any]:
        result: dict[str, Any] = self.info.answer("status")
        return result

    @handles(DaemonStop)
    async def stop(self, msg: DaemonStop) -> dict[str, Any]:
        result: dict[str, Any] = self.info.answer("daemon.stop")
        return result
