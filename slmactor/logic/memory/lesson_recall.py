"""Which polar lessons a task sees, in which order, and how they read in a prompt (C-10, C-11).

`recall(lessons, task, now, limit)` scores every lesson

    score = 2 · keyword + recency + confidence + 0.1 · used

(keyword = shared words / task words, recency = 1 / (1 + age in days), confidence after the C-8
decay) through three layers, all keyed on `task_tags = infer_task_tags(task)`:

1. **hard tag filter** — when the task names a stack, a tagged lesson must share a tag with it;
   untagged lessons survive (stack-agnostic);
2. **source-task decay ÷ 5** — a lesson whose originating task names a stack disjoint from the
   task's. Applied to every lesson with a source task, tagged or not (the seed's code does this;
   its docstring said "untagged" — H-C-10). The source task is read with the *broad*
   `infer_tags_from_text`, as the seed's doc says: its own example ("async IRC server …" →
   python, asyncio) needs the synonyms, while its code used the strict reader and so never decayed
   the IRC lessons that motivated the layer (H-C-3);
3. **content-tag decay ÷ 2** — an untagged lesson without a source task whose trigger + fix imply a
   disjoint stack (`tsconfig.json` in a Python task).

"Stack" means the tags without the phase words (`lesson_tags.stack_tags`): in the seed a lesson
from "Build a Rust CLI" shared the tag `build` with "Build a Python Flask REST API" and escaped
every layer; here it is decayed (and a lesson tagged `rust, build` is filtered out). A lesson
tagged with phase words only counts as untagged.

`format_for_prompt` renders do-lessons and don'ts in separate sections, the don'ts with the NEVER
framing so an anti-pattern is never read as advice; `render_within` does the same within a token
budget, dropping whole lines.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from slmactor.logic.memory.block_items import TITLE, BlockItem, bullet, heading, plain
from slmactor.logic.memory.lesson_tags import infer_tags_from_text, infer_task_tags, stack_tags
from slmactor.logic.memory.polar_lessons import PolarLesson, decayed_confidence
from slmactor.logic.text.strings import count_tokens_chars, hash_id
from slmactor.logic.text.trust import UNVERIFIED_LABEL, untrusted_text

DEFAULT_LIMIT = 10
SOURCE_TASK_PENALTY = 5.0
CONTENT_TAG_PENALTY = 2.0
DO_HEADER = "## Lessons from past builds (apply these):"
DONT_HEADER = "## Anti-patterns from past builds (NEVER do these):"
_DAY = 86400.0
#: Texts whose words and stack tags are remembered (a store holds at most 10,000 lessons).
CACHE_SIZE = 16_384


@dataclass(frozen=True, slots=True)
class Scored:
    """A recalled lesson, its score and the layers that touched it."""

    lesson: PolarLesson
    score: float
    decays: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {**self.lesson.to_dict(), "score": round(self.score, 6), "decays": list(self.decays)}


@dataclass(frozen=True, slots=True)
class _Profile:
    """What a lesson's text implies, for scoring: its words and the stacks it names."""

    words: frozenset[str]
    own: frozenset[str]  # stack tags of the lesson's own tags
    source: frozenset[str]  # stacks of its source task (broad reader)
    content: frozenset[str]  # stacks of trigger + fix (broad reader)


# Recall scores every stored lesson on every ask, and what a lesson's text implies never changes:
# it is worked out once per (trigger, fix, tags, source task), not once per ask.
@lru_cache(maxsize=CACHE_SIZE)
def _profile(trigger: str, fix: str, tags: tuple[str, ...], source_task: str) -> _Profile:
    return _Profile(
        frozenset(trigger.lower().split()) | frozenset(fix.lower().split()),
        frozenset(stack_tags(tags)),
        frozenset(stack_tags(infer_tags_from_text(source_task))) if source_task else frozenset(),
        frozenset(stack_tags(infer_tags_from_text(f"{trigger} {fix}"))),
    )


def _score(lesson: PolarLesson, profile: _Profile, task_words: set[str], task_tags: set[str],
           now: float) -> tuple[float, tuple[str, ...]]:
    keyword = len(task_words & profile.words) / max(len(task_words), 1)
    age_days = max(0.0, now - lesson.ts) / _DAY
    total = (2 * keyword + 1 / (1 + age_days) + decayed_confidence(lesson, now)
             + 0.1 * lesson.used)
    if not task_tags:
        return total, ()
    decays: tuple[str, ...] = ()
    if lesson.source_task:
        if profile.source and not profile.source & task_tags:
            total /= SOURCE_TASK_PENALTY
            decays = ("source_task",)
    elif not profile.own and profile.content and not profile.content & task_tags:
        total /= CONTENT_TAG_PENALTY
        decays = ("content_tags",)
    return total, decays


