"""The project's polar lessons and phase-budget history: two JSONL files in the seed's format.

* `.slmcode/memory/lessons.jsonl` — one `PolarLesson` per line (`{ts, type, trigger, fix,
  confidence, used, polarity, tags, source_task}`), so `jq`/`grep` and the seed's one-liners work
  and an existing `memory.jsonl` reads as is;
* `.slmcode/memory/phase_budgets.jsonl` — one `{ts, phase, rounds, n_files, tags}` per line.

Single writer (the distiller actor, one operation at a time). A new lesson is one appended line
(one `write`); a merge, boost, penalty or prune rewrites the file atomically. Every text field is
redacted before it is kept in memory *and* before it is written — the appends and the rewrites
alike (the seed redacted appends only: H-C-2, H-C-8). Both files are capped: past `max_lessons`
the weakest lessons go, past `max_rows` the oldest rows.

Reading never fails: corrupt lines and records that are not lessons are skipped and counted (a
warning in `slmactor status`). A file edited or removed by hand is noticed before the next
operation (`sync`): `rm .slmcode/memory/lessons.jsonl` forgets, and the next lesson starts a new
file.

With the user's signing `key`, every lesson line carries `sig`; a line without a valid one (a
lessons.jsonl a repository brought) loads unverified (`PolarLesson.verified`): shown labelled with
its commands withheld, written back unsigned, replaced by the user's own lesson of the same
trigger, adopted by `trust`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from slmactor.logic.memory.budgets import PhaseOutcome, trim_history
from slmactor.logic.memory.lesson_dedup import LessonBook
from slmactor.logic.memory.polar_lessons import PolarLesson, lesson_from_record, prune
from slmactor.logic.text.redact import redact
from slmactor.logic.text.trust import signed, verified
from slmactor.stores.base.jsonl import JsonlLog
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.base.watched import Signature, signature

MAX_LESSONS = 10_000
MAX_BUDGET_ROWS = 2_000
#: Rows past the cap before the history is rewritten (so not every append rewrites it).
BUDGET_SLACK = 200


def redact_lesson(lesson: PolarLesson) -> PolarLesson:
    """The lesson with every free-text field redacted (tags are known words, not free text)."""
    return replace(lesson, trigger=redact(lesson.trigger), fix=redact(lesson.fix),
                   source_task=redact(lesson.source_task))


class _Watched:
    """A JSONL file plus the identity of the version this process last read or wrote."""

    def __init__(self, path: Path, warnings: WarningLog, now: Callable[[], float]) -> None:
        self.log = JsonlLog(path, warnings, now=now)
        self._seen: Signature = None
        self._loaded = False

    @property
    def path(self) -> Path:
        return self.log.path

    def stale(self) -> bool:
        return not self._loaded or signature(self.path) != self._seen

    def mark(self) -> None:
        self._loaded = True
        self._seen = signature(self.path)


class PolarLessonStore:
    """`lessons.jsonl` and the `LessonBook` mirroring it."""

    def __init__(
        self, path: str | os.PathLike[str], warnings: WarningLog, *,
        max_lessons: int = MAX_LESSONS, now: Callable[[], float] = time.time,
        key: bytes | None = None,
    ) -> None:
        self._file = _Watched(Path(path), warnings, now)
        self._now = now
        self._key = key
        self.max_lessons = max_lessons
        self.book = LessonBook()
        #: Lines of the last load that were not lessons (corrupt JSON or missing fields).
        self.skipped = 0

    @property
    def path(self) -> Path:
        return self._file.path

    def stale(self) -> bool:
        """True when `sync` would reload (first use, or the file changed behind our back)."""
        return self._file.stale()

    def sync(self) -> bool:
        """Reload when the file changed behind our back (or on first use); True if reloaded."""
        if not self._file.stale():
            return False
        now = self._now()
        lessons, bad = [], 0
        for _offset, record in self._file.log.scan():
            lesson = lesson_from_record(record, now)
            if lesson is None:
                bad += 1
            else:
                if not verified(self._key, record):
                    lesson = replace(lesson, verified=False)
                lessons.append(redact_lesson(lesson))
        self.skipped = bad + self._file.log.corrupt_lines
        if bad:  # (corrupt JSON lines are warned about by the log itself)
            self._file.log.warnings.warn(
                f"skipped {bad} record(s) that are not lessons in {self._file.log.path.name}",
                now, self._file.log.path)
        self.book = LessonBook()
        self.book.replace_all(lessons)  # as on disk: merging is for new lessons
        self._file.mark()
        return True

    def add(self, lessons: Iterable[PolarLesson]) -> tuple[list[PolarLesson], int]:
        """Keep or merge each lesson (redacted first); (lessons appended, merges)."""
        self.sync()
        appended: list[PolarLesson] = []
        merged = 0
        rewrite = False
        for lesson in lessons:
            clean = redact_lesson(lesson)
            before = len(self.book)
            slot, was_merged = self.book.add(clean)
            if was_merged:
                merged += 1
                rewrite = rewrite or self.book.lessons[slot] is clean
            elif len(self.book) > before:
                appended.append(clean)
        if rewrite or len(self.book) > self.max_lessons:
            self._rewrite(self.book.lessons)
        else:
            for lesson in appended:
                self._file.log.append(self._record(lesson))
            self._file.mark()
        return appended, merged

    def replace(self, lessons: Sequence[PolarLesson]) -> None:
        """Store `lessons` as the whole set (after a boost, penalty or prune)."""
        self.sync()
        self._rewrite([redact_lesson(lesson) for lesson in lessons])

    def _rewrite(self, lessons: Sequence[PolarLesson]) -> None:
        kept = prune(lessons, self.max_lessons) if len(lessons) > self.max_lessons else lessons
        self.book.replace_all(kept)
        self._file.log.rewrite(self._record(lesson) for lesson in kept)
        self._file.mark()

    def _record(self, lesson: PolarLesson) -> dict[str, Any]:
        # Its text fields are redacted already (`redact_lesson`), so the log's own redaction
        # leaves the record as signed; were it ever to change one, the lesson would read back as
        # unverified — the safe side — rather than cost a second redaction of every lesson.
        record = lesson.to_dict()
        return signed(self._key, record) if lesson.verified else record

    def unverified(self) -> list[PolarLesson]:
        self.sync()
        return [le for le in self.book.lessons if not le.verified]

    def trust(self, ids: Iterable[str] | None) -> list[PolarLesson]:
        """Adopt unverified lessons (`ids`, or all for None): rewritten signed."""
        wanted = None if ids is None else set(ids)
        adopted = [le for le in self.unverified() if wanted is None or le.id in wanted]
        if adopted:
            chosen = {id(le) for le in adopted}
            self._rewrite([replace(le, verified=True) if id(le) in chosen else le
                           for le in self.book.lessons])
        return adopted

    def prune(self) -> int:
        """C-14 and the cap; how many lessons were dropped."""
        self.sync()
        before = len(self.book)
        kept = prune(self.book.lessons, self.max_lessons)
        if len(kept) != before:
            self._rewrite(kept)
        return before - len(kept)

    def forget(self) -> None:
        self._file.log.delete()
        self.book = LessonBook()
        self._file.mark()


class PhaseBudgetStore:
    """`phase_budgets.jsonl`: appended once per finished phase, trimmed to the newest rows."""

    def __init__(
        self, path: str | os.PathLike[str], warnings: WarningLog, *,
        max_rows: int = MAX_BUDGET_ROWS, now: Callable[[], float] = time.time,
    ) -> None:
        self._file = _Watched(Path(path), warnings, now)
        self.max_rows = max_rows
        self.rows: list[PhaseOutcome] = []

    @property
    def path(self) -> Path:
        return self._file.path

    def sync(self) -> bool:
        if not self._file.stale():
            return False
        rows = [PhaseOutcome.from_record(record) for _offset, record in self._file.log.scan()]
        self.rows = [row for row in rows if row is not None]
        self._file.mark()
        return True

    def record(self, row: PhaseOutcome) -> None:
        self.sync()
        self.rows.append(row)
        if len(self.rows) > self.max_rows + BUDGET_SLACK:
            self.rows = trim_history(self.rows, self.max_rows)
            self._file.log.rewrite(r.to_dict() for r in self.rows)
        else:
            self._file.log.append(row.to_dict())
        self._file.mark()

    def forget(self) -> None:
        self._file.log.delete()
        self.rows = []
        self._file.mark()
