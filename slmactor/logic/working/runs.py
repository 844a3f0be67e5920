"""The live runs of the working actor: one `WorkingMemory` per (project, run id), bounded.

Working memory is run-scoped and lives only in the daemon's memory (S-1), but a daemon serves
many harnesses and projects for weeks, so the table of runs is bounded two ways: at most
`max_runs` live runs (the least recently touched is evicted first) and runs idle for longer than
`idle_seconds` expire (`expire(now)`, called from a timer, never per event). Evicted and expired
runs are handed back so the owner can write their `WORKING.md` mirror before they are gone.

The order of the table is recency order (a dict, moved-to-end on touch), so both eviction and
expiry pop from the front in O(1) per run removed.
"""

from __future__ import annotations

from dataclasses import dataclass

from slmactor.logic.working.memory import SEED_CAPS, WorkingCaps, WorkingMemory
from slmactor.logic.working.toolclasses import DEFAULT_TOOL_CLASSES, ToolClasses

RunKey = tuple[str, str]

#: Defaults: far more runs than a machine runs at once; a day of idleness ends a run.
DEFAULT_MAX_RUNS = 256
DEFAULT_IDLE_SECONDS = 24 * 3600.0


@dataclass(slots=True)
class _Entry:
    memory: WorkingMemory
    touched: float


class WorkingRuns:
    """A bounded LRU of live runs with idle expiry."""

    __slots__ = ("_caps", "_classes", "_runs", "created", "evicted", "expired", "idle_seconds", "max_runs")

    def __init__(
        self,
        max_runs: int = DEFAULT_MAX_RUNS,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        *,
        classes: ToolClasses = DEFAULT_TOOL_CLASSES,
        caps: WorkingCaps = SEED_CAPS,
    ) -> None:
        if max_runs < 1:
            raise ValueError("max_runs must be at least 1")
        self.max_runs = max_runs
        self.idle_seconds = idle_seconds
        self._classes = classes
        self._caps = caps
        self._runs: dict[RunKey, _Entry] = {}
        self.created = 0
        self.evicted = 0
        self.expired = 0

    def __len__(self) -> int:
        return len(self._runs)

    def __contains__(self, key: object) -> bool:
        return key in self._runs

    def get(self, project: str, run_id: str) -> WorkingMemory | None:
        """The run's memory without creating it or changing its recency."""
        entry = self._runs.get((project, run_id))
        return entry.memory if entry is not None else None

    def ensure(
        self, project: str, run_id: str, now: float
    ) -> tuple[WorkingMemory, list[tuple[RunKey, WorkingMemory]]]:
        """The run's memory (created on first use) made most recent, and any runs evicted to
        make room for it (least recently touched first)."""
        key = (project, run_id)
        runs = self._runs
        entry = runs.pop(key, None)
        evicted: list[tuple[RunKey, WorkingMemory]] = []
        if entry is None:
            while len(runs) >= self.max_runs:
                old_key = next(iter(runs))
                evicted.append((old_key, runs.pop(old_key).memory))
                self.evicted += 1
            entry = _Entry(WorkingMemory(run_id, classes=self._classes, caps=self._caps), now)
            self.created += 1
        elif now > entry.touched:
            entry.touched = now
        runs[key] = entry
        return entry.memory, evicted

    def drop(self, project: str, run_id: str) -> WorkingMemory | None:
        """Remove a run (reset / forget); its memory, or None when it was not live."""
        entry = self._runs.pop((project, run_id), None)
        return entry.memory if entry is not None else None

    def drop_project(self, project: str) -> int:
        """Remove every run of a project (forget scope `working`/`project`); how many."""
        keys = [k for k in self._runs if k[0] == project]
        for key in keys:
            del self._runs[key]
        return len(keys)

    def expire(self, now: float) -> list[tuple[RunKey, WorkingMemory]]:
        """Remove runs not touched for more than `idle_seconds`; they are returned oldest first."""
        cutoff = now - self.idle_seconds
        gone: list[tuple[RunKey, WorkingMemory]] = []
        runs = self._runs
        while runs:
            key = next(iter(runs))
            if runs[key].touched >= cutoff:
                break
            gone.append((key, runs.pop(key).memory))
        self.expired += len(gone)
        return gone

    def adopt(self, project: str, run_id: str, memory: WorkingMemory, touched: float) -> bool:
        """Add a run restored from a checkpoint as the most recent one; False (nothing added)
        when the run is already live or the table is full."""
        key = (project, run_id)
        if key in self._runs or len(self._runs) >= self.max_runs:
            return False
        self._runs[key] = _Entry(memory, touched)
        return True

    def entries(self) -> list[tuple[RunKey, WorkingMemory, float]]:
        """(key, memory, last touched) of every live run, least recently touched first."""
        return [(key, entry.memory, entry.touched) for key, entry in self._runs.items()]

    def keys(self) -> list[RunKey]:
        """Live runs, least recently touched first."""
        return list(self._runs)

    def stats(self) -> dict[str, int]:
        return {
            "live": len(self._runs),
            "max": self.max_runs,
            "created": self.created,
            "evicted": self.evicted,
            "expired": self.expired,
        }
