"""Procedural memory: what works for a model family and language, across projects (SPEC S-6.1–S-6.4).

Keys are `(topic, option, model_family, language)`; a blank family or language means "recorded
without one" and is shown as `*`. `rank()` looks in the namespaces (family, lang) → (family, *) →
(*, lang) → (*, *) — never across languages before across models.

Fixed here (H-S-28): the seed's `Best()` stopped at the first non-empty namespace even when
nothing there had the 3 observations needed to recommend it, so one fresh entry for this exact
model hid a well-proven answer one namespace wider. `best()` keeps widening until a namespace holds
an entry with ≥ 3 samples. `rank()` keeps the seed's first-non-empty-namespace behaviour.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from slmactor.logic.memory.block_items import TITLE, BlockItem, bullet, fit_items, heading
from slmactor.logic.text.models import model_family, normalize_language
from slmactor.logic.text.redact import redact
from slmactor.logic.text.strings import (
    TokenCounter,
    clip,
    count_tokens_chars,
    fit_to_tokens,
    hash_id,
)
from slmactor.logic.text.timefmt import age_days, parse_rfc3339, to_rfc3339

TOPICS = ("edit_format", "recovery", "prompt", "knob", "tool_choice", "think_passes")
RENDER_TOPIC_ORDER = ("edit_format", "tool_choice", "recovery", "prompt", "knob", "think_passes")
MAX_PROCEDURES = 400
RENDER_BUDGET = 200
MIN_SAMPLES = 3
MAX_RENDER_LINES = 8
MAX_NOTE_BYTES = 200
PRUNE_MAX_AGE_DAYS = 365.0
RENDER_HEADING = "## What works for this model"


@dataclass(frozen=True, slots=True)
class ProcedureKey:
    """Normalised key: lowercased and trimmed; language through the alias table."""

    topic: str
    option: str
    model_family: str = ""
    language: str = ""

    @classmethod
    def of(cls, topic: str, option: str, family: str = "", language: str = "") -> ProcedureKey:
        # Redacted before lowercasing: a lowercased token no longer has the shape the redactor
        # knows (`sk_live_…` survives as `sk_live_…`, `:AAH…` does not as `:aah…`).
        return cls(
            redact(topic.strip()).lower(),
            redact(option.strip()).lower(),
            family.strip().lower(),
            normalize_language(language),
        )

    @property
    def id(self) -> str:
        return hash_id("p_", self.topic, self.option, self.model_family, self.language)

    def __str__(self) -> str:
        family = self.model_family or "any-model"
        language = self.language or "any-language"
        return f"{self.topic}/{self.option} [{family}, {language}]"

    def to_dict(self) -> dict[str, str]:
        return {
            "topic": self.topic,
            "option": self.option,
            "model_family": self.model_family,
            "language": self.language,
        }


@dataclass(frozen=True, slots=True)
class Procedure:
    key: ProcedureKey
    successes: int = 0
    failures: int = 0
    note: str = ""
    first_seen: float = 0.0
    last_used: float = 0.0

    @property
    def id(self) -> str:
        return self.key.id

    @property
    def samples(self) -> int:
        return self.successes + self.failures

    @property
    def rate(self) -> float:
        """Beta(1,1) posterior mean of success."""
        return (self.successes + 1) / (self.samples + 2)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "key": self.key.to_dict(),
            "successes": self.successes,
            "failures": self.failures,
            "note": self.note,
            "first_seen": to_rfc3339(self.first_seen) if self.first_seen > 0 else "",
            "last_used": to_rfc3339(self.last_used) if self.last_used > 0 else "",
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Procedure | None:
        key = raw.get("key")
        if not isinstance(key, Mapping):
            return None
        pkey = ProcedureKey.of(
            *(_str(key.get(f)) for f in ("topic", "option", "model_family", "language"))
        )
        if not pkey.topic or not pkey.option:
            return None
        return cls(
            key=pkey,
            successes=_count(raw.get("successes")),
            failures=_count(raw.get("failures")),
            note=clip(_str(raw.get("note")), MAX_NOTE_BYTES),
            first_seen=parse_rfc3339(_str(raw.get("first_seen"))) or 0.0,
            last_used=parse_rfc3339(_str(raw.get("last_used"))) or 0.0,
        )


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(int(value), 0)


def _by_rate(procs: Iterable[Procedure]) -> list[Procedure]:
    return sorted(procs, key=lambda p: (-p.rate, -p.samples, p.key.option, p.id))


def fold_family(family: str, model: str = "") -> str:
    """The family to key on: the explicit one (lowercased), else folded from the model id."""
    family = family.strip().lower()
    return family or (model_family(model) if model.strip() else "")


@dataclass(slots=True)
class ProcedureBook:
    """Every recorded procedure, by id."""

    cap: int = MAX_PROCEDURES
    _procs: dict[str, Procedure] = field(default_factory=dict)

    @classmethod
    def from_records(cls, records: Iterable[object], cap: int = MAX_PROCEDURES) -> ProcedureBook:
        book = cls(cap=cap)
        for raw in records:
            proc = Procedure.from_dict(raw) if isinstance(raw, Mapping) else None
            if proc is not None and proc.id not in book._procs:
                book._procs[proc.id] = proc
        return book

    def __len__(self) -> int:
        return len(self._procs)

    def __iter__(self) -> Any:
        return iter(self._procs.values())

    def clear(self) -> None:
        self._procs.clear()

    def to_records(self) -> list[dict[str, Any]]:
        return [p.to_dict() for p in self._procs.values()]

    def record(self, key: ProcedureKey, ok: bool, now: float, note: str = "") -> Procedure | None:
        """Count one outcome (S-6.2); None without a topic or option."""
        key = ProcedureKey.of(key.topic, key.option, key.model_family, key.language)
        if not key.topic or not key.option:
            return None
        old = self._procs.get(key.id) or Procedure(key, first_seen=now)
        note = clip(note, MAX_NOTE_BYTES)
        new = replace(
            old,
            successes=old.successes + (1 if ok else 0),
            failures=old.failures + (0 if ok else 1),
            note=note or old.note,
            last_used=now,
        )
        self._procs[key.id] = new
        if self.cap > 0 and len(self._procs) > 2 * self.cap:
            self.prune(now, max_procedures=self.cap, max_age_days=-1)
        return new

    def _namespaces(self, topic: str, family: str, language: str) -> list[list[Procedure]]:
        topic = topic.strip().lower()
        family = family.strip().lower()
        language = normalize_language(language)
        # dict.fromkeys keeps the order and collapses the namespaces a blank input makes equal.
        order = dict.fromkeys(((family, language), (family, ""), ("", language), ("", "")))
        spaces = []
        for fam, lang in order:
            spaces.append(
                _by_rate(
                    p
                    for p in self._procs.values()
                    if p.key.topic == topic and p.key.model_family == fam and p.key.language == lang
                )
            )
        return spaces

    def rank(self, topic: str, family: str = "", language: str = "") -> list[Procedure]:
        """The first non-empty namespace, best rate first (S-6.3)."""
        for space in self._namespaces(topic, family, language):
            if space:
                return space
        return []

    def best(self, topic: str, family: str = "", language: str = "") -> Procedure | None:
        """The best-rated entry with ≥ 3 samples in the narrowest namespace that has one."""
        for space in self._namespaces(topic, family, language):
            proven = [p for p in space if p.samples >= MIN_SAMPLES]
            if proven:
                return proven[0]
        return None

    def render(
        self,
        family: str,
        language: str,
        budget: int = RENDER_BUDGET,
        counter: TokenCounter = count_tokens_chars,
    ) -> str:
        """`## What works for this model` with ≤ 8 proven lines in topic order (S-6.4)."""
        if budget <= 0:
            budget = RENDER_BUDGET
        topics = list(RENDER_TOPIC_ORDER)
        topics += sorted({p.key.topic for p in self._procs.values()} - set(RENDER_TOPIC_ORDER))
        lines: list[str] = []
        for topic in topics:
            for space in self._namespaces(topic, family, language):
                proven = [p for p in space if p.samples >= MIN_SAMPLES]
                if proven:
                    lines.extend(_line(p) for p in proven)
                    break
        if not lines:
            return ""
        text = RENDER_HEADING + "\n" + "\n".join(lines[:MAX_RENDER_LINES]) + "\n"
        return fit_to_tokens(text, budget, counter)

    def render_items(self, family: str, language: str, budget: int = RENDER_BUDGET,
                     counter: TokenCounter = count_tokens_chars) -> list[BlockItem]:
        """`render` as the block's items (whole lines within `budget`): each procedure a bullet
        resting on its record."""
        if budget <= 0:
            budget = RENDER_BUDGET
        topics = list(RENDER_TOPIC_ORDER)
        topics += sorted({p.key.topic for p in self._procs.values()} - set(RENDER_TOPIC_ORDER))
        items: list[BlockItem] = []
        for topic in topics:
            for space in self._namespaces(topic, family, language):
                proven = [p for p in space if p.samples >= MIN_SAMPLES]
                if proven:
                    items.extend(bullet("procedural", _line(p), evidence=(p.id,)) for p in proven)
                    break
        if not items:
            return []
        return fit_items([heading("procedural", RENDER_HEADING, TITLE),
                          *items[:MAX_RENDER_LINES]], budget, lambda t: counter(t + "\n"))

    def prune(self, now: float, *, max_procedures: int = 0, max_age_days: float = 0.0) -> int:
        """Unused > 365 days dropped, then over the cap keep the most sampled (S-7.8)."""
        cap = MAX_PROCEDURES if max_procedures == 0 else max_procedures
        max_age = PRUNE_MAX_AGE_DAYS if max_age_days == 0 else max_age_days
        before = len(self._procs)
        keep = [
            p
            for p in self._procs.values()
            if max_age < 0 or p.last_used <= 0 or age_days(p.last_used, now) <= max_age
        ]
        if cap >= 0 and len(keep) > cap:
            chosen = {
                p.id for p in sorted(keep, key=lambda p: (-p.samples, -p.last_used, p.id))[:cap]
            }
            keep = [p for p in keep if p.id in chosen]
        self._procs = {p.id: p for p in keep}
        return before - len(self._procs)


def _line(p: Procedure) -> str:
    line = f"- {p.key.topic} → `{p.key.option}` ({round(p.rate * 100)}% over {p.samples} runs)"
    return f"{line} — {p.note}" if p.note else line


def procedures_markdown(book: ProcedureBook) -> str:
    """`PROCEDURES.md`: one table row per procedure, `*` for blank family/language."""
    rows = sorted(
        book, key=lambda p: (p.key.topic, p.key.option, p.key.model_family, p.key.language)
    )
    out = [
        "# Procedural memory",
        "",
        "_What worked per model family and language. Regenerated on every flush; safe to delete._",
        "",
        "| Topic | Option | Model family | Language | Success | Samples |",
        "|---|---|---|---|---|---|",
    ]
    out += [
        f"| {_cell(p.key.topic)} | {_cell(p.key.option)} | {_cell(p.key.model_family or '*')} "
        f"| {_cell(p.key.language or '*')} | {round(p.rate * 100)}% | {p.samples} |"
        for p in rows
    ]
    return "\n".join(out) + "\n"


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")
