"""Merging near-duplicate polar lessons (SPEC C-6, C-7; H-C-5, H-C-7).

A new lesson merges into the first kept lesson **of its type** whose trigger it overlaps by
**more than** 70 % — Jaccard of the lowercased whitespace-split words; exactly 70 % does not merge
(the seed's docs said "≥ 70 %", its code `> 0.7`: H-C-7) — and the higher confidence wins.

`LessonBook` keeps lessons with an index of every trigger word under (type, word). A new trigger
looks up only its `probe_size` rarest words, which any trigger above the threshold must share, so
the result is exactly that of the seed's old pairwise scan at roughly linear cost (H-C-5: the
seed replaced an O(n²) scan by an inexact bucketing; this one is exact).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from slmactor.logic.memory.polar_lessons import PolarLesson

#: C-7: merge when the trigger overlap is strictly above this (7/10, kept as a fraction).
MERGE_NUMERATOR, MERGE_DENOMINATOR = 7, 10


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.lower().split())


def word_overlap(a: str, b: str) -> float:
    """Jaccard of the lowercased whitespace-split word sets; 0 if either is empty (C-6)."""
    wa, wb = word_set(a), word_set(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def _merges(wa: frozenset[str], wb: frozenset[str]) -> bool:
    """Overlap strictly above 7/10, in integers (0.7 · 10 is 7.000000000000001 in floats)."""
    small, large = sorted((len(wa), len(wb)))
    # |a ∩ b| ≤ the smaller set and |a ∪ b| ≥ the larger: sizes alone rule most pairs out.
    if not small or small * MERGE_DENOMINATOR <= large * MERGE_NUMERATOR:
        return False
    shared = len(wa & wb)
    return shared * MERGE_DENOMINATOR > (small + large - shared) * MERGE_NUMERATOR


def probe_size(n: int) -> int:
    """How many of a trigger's n words any kept trigger overlapping it by more than 70 % must
    share at least one of: n − ⌊0.7 · n⌋.

    Overlap > 0.7 · |a ∪ b| ≥ 0.7 · n words of the new trigger are in the kept one, so at most
    n − ⌊0.7 · n⌋ − 1 are not, and *any* n − ⌊0.7 · n⌋ of its words include a shared one. The
    search is exact (it finds what the pairwise scan finds), not a heuristic.
    """
    return n - (n * MERGE_NUMERATOR) // MERGE_DENOMINATOR


@dataclass(slots=True)
class LessonBook:
    """Lessons in insertion order with a (type, word) index for merging new ones in O(1) each."""

    lessons: list[PolarLesson] = field(default_factory=list)
    _words: list[frozenset[str]] = field(default_factory=list)
    _index: dict[tuple[str, str], list[int]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.lessons)

    def _register(self, slot: int, lesson: PolarLesson, words: frozenset[str]) -> None:
        for token in words:
            bucket = self._index.setdefault((lesson.type, token), [])
            if not bucket or bucket[-1] != slot:
                bucket.append(slot)

    def match(self, lesson: PolarLesson) -> int | None:
        """The first kept lesson this one merges into, or None.

        Every word of every kept trigger is indexed under (type, word); a new trigger looks up
        only its `probe_size` rarest words, so frequent words ("when", "with") cost nothing
        unless a trigger is made of nothing else.
        """
        words = word_set(lesson.trigger)
        if not words:
            return None
        index = self._index
        rarest = sorted(words, key=lambda w: (len(index.get((lesson.type, w), ())), w))
        candidates: set[int] = set()
        for token in rarest[: probe_size(len(words))]:
            candidates.update(index.get((lesson.type, token), ()))
        for slot in sorted(candidates):
            if self.lessons[slot].type == lesson.type and _merges(words, self._words[slot]):
                return slot
        return None

    def add(self, lesson: PolarLesson) -> tuple[int, bool]:
        """Keep `lesson` or merge it; (slot, merged). On a merge the higher confidence wins."""
        slot = self.match(lesson)
        if slot is None:
            slot = len(self.lessons)
            words = word_set(lesson.trigger)
            self.lessons.append(lesson)
            self._words.append(words)
            self._register(slot, lesson, words)
            return slot, False
        held = self.lessons[slot]
        if lesson.confidence > held.confidence or (lesson.verified and not held.verified):
            # ... and the user's own lesson always replaces one a repository brought.
            words = word_set(lesson.trigger)
            self.lessons[slot] = lesson
            self._words[slot] = words
            self._register(slot, lesson, words)  # old entries stay: they only add candidates
        return slot, True

    def replace_all(self, lessons: Iterable[PolarLesson]) -> None:
        """Rebuild from `lessons` (kept as given, without merging them)."""
        self.lessons, self._words, self._index = [], [], {}
        for slot, lesson in enumerate(lessons):
            words = word_set(lesson.trigger)
            self.lessons.append(lesson)
            self._words.append(words)
            self._register(slot, lesson, words)


def deduplicate(lessons: Iterable[PolarLesson]) -> list[PolarLesson]:
    """C-7: each lesson merges into the first earlier kept lesson of its type it overlaps by
    more than 70 % (the higher confidence replaces the kept one); O(n) expected."""
    book = LessonBook()
    for lesson in lessons:
        book.add(lesson)
    return list(book.lessons)
