"""The reflector actor: `run.finish`, the finish pipeline, and regression memory.

Owns: <project>/.slmcode/memory/REFLECTION.md and <project>/.slmcode/evolve/regressions.json.
Consumes: run.finish, evolve.regressions, evolve.reset.
Emits (asks, in the S-11.5 order, in the background): episode.append → recall; evolve.observe /
evolve.learn → rules; policy.update → bandit; lesson.add, lessons.penalize / lessons.boost
(outcome feedback on the do/don't lessons shown to the run) and procedure.observe → distiller;
metrics.record → metrics; working.mirror → working; then memory.distill and memory.prune (at
most every 30 s per project; a burst of runs is distilled once, by a timer).

`run.finish` reflects (pure and fast), makes the report durable (the pending journal below) and
replies. The rest — this actor's own files (regression checks, REFLECTION.md), then the fan-out
to the other actors — runs as a background job, one
pipeline at a time in arrival order (a lock), so no other ask waits on it and later runs see what
earlier ones taught. `wait: true` replies only after the pipeline (replays and tests use it).
A step whose actor fails is recorded and the pipeline goes on: memory failures never fail a run.
A repeated `run.finish` for a run id already finished (a client retry) answers the first result
instead of learning twice.

Durability: before replying, the accepted report is also written to
`<project>/.slmcode/evolve/pending/<id>.json` (with the time it was reflected at) and removed when
its pipeline has run. A daemon killed in between replays the pipeline the next time the project
is opened — reflected at the same time, so the episode keeps its id and the metrics store, which
records a run id once, does not count the run twice.
"""

from __future__ import annotations

import functools
import itertools
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import anyio

from slmactor.harnesses import tool_family
from slmactor.logic.text.strings import hash_id
from slmactor.logic.text.trust import UNVERIFIED_LABEL, WITHHELD
from slmactor.protocol import ErrorCode, Message, RequestError
from slmactor.protocol.messages import (
    EpisodeAppend,
    EvolveForget,
    EvolveLearn,
    EvolveObserve,
    EvolveRegressions,
    EvolveReset,
    LessonAdd,
    LessonsBoost,
    LessonsPenalize,
    MemoryDistill,
    MemoryForget,
    MemoryPrune,
    MetricsRecord,
    PolicyForget,
    PolicyUpdate,
    ProcedureObserve,
    RegressionsTrust,
    RunFinish,
    WorkingMirror,
    WorkingSnapshot,
)
from slmactor.runtime.actor import Actor, ActorDead, handles, store_failure
from slmactor.runtime.projects import ProjectCache
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.jsondoc import JsonDoc, Shape
from slmactor.stores.base.layout import ProjectLayout, UserLayout
from slmactor.stores.base.markdown import write_markdown
from slmactor.stores.base.project_lock import claim_project_store
from slmactor.stores.base.signing import signing_key
from slmactor.stores.pending_projects import PendingProjects

if TYPE_CHECKING:  # the run-report logic loads with the first run.finish, not before READY
    from slmactor.logic.loop.reflection import Reflection
    from slmactor.logic.loop.regressions import CheckResult
    from slmactor.logic.loop.run_report import RunReport
    from slmactor.stores.regressions import RegressionStore

#: A pending journal: `{"at", "summary", "report": {...}, "request_id"}`.
JOURNAL_SHAPE = Shape("report", dict)
#: Finished run ids remembered for de-duplicating client retries.
MAX_REMEMBERED_RUNS = 256
#: Step failures that pass (a full disk, a busy or restarting actor): the journal is kept and
#: the step retried.
_RETRYABLE = frozenset(
    {ErrorCode.STORE_ERROR, ErrorCode.BUSY, ErrorCode.TIMEOUT, ErrorCode.UNAVAILABLE}
)


