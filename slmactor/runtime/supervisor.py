"""One-for-one supervision with a restart budget (after Erlang, via mode's supervisors).

A crashed actor is restarted after a short backoff. More than `max_restarts` crashes within
`restart_window` seconds spends the budget: the actor is marked failed and the daemon exits
non-zero, so systemd (`Restart=on-failure`) or launchd (`KeepAlive`) — the outer supervisor —
starts a fresh process.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import anyio
import anyio.abc

from .cell import ActorCell, describe
from .stats import ActorState

log = logging.getLogger("slmactor.supervisor")

#: Exit status when an actor spent its restart budget.
EXIT_ACTOR_FAILED = 3


class Supervisor:
    def __init__(
        self,
        max_restarts: int,
        window: float,
        on_fatal: Callable[[str, str], None],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.max_restarts = max_restarts
        self.window = window
        self._on_fatal = on_fatal
        self._clock = clock

    async def supervise(
        self, cell: ActorCell, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Keep `cell` running until it is asked to stop or its restart budget is spent."""
        stats = cell.ctx.stats
        started = False

        def running() -> None:
            nonlocal started
            if not started:
                started = True
                task_status.started()

        backoff = 0.05
        while True:
            try:
                await cell.run(running)
                return
            except Exception as exc:  # noqa: BLE001 - every crash is the supervisor's business
                text = describe(exc)
                now = self._clock()
                stats.record_error(f"crashed: {text}", now)
                stats.state = ActorState.CRASHED
                stats.restart_times = [t for t in stats.restart_times if now - t < self.window]
                if cell.stopping:
                    stats.state = ActorState.STOPPED
                    return
                if len(stats.restart_times) >= self.max_restarts:
                    stats.state = ActorState.FAILED
                    log.error("actor %s failed %d times in %.0fs; giving up: %s",
                              cell.name, len(stats.restart_times) + 1, self.window, text)
                    if not started:
                        started = True
                        task_status.started()
                    self._on_fatal(cell.name, text)
                    return
                stats.restart_times.append(now)
                stats.restarts += 1
                log.warning("actor %s crashed (%s); restarting", cell.name, text)
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
