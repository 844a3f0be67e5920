"""The metrics actor: one metrics record per finished run, and comparisons (S-16).

Owns: <project>/.slmcode/metrics/runs.jsonl (one store per project, opened lazily).
Consumes: metrics.record (from the reflector's finish pipeline, or a harness directly),
metrics.show, metrics.compare. Emits: nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from slmactor.protocol import ErrorCode, RequestError
from slmactor.protocol.messages import MetricsCompare, MetricsRecord, MetricsShow
from slmactor.runtime.actor import Actor, handles
from slmactor.runtime.projects import ProjectCache
from slmactor.stores.base.layout import ProjectLayout

if TYPE_CHECKING:  # the run metrics logic and store load with the first metrics ask
    from slmactor.logic.loop.metrics import Run
    from slmactor.stores.metrics import MetricsStore


class MetricsActor(Actor):
    name = "metrics"

    async def on_start(self) -> None:
        self.warnings = self.store_warnings()
        self.stores: ProjectCache[MetricsStore] = ProjectCache(
            self._open, lambda store: store.close(), self.ctx.settings.max_open_projects
        )
        self.ctx.stats.extra["runs_recorded"] = 0

    async def on_stop(self) -> None:
        self.stores.close_all()

    def _open(self, root: Path) -> MetricsStore:
        from slmactor.stores.metrics import MetricsStore

        return MetricsStore(ProjectLayout(root).runs, self.warnings, now=self.now,
                            fsync=self.ctx.settings.fsync_logs)

    @handles(MetricsRecord)
    async def record(self, msg: MetricsRecord) -> dict[str, Any]:
        from slmactor.logic.loop.metrics import Run

        store = self.stores.get(self.project_root(msg))
        run = Run.from_dict(msg.run)
        if run.at <= 0:
            run = Run.from_dict({**msg.run, "at": self.now()})
        stored = await self.run_sync(store.append, run)
        if stored is None:
            return {"recorded": False, "duplicate": True, "run_id": run.run_id}
        self.ctx.stats.extra["runs_recorded"] += 1
        return {"recorded": True, "run": stored.to_dict()}

    async def _runs(self, msg: MetricsShow | MetricsCompare) -> list[Run]:
        store = self.stores.get(self.project_root(msg))
        return await self.run_sync(store.load)

    @handles(MetricsShow)
    async def show(self, msg: MetricsShow) -> dict[str, Any]:
        from slmactor.logic.loop.metrics import aggregate, select

        runs = select(await self._runs(msg), label=msg.label, last=max(msg.last, 0))
        summary = aggregate(runs)
        text = "no runs recorded yet\n" if not runs else summary.render()
        return {
            "runs": [r.to_dict() for r in runs],
            "summary": summary.to_dict(),
            "text": text,
        }

    @handles(MetricsCompare)
    async def compare(self, msg: MetricsCompare) -> dict[str, Any]:
        from slmactor.logic.loop.metrics import select
        from slmactor.logic.loop.metrics_compare import compare, compare_last

        runs = await self._runs(msg)
        if msg.baseline_label or msg.current_label:
            if not (msg.baseline_label and msg.current_label):
                raise RequestError(ErrorCode.BAD_FIELD,
                                   "compare by label needs both baseline_label and current_label")
            cmp = compare(select(runs, label=msg.baseline_label),
                          select(runs, label=msg.current_label))
        else:
            if msg.n <= 0:
                raise RequestError(ErrorCode.BAD_FIELD, "n must be positive")
            found = compare_last(runs, msg.n)
            if found is None:
                return {"enough_runs": False, "runs": len(runs),
                        "text": f"need at least 2 runs to compare ({len(runs)} recorded)\n"}
            cmp = found
        return {"enough_runs": cmp.enough_runs, "runs": len(runs), **cmp.to_dict(),
                "text": cmp.render()}