def score_lesson(
    lesson: PolarLesson, task_words: set[str], task_tags: set[str], now: float
) -> Scored:
    """The C-10 score of one lesson for a task (`task_tags`: its stack tags), with layers 2
    and 3 applied."""
    profile = _profile(lesson.trigger, lesson.fix, lesson.tags, lesson.source_task)
    total, decays = _score(lesson, profile, task_words, task_tags, now)
    return Scored(lesson, total, decays)


def recall(
    lessons: Iterable[PolarLesson], task: str, now: float, limit: int = DEFAULT_LIMIT,
    *, tags: Iterable[str] = (),
) -> list[Scored]:
    """The `limit` most relevant lessons for `task`, best first (ties: confidence, trigger).

    `tags` (optional) further keeps only lessons carrying every one of them — an inspection
    filter (`slmactor memory lessons --tag`), not part of the seed's scoring.
    """
    task_tags = stack_tags(infer_task_tags(task))
    task_words = set(task.lower().split())
    required = {t.strip().lower() for t in tags if t.strip()}
    ranked: list[tuple[float, float, str, int, tuple[str, ...]]] = []
    kept: list[PolarLesson] = []
    for lesson in lessons:
        profile = _profile(lesson.trigger, lesson.fix, lesson.tags, lesson.source_task)
        if task_tags and profile.own and not profile.own & task_tags:
            continue  # layer 1: a tagged lesson of another stack
        if required and not required <= set(lesson.tags):
            continue
        total, decays = _score(lesson, profile, task_words, task_tags, now)
        ranked.append((-total, -lesson.confidence, lesson.trigger, len(kept), decays))
        kept.append(lesson)
    best = heapq.nsmallest(max(limit, 0), ranked)
    return [Scored(kept[i], -neg, decays) for neg, _c, _t, i, decays in best]


def _do_line(lesson: PolarLesson) -> str:
    return f"- [{lesson.type}] When: {lesson.trigger} -> Do: {lesson.fix}"


def _dont_line(lesson: PolarLesson) -> str:
    return f"- NEVER: {lesson.trigger} (Reason: {lesson.fix})"


def _shown(lesson: PolarLesson) -> PolarLesson:
    """A lesson as a prompt may show it: one a repository brought unsigned is labelled and its
    commands are withheld."""
    if lesson.verified:
        return lesson
    return replace(lesson, trigger=f"({UNVERIFIED_LABEL}) {untrusted_text(lesson.trigger)}",
                   fix=untrusted_text(lesson.fix))


def format_for_prompt(lessons: Sequence[PolarLesson]) -> str:
    """C-11: "" for none; do-lessons then, in their own section, the NEVER-framed don'ts."""
    lessons = [_shown(le) for le in lessons]
    dos = [_do_line(le) for le in lessons if le.polarity != "dont"]
    donts = [_dont_line(le) for le in lessons if le.polarity == "dont"]
    sections = []
    if dos:
        sections.append("\n".join([DO_HEADER, *dos]))
    if donts:
        sections.append("\n".join(["", DONT_HEADER, *donts]))
    return "\n".join(sections)


def lesson_id(lesson: PolarLesson) -> str:
    """The id a lesson is named by in a block's evidence (its trigger, which the store keys
    it by)."""
    return hash_id("lesson_", lesson.trigger)


def items_for_prompt(lessons: Sequence[PolarLesson]) -> list[BlockItem]:
    """`format_for_prompt` as the block's items: a do names its fix, each rests on its lesson."""
    shown = [(_shown(le), lesson_id(le)) for le in lessons]
    dos = [bullet("semantic", _do_line(le), fix=le.fix, evidence=(ident,))
           for le, ident in shown if le.polarity != "dont"]
    donts = [bullet("semantic", _dont_line(le), evidence=(ident,))
             for le, ident in shown if le.polarity == "dont"]
    out: list[BlockItem] = []
    if dos:
        out += [heading("semantic", DO_HEADER, TITLE), *dos]
    if donts:
        out += [plain("semantic", ""), heading("semantic", DONT_HEADER, TITLE), *donts]
    return out


def items_within(
    lessons: Sequence[PolarLesson], budget: int,
    counter: Callable[[str], int] = count_tokens_chars,
) -> tuple[list[BlockItem], list[PolarLesson]]:
    """`render_within` as the block's items."""
    text, shown = render_within(lessons, budget, counter)
    return (items_for_prompt(shown) if text else []), shown


def render_within(
    lessons: Sequence[PolarLesson], budget: int,
    counter: Callable[[str], int] = count_tokens_chars,
) -> tuple[str, list[PolarLesson]]:
    """`format_for_prompt` of the longest prefix of `lessons` (best first) that fits `budget`
    tokens — whole lines only; ("", []) when not even one lesson fits."""
    if budget <= 0 or not lessons:
        return "", []
    low, high = 0, len(lessons)
    while low < high:  # the text grows with the prefix, so the longest fitting one is bisected
        mid = (low + high + 1) // 2
        if counter(format_for_prompt(lessons[:mid])) <= budget:
            low = mid
        else:
            high = mid - 1
    shown = list(lessons[:low])
    return format_for_prompt(shown), shown
