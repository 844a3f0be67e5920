"""Polar lessons: the scored, tagged form of a lesson — do or don't (SPEC C-2 … C-8, C-12 … C-17).

`PolarLesson` is the record of the second seed: `{ts, type, trigger, fix, confidence, used,
polarity, tags, source_task}`, one JSON object per line of `.slmcode/memory/lessons.jsonl` in the
seed's own format (so an existing corpus is read as is). It belongs to the same family as the prose
`Lesson` of `lessons.py` (MEMORY.md bullets): `from_prose` turns the reflector's prose lessons
into polar ones (a failure is a *don't*, a fix that worked is a *do*).

What lives here, all pure (time comes in as `now`):

* `parse_reflection` — `TYPE | TRIGGER | FIX` lines (ANTI → a don't of type error_pattern);
* `lesson_from_record` — one corpus line as read from disk or imported (unknown keys are ignored
  instead of dropping the lesson — H-C-12);
* `boost_confidence`, `penalize_backfired`, `decayed_confidence`, `prune`, `meta_lesson`.

Merging near-duplicates is `lesson_dedup.py`; recall and the prompt form are `lesson_recall.py`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from slmactor.logic.memory.lesson_tags import infer_tags_from_text, normalize_tags
from slmactor.logic.memory.lessons import CONTENT_FREE, Lesson
from slmactor.logic.text.safecut import cut_chars
from slmactor.logic.text.strings import hash_id

TYPES = ("error_pattern", "architecture", "tool_pattern", "dependency", "performance")
FALLBACK_TYPE = "error_pattern"
POLARITIES = ("do", "dont")
SOURCE_TASK_CHARS = 200
MAX_TRIGGER_CHARS = 500
MAX_FIX_CHARS = 1000
MAX_TAGS = 16

#: C-5: the dataclass default; a lesson fresh from reflection starts lower and must be reused
#: before it outweighs the scoring noise (0.3 → 0.5 takes two boosts — H-C-14 says it exactly).
DEFAULT_CONFIDENCE = 0.5
FRESH_CONFIDENCE = 0.3
META_CONFIDENCE = 0.6
BOOST_STEP = 0.1
PENALTY_STEP = 0.1
CONFIDENCE_FLOOR = 0.1
#: C-8: unused lessons older than a week lose 0.05 while recalled (never written back).
DECAY_AFTER_DAYS = 7.0
DECAY_STEP = 0.05
#: C-14: a lesson used this often whose confidence fell below the threshold is dropped.
PRUNE_MIN_CONFIDENCE = 0.3
PRUNE_MIN_USES = 5
#: C-17: an improvement that lifted the score by at least this much becomes a meta-lesson.
META_MIN_DELTA = 0.05
_DAY = 86400.0


@dataclass(frozen=True, slots=True)
class PolarLesson:
    """One scored lesson; `ts` is epoch seconds as in the seed's corpus."""

    ts: float
    type: str
    trigger: str
    fix: str
    confidence: float = DEFAULT_CONFIDENCE
    used: int = 0
    polarity: str = "do"
    tags: tuple[str, ...] = ()
    source_task: str = ""
    #: False for a lesson a project file brought without this user's signature: shown only
    #: labelled with its commands withheld (`lesson_recall.format_for_prompt`). Not in `to_dict`.
    verified: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "ts": self.ts,
            "type": self.type,
            "trigger": self.trigger,
            "fix": self.fix,
            "confidence": round(self.confidence, 6),
            "used": self.used,
            "polarity": self.polarity,
            "tags": list(self.tags),
            "source_task": self.source_task,
        }

    @property
    def key(self) -> str:
        """Identity for boost/penalize: the trigger, compared case-insensitively (C-12)."""
        return self.trigger.strip().lower()

    @property
    def id(self) -> str:
        """A stable name for `slmactor trust ID` (the lesson's type and trigger)."""
        return hash_id("les_", self.type, self.key)


def normalize_type(raw: str) -> tuple[str, str]:
    """(type, polarity) of a reflection's TYPE word: `anti` is a don't, unknown types fall back."""
    word = "_".join(raw.strip().lower().split())
    if word == "anti":
        return FALLBACK_TYPE, "dont"
    return (word if word in TYPES else FALLBACK_TYPE), "do"


def clamp_confidence(value: float) -> float:
    return min(1.0, max(0.0, value))


