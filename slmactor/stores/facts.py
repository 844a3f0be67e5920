"""`memory/facts.json` + `memory/SEMANTIC.md`: the project's semantic memory on disk (SPEC S-4.10).

`facts.json` is `{version: 1, updated, facts: [...]}` (one fact per line with sorted keys, final
newline, written atomically and redacted); `SEMANTIC.md` is its human view, regenerated on every
flush. A corrupt `facts.json` is moved to `facts.json.corrupt` with a warning and the store starts
empty; unusable records are skipped on load (`FactBook.from_records`). Hand edits
(`"pinned": true`) made while the daemon runs are picked up, and a removed file is not written
back (`MirroredBook.sync`).

With the user's signing `key`, each record the daemon writes carries `sig`; a record without a
valid one (a facts.json a repository brought) loads as unverified (`Fact.verified`), is shown
only labelled with its commands withheld, and is written back unsigned until `slmactor trust`
adopts it. `pinned` stays outside the signature, so pinning a fact by hand keeps it the user's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from slmactor.logic.memory.facts import MAX_FACTS, FactBook, semantic_markdown
from slmactor.stores.base.layout import ProjectLayout
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.base.watched import MirroredBook


class FactStore(MirroredBook[FactBook]):
    """The facts of one project. Owned by the distiller actor (single writer)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        mirror: str | os.PathLike[str],
        warnings: WarningLog,
        *,
        cap: int = MAX_FACTS,
        read_only: bool = False,
        now: Callable[[], float] = time.time,
        key: bytes | None = None,
    ) -> None:
        def load(records: list[Any]) -> FactBook:
            return FactBook.from_records(records, cap=cap, key=key)

        super().__init__(
            path,
            mirror,
            "facts",
            load,
            semantic_markdown,
            warnings,
            read_only=read_only,
            # Shared through git (`slmactor git setup`): one fact per line diffs and merges well.
            one_per_line=True,
            now=now,
        )

    @classmethod
    def for_project(cls, layout: ProjectLayout, warnings: WarningLog, **kwargs: Any) -> FactStore:
        return cls(layout.facts, layout.semantic_md, warnings, **kwargs)
