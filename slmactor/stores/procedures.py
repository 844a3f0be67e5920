"""User-scoped procedural and latency memory on disk (SPEC S-6, S-6.7, S-7.6).

`~/.slmcode/memory/procedures.json` (`{version: 1, updated, procedures: [...]}`) with its
`PROCEDURES.md` table, and `latency.json` (`{version: 1, updated, roles: [...]}`) with
`LATENCY.md`. Both are written atomically; a corrupt document is moved to `NAME.corrupt` with a
warning and that store starts empty. Forgetting procedural memory removes both, with their
corrupt copies and mirrors (S-7.7).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from slmactor.logic.memory.procedures import MAX_PROCEDURES, ProcedureBook, procedures_markdown
from slmactor.logic.policy.latency import MAX_KEYS, LatencyBook, latency_markdown
from slmactor.stores.base.layout import UserLayout
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.base.watched import MirroredBook


def _procedures_md(book: ProcedureBook, now: float) -> str:
    return procedures_markdown(book)


def _latency_md(book: LatencyBook, now: float) -> str:
    return latency_markdown(book)


class ProcedureStore(MirroredBook[ProcedureBook]):
    """What works per model family and language. Owned by the distiller actor."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        mirror: str | os.PathLike[str],
        warnings: WarningLog,
        *,
        cap: int = MAX_PROCEDURES,
        read_only: bool = False,
        now: Callable[[], float] = time.time,
    ) -> None:
        def load(records: list[Any]) -> ProcedureBook:
            return ProcedureBook.from_records(records, cap=cap)

        super().__init__(
            path, mirror, "procedures", load, _procedures_md, warnings, read_only=read_only, now=now
        )

    @classmethod
    def for_user(cls, layout: UserLayout, warnings: WarningLog, **kwargs: Any) -> ProcedureStore:
        return cls(layout.procedures, layout.procedures_md, warnings, **kwargs)


class LatencyStore(MirroredBook[LatencyBook]):
    """Call latency per (role, model family). Owned by the distiller actor."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        mirror: str | os.PathLike[str],
        warnings: WarningLog,
        *,
        cap: int = MAX_KEYS,
        read_only: bool = False,
        now: Callable[[], float] = time.time,
    ) -> None:
        def load(records: list[Any]) -> LatencyBook:
            return LatencyBook.from_records(records, cap=cap)

        super().__init__(
            path, mirror, "roles", load, _latency_md, warnings, read_only=read_only, now=now
        )

    @classmethod
    def for_user(cls, layout: UserLayout, warnings: WarningLog, **kwargs: Any) -> LatencyStore:
        return cls(layout.latency, layout.latency_md, warnings, **kwargs)
