"""Counters the runtime keeps about each actor and the daemon, read by `status`.

These records belong to the runtime, not to the actors: a crashed actor's counters survive its
restart, and the control actor can read them without asking a busy actor.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from slmactor.logic.text.safecut import cut_chars


class ActorState(StrEnum):
    """Lifecycle: init → starting → running → stopping → stopped; crashed between restarts;
    failed once the restart budget is spent."""

    INIT = "init"
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
    CRASHED = "crashed"
    FAILED = "failed"


@dataclass(slots=True)
class ActorStats:
    """What `status` shows for one actor."""

    name: str
    state: ActorState = ActorState.INIT
    #: Messages put into the mailbox / taken out of it; the difference is the inbox depth.
    enqueued: int = 0
    dequeued: int = 0
    #: Messages refused because the inbox was full (asks answered BUSY, tells dropped).
    busy: int = 0
    #: Messages handled (asks and tells, including each event of a batch).
    processed: int = 0
    #: Failed asks, failed background jobs and crashes.
    errors: int = 0
    restarts: int = 0
    last_error: str = ""
    last_error_at: float = 0.0
    #: Wall-clock times of recent restarts (for the restart window).
    restart_times: list[float] = field(default_factory=list)
    #: Actor-specific counters (events received/invalid, ...), shown as-is.
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def inbox_depth(self) -> int:
        return max(self.enqueued - self.dequeued, 0)

    def record_error(self, text: str, now: float | None = None) -> None:
        self.errors += 1
        self.last_error = cut_chars(text, 500)
        self.last_error_at = time.time() if now is None else now

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": str(self.state),
            "inbox_depth": self.inbox_depth,
            "busy": self.busy,
            "processed": self.processed,
            "errors": self.errors,
            "restarts": self.restarts,
            "last_error": self.last_error,
            "last_error_at": self.last_error_at,
            **({"extra": dict(self.extra)} if self.extra else {}),
        }
