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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from slmactor.logic.memory.lesson_tags import infer_tags_from_text, infer_task_tags, stack_tags
from slmactor.logic.memory.polar_lessons import PolarLesson, decayed_confidence
from slmactor.logic.text.strings import count_tokens_chars

DEFAULT_LIMIT = 10
SOURCE_TASK_PENALTY = 5.0
CONTENT_TAG_PENALTY = 2.0
DO_HEADER = "## Lessons from past builds (apply these):"
DONT_HEADER = "## Anti-patterns from past builds (NEVER do these):"
_DAY = 86400.0


@dataclass(frozen=True, slots=True)
class Scored:
    """A recalled lesson, its score and the layers that touched it."""

    lesson: PolarLesson
    score: float
    decays: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {**self.lesson.to_dict(), "score": round(self.score, 6), "decays": list(self.decays)}


def score_lesson(
    lesson: PolarLesson, task_words: set[str], task_tags: set[str], now: float
) -> Scored:
    """The C-10 score of one lesson for a task (`task_tags`: its stack tags), with layers 2
    and 3 applied."""
    lesson_words = set(lesson.trigger.lower().split()) | set(lesson.fix.lower().split())
    keyword = len(task_words & lesson_words) / max(len(task_words), 1)
    age_days = max(0.0, now - lesson.ts) / _DAY
    total = (2 * keyword + 1 / (1 + age_days) + decayed_confidence(lesson, now)
             + 0.1 * lesson.used)
    decays: list[str] = []
    if task_tags and lesson.source_task:
        source_tags = stack_tags(infer_tags_from_text(lesson.source_task))
        if source_tags and not source_tags & task_tags:
            total /= SOURCE_TASK_PENALTY
            decays.append("source_task")
    if task_tags and not stack_tags(lesson.tags) and not lesson.source_task:
        content_tags = stack_tags(infer_tags_from_text(f"{lesson.trigger} {lesson.fix}"))
        if content_tags and not content_tags & task_tags:
            total /= CONTENT_TAG_PENALTY
            decays.append("content_tags")
    return Scored(lesson, total, tuple(decays))


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
    scored = []
    for lesson in lessons:
        own = stack_tags(lesson.tags)
        if task_tags and own and not own & task_tags:
            continue  # layer 1: a tagged lesson of another stack
        if required and not required <= set(lesson.tags):
            continue
        scored.append(score_lesson(lesson, task_words, task_tags, now))
    scored.sort(key=lambda s: (-s.score, -s.lesson.confidence, s.lesson.trigger))
    return scored[: max(limit, 0)]


def _do_line(lesson: PolarLesson) -> str:
    return f"- [{lesson.type}] When: {lesson.trigger} -> Do: {lesson.fix}"


def _dont_line(lesson: PolarLesson) -> str:
    return f"- NEVER: {lesson.trigger} (Reason: {lesson.fix})"


def format_for_prompt(lessons: Sequence[PolarLesson]) -> str:
    """C-11: "" for none; do-lessons then, in their own section, the NEVER-framed don'ts."""
    dos = [_do_line(le) for le in lessons if le.polarity != "dont"]
    donts = [_dont_line(le) for le in lessons if le.polarity == "dont"]
    sections = []
    if dos:
        sections.append("\n".join([DO_HEADER, *dos]))
    if donts:
        sections.append("\n".join(["", DONT_HEADER, *donts]))
    return "\n".join(sections)


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
