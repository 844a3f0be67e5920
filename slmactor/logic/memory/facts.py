"""Semantic memory: durable, confidence-scored facts about one project (SPEC S-4, S-7.8).

A `Fact` is an immutable record; a `FactBook` is the in-memory collection the distiller actor owns
and the facts store persists. Everything here is pure: time comes in as `now` (epoch seconds).

Rules kept from the seed:
* confidence is the Beta(1,1) posterior mean `(support+1)/(support+contradict+2)` — one sighting is
  0.67, a hint and not a law; `score = confidence × 1/(1 + age_days/60)` (pinned facts score 1);
* observing the same subject with the *same claim* (digits ignored, so "works here (2/2 runs)" ≡
  "works here (7/8 runs)") is support; a different claim is a contradiction, and once contradictions
  outweigh support the text is replaced and the counters reset;
* pinned facts (hand-written `"pinned": true`) are never overwritten, refuted or pruned;
* `render_for(query)` orders each kind's facts by BM25F relevance (zero timestamps: staleness is
  already in the score) and never filters; `render()` is byte-identical to `render_for("")`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from slmactor.logic.memory.block_items import (
    TITLE,
    BlockItem,
    bullet,
    fit_items,
    heading,
    items_text,
    plain,
)
from slmactor.logic.recall.text_rank import rank_texts
from slmactor.logic.text.redact import redact_obj
from slmactor.logic.text.strings import (
    TokenCounter,
    clip,
    count_tokens_chars,
    dedupe,
    hash_id,
)
from slmactor.logic.text.timefmt import age_days, parse_rfc3339, to_rfc3339
from slmactor.logic.text.trust import (
    UNVERIFIED_LABEL,
    WITHHELD,
    quoted,
    signed,
    verified,
    withhold_commands,
)

KINDS = ("command", "layout", "convention", "gotcha", "file", "dependency")
#: Action first: what to run and what bites come before where things live.
RENDER_ORDER = ("command", "gotcha", "layout", "convention", "dependency", "file")
HEADINGS = {
    "command": "Commands that work",
    "gotcha": "Gotchas",
    "layout": "Layout",
    "convention": "Conventions",
    "dependency": "Toolchain",
    "file": "Files",
}
DEFAULT_KIND = "convention"

MAX_SOURCES = 5
MAX_TEXT_BYTES = 240
MAX_SUBJECT_BYTES = 160
MAX_FACTS = 200
RENDER_BUDGET = 400
RENDER_PER_KIND = 6
RENDER_MIN_SCORE = 0.34
STALENESS_HALF_LIFE_DAYS = 60.0
CONTRADICTION_RATIO = 1.0
BLOCK_HEADING = "## What we know about this project"

PRUNE_MIN_CONFIDENCE = 0.25
PRUNE_MAX_AGE_DAYS = 365.0

_DIGITS = re.compile(r"[0-9]+")
_BLANKS = re.compile(r"[ \t\r\n]+")


def fact_id(kind: str, subject: str) -> str:
    """`hashID("f_", kind, lower(trim(subject)))` (S-4.2)."""
    return hash_id("f_", kind.strip().lower(), subject.strip().lower())


def beta_confidence(support: int, contradict: int) -> float:
    """Beta(1,1) posterior mean (S-4.3): one sighting scores 0.67."""
    return (support + 1) / (support + contradict + 2)


def recency(at: float, now: float, half_life_days: float) -> float:
    """Hyperbolic decay `1/(1 + age/H)` (0.5 at age H); a zero or future timestamp decays nothing."""
    if at <= 0:
        return 1.0
    return 1.0 / (1.0 + age_days(at, now) / half_life_days)


def claim_key(text: str) -> str:
    """What makes two wordings the same claim (S-4.5): case, digits and spacing ignored."""
    return _BLANKS.sub(" ", _DIGITS.sub("#", text.strip().lower())).strip()


@dataclass(frozen=True, slots=True)
class Observation:
    """One sighting of a claim, as the distiller and the lessons bridge produce them."""

    kind: str
    subject: str
    text: str
    sources: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Fact:
    """One distilled claim about the project; `id` derives from (kind, subject)."""

    id: str
    kind: str
    subject: str
    text: str
    support: int = 1
    contradict: int = 0
    confidence: float = 2 / 3
    first_seen: float = 0.0
    last_seen: float = 0.0
    sources: tuple[str, ...] = ()
    pinned: bool = False
    #: False for a fact a project file brought without this user's signature (see
    #: `FactBook.key`): rendered labelled with its commands withheld, never pinned.
    verified: bool = True

    def score(self, now: float) -> float:
        """1 for pinned facts, else confidence decayed by staleness (60-day half-life)."""
        if self.pinned and self.verified:
            return 1.0
        return self.confidence * recency(self.last_seen, now, STALENESS_HALF_LIFE_DAYS)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "subject": self.subject,
            "text": self.text,
            "support": self.support,
            "contradict": self.contradict,
            "confidence": round(self.confidence, 6),
            "first_seen": to_rfc3339(self.first_seen) if self.first_seen > 0 else "",
            "last_seen": to_rfc3339(self.last_seen) if self.last_seen > 0 else "",
            "sources": list(self.sources),
            "pinned": self.pinned,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Fact | None:
        """A fact from (possibly hand-edited) JSON; None when it has neither subject nor text.

        The id is recomputed from (kind, subject), a non-positive confidence is recomputed, wrong
        types fall back to defaults rather than rejecting the whole file.
        """
        kind = _text(raw.get("kind")).strip().lower() or DEFAULT_KIND
        subject = clip(_text(raw.get("subject")), MAX_SUBJECT_BYTES)
        text = clip(_text(raw.get("text")), MAX_TEXT_BYTES)
        if not subject and not text:
            return None
        support = max(_int(raw.get("support"), 1), 0)
        contradict = max(_int(raw.get("contradict"), 0), 0)
        conf = raw.get("confidence")
        confidence = (
            float(conf) if isinstance(conf, int | float) and not isinstance(conf, bool) else 0.0
        )
        if not 0 < confidence <= 1:
            confidence = beta_confidence(support, contradict)
        sources = raw.get("sources")
        return cls(
            # The id is (kind, subject) by definition: a hand-typed or stale id would let the
            # next sighting of the same claim start a second fact beside this one.
            id=fact_id(kind, subject),
            kind=kind,
            subject=subject,
            text=text,
            support=support,
            contradict=contradict,
            confidence=confidence,
            first_seen=parse_rfc3339(_text(raw.get("first_seen"))) or 0.0,
            last_seen=parse_rfc3339(_text(raw.get("last_seen"))) or 0.0,
            sources=tuple(dedupe((_text(s) for s in sources), MAX_SOURCES))
            if isinstance(sources, list)
            else (),
            pinned=raw.get("pinned") is True,
        )


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


#: Fields of a fact record the user edits by hand (`"pinned": true`): outside its signature.
SIGN_LOOSE = ("pinned",)


def _signed_record(key: bytes, fact: Fact) -> dict[str, Any]:
    record = fact.to_dict()
    if not fact.verified:
        return record
    clean = redact_obj(record)
    return signed(key, clean if isinstance(clean, dict) else record, SIGN_LOOSE)


def _int(value: object, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return int(value)


@dataclass(slots=True)
class FactBook:
    """The facts of one project, keyed by id. Mutating methods take `now`; nothing reads a clock."""

    cap: int = MAX_FACTS
    _facts: dict[str, Fact] = field(default_factory=dict)
    #: The user's signing key: records are loaded as `verified` only with its valid `sig`, and
    #: `to_records` signs the verified ones (None: nothing is checked or signed).
    key: bytes | None = None
    #: The record last written for each fact, by id, with the (immutable) fact it came from:
    #: a flush re-signs only the facts that changed since, not the whole book on every write.
    _records: dict[str, tuple[Fact, bytes | None, dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def from_records(cls, records: Iterable[object], cap: int = MAX_FACTS,
                     key: bytes | None = None) -> FactBook:
        """Load rule of S-4.10: unusable records and duplicate ids are skipped."""
        book = cls(cap=cap, key=key)
        for raw in records:
            fact = Fact.from_dict(raw) if isinstance(raw, Mapping) else None
            if fact is not None and fact.id not in book._facts:
                if not verified(key, raw, SIGN_LOOSE):  # type: ignore[arg-type]
                    fact = replace(fact, verified=False, pinned=False)
                book._facts[fact.id] = fact
        return book

    def __len__(self) -> int:
        return len(self._facts)

    def __iter__(self) -> Any:
        return iter(self._facts.values())

    def get(self, kind: str, subject: str) -> Fact | None:
        return self._facts.get(fact_id(kind.strip().lower() or DEFAULT_KIND, subject))

    def clear(self) -> None:
        self._facts.clear()

    def to_records(self) -> list[dict[str, Any]]:
        """JSON records, in insertion order (stable files, readable diffs); the user's own are
        signed (after redaction: the signature covers what is stored), others are not."""
        records: dict[str, tuple[Fact, bytes | None, dict[str, Any]]] = {}
        for fact_key, fact in self._facts.items():
            cached = self._records.get(fact_key)
            if cached is not None and cached[0] is fact and cached[1] == self.key:
                records[fact_key] = cached
            else:
                record = fact.to_dict() if self.key is None else _signed_record(self.key, fact)
                records[fact_key] = (fact, self.key, record)
        self._records = records
        return [record for _, _, record in records.values()]

    def unverified(self) -> list[Fact]:
        return [f for f in self._facts.values() if not f.verified]

    def adopt(self, ids: Iterable[str] | None) -> list[Fact]:
        """Take unverified facts (`ids`, or all for None) as the user's own (`slmactor trust`)."""
        wanted = None if ids is None else set(ids)
        adopted = [replace(f, verified=True) for f in self.unverified()
                   if wanted is None or f.id in wanted]
        self._facts.update((f.id, f) for f in adopted)
        return adopted

    def observe(
        self, kind: str, subject: str, text: str, now: float, sources: Iterable[str] = ()
    ) -> Fact | None:
        """Record one sighting of a claim (S-4.4); None when subject or text is blank."""
        kind = kind.strip().lower() or DEFAULT_KIND
        subject = clip(subject, MAX_SUBJECT_BYTES)
        text = clip(text, MAX_TEXT_BYTES)
        if not subject or not text:
            return None
        fid = fact_id(kind, subject)
        old = self._facts.get(fid)
        if old is not None and not old.verified:
            # This user's own sighting replaces what a repository claimed, counts and all.
            del self._facts[fid]
            old = None
        merged = tuple(dedupe([*(old.sources if old else ()), *sources], MAX_SOURCES))
        if old is None:
            new = Fact(fid, kind, subject, text, 1, 0, beta_confidence(1, 0), now, now, merged)
        elif claim_key(old.text) == claim_key(text):
            support = old.support + 1
            new = replace(
                old,
                text=old.text if old.pinned else text,
                support=support,
                confidence=beta_confidence(support, old.contradict),
                last_seen=now,
                sources=merged,
            )
        else:
            support, contradict, kept = old.support, old.contradict + 1, old.text
            if contradict > support * CONTRADICTION_RATIO and not old.pinned:
                support, contradict, kept = 1, 0, text
            new = replace(
                old,
                text=kept,
                support=support,
                contradict=contradict,
                confidence=beta_confidence(support, contradict),
                last_seen=now,
                sources=merged,
            )
        self._facts[fid] = new
        if self.cap > 0 and len(self._facts) > 2 * self.cap:
            self.prune(now, max_facts=self.cap, min_confidence=-1, max_age_days=-1)
        return new

    def observe_all(self, observations: Iterable[Observation], now: float) -> int:
        """Fold observations in order; returns how many were recorded (blank ones are not)."""
        recorded = 0
        for obs in observations:
            if self.observe(obs.kind, obs.subject, obs.text, now, obs.sources) is not None:
                recorded += 1
        return recorded

    def remove(self, fid: str) -> bool:
        """Drop one fact by id (a claim check retired it); pinned facts stay. True if gone."""
        fact = self._facts.get(fid)
        if fact is None or fact.pinned:
            return False
        del self._facts[fid]
        return True

    def refute(self, kind: str, subject: str, now: float) -> bool:
        """One contradiction without a replacement text (S-4.6); unknown or pinned → False."""
        fid = fact_id(kind.strip().lower() or DEFAULT_KIND, subject)
        old = self._facts.get(fid)
        if old is None or old.pinned:
            return False
        contradict = old.contradict + 1
        self._facts[fid] = replace(
            old,
            contradict=contradict,
            confidence=beta_confidence(old.support, contradict),
            last_seen=now,
        )
        return True

    def ranked(self, now: float, kind: str = "") -> list[Fact]:
        """Score desc, then subject asc (S-4.8); `kind` filters when given."""
        wanted = kind.strip().lower()
        facts = [f for f in self._facts.values() if not wanted or f.kind == wanted]
        return sorted(facts, key=lambda f: (-f.score(now), f.subject, f.id))

    def prune(
        self,
        now: float,
        *,
        max_facts: int = 0,
        min_confidence: float = 0.0,
        max_age_days: float = 0.0,
    ) -> int:
        """Drop weak, stale and surplus facts (S-7.8); pinned facts always stay. Returns the count.

        Zero means the default (200 facts, confidence 0.25, 365 days); negative means unlimited.
        """
        cap = MAX_FACTS if max_facts == 0 else max_facts
        floor = PRUNE_MIN_CONFIDENCE if min_confidence == 0 else min_confidence
        max_age = PRUNE_MAX_AGE_DAYS if max_age_days == 0 else max_age_days
        before = len(self._facts)
        keep = [
            f
            for f in self._facts.values()
            if f.pinned
            or (
                (floor < 0 or f.confidence >= floor)
                and (max_age < 0 or f.last_seen <= 0 or age_days(f.last_seen, now) <= max_age)
            )
        ]
        if cap >= 0 and len(keep) > cap:
            pinned = [f for f in keep if f.pinned]
            others = sorted((f for f in keep if not f.pinned), key=lambda f: (-f.score(now), f.id))
            chosen = {f.id for f in pinned + others[: max(cap - len(pinned), 0)]}
            keep = [f for f in keep if f.id in chosen]
        self._facts = {f.id: f for f in keep}
        return before - len(self._facts)

    def render_for(
        self,
        query: str,
        budget: int,
        now: float,
        counter: TokenCounter = count_tokens_chars,
    ) -> str:
        """The prompt block of S-4.9: eligible facts by kind, relevant ones first, ≤ 6 per kind."""
        found = self.items_for(query, budget, now, counter)
        return items_text(found) + "\n" if found else ""

    def items_for(
        self,
        query: str,
        budget: int,
        now: float,
        counter: TokenCounter = count_tokens_chars,
        keep: Callable[[Fact], bool] | None = None,
    ) -> list[BlockItem]:
        """`render_for` as the block's items: each fact a bullet resting on the fact and the
        episodes that support it, naming the fix it says. `keep` is the claims' check: a fact
        it fails is not told (the next one of its kind takes its place)."""
        if budget <= 0:
            budget = RENDER_BUDGET
        scored = [f for f in self._facts.values() if f.score(now) >= RENDER_MIN_SCORE
                  and (keep is None or not f.verified or keep(f))]
        eligible = [f for f in scored if f.verified]
        foreign = _unverified_items([f for f in scored if not f.verified], query, now)
        if not eligible and not foreign:
            return []
        relevance = _relevance(query, eligible, now)
        by_kind: dict[str, list[Fact]] = {}
        for f in eligible:
            by_kind.setdefault(f.kind, []).append(f)
        kinds = [k for k in RENDER_ORDER if k in by_kind]
        kinds += sorted(k for k in by_kind if k not in RENDER_ORDER)
        out = [heading(SECTION, BLOCK_HEADING, TITLE), plain(SECTION, "")]
        for kind in kinds:
            ranked = sorted(
                by_kind[kind],
                key=lambda f: (-relevance.get(f.id, 0.0), -f.score(now), f.subject, f.id),
            )
            meanings: set[str] = set()
            chosen = []
            for f in ranked:
                meaning = item_meaning(f.text, numbers=kind != "gotcha")
                if meaning not in meanings:  # the same rule or claim again says nothing new
                    meanings.add(meaning)
                    chosen.append(f)
            chosen = chosen[:RENDER_PER_KIND]
            out.append(heading(SECTION, HEADINGS.get(kind, kind.upper()) + ":"))
            out.extend(bullet(SECTION, f"- {f.text}", fix=fix_of(f.text),
                              evidence=(f.id, *f.sources), uses=fact_uses(f)) for f in chosen)
            out.append(plain(SECTION, ""))
        if foreign:
            out.extend([heading(SECTION, f"{UNVERIFIED_HEADING}:"), *foreign, plain(SECTION, "")])
        while out and not out[-1].text:
            out.pop()
        return fit_items(out, budget, lambda text: counter(text + "\n"))

    def render(self, budget: int, now: float, counter: TokenCounter = count_tokens_chars) -> str:
        """The unconditioned block: byte-identical to `render_for("", …)`."""
        return self.render_for("", budget, now, counter)