def make_lesson(
    kind: str,
    trigger: str,
    fix: str,
    now: float,
    *,
    tags: Iterable[object] | None = None,
    source_task: str = "",
    confidence: float = FRESH_CONFIDENCE,
    polarity: str | None = None,
) -> PolarLesson | None:
    """A new lesson; tags inferred from trigger + fix unless given (explicit tags win)."""
    lesson_type, implied = normalize_type(kind)
    trigger = cut_chars(" ".join(trigger.split()), MAX_TRIGGER_CHARS)
    fix = cut_chars(" ".join(fix.split()), MAX_FIX_CHARS)
    if not trigger:
        return None
    given = normalize_tags(tags or ())
    chosen = given or sorted(infer_tags_from_text(f"{trigger} {fix}"))
    return PolarLesson(
        ts=now,
        type=lesson_type,
        trigger=trigger,
        fix=fix,
        confidence=clamp_confidence(confidence),
        polarity=polarity if polarity in POLARITIES else implied,
        tags=tuple(chosen[:MAX_TAGS]),
        source_task=cut_chars(source_task.strip(), SOURCE_TASK_CHARS),
    )


def parse_reflection(
    text: str, now: float, tags: Iterable[object] | None = None, source_task: str = ""
) -> list[PolarLesson]:
    """Lessons from a reflection answer, one per `TYPE | TRIGGER | FIX` line (C-15).

    Leading `-`, `•` and spaces are stripped; lines with fewer than three parts (`NONE`, prose)
    or an empty trigger are ignored; parts after the third are ignored.
    """
    out: list[PolarLesson] = []
    for raw in text.splitlines():
        line = raw.strip().lstrip("-• ")
        parts = line.split("|")
        if len(parts) < 3:
            continue
        lesson = make_lesson(parts[0], parts[1], parts[2], now, tags=tags, source_task=source_task)
        if lesson is not None:
            out.append(lesson)
    return out


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def lesson_from_record(raw: object, now: float) -> PolarLesson | None:
    """A lesson from one corpus record, or None when it is not one.

    A record needs a non-blank string `trigger` and a string `fix`; everything else is optional
    and a wrong value reads as its default (`ts` → `now`, `confidence` → 0.5 clamped to [0, 1],
    `used` → 0, unknown `type` → error_pattern, `polarity` other than "dont" → "do"). Unknown keys
    are ignored — the seed dropped such a lesson silently (H-C-12). Explicit tags are kept even
    when empty (an untagged lesson is stack-agnostic on purpose).
    """
    if not isinstance(raw, Mapping):
        return None
    trigger, fix = raw.get("trigger"), raw.get("fix")
    if not isinstance(trigger, str) or not trigger.strip() or not isinstance(fix, str):
        return None
    kind = raw.get("type")
    lesson_type, implied = normalize_type(kind if isinstance(kind, str) else "")
    polarity = raw.get("polarity")
    ts = _number(raw.get("ts"))
    confidence = _number(raw.get("confidence"))
    used = raw.get("used")
    tags = raw.get("tags")
    source = raw.get("source_task")
    return PolarLesson(
        ts=ts if ts is not None and ts >= 0 else now,
        type=lesson_type,
        trigger=cut_chars(" ".join(trigger.split()), MAX_TRIGGER_CHARS),
        fix=cut_chars(" ".join(fix.split()), MAX_FIX_CHARS),
        confidence=round(clamp_confidence(DEFAULT_CONFIDENCE if confidence is None else confidence), 6),
        used=used if isinstance(used, int) and not isinstance(used, bool) and used > 0 else 0,
        polarity="dont" if polarity == "dont" or implied == "dont" else "do",
        tags=tuple(normalize_tags(tags)[:MAX_TAGS]) if isinstance(tags, list) else (),
        source_task=cut_chars(source.strip(), SOURCE_TASK_CHARS) if isinstance(source, str) else "",
    )


def lesson_from_json_line(line: str | bytes, now: float) -> PolarLesson | None:
    """One line of a corpus file → a lesson, or None (not JSON, not an object, not a lesson)."""
    try:
        raw = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return lesson_from_record(raw, now)


_CONTENT_FREE = CONTENT_FREE  # the reflector's failure lessons without a fix (`lessons.py`)


def from_prose(lesson: Lesson, source_task: str, now: float) -> PolarLesson | None:
    """The polar twin of a reflector prose lesson (`lessons.Lesson`), or None for other kinds.

    `convention` lessons read `<situation> — fixed by <how>` (a do). A `failure` lesson becomes
    a don't that says what to do instead when it has one (`<what happened> — instead: <what to
    do>`); the reflector's records of a failure nothing fixed (`… stayed unresolved: …`, `Gate X
    failed`) become none: a "NEVER" with no alternative is no lesson a model can use, and a
    failure its session fixed is a convention (with its fix), never a don't. A failure lesson
    in a client's own words stays the don't of repeating it.
    """
    text = " ".join(lesson.text.split())
    if lesson.kind == "convention":
        situation, sep, how = text.partition(" — fixed by ")
        return make_lesson("error_pattern", situation, how if sep else text, now,
                           source_task=source_task)
    if lesson.kind == "failure":
        what, sep, instead = text.partition(" — instead: ")
        if sep and instead.strip():
            return make_lesson("anti", f"repeat what led to: {what}", f"instead: {instead}", now,
                               source_task=source_task)
        if _CONTENT_FREE.search(text):
            return None  # the reflector's record of a failure nothing fixed: no NEVER to act on
        return make_lesson("anti", f"repeat what led to: {text}",
                           "it failed in an earlier run", now, source_task=source_task)
    return None