def run_error_text(report: RunReport) -> str:
    """The errors a run met: its failures' messages and its failed gates."""
    parts = [f.message for f in report.failures if f.message.strip()]
    parts += [f"{g.name} {g.detail}" for g in report.gates if not g.passed]
    return "\n".join(parts)


@dataclass(frozen=True, slots=True)
class _Job:
    """One accepted report on its way through the pipeline."""

    root: Path
    reflection: Reflection
    document: str
    journal: JsonDoc | None
    wait: bool = False
    #: Steps a failed earlier attempt already completed (not repeated by the retry).
    done: frozenset[str] = frozenset()
    #: What the journal holds (rewritten with `done` when a step fails).
    record: dict[str, Any] | None = None


def _name_episode(reflection: Reflection, request_id: str) -> Reflection:
    """Give the episode of a report without a run id the id of its request: a client
    retry or a replay stores it once, and two such runs in one second are two episodes. With a
    run id the episode store names it by the run (`episode_id`)."""
    from slmactor.logic.recall.episode import request_episode_id

    if reflection.run_id or not request_id.strip() or reflection.episode.get("id"):
        return reflection
    return replace(reflection, episode={**reflection.episode, "id": request_episode_id(request_id)})


class ReflectorActor(Actor):
    name = "reflector"
    #: Distil (and prune) a project at most this often from run.finish pipelines; a burst of
    #: runs in between is distilled once, by the timer, when the interval has passed. Replays
    #: (`wait: true`) always distil, so what they read back is current.
    DISTILL_INTERVAL: ClassVar[float] = 30.0
    DISTILL_TICK: ClassVar[float] = 5.0
    #: How often pipelines left unfinished by a failed step are retried, and how many times.
    RETRY_PIPELINES_S: ClassVar[float] = 2.0
    MAX_PIPELINE_ATTEMPTS: ClassVar[int] = 100

    async def on_start(self) -> None:
        self.warnings = self.store_warnings()
        signing, fault = await self.run_sync(signing_key, self.ctx.settings.home)
        self.key: bytes | None = signing
        if fault:
            self.warn(fault)
        self.stores: ProjectCache[RegressionStore] = ProjectCache(
            self._open, self._close, self.ctx.settings.max_open_projects
        )
        self._pipeline_lock = anyio.Lock()
        #: Regression stores are touched from worker threads; one at a time.
        self._store_lock = anyio.Lock()
        self._finished: OrderedDict[tuple[Path, str], dict[str, Any]] = OrderedDict()
        self._serial = itertools.count()
        #: Journal files whose pipeline is queued or running (never recovered twice).
        self._inflight: set[Path] = set()
        #: Projects with a journal kept after a failed step (retried by `_retry_pipelines`).
        self._unfinished: set[Path] = set()
        self.ctx.stats.extra["runs_reflected"] = 0
        self.ctx.stats.extra["pipelines_done"] = 0
        self.ctx.stats.extra["distills_deferred"] = 0
        self.ctx.stats.extra["distill_ticks"] = 0
        self._last_distill: dict[Path, float] = {}
        self._distill_due: set[Path] = set()
        self.ctx.stats.extra["pipeline_step_errors"] = 0
        self.pending_projects = PendingProjects(UserLayout(self.ctx.settings.home).evolve_dir / "pending-projects")
        self.ctx.stats.extra["replays_at_start"] = 0

    async def on_stop(self) -> None:
        self.stores.close_all()

    def loops(self) -> list[Callable[[], Coroutine[Any, Any, None]]]:
        return [self._distill_timer, self._replay_saved, self._retry_pipelines]

    async def _replay_saved(self) -> None:
        """At start: open every project that holds finish reports saved before a crash, which
        replays their pipelines (`_recover`), instead of waiting for the project's next use."""
        for root in await self.run_sync(self.pending_projects.roots):
            try:
                if not await self.run_sync(self._has_pending, root):
                    await self.run_sync(self.pending_projects.done, root)
                    continue
                claim_project_store(root)
                before = len(self._inflight)
                self.stores.get(root)  # on the loop: recovery spawns the pipelines
                self.ctx.stats.extra["replays_at_start"] += len(self._inflight) - before
            except (StoreError, OSError) as exc:  # another daemon's project, gone, unreadable
                self.warn(f"saved finish reports of {root} not replayed at start: {exc}")

    def _has_pending(self, root: Path) -> bool:
        directory = self._pending_dir(root)
        return directory.is_dir() and any(directory.glob("fin_*.json"))

    async def _retry_pipelines(self) -> None:
        """Run again, every few seconds, the pipelines a passing failure left unfinished."""
        while True:
            await anyio.sleep(self.RETRY_PIPELINES_S)
            for root in list(self._unfinished):
                self._unfinished.discard(root)
                self._recover(root)

    async def _distill_timer(self) -> None:
        """Distil projects whose distillation a burst of runs deferred, once it is due."""
        while True:
            await anyio.sleep(self.DISTILL_TICK)
            self.ctx.stats.extra["distill_ticks"] += 1  # (tests wait for a tick to have passed)
            for root in list(self._distill_due):
                if self.now() - self._last_distill.get(root, 0.0) < self.DISTILL_INTERVAL:
                    continue
                async with self._pipeline_lock:
                    self._distill_due.discard(root)
                    self._last_distill[root] = self.now()
                    for message in (MemoryDistill(project=str(root)),
                                    MemoryPrune(project=str(root))):
                        try:
                            await self.ask(message)
                        except Exception as exc:  # noqa: BLE001 - a timer must not crash the actor
                            self.ctx.stats.extra["pipeline_step_errors"] += 1
                            self.warn(f"deferred {message.KIND} failed: {exc}")

    def _open(self, root: Path) -> RegressionStore:
        from slmactor.stores.regressions import RegressionStore

        store = RegressionStore(ProjectLayout(root).regressions, self.warnings, now=self.now,
                                key=self.key)
        self._recover(root)
        return store

    # ---------------------------------------------------------------- the pending journal

    @staticmethod
    def _pending_dir(root: Path) -> Path:
        return ProjectLayout(root).evolve_dir / "pending"

    def _journal(self, root: Path, msg: RunFinish, report: dict[str, Any], at: float) -> JsonDoc:
        key = report.get("run_id") if isinstance(report.get("run_id"), str) else ""
        name = hash_id("fin_", str(key) or msg.id or f"{at}:{next(self._serial)}") + ".json"
        doc = JsonDoc(self._pending_dir(root) / name, self.warnings, now=self.now)
        doc.save(self._journal_record(msg, report, at))
        self._inflight.add(doc.path)
        try:
            self.pending_projects.register(root)  # so a restart finds it without the project's next use
        except StoreError as exc:
            self.warn(f"project not registered for replay at start: {exc}")
        return doc

    @staticmethod
    def _journal_record(msg: RunFinish, report: dict[str, Any], at: float) -> dict[str, Any]:
        return {"at": at, "summary": msg.summary, "report": report, "request_id": msg.id}

    def _recover(self, root: Path) -> None:
        """Re-run the pipelines of reports accepted but not finished before a crash."""
        from slmactor.logic.loop.reflect import reflect
        from slmactor.logic.loop.reflect_md import cap_document, enrich
        from slmactor.logic.loop.run_report import RunReport

        directory = self._pending_dir(root)
        if not directory.is_dir():
            return
        for path in sorted(directory.glob("fin_*.json")):
            if path in self._inflight:
                continue
            # A journal of the wrong shape is quarantined (`.corrupt`, with a warning) by the
            # doc itself, never deleted unread.
            doc = JsonDoc(path, self.warnings, now=self.now, shape=JOURNAL_SHAPE)
            data = doc.load()
            if not isinstance(data, dict):
                continue
            at = data.get("at")
            when = float(at) if isinstance(at, (int, float)) else self.now()
            reflection = reflect(RunReport.from_dict(data["report"]), when, tool_family)
            request_id = data.get("request_id")
            reflection = _name_episode(
                reflection, request_id if isinstance(request_id, str) else ""
            )
            document = cap_document(enrich(reflection.markdown, data.get("summary")))
            done = data.get("done")
            done_steps = frozenset(d for d in done if isinstance(d, str)) if isinstance(
                done, list) else frozenset()
            self.warn(f"replaying the finish pipeline of run {reflection.run_id or '(no id)'} "
                      + ("(a step failed earlier)" if "done" in data else
                         "interrupted by a restart"))
            self._inflight.add(doc.path)
            job = _Job(root, reflection, document, doc, done=done_steps, record=data)
            self.spawn(functools.partial(self._quiet, job), "recovered finish pipeline")

    def _close(self, store: RegressionStore) -> None:
        try:
            store.save()
        except (OSError, StoreError) as exc:
            self.warn(f"regressions.json not saved: {exc}")

    # ---------------------------------------------------------------- run.finish

    @handles(RunFinish)
    async def finish(self, msg: RunFinish) -> dict[str, Any]:
        from slmactor.logic.loop.reflect import reflect
        from slmactor.logic.loop.reflect_md import cap_document, enrich
        from slmactor.logic.loop.run_report import RunReport

        root = self.project_root(msg)
        merged = _in_shared_words(await self._with_working_memory(root, msg))
        report = RunReport.from_dict(merged)
        # A retry is known by its run id, or, without one, by the client's request id.
        key = (root, report.run_id or f"request:{msg.id}")
        if (report.run_id or msg.id) and key in self._finished:
            return {**self._finished[key], "duplicate": True}
        self.stores.get(root)  # first use of the project: recover interrupted pipelines
        at = self.now()
        # Fingerprinting up to 500 failures is CPU work: off the actor's loop.
        reflection = await self.run_sync(reflect, report, at, tool_family)
        reflection = _name_episode(reflection, msg.id)
        document = cap_document(enrich(reflection.markdown, msg.summary))
        # Accepted = the report is durable; everything else happens in the pipeline.
        try:
            journal: JsonDoc | None = await self.run_sync(self._journal, root, msg, merged, at)
        except (OSError, StoreError) as exc:
            # Acknowledged = journalled: a report that could not be made durable is
            # answered with a store error, so the harness knows it was not learned from.
            self.warn(f"run.finish: report not journalled ({exc}); not accepted")
            raise store_failure(exc, "run.finish not accepted: ") from exc
        self.ctx.stats.extra["runs_reflected"] += 1
        result: dict[str, Any] = {
            "run_id": report.run_id,
            "accepted": True,
            "success": reflection.success,
            "tally": dict(reflection.tally),
            "candidates": len(reflection.candidates),
            "rule_outcomes": dict(reflection.rule_outcomes),
            "checks": len(reflection.checks),
            "lessons": len(reflection.lessons),
            "reflection_md": str(ProjectLayout(root).reflection_md),
            "commentary": document != cap_document(reflection.markdown),
        }
        job = _Job(root, reflection, document, journal, msg.wait,
                   record=self._journal_record(msg, merged, at))
        if msg.wait:
            result["pipeline"] = await self._background(job)
        else:
            self.spawn(functools.partial(self._quiet, job), "finish pipeline")
        if report.run_id or msg.id:
            self._finished[key] = result
            while len(self._finished) > MAX_REMEMBERED_RUNS:
                self._finished.popitem(last=False)
        return result

    async def _with_working_memory(self, root: Path, msg: RunFinish) -> dict[str, Any]:
        """The report completed with the run's working memory: a harness that told
        the daemon its tool calls need not count them again, and a given count is not doubled."""
        from slmactor.logic.loop.run_merge import merge_report, seen_report

        given = msg.report.get("run_id")
        run_id = msg.run_id.strip() or (given.strip() if isinstance(given, str) else "")
        if not run_id:
            return dict(msg.report)
        try:
            reply = await self.ask(WorkingSnapshot(project=str(root), run_id=run_id,
                                                   client=msg.client, seq=msg.seq))
        except (RequestError, ActorDead) as exc:
            # Memory never fails a run: reflect on the report as sent.
            self.warn(f"run.finish: working memory of {run_id} not read ({exc})")
            return {**msg.report, "run_id": run_id}
        snapshot = reply.get("snapshot") if isinstance(reply, dict) else None
        seen = seen_report(snapshot if isinstance(snapshot, dict) else {}, run_id)
        return {**merge_report(msg.report, seen), "run_id": run_id}

    def _persist(self, job: _Job, store: RegressionStore) -> int:
        """What this actor owns: the regression checks and REFLECTION.md."""
        from slmactor.logic.loop.reflect_md import REFLECTION_BYTES

        added = sum(1 for check in job.reflection.checks if store.add(check))
        store.prune()
        store.save()
        write_markdown(ProjectLayout(job.root).reflection_md, job.document,
                       cap_bytes=REFLECTION_BYTES, warnings=self.warnings)
        return added

    async def _background(self, job: _Job) -> dict[str, Any]:
        journal = job.journal
        try:
            steps = await self._pipeline(job)
            if journal is not None:
                await self._settle_journal(job, journal, steps)
        finally:
            if journal is not None:
                self._inflight.discard(journal.path)
        return steps

    async def _settle_journal(self, job: _Job, journal: JsonDoc, steps: dict[str, Any]) -> None:
        """Delete the journal of a finished pipeline; keep it, with the steps that are done, when
        a step failed for a reason that passes (a full disk, a busy or restarting actor), so
        `_retry_pipelines` runs the rest once it can."""
        retry = [name for name, step in steps.items() if step.get("retry")]
        attempts = int((job.record or {}).get("attempts", 0)) + 1
        if not retry or attempts > self.MAX_PIPELINE_ATTEMPTS:
            if retry:
                self.warn(f"finish pipeline of run {job.reflection.run_id or '(no id)'}: gave up "
                          f"on {', '.join(retry)} after {attempts - 1} attempts")
            await self.run_sync(journal.delete)
            return
        done = sorted(job.done | {name for name, step in steps.items() if step.get("ok")})
        record = {**(job.record or {}), "done": done, "attempts": attempts}
        try:
            await self.run_sync(journal.save, record)
        except (OSError, StoreError) as exc:
            self.warn(f"finish pipeline: could not note the steps done ({exc}); "
                      "the retry repeats them")
        self._unfinished.add(job.root)

    async def _quiet(self, job: _Job) -> None:
        await self._background(job)

    async def _pipeline(self, job: _Job) -> dict[str, Any]:
        """The fan-out of S-11.5 in order, this actor's own files in their place (after the
        rewards, before the lessons); each step best-effort."""
        async with self._pipeline_lock:
            r = job.reflection
            project = str(job.root)
            rep = r.report
            steps: dict[str, Any] = {}

            async def step(name: str, message: Message) -> Any:
                if name in job.done:
                    steps[name] = {"ok": True, "done_before": True}
                    return None
                try:
                    answer = await self.ask(message)
                except (RequestError, ActorDead) as exc:
                    self.ctx.stats.extra["pipeline_step_errors"] += 1
                    self.warn(f"finish pipeline: {name} failed: {exc}")
                    transient = isinstance(exc, ActorDead) or exc.code in _RETRYABLE
                    steps[name] = {"ok": False, "error": str(exc), "retry": transient}
                    return None
                previous = steps.get(name)
                count = previous["count"] + 1 if isinstance(previous, dict) and previous.get(
                    "ok") else 1
                steps[name] = {"ok": True, "count": count}
                return answer

            await step("episode.append", EpisodeAppend(project=project, episode=r.episode))
            for rule_id, ok in r.rule_outcomes.items():
                await step("evolve.observe", EvolveObserve(project=project, rule_id=rule_id, ok=ok))
            if r.candidates:
                await step("evolve.learn", EvolveLearn(
                    project=project, candidates=[c.to_dict() for c in r.candidates]))
            for w in r.rewards:
                await step("policy.update", PolicyUpdate(
                    project=project, decision=w.decision, arm=w.arm, model=rep.model,
                    language=rep.language, outcome=w.outcome))
            if "regressions" in job.done:
                steps["regressions"] = {"ok": True, "done_before": True}
            else:
                try:
                    store = self.stores.get(job.root)
                    async with self._store_lock:
                        added = await self.run_sync(self._persist, job, store)
                    steps["regressions"] = {"ok": True, "added": added}
                except (OSError, StoreError) as exc:
                    self.ctx.stats.extra["pipeline_step_errors"] += 1
                    self.warn(f"finish pipeline: REFLECTION.md / regressions not saved: {exc}")
                    steps["regressions"] = {"ok": False, "error": str(exc), "retry": True}
            if r.lessons:
                await step("lesson.add", LessonAdd(
                    project=project, lessons=[lesson.to_dict() for lesson in r.lessons],
                    run_id=rep.run_id, task=rep.query))
            if rep.run_id:
                # Outcome feedback on the do/don't lessons shown to this run (C-12, C-13): those
                # whose trigger words are in its errors backfired; the rest of a passing run's
                # were applied and held up.
                errors = run_error_text(rep)
                if errors:
                    await step("lessons.penalize", LessonsPenalize(
                        project=project, run_id=rep.run_id, error_text=errors))
                if r.success:
                    await step("lessons.boost", LessonsBoost(project=project, run_id=rep.run_id))
            if r.procedure is not None:
                await step("procedure.observe", ProcedureObserve(
                    project=project, topic=r.procedure["topic"], option=r.procedure["option"],
                    model=rep.model, language=rep.language, ok=r.procedure["ok"],
                    note=r.procedure["note"]))
            await step("metrics.record", MetricsRecord(project=project, run=r.metrics.to_dict()))
            if rep.run_id:
                await step("working.mirror", WorkingMirror(project=project, run_id=rep.run_id))
            if job.wait or self.now() - self._last_distill.get(job.root, 0.0) >= \
                    self.DISTILL_INTERVAL:
                # (With `wait`, the pass and its facts' flush are done before the reply.)
                await step("memory.distill", MemoryDistill(project=project, wait=job.wait))
                await step("memory.prune", MemoryPrune(project=project))
                self._last_distill[job.root] = self.now()
                self._distill_due.discard(job.root)
            else:
                # A burst of runs: distil once for all of them, from the timer below.
                self._distill_due.add(job.root)
                self.ctx.stats.extra["distills_deferred"] += 1
                steps["memory.distill"] = {"ok": True, "deferred": True}
            self.ctx.stats.extra["pipelines_done"] += 1
            return steps

    # ---------------------------------------------------------------- regression memory

    @handles(EvolveRegressions)
    async def regressions(self, msg: EvolveRegressions) -> dict[str, Any]:
        root = self.project_root(msg)
        store = self.stores.get(root)
        results: list[tuple[Any, CheckResult]] = []
        if msg.run:
            async with self._store_lock:
                results = await self.run_sync(self._run_offline, store, root)
        by_id = {check.id: result for check, result in results}
        checks = []
        for check in store.checks():
            row = {**check.to_dict(), "verified": check.verified}
            if not check.verified:
                row.update(command=_withheld(check.command), source=UNVERIFIED_LABEL)
            if check.id in by_id:
                row["result"] = by_id[check.id].to_dict()
            checks.append(row)
        failed = sum(1 for _c, res in results if res.status == "fail")
        return {
            "checks": checks,
            # Commands are the harness's to run, under its own permissions; never run here.
            "commands": [{"id": c.id, "command": c.command, "description": c.description}
                         for c in store.command_checks()],
            "ran": len(results),
            "passed": sum(1 for _c, res in results if res.status == "pass"),
            "failed": failed,
            "skipped": sum(1 for _c, res in results if res.status == "skipped"),
        }

    @handles(RegressionsTrust)
    async def trust(self, msg: RegressionsTrust) -> dict[str, Any]:
        """The checks a project file brought unsigned (whole, for the user to review); with
        `adopt`, take those named (or all) as the user's own and save them signed."""
        store = self.stores.get(self.project_root(msg))
        adopted: list[Any] = []
        async with self._store_lock:
            if msg.adopt:
                if self.key is None:
                    raise RequestError(ErrorCode.STORE_ERROR,
                                       "no signing key: nothing can be adopted")
                adopted = store.trust(None if msg.every else list(msg.ids))
                try:
                    await self.run_sync(store.save)
                except StoreError as exc:
                    raise RequestError(ErrorCode.STORE_ERROR, str(exc)) from exc
            pending = await self.run_sync(store.unverified)
        return {"unverified": [c.to_dict() for c in pending], "adopted": [c.id for c in adopted]}

    @staticmethod
    def _run_offline(store: RegressionStore, root: Path) -> list[tuple[Any, CheckResult]]:
        results = store.run_offline(root)
        store.save()
        return results

    @handles(EvolveReset)
    async def reset(self, msg: EvolveReset) -> dict[str, Any]:
        """Forget rules, policy, regressions and project memory together (S-11.6)."""
        root = self.project_root(msg)
        project = str(root)
        store = self.stores.get(root)
        # Runs accepted before the reset finish their pipelines first, so the reset forgets
        # what they taught instead of being re-taught by them a moment later.
        async with self._pipeline_lock, self._store_lock:
            removed = await self.run_sync(store.forget)
        self._finished = OrderedDict((k, v) for k, v in self._finished.items() if k[0] != root)
        outcome: dict[str, Any] = {"regressions": removed}
        for name, message in (
            ("rules", EvolveForget(project=project)),
            ("policy", PolicyForget(project=project)),
            ("memory", MemoryForget(project=project, scope="project")),
        ):
            try:
                outcome[name] = await self.ask(message)
            except (RequestError, ActorDead) as exc:
                outcome[name] = {"ok": False, "error": str(exc)}
        failed = [k for k, v in outcome.items() if isinstance(v, dict) and v.get("ok") is False]
        if len(failed) == 3:
            raise RequestError(ErrorCode.INTERNAL, f"reset failed for {', '.join(failed)}")
        outcome["failed"] = failed
        return outcome


def _withheld(command: str) -> str:
    """The command of an unverified check, as a listing shows it (`slmactor trust` shows it)."""
    return WITHHELD if command else ""


def _in_shared_words(report: dict[str, Any]) -> dict[str, Any]:
    """The report with each failure's arguments read by the room of its tool, in the shared
    words reflection learns in (`ToolCall.shared`): a hook's or an import's report has them so
    already (the ledger keeps them so; unchanged), a client's or the MCP server's may give a
    harness's own keys. Arguments that are no JSON object are left as sent."""
    import json

    from slmactor import harnesses
    from slmactor.harnesses.base import shared_json

    failures = report.get("failures")
    if not isinstance(failures, list):
        return report
    out = []
    for failure in failures:
        if isinstance(failure, dict) and isinstance(failure.get("tool"), str):
            failure = dict(failure)
            for key in ("failed_args", "fixed_args"):
                text = failure.get(key)
                if isinstance(text, str) and text.lstrip().startswith("{"):
                    try:
                        parsed = json.loads(text)
                    except ValueError:
                        continue
                    if isinstance(parsed, dict):
                        failure[key] = shared_json(harnesses.tool_call(failure["tool"], parsed))
        out.append(failure)
    return {**report, "failures": out}

