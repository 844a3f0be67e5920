"""`metrics/runs.jsonl`: one metrics record per finished run (SPEC S-16.1, S-16.4).

Built on the shared `JsonlLog` (one whole-line append per record, corrupt lines skipped and
counted, atomic rewrite). Lines are capped at 64 KiB. The log is pruned to the newest 2000 runs —
not on every append (that would rewrite the file every time once full) but when it holds more than
the cap plus a small slack, so the file stays bounded and appends stay O(1).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slmactor.logic.loop.metrics import MAX_LINE_BYTES, MAX_RUNS, Run, normalize, prune, sort_runs
from slmactor.stores.base.jsonl import JsonlLog
from slmactor.stores.base.warnings import WarningLog

#: Runs allowed over the cap before a prune rewrites the log.
PRUNE_SLACK = 50


class MetricsStore:
    """The runs of one project. Owned by the metrics actor (single writer)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        warnings: WarningLog,
        *,
        max_runs: int = MAX_RUNS,
        read_only: bool = False,
        fsync: bool = False,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path)
        self.max_runs = max_runs
        self._warnings = warnings
        self._now = now
        self._log = JsonlLog(
            self.path, warnings, max_line_bytes=MAX_LINE_BYTES, read_only=read_only,
            fsync=fsync, now=now,
        )
        self._count: int | None = None
        self._ids: set[str] = set()
        self._cache: list[Run] | None = None
        self._cached_sig: tuple[int, int, int, int] | None = None

    def _signature(self) -> tuple[int, int, int, int] | None:
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)

    def load(self) -> list[Run]:
        """Every readable run, oldest first (a missing file is no runs, not an error).

        Parsed runs are cached while the file is unchanged (same inode, size and mtime), so
        `metrics show` does not re-parse 2000 lines per ask; a hand edit, a deletion or a
        rewrite by another process is noticed and re-read.
        """
        signature = self._signature()
        if self._cache is not None and signature is not None and signature == self._cached_sig:
            return list(self._cache)
        records = [record for _offset, record in self._log.scan()]
        runs = sort_runs(Run.from_dict(record) for record in records if _is_run(record))
        if len(runs) < len(records):  # (corrupt JSON lines are warned about by the log itself)
            self._warnings.warn(f"skipped {len(records) - len(runs)} record(s) that are not runs "
                                f"in {self.path.name}", self._now(), self.path)
        self._count = len(runs)
        self._ids = {r.run_id for r in runs if r.run_id}
        self._cache, self._cached_sig = runs, signature
        return list(runs)

    def append(self, run: Run) -> Run | None:
        """Normalise and append one run; None when a run with that id is already recorded (a
        finish pipeline replayed after a crash must not count a run twice). Prunes when the log
        has outgrown its cap."""
        run = normalize(run)
        if self._count is None:
            self.load()
        if run.run_id and run.run_id in self._ids:
            return None
        before = self._signature()
        self._log.append(run.to_dict())
        if run.run_id:
            self._ids.add(run.run_id)
        self._count = (self._count or 0) + 1
        if self._cache is not None and before == self._cached_sig:
            # Our own append: extend the cache instead of re-reading the file.
            self._cache = sort_runs([*self._cache, run])
            self._cached_sig = self._signature()
        else:
            self._cache = None
        if self.max_runs > 0 and self._count > self.max_runs + PRUNE_SLACK:
            self.prune()
        return run

    def prune(self, max_runs: int | None = None) -> int:
        """Keep the newest `max_runs` runs; returns how many were dropped (0 → no rewrite)."""
        cap = self.max_runs if max_runs is None else max_runs
        runs = self.load()
        kept = prune(runs, cap)
        if len(kept) == len(runs) and self._log.corrupt_lines == 0:
            return 0
        self._log.rewrite(r.to_dict() for r in kept)
        self._count = len(kept)
        self._cache = None
        return len(runs) - len(kept)

    def forget(self) -> None:
        self._log.delete()
        self._count = 0
        self._ids = set()
        self._cache = None

    @property
    def corrupt_lines(self) -> int:
        return self._log.corrupt_lines

    def close(self) -> None:
        self._log.close()


def _is_run(record: dict[str, Any]) -> bool:
    """A line that holds a run (its id), not some other JSON object."""
    run_id = record.get("run_id")
    return isinstance(run_id, str) and bool(run_id.strip())