def meta_lesson(
    weakness_id: str, target_file: str, delta: float, iteration: int, commit: str, reason: str,
    now: float,
) -> PolarLesson | None:
    """C-17: what an improvement that lifted the score by ≥ 0.05 teaches; None below that."""
    if not math.isfinite(delta) or delta < META_MIN_DELTA:
        return None
    where = f" (commit {commit.strip()})" if commit.strip() else ""
    return PolarLesson(
        ts=now,
        type="architecture",
        trigger=f"weakness {weakness_id.strip()} in {target_file.strip()}",
        fix=f"matrix score improved by +{delta:.3f} on iter {iteration}{where}: "
        f"{cut_chars(reason.strip(), 200)}",
        confidence=META_CONFIDENCE,
        polarity="do",
        tags=("self", "slmactor"),
        source_task="slmactor improve cycle",
    )


# --- reinforcement, penalties, decay, pruning (C-8, C-12 … C-14) ------------------------------

_WORD = re.compile(r"[a-z0-9_]+")


def boost_confidence(
    lessons: Sequence[PolarLesson], triggers: Iterable[str]
) -> tuple[list[PolarLesson], list[str]]:
    """C-12 on the lessons given (the seed reloaded them from disk instead — H-C-11): each whose
    trigger equals one of `triggers` (case-insensitive) gets +0.1 (≤ 1.0) and one more use."""
    wanted = {t.strip().lower() for t in triggers if t.strip()}
    out, boosted = [], []
    for lesson in lessons:
        if lesson.key in wanted:
            lesson = replace(lesson, confidence=min(1.0, lesson.confidence + BOOST_STEP),
                             used=lesson.used + 1)
            boosted.append(lesson.trigger)
        out.append(lesson)
    return out, boosted


def backfired(trigger: str, error_words: frozenset[str]) -> bool:
    """More than half of the trigger's words are words of the error text (C-13)."""
    words = _WORD.findall(trigger.lower())
    return bool(words) and sum(1 for w in words if w in error_words) * 2 > len(words)


def penalize_backfired(
    lessons: Sequence[PolarLesson], triggers: Iterable[str], error_text: str,
    max_penalty: float = PENALTY_STEP,
) -> tuple[list[PolarLesson], list[str]]:
    """C-13: a recalled lesson whose trigger words show up in the run's errors loses up to
    `max_penalty` (floor 0.1); returns the lessons and the penalized triggers.

    Words are compared as whole words of the error text (the seed tested substrings, so a
    trigger word `a` or `in` matched nearly any error)."""
    wanted = {t.strip().lower() for t in triggers if t.strip()}
    error_words = frozenset(_WORD.findall(error_text.lower()))
    step = min(max(max_penalty, 0.0), 1.0)
    out, penalized = [], []
    for lesson in lessons:
        if lesson.key in wanted and backfired(lesson.trigger, error_words):
            lesson = replace(lesson, confidence=max(CONFIDENCE_FLOOR, lesson.confidence - step))
            penalized.append(lesson.trigger)
        out.append(lesson)
    return out, penalized


def decayed_confidence(lesson: PolarLesson, now: float) -> float:
    """C-8: an unused lesson older than 7 days counts 0.05 less (floor 0.1) while recalled.

    The seed's doc promises a linear 90-day decay; its code has only this (H-C-13). We keep the
    code's rule: the stored value never changes, so an old lesson is never destroyed by age
    alone, and reuse (a boost) is what keeps a lesson authoritative.
    """
    if lesson.used == 0 and now - lesson.ts > DECAY_AFTER_DAYS * _DAY:
        return max(CONFIDENCE_FLOOR, lesson.confidence - DECAY_STEP)
    return lesson.confidence


def prune(
    lessons: Sequence[PolarLesson], cap: int, min_confidence: float = PRUNE_MIN_CONFIDENCE,
    min_uses: int = PRUNE_MIN_USES,
) -> list[PolarLesson]:
    """C-14 (drop lessons used ≥ 5 times whose confidence fell below 0.3), then the cap: the
    weakest (confidence, uses, age) go first; the rest keep their order."""
    kept = [le for le in lessons if le.confidence >= min_confidence or le.used < min_uses]
    if len(kept) <= cap:
        return kept
    ranked = sorted(range(len(kept)), key=lambda i: (-kept[i].confidence, -kept[i].used,
                                                     -kept[i].ts, i))
    survivors = set(ranked[: max(cap, 0)])
    return [le for i, le in enumerate(kept) if i in survivors]