#: The heading of facts a repository brought unsigned, after the user's own.
UNVERIFIED_HEADING = (f"Facts from this repository's store, not learned here ({UNVERIFIED_LABEL};"
                      " commands withheld)")


def _unverified_items(facts: list[Fact], query: str, now: float) -> list[BlockItem]:
    """Up to `RENDER_PER_KIND` unverified facts, relevant first, commands withheld; a fact that
    is nothing but a command says nothing once withheld and is left out."""
    relevance = _relevance(query, facts, now) if facts else {}
    ranked = sorted(facts, key=lambda f: (-relevance.get(f.id, 0.0), -f.score(now), f.id))
    lines: list[BlockItem] = []
    for f in ranked:
        text = withhold_commands(f.text)
        if text.replace(WITHHELD, "").strip(" .;,:"):
            lines.append(bullet(SECTION, f"- {UNVERIFIED_LABEL}: {quoted(text)}", evidence=(f.id,)))
        if len(lines) >= RENDER_PER_KIND:
            break
    return lines


#: How a gotcha's text names its fix (`distill` writes it, `fix_of` reads it back).
GOTCHA_FIX = " — fix: "
#: How a convention's text names what fixed it (reflection's lessons; `polar_lessons` too).
FIXED_BY = " — fixed by "
_SEEN_COUNT = re.compile(r"\s*\(seen \d+×\)\s*$")


