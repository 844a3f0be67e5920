"""The distiller actor: semantic facts, lessons, procedural memory and the memory block.

Owns: per project `.slmcode/memory/facts.json` + `SEMANTIC.md`, `.slmcode/MEMORY.md`, the polar
lessons `.slmcode/memory/lessons.jsonl` and `phase_budgets.jsonl`; per user
`~/.slmcode/memory/procedures.json` + `PROCEDURES.md`, `latency.json` + `LATENCY.md` and the global
`~/.slmcode/MEMORY.md`.
Consumes: memory.block, memory.lines, memory.retire, fact.observe, fact.refute, fact.list, lesson.add, lessons.render,
procedure.observe, procedure.best, latency.observe, memory.distill, memory.prune, memory.forget,
and (in `distiller_lessons.py`) lessons.parse_reflection/recall/format/boost/penalize/import/meta,
budgets.record, budgets.compute.
Emits (asks): working.render and memory.recall (sections of the block), episode.recent (input of
distillation), episode.prune, episode.forget and run.reset (prune / forget fan-out).

The `memory.block` ask lives in `distiller_block.py`, the polar lessons in `distiller_lessons.py`
(mixins of this actor).

Slow work never blocks an ask: distillation (S-5) is a background job (one per project, passes
at least `distill_interval` apart; requests meanwhile are coalesced into the next pass) that
fetches the newest 120 episodes it does not already hold one by one and counts them in small
steps, pausing after each; every store is flushed by a background job that snapshots on the loop
and writes in a thread. Before touching a store the actor checks whether its file was edited or
removed by hand (`MirroredBook.sync`), so `rm -rf .slmcode/memory` forgets and the next write
recreates the files.

Forgetting `project` also removes the mirrors `WORKING.md` and `REFLECTION.md`, which no actor
holds state in (they are regenerated views of other actors' state).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from slmactor.logic.memory.lessons import Lesson, recent_adaptive_memory_for, record_facts
from slmactor.logic.memory.procedures import ProcedureKey, fold_family
from slmactor.logic.text.redact import redact
from slmactor.logic.text.timefmt import to_rfc3339
from slmactor.logic.text.trust import untrusted_record
from slmactor.protocol import ErrorCode, Message, RequestError
from slmactor.protocol.messages import (
    DebugCrash,
    EpisodeForget,
    EpisodeGet,
    EpisodePrune,
    EpisodeRecent,
    FactList,
    FactObserve,
    FactRefute,
    FactTrust,
    GraphForget,
    LatencyObserve,
    LatencySeed,
    LessonAdd,
    LessonsRender,
    MemoryDistill,
    MemoryForget,
    MemoryPrune,
    ProcedureBest,
    ProcedureObserve,
    RunReset,
)
from slmactor.runtime.actor import ActorDead, Later, handles, store_failure
from slmactor.runtime.projects import ProjectCache
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.fsutil import remove_temps_in
from slmactor.stores.base.layout import ProjectLayout, UserLayout
from slmactor.stores.base.signing import signing_key
from slmactor.stores.base.watched import MirroredBook, remove_file
from slmactor.stores.lessons import LessonStore, global_read_paths
from slmactor.stores.procedures import LatencyStore, ProcedureStore

from .acks import FlushAcks
from .distiller_block import MemoryBlockMixin
from .distiller_claims import ClaimsMixin
from .distiller_lessons import PolarLessonsMixin
from .distiller_lines import BlockLinesMixin

if TYPE_CHECKING:  # distillation and the project stores load with a project's first ask
    from slmactor.logic.memory import distill as distill_logic
    from slmactor.logic.memory.facts import Observation
    from slmactor.stores.facts import FactStore
    from slmactor.stores.polar_lessons import PhaseBudgetStore, PolarLessonStore

SCOPES = ("working", "episodic", "episodes", "semantic", "facts", "procedural", "project", "all")
#: The name a debug `hold_writes` is released by (`DebugCrash(actor=WRITES_HOLD, how="release")`).
WRITES_HOLD = "distiller.writes"


@dataclass(slots=True)
class _Project:
    root: Path
    facts: FactStore
    lessons: LessonStore
    polar: PolarLessonStore
    budgets: PhaseBudgetStore
    distilling: bool = False
    again: bool = False
    idle: anyio.Event = field(default_factory=anyio.Event)
    #: Bumped by every forget, so a distill pass that read the episodes before it is dropped.
    generation: int = 0
    #: Episode ids of the last distilled window (a pass over the same window is skipped).
    window: tuple[str, ...] = ()
    last: dict[str, Any] = field(default_factory=dict)
    lesson_lock: anyio.Lock = field(default_factory=anyio.Lock)
    #: The polar lessons as of the last completed read or write (what readers rank while a
    #: write in a worker thread may be changing the book).
    lessons_view: tuple[Any, ...] = ()
    #: Whole episodes fetched by earlier passes, by id (only ids of the last window are kept).
    episodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Paths the runs of the last pass's window deleted and wrote (what a claim check reads).
    paths: Any = None
    #: When the last pass started (monotonic seconds), and a caller waiting for the next one.
    last_pass: float = -math.inf
    hurry: anyio.Event = field(default_factory=anyio.Event)


class DistillerActor(PolarLessonsMixin, BlockLinesMixin, ClaimsMixin, MemoryBlockMixin):
    name = "distiller"
    #: Shortest pause after a step of a distill pass (an episode lookup, a chunk of counting or
    #: of folding facts; see `_breathe`) ...
    FETCH_PACE_S = 0.002
    #: ... and the pause in multiples of the step's own time: the pass takes at most 1/(1+6) of
    #: the wall clock, less when asks make its steps slow (a busy loop slows the pass, not asks).
    FETCH_DUTY = 6.0
    #: Episodes counted, or observations folded, per step.
    COUNT_CHUNK = 16
    #: How long stopping waits for background flushes before writing what is left.
    STOP_FLUSH_WAIT_S = 2.0
    #: How often stores whose flush failed are written again.
    RETRY_UNSAVED_S = 2.0
    #: Asks that may wait for their write beside the mailbox at once (see `_reply_when_saved`).
    MAX_WAITING_WRITES = 4096
    #: Least time from one write of a store to the next while changes keep coming (a group
    #: commit): a change made while no write runs is written at once (one client observing one
    #: fact after another waits for its own write only), but changes made during a write wait
    #: until this long after it started, and one write covers them all. Written back to back,
    #: the facts kept a core busy re-encoding the same document under 50 writing clients, and
    #: took the event loop's turns from the asks a prompt waits on.
    FLUSH_GAP_S = 0.05

    async def on_start(self) -> None:
        self.warnings = self.store_warnings()
        self.user = UserLayout(self.ctx.settings.home)
        for directory in self.user.directories():  # what crashes left in the user store
            remove_temps_in(directory, self.now())
        signing, fault = await self.run_sync(signing_key, self.ctx.settings.home)
        self.memory_key: bytes | None = signing
        if fault:
            self.warn(fault)
        self.procedures = ProcedureStore.for_user(self.user, self.warnings, now=self.now)
        self.latency = LatencyStore.for_user(self.user, self.warnings, now=self.now)
        self.projects: ProjectCache[_Project] = ProjectCache(
            self._open, self._close, self.ctx.settings.max_open_projects
        )
        self._flushing: set[int] = set()
        self.acks = FlushAcks()
        self._flushed = anyio.Event()  # set whenever no background flush is running
        self._flushed.set()
        self._forgetting = anyio.Lock()  # one forget fan-out at a time
        #: Debug hook (`how="hold_writes"`): store writes wait for this event's release.
        self._writes_held: anyio.Event | None = None
        #: Asks answered once their write is done, waiting beside the mailbox now.
        self._waiting_writes = 0
        for key in ("distills", "distill_facts", "distill_fetched", "blocks", "flush_errors"):
            self.ctx.stats.extra[key] = 0
        self._init_polar()

    async def on_stop(self) -> None:
        # Let running background flushes finish first: two writers of one file could land the
        # older snapshot last.
        await self._settle()
        stores: list[MirroredBook[Any]] = [self.procedures, self.latency]
        stores += [p.facts for _, p in self.projects.items()]
        for store in stores:
            try:
                await self.run_sync(store.flush)
            except StoreError as exc:
                self.warn(f"flush on stop failed: {exc}")

    def loops(self) -> list[Callable[[], Coroutine[Any, Any, None]]]:
        return [self._retry_unsaved]

    def _open(self, root: Path) -> _Project:
        from slmactor.stores.facts import FactStore
        from slmactor.stores.polar_lessons import PhaseBudgetStore, PolarLessonStore

        layout = ProjectLayout(root)
        return _Project(
            root,
            FactStore.for_project(layout, self.warnings, now=self.now, key=self.memory_key),
            LessonStore(
                layout.memory_md,
                self.user.memory_md,
                global_read_paths(self.ctx.settings.home),
                self.warnings,
                now=self.now,
                signing_key=self.memory_key,
            ),
            PolarLessonStore(layout.lessons, self.warnings, now=self.now, key=self.memory_key),
            PhaseBudgetStore(layout.phase_budgets, self.warnings, now=self.now),
        )

    def _close(self, project: _Project) -> None:
        if id(project.facts) in self._flushing:
            return  # its background flush holds the store and writes what is left
        try:
            project.facts.flush()
        except StoreError as exc:
            self.warn(f"flush of {project.root} failed: {exc}")
            return  # its ledger keeps it for the retries
        self.acks.forget(project.facts)

    def _project(self, msg: Message) -> _Project:
        project = self.projects.get(self.project_root(msg))
        if project.facts.sync() and len(project.facts.book) == 0:
            project.window = ()  # facts removed by hand: distil the episodes afresh
        return project

    # ---------------------------------------------------------------- flushing

    async def _on_debug_crash(self, msg: DebugCrash) -> Any:
        """The actor's debug hooks plus `how="hold_writes"`: every store write waits (memory
        keeps changing) until `DebugCrash(actor="distiller.writes", how="release")` — so a test
        can show what is served while writes are slow."""
        if msg.how != "hold_writes":
            return await super()._on_debug_crash(msg)
        self._writes_held = self.ctx.daemon.stall_event(WRITES_HOLD)
        return {"holding": WRITES_HOLD}

    async def _writes_allowed(self) -> None:
        held = self._writes_held
        if held is not None:
            await held.wait()
            if self._writes_held is held:
                self._writes_held = None
                self.ctx.daemon.stalls.pop(WRITES_HOLD, None)

    def _changed(self, store: MirroredBook[Any], root: Path | None = None) -> int:
        """Mark `store` changed and make sure a background flush will write it; the change's
        ticket, for an ask to wait on (`_saved`)."""
        store.touch()
        ticket = self.acks.changed(store, root)
        self._start_flush(store, root)
        return ticket

    async def _saved(self, store: MirroredBook[Any], ticket: int) -> None:
        """Acknowledged = written: wait for the flush covering `ticket`; raises
        RequestError(STORE_ERROR) when it failed."""
        await self.acks.wait(store, ticket)

    async def _reply_when_saved(self, store: MirroredBook[Any], root: Path | None,
                                result: dict[str, Any]) -> dict[str, Any] | Later:
        """Answer `result` once the change just made to `store` is written, waiting beside the
        mailbox: the change is in memory already (every later read sees it), and the next
        message — a `memory.block` a prompt waits on — is served now, not after the flush.

        Past MAX_WAITING_WRITES such waits (a disk that stopped answering) the wait holds the
        mailbox again, so the inbox fills and callers get BUSY instead of piling up."""
        ticket = self._changed(store, root)
        if self._waiting_writes >= self.MAX_WAITING_WRITES:
            await self._saved(store, ticket)
            return result
        self._waiting_writes += 1
        return self.later(self._when_saved(store, ticket, result))

    async def _when_saved(self, store: MirroredBook[Any], ticket: int,
                          result: dict[str, Any]) -> dict[str, Any]:
        try:
            await self._saved(store, ticket)
        finally:
            self._waiting_writes -= 1
        return result

    def _start_flush(self, store: MirroredBook[Any], root: Path | None) -> None:
        if id(store) in self._flushing:
            return
        self._flushing.add(id(store))
        if self._flushed.is_set():
            self._flushed = anyio.Event()
        self.spawn(lambda: self._flush_job(store, root), "flush")

    async def _retry_unsaved(self) -> None:
        """Write again, every few seconds, the stores whose flush failed (a full disk that got
        space back, a directory made writable again)."""
        while True:
            await anyio.sleep(self.RETRY_UNSAVED_S)
            for store, root in self.acks.retry_due():
                self._start_flush(store, root)

    async def _flush_job(self, store: MirroredBook[Any], root: Path | None) -> None:
        try:
            last_write: float | None = None
            while True:
                if last_write is not None:
                    if not store.dirty:
                        return  # nothing came in during the write: the next change goes at once
                    wait = last_write + self.FLUSH_GAP_S - time.monotonic()
                    if wait > 0:
                        await anyio.sleep(wait)
                generation = self.acks.generation(store)
                await self._writes_allowed()
                snapshot = store.snapshot(self.now())
                if snapshot is None:
                    self.acks.wrote(store, generation)
                    return
                last_write = time.monotonic()
                try:
                    await self.run_sync(self._write, store, snapshot, root)
                except (StoreError, OSError) as exc:
                    store.dirty = True  # retried with the next change and by _retry_unsaved
                    self.ctx.stats.extra["flush_errors"] += 1
                    self.warn(f"memory not saved: {exc}")
                    self.acks.failed(store, str(exc))
                    return
                self.acks.wrote(store, generation)
        finally:
            self._flushing.discard(id(store))
            if not self._flushing:
                self._flushed.set()

    async def _settle(self) -> None:
        """Wait (bounded) until no background flush is writing."""
        if self._flushing:
            with anyio.move_on_after(self.STOP_FLUSH_WAIT_S):
                await self._flushed.wait()

    @staticmethod
    def _write(store: MirroredBook[Any], snapshot: Any, root: Path | None) -> None:
        if root is not None:
            ProjectLayout(root).ensure()  # directories + .gitignore (H-S-12) on first write
        store.write(snapshot)

    # ---------------------------------------------------------------- facts

    @handles(FactObserve)
    async def fact_observe(self, msg: FactObserve) -> dict[str, Any] | Later:
        project = self._project(msg)
        # Redacted before it can reach a prompt, not only before it reaches the disk.
        text, subject = redact(msg.text), redact(msg.subject)
        fact = project.facts.book.observe(msg.kind, subject, text, self.now(), msg.sources)
        if fact is None:
            raise RequestError(ErrorCode.BAD_FIELD, "fact.observe needs a subject and a text")
        return await self._reply_when_saved(project.facts, project.root,
                                      {"recorded": True, "fact": fact.to_dict()})

    @handles(FactRefute)
    async def fact_refute(self, msg: FactRefute) -> dict[str, Any] | Later:
        project = self._project(msg)
        refuted = project.facts.book.refute(msg.kind, msg.subject, self.now())
        fact = project.facts.book.get(msg.kind, msg.subject)
        result = {"refuted": refuted, "fact": fact.to_dict() if fact else None}
        if not refuted:
            return result
        return await self._reply_when_saved(project.facts, project.root, result)

    @handles(FactList)
    async def fact_list(self, msg: FactList) -> dict[str, Any]:
        project = self._project(msg)
        now = self.now()
        facts = project.facts.book.ranked(now, msg.kind)
        # A fact a repository brought unsigned: marked, its texts quoted with their commands
        # withheld (`fact.trust` lists it whole, for the user to review).
        return {"facts": [{**f.to_dict(), "score": round(f.score(now), 6), "verified": True}
                          if f.verified else
                          {**untrusted_record(f.to_dict()), "score": round(f.score(now), 6)}
                          for f in facts]}

    @handles(FactTrust)
    async def fact_trust(self, msg: FactTrust) -> dict[str, Any]:
        """The facts a project file brought unsigned (whole, for the user to review); with
        `adopt`, take those named (or all) as the user's own and save them signed."""
        project = self._project(msg)
        book = project.facts.book
        ids = None if msg.every else msg.ids
        adopted: list[Any] = []
        lessons: list[Any] = []
        lines: list[str] = []
        if msg.adopt:
            if self.memory_key is None:
                raise RequestError(ErrorCode.STORE_ERROR, "no signing key: nothing can be adopted")
            adopted = book.adopt(ids)
            if adopted:
                await self._saved(project.facts, self._changed(project.facts, project.root))
            lessons = await self._write_polar(project, project.polar.trust, ids)
            async with project.lesson_lock:  # MEMORY.md: one writer at a time
                try:
                    lines = await self.run_sync(project.lessons.adopt,
                                                None if ids is None else set(ids))
                except StoreError as exc:
                    raise RequestError(ErrorCode.STORE_ERROR, str(exc)) from exc
        pending = await self._store_op(project, project.polar.unverified)
        foreign = await self.run_sync(project.lessons.foreign)
        return {"unverified": [f.to_dict() for f in book.unverified()],
                "adopted": [f.id for f in adopted],
                # The project's do/don't lessons (lessons.jsonl), by the same rule.
                "lessons": {"unverified": [{"id": le.id, **le.to_dict()} for le in pending],
                            "adopted": [le.id for le in lessons]},
                # ... and the lines of MEMORY.md this user's key did not sign.
                "memory_md": {"unverified": [{"id": i, "text": t} for i, t in foreign],
                              "adopted": lines}}

    # ---------------------------------------------------------------- lessons

    @handles(LessonAdd)
    async def lesson_add(self, msg: LessonAdd) -> Later:
        scope = msg.scope.strip().lower() or "project"
        if scope not in ("project", "global"):
            raise RequestError(ErrorCode.BAD_FIELD, f"lesson.add: unknown scope {msg.scope!r}")
        project = self._project(msg)
        at = to_rfc3339(self.now())
        lessons = [Lesson.from_dict(raw, at) for raw in msg.lessons if isinstance(raw, dict)]
        lessons = [le for le in lessons if le.text.strip()]
        # The writes (MEMORY.md, the facts, the polar twins) run beside the mailbox.
        return self.later(self._add_lessons(project, scope, lessons, msg))

    async def _add_lessons(self, project: _Project, scope: str, lessons: list[Lesson],
                           msg: LessonAdd) -> dict[str, Any]:
        async with project.lesson_lock:  # one append at a time: a new file gets one header
            try:
                if scope == "global":
                    title = f"Run {msg.run_id}" if msg.run_id.strip() else "Lessons"
                    written = await self.run_sync(project.lessons.add_global, title, lessons)
                else:
                    written = await self.run_sync(project.lessons.add_project, lessons)
            except StoreError as exc:
                raise store_failure(exc) from exc
        facts = polar = 0
        if scope == "project" and written:
            facts = record_facts(project.facts.book, written, msg.run_id, self.now())
            await self._saved(project.facts, self._changed(project.facts, project.root))
            polar = await self.add_prose_twins(project, written, msg.task)
        return {"added": len(written), "facts": facts, "polar": polar, "scope": scope}

    @handles(LessonsRender)
    async def lessons_render(self, msg: LessonsRender) -> dict[str, Any]:
        project = self._project(msg)
        async with project.lesson_lock:  # a `lesson.add` beside the mailbox may be appending
            local, glob = await self.run_sync(_read_lessons, project.lessons)
        text = recent_adaptive_memory_for(msg.query, local, glob, self.now(), msg.max_bytes,
                                          key=self.memory_key)
        return {"text": text, "lines": len(text.splitlines())}

    # ---------------------------------------------------------------- procedural + latency

    @handles(ProcedureObserve)
    async def procedure_observe(self, msg: ProcedureObserve) -> dict[str, Any] | Later:
        self.procedures.sync()
        key = ProcedureKey.of(msg.topic, msg.option, fold_family("", msg.model), msg.language)
        proc = self.procedures.book.record(key, msg.ok, self.now(), msg.note)
        if proc is None:
            raise RequestError(ErrorCode.BAD_FIELD, "procedure.observe needs a topic and an option")
        return await self._reply_when_saved(self.procedures, None, {
            "recorded": True, "procedure": {**proc.to_dict(), "rate": round(proc.rate, 6)}})

    @handles(ProcedureBest)
    async def procedure_best(self, msg: ProcedureBest) -> dict[str, Any]:
        self.procedures.sync()
        family = fold_family("", msg.model)
        best = self.procedures.book.best(msg.topic, family, msg.language)
        ranked = self.procedures.book.rank(msg.topic, family, msg.language)
        return {
            "best": {**best.to_dict(), "rate": round(best.rate, 6)} if best else None,
            "option": best.key.option if best else "",
            "ranked": [{**p.to_dict(), "rate": round(p.rate, 6)} for p in ranked],
        }

    @handles(LatencyObserve)
    async def latency_observe(self, msg: LatencyObserve) -> dict[str, Any] | Later:
        self.latency.sync()
        family = fold_family("", msg.model)
        rec = self.latency.book.observe(msg.role, family, msg.ms, self.now())
        if rec is None:
            return {"recorded": False}
        p95, n = self.latency.book.p95(msg.role, family)
        return await self._reply_when_saved(self.latency, None, {
            "recorded": True, "samples": n, "p95_ms": p95, "count": rec.count})

    @handles(LatencySeed)
    async def latency_seed(self, msg: LatencySeed) -> dict[str, Any] | Later:
        self.latency.sync()
        family = fold_family("", msg.model)
        now = self.now()
        seeded = sorted(
            role
            for role, ms in msg.seeds.items()
            if isinstance(ms, int | float) and not isinstance(ms, bool)
            and self.latency.book.seed(role, family, float(ms), now)
        )
        result = {"seeded": seeded, "model_family": family}
        if not seeded:
            return result
        return await self._reply_when_saved(self.latency, None, result)

    # ---------------------------------------------------------------- distill, prune, forget

    @handles(MemoryDistill)
    async def distill(self, msg: MemoryDistill) -> dict[str, Any]:
        project = self._project(msg)
        started = not project.distilling
        if msg.wait:
            project.hurry.set()  # a caller waits: no pause before the pass
        if started:
            project.distilling = True
            project.idle = anyio.Event()
            self.spawn(lambda: self._distill_job(project), "distill")
        else:
            project.again = True  # coalesced: one more pass after the running one
        if not msg.wait:
            return {"started": started, "queued": not started}
        await project.idle.wait()
        # Acknowledged means done: the facts the pass recorded are on disk before the reply.
        await self._saved(project.facts, self.acks.generation(project.facts))
        return {"started": started, "queued": not started, **project.last}

    async def _distill_job(self, project: _Project) -> None:
        from slmactor.logic.memory import distill as distill_logic

        try:
            while True:
                # Background passes of a project start `distill_interval` apart, however often
                # they are asked for: the asks of that time are counted by the next pass, and a
                # client asking without pause cannot keep the daemon distilling. A caller that
                # waits (`wait=true`) is served at once.
                due = project.last_pass + self.ctx.settings.distill_interval - time.monotonic()
                if due > 0 and not project.hurry.is_set():
                    with anyio.move_on_after(due):
                        await project.hurry.wait()
                project.hurry = anyio.Event()
                project.last_pass = time.monotonic()
                project.again = False
                generation = project.generation
                window = await self._window(project.root)
                if window and window == project.window:
                    # Same episodes as the last pass: observing them again would only inflate
                    # every fact's support (confidence must count evidence, not passes).
                    project.last = {"episodes": len(window), "facts": 0, "unchanged": True}
                else:
                    tally = distill_logic.Tally()
                    fetched = await self._hydrate(project, window, tally)
                    observations = tally.observations()
                    if project.generation != generation:
                        observations = []  # memory was forgotten meanwhile: do not resurrect it
                        project.episodes.clear()
                    else:
                        project.window = window
                        project.paths = tally.paths
                    project.facts.sync()
                    recorded = await self._observe(project, observations, generation)
                    if project.generation == generation:
                        await self._retire_failing_lessons(project)
                    project.last = {"episodes": tally.seen, "facts": recorded, "fetched": fetched}
                    self.ctx.stats.extra["distills"] += 1
                    self.ctx.stats.extra["distill_fetched"] += fetched
                    self.ctx.stats.extra["distill_facts"] += recorded
                    if recorded:
                        self._changed(project.facts, project.root)
                if not project.again:
                    return
        except (RequestError, ActorDead) as exc:
            # The episodes could not be read (recall restarting, project gone): say so to a
            # waiting caller and in `status`; the next pass tries again.
            project.last = {"episodes": 0, "facts": 0, "error": str(exc)}
            raise
        finally:
            project.distilling = False
            project.idle.set()

    async def _retire_failing_lessons(self, project: _Project) -> None:
        """Take out of MEMORY.md this daemon's bullets whose claim fails now (a fix in a folder
        a later run deleted, a file the project no longer has), each kept in `retired.json`
        with the reason: the file holds only what its checks pass."""
        async with project.lesson_lock:
            try:
                markdown = await self.run_sync(project.lessons.read_project)
                failing = [(line, verdict) for line, _claim, verdict
                           in self.lesson_verdicts(project, markdown) if not verdict.passes]
                if failing:
                    await self._retire(project, (), failing)
            except (StoreError, OSError) as exc:
                self.ctx.stats.record_error(f"memory.md claims: {exc}")

    async def _observe(self, project: _Project, observations: list[Observation],
                       generation: int) -> int:
        """Fold a pass's observations into the facts in chunks, yielding the loop between them
        (a hundred observations take 1–2 ms); a forget meanwhile stops the fold."""
        recorded = 0
        for start in range(0, len(observations), self.COUNT_CHUNK):
            if project.generation != generation:
                break
            chunk_started = time.perf_counter()
            chunk = observations[start:start + self.COUNT_CHUNK]
            recorded += project.facts.book.observe_all(chunk, self.now())
            await self._breathe(chunk_started)
        return recorded

    async def _breathe(self, started: float) -> None:
        """Pause after a step of a distill pass that began at `started` (perf_counter).

        The pass shares the event loop with the asks harnesses wait on. A bare yield is not
        enough: an ask takes ten or so loop turns (front door, mailboxes, the recall it makes)
        and would meet a step of the pass at each of them. Sleeping several times the step's
        own length keeps the pass to a small share of the loop whatever the steps cost.
        """
        await anyio.sleep(max(self.FETCH_PACE_S, (time.perf_counter() - started) * self.FETCH_DUTY))

    async def _window(self, root: Path) -> tuple[str, ...]:
        """Ids of the newest 120 episodes, newest first."""
        from slmactor.logic.memory import distill as distill_logic

        reply = await self.ask(EpisodeRecent(project=str(root), n=distill_logic.WINDOW, ids_only=True))
        ids = reply.get("ids") if isinstance(reply, dict) else None
        return tuple(i for i in ids if isinstance(i, str) and i) if isinstance(ids, list) else ()

    async def _hydrate(self, project: _Project, ids: tuple[str, ...], tally: distill_logic.Tally) -> int:
        """Count the whole episodes for `ids`, in order, into `tally`; how many were fetched.

        `episode.recent` answers index entries (no commands, failure details or edit counts), so
        each episode the cache lacks is fetched with `episode.get`: one at a time, so a recall
        asked meanwhile waits behind one lookup at most, with a pause after each that grows with
        the lookup's own time. Episodes never change once recorded, so the cache keeps the
        window's episodes for the next pass (`Settings.distill_cache`); after one more run
        finished, a pass fetches one episode and counts the rest from memory.
        """
        cache = project.episodes
        window = set(ids)
        for stale in [key for key in cache if key not in window]:
            del cache[stale]  # left the window: the newest 120 never come back into it
        cap = max(0, self.ctx.settings.distill_cache)
        fetched = 0
        counted = 0
        chunk_started = time.perf_counter()
        for episode_id in ids:
            full = cache.get(episode_id)
            if full is None:
                started = time.perf_counter()
                try:
                    reply = await self.ask(EpisodeGet(project=str(project.root), episode_id=episode_id))
                except RequestError:
                    continue  # pruned or forgotten meanwhile
                fetched += 1
                if not isinstance(reply, dict):
                    continue
                full = reply
                if len(cache) < cap:
                    cache[episode_id] = full
                await self._breathe(started)
                chunk_started = time.perf_counter()
            if full.get("verified") is False:
                continue  # a repository's episode: nothing is learned from it until adopted
            tally.add(full)
            counted += 1
            if counted % self.COUNT_CHUNK == 0:
                await self._breathe(chunk_started)
                chunk_started = time.perf_counter()
        return fetched

    @handles(MemoryPrune)
    async def prune(self, msg: MemoryPrune) -> dict[str, Any]:
        project = self._project(msg)
        self.procedures.sync()
        self.latency.sync()
        now = self.now()
        report = {
            "facts_removed": project.facts.book.prune(now),
            "procedures_removed": self.procedures.book.prune(now),
            "latency_removed": self.latency.book.prune(now),
            "lessons_removed": await self._store_op(project, project.polar.prune),
        }
        tickets = [(store, self._changed(store, project.root if store is project.facts else None))
                   for store, removed in ((project.facts, report["facts_removed"]),
                                          (self.procedures, report["procedures_removed"]),
                                          (self.latency, report["latency_removed"]))
                   if removed]
        for store, ticket in tickets:  # acknowledged means done: the prune is on disk
            await self._saved(store, ticket)
        episodes = await self._quiet_ask(EpisodePrune(project=str(project.root)))
        report["episodes_removed"] = _removed_count(episodes)
        return report

    @handles(MemoryForget)
    async def forget(self, msg: MemoryForget) -> Later:
        scope = msg.scope.strip().lower()
        if scope not in SCOPES:
            raise RequestError(ErrorCode.BAD_FIELD, f"memory: unknown scope {msg.scope}")
        project = self._project(msg)
        project.generation += 1
        project.window = ()
        project.episodes.clear()
        # The fan-out asks the graph, which asks this actor (fact.list) during a backfill: it
        # runs beside the mailbox, or the two would each hold their mailbox for the other.
        return self.later(self._forget(project, scope, msg))

    async def _forget(self, project: _Project, scope: str, msg: MemoryForget) -> dict[str, Any]:
        async with self._forgetting:
            return await self._forget_scope(project, scope, msg)

    async def _forget_scope(self, project: _Project, scope: str, msg: MemoryForget) -> dict[str, Any]:
        """Forget `scope`; the reply names each part forgotten and what it held (`removed`:
        part → how many records, or files for the mirrors), so a caller can say exactly what
        went."""
        await self._settle()  # a flush landing after the delete would write the memory back
        root = str(project.root)
        done: list[str] = []
        removed: dict[str, int] = {}
        errors: dict[str, str] = {}

        async def other(name: str, message: Message, key: str) -> None:
            try:
                reply = await self.ask(message)
                done.append(name)
                value = reply.get(key, 0) if isinstance(reply, dict) else 0
                removed[name] = value if isinstance(value, int) and not isinstance(value, bool) else 0
            except (RequestError, ActorDead) as exc:
                errors[name] = str(exc)

        async def mine(name: str, size: Callable[[], int], forget: Callable[[], Any]) -> None:
            before = size()
            try:
                await forget()
            except (RequestError, StoreError, OSError) as exc:
                errors[name] = str(exc)
                return
            done.append(name)
            removed[name] = before

        if scope in ("working", "project", "all"):
            # One run when named, else every run of the project (`*`).
            await other("working", RunReset(project=root, run_id=msg.run_id.strip() or "*"), "runs")
        if scope in ("episodic", "episodes", "project", "all"):
            await other("episodic", EpisodeForget(project=root), "episodes_removed")
            # The graph's edges name the episodes' files and failures: forgetting the episodes
            # forgets what was learned from them (a backfill rebuilds it from what is left).
            await other("graph", GraphForget(project=root), "removed")
        if scope in ("semantic", "facts", "project", "all"):
            await mine("semantic", lambda: len(project.facts.book),
                       lambda: self.run_sync(project.facts.forget))
        if scope in ("project", "all"):
            layout = ProjectLayout(project.root)
            removed["mirrors"] = await self.run_sync(
                _remove_present, (layout.working_md, layout.reflection_md))
            done.append("mirrors")

            async def lessons() -> None:
                await self._store_op(project, project.polar.forget)
                await self._store_op(project, project.budgets.forget)

            await mine("lessons", lambda: len(project.polar.book), lessons)
            # The bullets this user's daemon wrote into MEMORY.md (the project's; with `all` the
            # user's global one too): a mirror of lessons just forgotten would bring them back.
            count: list[int] = []

            async def memory_md() -> None:
                count.append(await self._store_op(
                    project, partial(project.lessons.forget_own, global_too=scope == "all")))

            await mine("memory_md", lambda: 0, memory_md)
            if count:
                removed["memory_md"] = count[0]
        if scope in ("procedural", "all"):
            await mine("procedural", lambda: len(self.procedures.book) + len(self.latency.book),
                       self._forget_procedural)
        return {"ok": not errors, "scope": scope, "forgotten": done, "removed": removed,
                "errors": errors}

    async def _forget_procedural(self) -> None:
        await self.run_sync(self.procedures.forget)
        await self.run_sync(self.latency.forget)


def _remove_present(paths: tuple[Path, ...]) -> int:
    """Remove the files that exist; how many there were."""
    present = [path for path in paths if os.path.lexists(path)]
    for path in present:
        remove_file(path)
    return len(present)


def _read_lessons(lessons: LessonStore) -> tuple[str, str]:
    return lessons.read_project(), lessons.read_global()


def _removed_count(reply: object) -> int:
    if isinstance(reply, dict):
        for key in ("removed", "episodes_removed", "pruned"):
            value = reply.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return 0
