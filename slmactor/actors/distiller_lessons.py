"""The polar-lesson and phase-budget asks of the distiller actor (SPEC C-*).

A mixin of `DistillerActor`, the one owner of every lesson: MEMORY.md bullets and their polar,
scored form in `.slmcode/memory/lessons.jsonl` (see docs/MEMORY.md, "Polar lessons"), plus the
phase-budget history. Consumes: lessons.parse_reflection, lessons.recall, lessons.format,
lessons.boost, lessons.penalize, lessons.import, lessons.meta, budgets.record, budgets.compute.

Writes run in a worker thread, one at a time per project (the project's lesson lock, shared with
`lesson.add`), and answer beside the mailbox (`later`): a write never holds the mailbox, so a
`memory.block` asked meanwhile is served at once. A read-modify-write (boost, penalize) holds the
lock from its read to its write. While a write is in progress, readers rank the lessons as of the
last completed write (the worker thread may be changing the book). The lessons recalled into a run (`lessons.recall`/`lessons.format`/`memory.block`
with a `run_id`) are remembered, so that the reflector can, when the run finishes, penalize those
whose trigger words show up in its errors and boost the others if it passed.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slmactor.protocol import ErrorCode, Message, RequestError
from slmactor.protocol.messages import (
    BudgetsCompute,
    BudgetsRecord,
    LessonsBoost,
    LessonsFormat,
    LessonsImport,
    LessonsMeta,
    LessonsParseReflection,
    LessonsPenalize,
    LessonsRecall,
)
from slmactor.runtime.actor import Actor, Later, handles, store_failure
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.layout import ProjectLayout

if TYPE_CHECKING:  # the lesson logic and stores load with the first lessons or block ask
    from slmactor.logic.memory import polar_lessons as polar
    from slmactor.logic.memory.block_items import BlockItem
    from slmactor.logic.memory.lesson_recall import Scored
    from slmactor.logic.memory.lessons import Lesson
    from slmactor.stores.polar_lessons import PhaseBudgetStore, PolarLessonStore

#: Runs whose shown lessons are remembered for outcome feedback (oldest forgotten first).
MAX_TRACKED_RUNS = 512
MAX_LIMIT = 100
#: A block shows at most this many lessons (within the share `distiller_block` gives them).
BLOCK_LESSONS = 8
#: Up to this many lessons are ranked on the actor's loop (well under a millisecond), more in a
#: worker thread.
RECALL_ON_LOOP = 500


class PolarLessonsMixin(Actor):
    """The host provides `_project(msg)` → an object with `root`, `polar`, `budgets` and
    `lesson_lock`."""

    _project: Callable[[Message], Any]

    def _init_polar(self) -> None:
        #: (project root, run id) → keys of the lessons shown to that run, and those penalized.
        self._shown: OrderedDict[tuple[Path, str], set[str]] = OrderedDict()
        self._penalized: dict[tuple[Path, str], set[str]] = {}
        for key in ("lessons_added", "lessons_merged", "lessons_boosted", "lessons_penalized"):
            self.ctx.stats.extra[key] = 0

    # ---------------------------------------------------------------- helpers

    async def _writes_allowed(self) -> None:
        """Returns when a store write may start (the host's debug hook can hold writes)."""

    async def _store_op(self, project: Any, fn: Callable[..., Any], *args: Any) -> Any:
        async with project.lesson_lock:
            try:
                return await self.run_sync(fn, *args)
            except (StoreError, OSError) as exc:
                raise store_failure(exc) from exc

    async def _write_polar(self, project: Any, fn: Callable[..., Any], *args: Any) -> Any:
        """`_store_op` for a write: the store directories and `.gitignore` exist first."""

        def run() -> Any:
            ProjectLayout(project.root).ensure()
            return fn(*args)

        async with project.lesson_lock:
            await self._writes_allowed()
            try:
                return await self.run_sync(run)
            except (StoreError, OSError) as exc:
                raise store_failure(exc) from exc

    async def _lessons(self, project: Any) -> list[polar.PolarLesson]:
        """The lessons for a reader: current, or — while a write is in progress — as of the last
        completed one (never waiting for the write)."""
        if project.lesson_lock.locked():
            return list(project.lessons_view)
        async with project.lesson_lock:
            return await self._lessons_locked(project)

    async def _lessons_locked(self, project: Any) -> list[polar.PolarLesson]:
        """The current lessons; the caller holds the project's lesson lock."""
        store: PolarLessonStore = project.polar
        if store.stale():  # one stat; the file is read only when it changed behind our back
            try:
                await self.run_sync(store.sync)
            except (StoreError, OSError) as exc:
                raise store_failure(exc) from exc
        project.lessons_view = tuple(store.book.lessons)
        return list(project.lessons_view)

    async def _update_polar(self, project: Any, change: Callable[[list[polar.PolarLesson]],
                                                                  tuple[Any, list[str]]]) -> list[str]:
        """Read the lessons, `change` them (→ the new whole set and what changed) and write the
        set when something changed — all under the lesson lock, so no other write falls between
        the read and the write."""
        async with project.lesson_lock:
            updated, changed = change(await self._lessons_locked(project))
            if changed:
                await self._writes_allowed()
                def run() -> None:
                    ProjectLayout(project.root).ensure()
                    project.polar.replace(updated)

                try:
                    await self.run_sync(run)
                except (StoreError, OSError) as exc:
                    raise store_failure(exc) from exc
                project.lessons_view = tuple(project.polar.book.lessons)
            return changed

    async def _ranked(self, project: Any, task: str, limit: int,
                      tags: Iterable[str] = ()) -> list[Scored]:
        from slmactor.logic.memory.lesson_recall import recall

        lessons = await self._lessons(project)
        now = self.now()
        if len(lessons) <= RECALL_ON_LOOP:
            return recall(lessons, task, now, limit, tags=tags)
        # Scoring thousands of lessons takes milliseconds: off the loop the block shares.
        return list(await self.run_sync(lambda: recall(lessons, task, now, limit, tags=tags)))

    async def add_polar(self, project: Any, lessons: Sequence[polar.PolarLesson]) -> dict[str, int]:
        """Keep new lessons (merging near-duplicates); used by every ask that adds lessons."""
        if not lessons:
            return {"added": 0, "merged": 0}
        added, merged = await self._write_polar(project, project.polar.add, lessons)
        self.ctx.stats.extra["lessons_added"] += len(added)
        self.ctx.stats.extra["lessons_merged"] += merged
        return {"added": len(added), "merged": merged}

    async def add_prose_twins(self, project: Any, lessons: Iterable[Lesson], task: str) -> int:
        """The polar twins of prose lessons (`lesson.add`): one lesson family, two forms."""
        from slmactor.logic.memory import polar_lessons as polar

        now = self.now()
        twins = [t for t in (polar.from_prose(le, task, now) for le in lessons) if t]
        return (await self.add_polar(project, twins))["added"] if twins else 0

    def _remember_shown(self, root: Path, run_id: str, lessons: Iterable[polar.PolarLesson]) -> None:
        if not run_id.strip():
            return
        key = (root, run_id.strip())
        self._shown.setdefault(key, set()).update(le.key for le in lessons)
        self._shown.move_to_end(key)
        while len(self._shown) > MAX_TRACKED_RUNS:
            old, _ = self._shown.popitem(last=False)
            self._penalized.pop(old, None)

    async def _recall(self, project: Any, task: str, limit: int, tags: Iterable[str] = (),
                      run_id: str = "") -> list[Scored]:
        if limit < 0:
            raise RequestError(ErrorCode.BAD_FIELD, "limit must be 0 (default) or positive")
        hits = await self._ranked(project, task, min(limit or 10, MAX_LIMIT), tags)
        self._remember_shown(project.root, run_id, (s.lesson for s in hits))
        return hits

    async def lessons_block_items(self, project: Any, query: str, run_id: str,
                                  allowance: int) -> list[BlockItem]:
        """Do/don't lessons for the memory block, within `allowance` tokens (whole lines)."""
        from slmactor.logic.memory.lesson_recall import items_within

        if allowance <= 0:
            return []
        hits = await self._ranked(project, query, BLOCK_LESSONS)
        if not hits:
            return []
        items, shown = items_within([s.lesson for s in hits], allowance)
        self._remember_shown(project.root, run_id, shown)
        return items

    # ---------------------------------------------------------------- asks

    @handles(LessonsParseReflection)
    async def lessons_parse_reflection(self, msg: LessonsParseReflection) -> dict[str, Any] | Later:
        from slmactor.logic.memory import polar_lessons as polar
        from slmactor.stores.polar_lessons import redact_lesson

        project = self._project(msg)
        parsed = polar.parse_reflection(msg.text, self.now(), msg.tags or None, msg.source_task)
        # Answered as kept: redacted, like everything the store holds.
        shown = [redact_lesson(le).to_dict() for le in parsed]
        if not msg.save:
            return {"lessons": shown, "added": 0, "merged": 0}

        async def save() -> dict[str, Any]:
            return {"lessons": shown, **await self.add_polar(project, parsed)}

        return self.later(save())

    @handles(LessonsRecall)
    async def lessons_recall(self, msg: LessonsRecall) -> dict[str, Any]:
        from slmactor.logic.memory.lesson_tags import infer_task_tags

        project = self._project(msg)
        hits = await self._recall(project, msg.task, msg.limit, msg.tags, msg.run_id)
        return {"lessons": [_recalled(s) for s in hits],
                "task_tags": sorted(infer_task_tags(msg.task)),
                "total": len(project.polar.book)}

    @handles(LessonsFormat)
    async def lessons_format(self, msg: LessonsFormat) -> dict[str, Any]:
        from slmactor.logic.memory import polar_lessons as polar
        from slmactor.logic.memory.lesson_recall import format_for_prompt

        project = self._project(msg)
        if msg.lessons:
            now = self.now()
            given = [polar.lesson_from_record(raw, now) for raw in msg.lessons]
            lessons = [le for le in given if le is not None]
        else:
            lessons = [s.lesson for s in await self._recall(project, msg.task, msg.limit,
                                                            run_id=msg.run_id)]
        text = format_for_prompt(lessons)
        return {"text": text, "lessons": len(lessons),
                "dont": sum(1 for le in lessons if le.polarity == "dont")}

    def _triggers(self, root: Path, triggers: Sequence[str], run_id: str) -> set[str]:
        if triggers:
            return {t.strip().lower() for t in triggers if t.strip()}
        return set(self._shown.get((root, run_id.strip()), set()))

    @handles(LessonsPenalize)
    async def lessons_penalize(self, msg: LessonsPenalize) -> dict[str, Any] | Later:
        from slmactor.logic.memory import polar_lessons as polar

        project = self._project(msg)
        wanted = self._triggers(project.root, msg.triggers, msg.run_id)
        if not wanted or not msg.error_text.strip():
            return {"penalized": []}
        step = msg.max_penalty or polar.PENALTY_STEP

        async def penalize() -> dict[str, Any]:
            penalized = await self._update_polar(project, lambda lessons: polar.penalize_backfired(
                lessons, wanted, msg.error_text, step))
            if penalized:
                self.ctx.stats.extra["lessons_penalized"] += len(penalized)
                if msg.run_id.strip():
                    key = (project.root, msg.run_id.strip())
                    self._penalized.setdefault(key, set()).update(t.lower() for t in penalized)
            return {"penalized": penalized}

        return self.later(penalize())

    @handles(LessonsBoost)
    async def lessons_boost(self, msg: LessonsBoost) -> dict[str, Any] | Later:
        from slmactor.logic.memory import polar_lessons as polar

        project = self._project(msg)
        wanted = self._triggers(project.root, msg.triggers, msg.run_id)
        if not msg.triggers:
            run = (project.root, msg.run_id.strip())
            wanted -= self._penalized.pop(run, set())
            self._shown.pop(run, None)  # the run is over: a second boost for it finds nothing
        if not wanted:
            return {"boosted": []}

        async def boost() -> dict[str, Any]:
            boosted = await self._update_polar(
                project, lambda lessons: polar.boost_confidence(lessons, wanted))
            self.ctx.stats.extra["lessons_boosted"] += len(boosted)
            return {"boosted": boosted}

        return self.later(boost())

    @handles(LessonsImport)
    async def lessons_import(self, msg: LessonsImport) -> Later:
        from slmactor.logic.memory import polar_lessons as polar

        project = self._project(msg)
        now = self.now()
        lessons, bad = [], 0
        for line in msg.lines:
            lesson = polar.lesson_from_json_line(line, now)
            if lesson is None:
                bad += int(bool(line.strip()))
            else:
                lessons.append(lesson)

        async def save() -> dict[str, Any]:
            counts = await self.add_polar(project, lessons)
            return {"read": len(msg.lines), "bad": bad, **counts, "total": len(project.polar.book)}

        return self.later(save())

    @handles(LessonsMeta)
    async def lessons_meta(self, msg: LessonsMeta) -> dict[str, Any] | Later:
        from slmactor.logic.memory import polar_lessons as polar

        project = self._project(msg)
        lesson = polar.meta_lesson(msg.weakness_id, msg.target_file, msg.delta, msg.iteration,
                                   msg.commit, msg.reason, self.now())
        if lesson is None:
            return {"recorded": False, "added": 0, "merged": 0}

        async def save() -> dict[str, Any]:
            return {"recorded": True, **await self.add_polar(project, [lesson])}

        return self.later(save())

    # ---------------------------------------------------------------- phase budgets

    @handles(BudgetsRecord)
    async def budgets_record(self, msg: BudgetsRecord) -> Later:
        from slmactor.logic.memory.budgets import PhaseOutcome, phase_name
        from slmactor.logic.memory.lesson_tags import infer_task_tags, normalize_tags

        project = self._project(msg)
        if not phase_name(msg.phase):
            raise RequestError(ErrorCode.BAD_FIELD, "budgets.record needs a phase")
        if msg.rounds < 0 or msg.n_files < 0:
            raise RequestError(ErrorCode.BAD_FIELD, "rounds and n_files must not be negative")
        tags = normalize_tags(msg.tags) or sorted(infer_task_tags(msg.task))
        row = PhaseOutcome(self.now(), phase_name(msg.phase), msg.rounds, msg.n_files, tuple(tags))

        async def save() -> dict[str, Any]:
            await self._write_polar(project, project.budgets.record, row)
            return {"recorded": True, "row": row.to_dict()}

        return self.later(save())

    @handles(BudgetsCompute)
    async def budgets_compute(self, msg: BudgetsCompute) -> dict[str, Any]:
        from slmactor.logic.memory.budgets import compute_budgets
        from slmactor.logic.memory.lesson_tags import infer_task_tags, normalize_tags

        project = self._project(msg)
        defaults: dict[str, int] | None = None
        if msg.defaults:
            defaults = {}
            for name, value in msg.defaults.items():
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise RequestError(ErrorCode.BAD_FIELD,
                                       f"defaults[{name!r}] must be a non-negative integer")
                defaults[name] = value
        store: PhaseBudgetStore = project.budgets

        def rows() -> list[Any]:  # under the lock: a `budgets.record` may be appending
            store.sync()
            return list(store.rows)

        history = await self._store_op(project, rows)
        tags = normalize_tags(msg.tags) or sorted(infer_task_tags(msg.task))
        budgets, stats = compute_budgets(history, tags, defaults)
        return {"budgets": budgets, "task_tags": tags,
                "history": {phase: s.to_dict() for phase, s in stats.items()}}


def _recalled(scored: Scored) -> dict[str, Any]:
    """A recalled lesson as the reply carries it: one a repository brought unsigned is marked,
    its texts quoted with their commands withheld (`slmactor trust` shows it whole)."""
    from slmactor.logic.text.trust import untrusted_record

    record = scored.to_dict()
    return record if scored.lesson.verified else untrusted_record(record)