def fact_uses(fact: Fact) -> str:
    """What a fact presents as there to use: its fix, or (a command, the folders where work
    happens, a file) its whole text; "" for what presents nothing (the primary language)."""
    fix = fix_of(fact.text)
    if fix:
        return fix
    return fact.text if fact.kind in ("command", "layout", "file") else ""


def fix_of(text: str) -> str:
    """The fix a gotcha's or a convention's text names ("" when it names none)."""
    for sep in (GOTCHA_FIX, FIXED_BY):
        if sep in text:
            return _SEEN_COUNT.sub("", text.rsplit(sep, 1)[1]).strip()
    return ""


#: The block section facts are shown in.
SECTION = "semantic"
_RULE_NAMED = re.compile(r"\brule:(rule_[0-9a-f]{12})\b")
_SEEN = re.compile(r"\s*\(seen \d+×\)\s*$")
_NUMBER = re.compile(r"\d+")


def item_meaning(text: str, numbers: bool = True) -> str:
    """What a rendered item means, for deduplication: the rule it names, else its
    claim with the sighting count dropped — and, with `numbers=False` (a gotcha: an error
    message), its numbers masked (`line 1 column 110` ≡ `column 176`)."""
    named = _RULE_NAMED.search(text)
    if named:
        return named.group(1)
    claim = _SEEN.sub("", text).lower()
    return " ".join((claim if numbers else _NUMBER.sub("N", claim)).split())


def _relevance(query: str, facts: list[Fact], now: float) -> dict[str, float]:
    """BM25F relevance per fact id; zero timestamps because staleness is already in the score."""
    if not query.strip():
        return {}
    hits = rank_texts(query, [f"{f.subject} {f.text}" for f in facts], now)
    return {facts[index].id: score for index, score in hits}


SEMANTIC_TITLE = "# Semantic memory"
SEMANTIC_NOTE = (
    "_Distilled from episodes. Edit freely; `pinned: true` facts are never pruned or overwritten._"
)
SEMANTIC_RENDER_BUDGET = 4000


def semantic_markdown(book: FactBook, now: float) -> str:
    """The `SEMANTIC.md` mirror (S-4.10): title, note and the unconditioned block."""
    body = book.render(SEMANTIC_RENDER_BUDGET, now)
    return (
        f"{SEMANTIC_TITLE}\n\n{SEMANTIC_NOTE}\n\n{body}"
        if body
        else f"{SEMANTIC_TITLE}\n\n{SEMANTIC_NOTE}\n"
    )
