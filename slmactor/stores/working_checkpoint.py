"""`~/.slmcode/memory/working.checkpoint.json`: the working memory of live runs, for a restart.

Working memory lives in the daemon (S-1); this document lets it outlive the process. The working
actor writes it on an interval (only when something changed), after a run is reset or forgotten,
and at shutdown; it reads it once at start. Document: `{version, saved_at, runs: [{project,
run_id, touched, state}]}` with `state` from `logic.working.checkpoint.memory_state`. Written
atomically and redacted like every store; a corrupt or foreign document is quarantined by
`JsonDoc` and the daemon starts with no live runs. `rm` of the file is safe.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from slmactor.logic.text.timefmt import to_rfc3339
from slmactor.logic.working.checkpoint import STATE_VERSION
from slmactor.stores.base.jsondoc import JsonDoc, Shape
from slmactor.stores.base.warnings import WarningLog

#: One checkpointed run: (project, run id, last touched, memory state).
SavedRun = tuple[str, str, float, dict[str, Any]]


class WorkingCheckpoint:
    """The checkpoint document of the working actor (its only writer)."""

    def __init__(self, path: str | os.PathLike[str], warnings: WarningLog, *,
                 now: Callable[[], float] = time.time) -> None:
        self._doc = JsonDoc(path, warnings, now=now, shape=Shape("runs", list))
        self._now = now

    @property
    def path(self) -> os.PathLike[str]:
        return self._doc.path

    def load(self) -> list[SavedRun]:
        """The saved runs, least recently touched first ([] when there is no usable document)."""
        data = self._doc.load()
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            return []
        runs = data.get("runs")
        saved: list[SavedRun] = []
        for item in runs if isinstance(runs, list) else []:
            if not isinstance(item, dict):
                continue
            project, run_id, touched, state = (item.get(k) for k in ("project", "run_id", "touched", "state"))
            if (isinstance(project, str) and isinstance(run_id, str) and run_id
                    and isinstance(touched, (int, float)) and isinstance(state, dict)):
                saved.append((project, run_id, float(touched), state))
        saved.sort(key=lambda run: run[2])
        return saved

    def save(self, runs: list[SavedRun]) -> None:
        """Replace the checkpoint by `runs` (atomic; raises StoreError when it cannot be written).
        No live run leaves no file: a forgotten run's empty checkpoint is nothing to keep."""
        if not runs:
            self._doc.delete()
            return
        self._doc.save({
            "version": STATE_VERSION,
            "saved_at": to_rfc3339(self._now()),
            "runs": [{"project": p, "run_id": r, "touched": t, "state": s} for p, r, t, s in runs],
        })
