"""Acknowledged = written: an ask that changes a write-behind store answers only after
a flush that covers its change has written the file, or answers STORE_ERROR when that flush failed.

The distiller and the bandit keep their books in memory and write them from a background flush
(a snapshot on the loop, the file I/O in a worker thread). They used to answer before that flush,
so a daemon killed in between, or a full disk, lost changes that had been acknowledged. Now each
change takes a ticket (a per-store change counter) and the ask waits until the flush has written
a snapshot taken at or after its ticket.

Durability of "written": what the store primitives give — an atomic replace with fsync of the
file and its directory (docs/DURABILITY.md). A change whose flush failed stays in memory, the
store stays dirty and `retry_due()` names it so the owner retries it when space returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio

from slmactor.protocol import ErrorCode, RequestError


@dataclass(slots=True)
class _Ledger:
    store: Any
    context: Any
    changes: int = 0
    written: int = 0
    failed: int = 0
    error: str = ""
    event: anyio.Event = field(default_factory=anyio.Event)

    def notify(self) -> None:
        self.event.set()
        self.event = anyio.Event()


class FlushAcks:
    """Change tickets and flush outcomes per store (keyed by identity; one owner actor)."""

    def __init__(self) -> None:
        self._ledgers: dict[int, _Ledger] = {}

    def _ledger(self, store: Any, context: Any = None) -> _Ledger:
        ledger = self._ledgers.get(id(store))
        if ledger is None or ledger.store is not store:
            ledger = _Ledger(store, context)
            self._ledgers[id(store)] = ledger
        elif context is not None:
            ledger.context = context
        return ledger

    def changed(self, store: Any, context: Any = None) -> int:
        """Count a change of `store`; its ticket. `context` is kept for the owner's retries."""
        ledger = self._ledger(store, context)
        ledger.changes += 1
        return ledger.changes

    def generation(self, store: Any) -> int:
        """The newest change a snapshot taken now covers (call right before `snapshot()`)."""
        return self._ledger(store).changes

    def wrote(self, store: Any, generation: int) -> None:
        """A snapshot covering changes up to `generation` is on disk."""
        ledger = self._ledger(store)
        ledger.written = max(ledger.written, generation)
        if ledger.written >= ledger.failed:
            ledger.error = ""
        ledger.notify()

    def failed(self, store: Any, error: str) -> None:
        """The flush stopped on `error`: every change counted so far is unsaved for now."""
        ledger = self._ledger(store)
        ledger.failed = ledger.changes
        ledger.error = error
        ledger.notify()

    async def wait(self, store: Any, ticket: int) -> None:
        """Return once change `ticket` is written; RequestError(STORE_ERROR) if its flush failed."""
        ledger = self._ledger(store)
        while ledger.written < ticket:
            if ledger.failed >= ticket:
                raise RequestError(ErrorCode.STORE_ERROR, f"not saved: {ledger.error}")
            await ledger.event.wait()

    def retry_due(self) -> list[tuple[Any, Any]]:
        """(store, context) of every store whose last flush failed and that is not yet saved."""
        return [
            (ledger.store, ledger.context)
            for ledger in self._ledgers.values()
            if ledger.error and ledger.written < ledger.changes
        ]

    def forget(self, store: Any) -> None:
        """Drop a closed store's ledger (its waiters, if any, are answered by their flush)."""
        ledger = self._ledgers.pop(id(store), None)
        if ledger is not None:
            ledger.notify()
