"""The one lexical ranker: BM25F scores, then the gates of S-3.7, for episodes, facts and lessons.

`rank_index` is the whole pipeline over an `InvertedIndex`; episode recall (`logic.recall.index`) calls
it on the persistent index and `rank_text` (S-3.9) calls it on a throwaway single-field index of
the candidates, so there is exactly one implementation to tune and to trust. The steps, in order:

1. BM25F over the candidate set (`bm25f.InvertedIndex.score`); score ≤ 0 → dropped;
2. coverage gate: matched / terms < min_coverage → dropped (0 → default 0.34, negative → off);
3. optional absolute floor `min_score` (> 0), before recency;
4. × recency `1/(1 + age_days/half_life)` (S-3.8; 0.5 at 45 days; no timestamp → 1);
5. × 1.15 when the memory ended in success;
6. relative floor: dropped when below 0.40 × the best score (the seed: 0.45);
7. stable sort by score (ties keep store order: oldest first, then insertion), cap n (≤ 0 = all).

Steps 1–3 run on dense per-document arrays (the coverage gate as an integer count compare); before
recency, survivors whose `bm25 × max boost` cannot reach the n-th best final score of a sample are
dropped — an exact shortcut, since recency ≤ 1 — so a 100k-episode store gathers only a few
hundred candidates.

Coverage, two modes (`RankOptions.coverage`), because the literal S-3.7 gate throws away good
matches on real histories (docs/RECALL.md "Two modes": MRR 0.425 and no result for
28.5 % of tasks with the literal gate, against 0.58 without it):

* `"known"` (default): the denominator counts only query terms that some candidate holds, and pure
  numbers (issue/PR refs such as `#1234`, versions) are noise: they still score when they match
  but never count for coverage. Together with plural folding and acronym plurals in the tokenizer
  this keeps the gate's intent (no irrelevant-but-plausible memory) without punishing a query for
  words the store has never seen. When only numbers are known, coverage is taken as 1.
* `"all"` (`RankOptions.seed()`): the seed's exact rule, matched / all distinct query terms.

The default tokenizer also folds plurals, keeps acronym plurals whole and adds one whole-path term
per file (`logic/recall/tokenize.py`). Measured on real histories (bench/bench_recall_quality.py; 3,600
episodes, ~400 tasks each; MRR / precision@3 / empty-result rate, task text only):

    HarfBuzz git log   seed 0.468 / 0.427 / 5.3 %    default 0.473 / 0.391 / 2.3 %
    strace ChangeLog   seed 0.710 / 0.650 / 2.9 %    default 0.712 / 0.626 / 0.8 %

and with the task's files as focus files, MRR 0.514 → 0.684 and 0.781 → 0.873 (whole paths).
The relative floor stays: without it MRR rises by ~0.01–0.03 but precision@3 falls.

Recall without files, measured on HarfBuzz, strace, pallets/click, psf/requests and
this project's own log: when nothing passes the default coverage gate the ungated candidates are
ranked (`gate_fallback`: a query with any real match gets it — the gate had left 6–10 % of the
Python projects' text-only queries with nothing); the floor is 0.40; the tokenizer drops `as`,
`via`, `by`, folds plurals without inventing stems (cookies → cookie, aliases → alias) and keeps
the episode's language as `lang:x`, a term no query word matches. Figures in docs/RECALL.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from slmactor.logic.recall.bm25f import (
    BM25Params,
    BoolArray,
    FloatArray,
    IntArray,
    InvertedIndex,
    TermScores,
    weighted_tf,
)
from slmactor.logic.recall.explain import Explanation, TermContribution
from slmactor.logic.recall.tokenize import TokenizerOptions, is_noise, tokenize

__all__ = [
    "DEFAULT_MIN_COVERAGE",
    "Explanation",
    "RankHit",
    "RankOptions",
    "TermContribution",
    "TextCandidate",
    "query_terms",
    "rank_index",
    "rank_text",
    "recency",
]

SECONDS_PER_DAY = 86_400.0
#: Corpus-independent precision gate of the seed (S-3.1): share of distinct query terms matched.
DEFAULT_MIN_COVERAGE = 0.34

FieldsOf = Callable[[int], Mapping[str, Mapping[str, int]]]


@dataclass(frozen=True, slots=True)
class RankOptions:
    """Every constant of S-3.1 plus the switches that differ from the seed (see module doc)."""

    k1: float = 1.2
    b: float = 0.75
    min_idf: float = 0.25
    default_min_coverage: float = DEFAULT_MIN_COVERAGE
    #: Hits below this share of the best are dropped (the seed's 0.45; 0.40 by default:
    #: text-only MRR +0.005–0.01 on five histories, precision of the top 3 unchanged ±0.005).
    relative_floor: float = 0.40
    half_life_days: float = 45.0
    success_boost: float = 1.15
    coverage: Literal["known", "all"] = "known"
    numbers_are_noise: bool = True
    tokenizer: TokenizerOptions = field(
        default_factory=lambda: TokenizerOptions(
            fold_plurals=True, acronym_plurals=True, whole_paths=True, more_stopwords=True,
            namespaced_language=True,
        )
    )
    #: When no candidate passes the default coverage gate, rank the ungated candidates instead
    #: of answering nothing: a query with a real match gets it. An explicit
    #: `min_coverage` stays strict.
    gate_fallback: bool = True

    @classmethod
    def seed(cls) -> RankOptions:
        """The seed's exact behaviour (S-3.2 tokenizer, S-3.7 literal coverage gate)."""
        return cls(relative_floor=0.45, coverage="all", numbers_are_noise=False,
                   tokenizer=TokenizerOptions(), gate_fallback=False)

    @classmethod
    def named(cls, mode: str) -> RankOptions:
        """`"default"` / `"known"` → the default; `"seed"` → `seed()` (the config switch)."""
        if mode in ("", "default", "known"):
            return cls()
        if mode == "seed":
            return cls.seed()
        raise ValueError(f"unknown recall mode {mode!r} (expected 'default' or 'seed')")

    @property
    def mode(self) -> str:
        return "seed" if self == RankOptions.seed() else "default" if self == RankOptions() else "custom"

    @property
    def bm25(self) -> BM25Params:
        return BM25Params(self.k1, self.b, self.min_idf)


@dataclass(frozen=True)
class TextCandidate:
    """One text to rank with `rank_text` (a fact, a lesson line)."""

    text: str
    at: float | None = None
    success: bool = False


@dataclass(frozen=True)
class RankHit:
    """A surviving candidate: its index in the input, its final score and optionally why."""

    index: int
    score: float
    explanation: Explanation | None = None


def recency(at: float | None, now: float, half_life_days: float = 45.0) -> float:
    """`1/(1 + age_days/H)`: 0.5 at age H, 1/3 at 2H (hyperbolic, H-S-27); no or future time → 1."""
    if at is None or at <= 0 or half_life_days <= 0:
        return 1.0
    age = (now - at) / SECONDS_PER_DAY
    if age <= 0:
        return 1.0
    return 1.0 / (1.0 + age / half_life_days)


def query_terms(parts: Sequence[Sequence[str]]) -> list[str]:
    """Concatenate token lists and keep each term once, in first-seen order (S-3.5)."""
    seen: set[str] = set()
    out: list[str] = []
    for tokens in parts:
        for token in tokens:
            if token not in seen:
                seen.add(token)
                out.append(token)
    return out


def _recency_array(at: FloatArray, now: float, half_life: float) -> FloatArray:
    if half_life <= 0:
        return np.ones(len(at), dtype=np.float64)
    age = (now - at) / SECONDS_PER_DAY
    factor = 1.0 / (1.0 + age / half_life)
    return np.where((at <= 0) | (age <= 0), 1.0, factor)


def rank_index(
    index: InvertedIndex,
    terms: Sequence[str],
    at: FloatArray,
    success: BoolArray,
    now: float,
    *,
    n: int,
    options: RankOptions,
    min_coverage: float = 0.0,
    min_score: float = 0.0,
    mask: BoolArray | None = None,
    explain: bool = False,
    fields_of: FieldsOf | None = None,
    ties_by_time: bool = False,
) -> list[RankHit]:
    """The S-3.7 pipeline over `index`; hits carry document ids as `index`.

    `at` (epoch seconds, 0 = unknown) and `success` are per-document arrays; `mask` restricts the
    candidate set (df and avgLen are computed over it). `fields_of(doc)` gives a document's
    per-field weighted term counts, needed only for explanations.
    """
    if not terms or len(index) == 0:
        return []
    counted = [not (options.numbers_are_noise and is_noise(t)) for t in terms]
    if options.coverage == "all":
        counted = [True] * len(terms)
    ts = index.score(terms, counted, mask)
    if options.coverage == "all":
        denominator = len(terms)
    else:
        denominator = sum(1 for c, df in zip(counted, ts.dfs, strict=True) if c and df > 0)
    threshold = options.default_min_coverage if min_coverage == 0 else min_coverage

    # Steps 1-3 on the dense per-document arrays, so only survivors are gathered.
    least = 0  # step 2: matched/denominator < threshold ⇔ matched < the least passing count
    if threshold > 0 and denominator > 0:
        least = next(
            (m for m in range(denominator + 1) if not m / denominator < threshold),
            denominator + 1,
        )
    if least >= 1:
        keep = ts.matched >= least  # a counted match implies score > 0 (step 1)
        if options.gate_fallback and min_coverage == 0 and not keep.any():
            keep = ts.scores > 0  # nothing passes the default gate: the best partial matches
    else:
        keep = ts.scores > 0  # step 1 (the mask is already applied: others scored nothing)
        if threshold > 1.0 and denominator == 0:
            keep[:] = False  # coverage is 1 when only noise is known
    if min_score > 0:  # step 3
        keep &= ~(ts.scores < min_score)
    ids = np.flatnonzero(keep).astype(np.int32)
    bm25 = ts.scores[ids]
    ids, bm25 = _could_reach_top(ids, bm25, at, success, now, n, options)
    if denominator > 0:
        coverage = ts.matched[ids].astype(np.float64) / denominator
    else:
        coverage = np.ones(len(ids), dtype=np.float64)
    rec = _recency_array(at[ids], now, options.half_life_days)  # step 4
    boost = np.where(success[ids], options.success_boost, 1.0)  # step 5
    final = bm25 * rec * boost
    best = float(final.max()) if len(final) else 0.0
    floor = options.relative_floor * best
    if options.relative_floor > 0 and len(final):  # step 6
        keep = ~(final < floor)
        ids, bm25, coverage = ids[keep], bm25[keep], coverage[keep]
        rec, boost, final = rec[keep], boost[keep], final[keep]
    order = _order(ids, final, at, n, ties_by_time)  # step 7
    hits: list[RankHit] = []
    for pos in order:
        doc = int(ids[pos])
        explanation = None
        if explain:
            explanation = _explain(
                index, doc, terms, counted, ts, fields_of, options,
                bm25=float(bm25[pos]), coverage=float(coverage[pos]),
                matched=int(ts.matched[doc]), denominator=denominator, threshold=threshold,
                recency_factor=float(rec[pos]), age=_age(float(at[doc]), now),
                success_factor=float(boost[pos]), score=float(final[pos]), best=best, floor=floor,
            )
        hits.append(RankHit(doc, float(final[pos]), explanation))
    return hits


def _could_reach_top(
    ids: IntArray, bm25: FloatArray, at: FloatArray, success: BoolArray, now: float, n: int,
    options: RankOptions,
) -> tuple[IntArray, FloatArray]:
    """Drop survivors that cannot be among the top n, whatever their recency (exact).

    final = bm25 × recency × boost ≤ bm25 × max(1, boost), so a document whose bound is below the
    n-th best final score of a sample cannot reach the top n (nor be the best the relative floor
    compares with). Only worth it when far more documents survive than are asked for.
    """
    if n <= 0 or len(ids) <= 64 * n:
        return ids, bm25
    sample = np.argpartition(bm25, len(bm25) - 16 * n)[len(bm25) - 16 * n :]
    s_ids = ids[sample]
    rec = _recency_array(at[s_ids], now, options.half_life_days)
    finals = bm25[sample] * rec * np.where(success[s_ids], options.success_boost, 1.0)
    nth = float(np.partition(finals, len(finals) - n)[len(finals) - n])
    bound = bm25 * max(1.0, options.success_boost)
    keep = ~(bound < nth)
    return ids[keep], bm25[keep]


def _order(ids: IntArray, final: FloatArray, at: FloatArray, n: int, ties_by_time: bool) -> IntArray:
    """Positions by score desc; ties by (time, then) document id asc; the top n (n ≤ 0 = all)."""
    positions: IntArray = np.arange(len(ids), dtype=np.int32)
    if n > 0 and len(ids) > n:
        cut = np.partition(final, len(final) - n)[len(final) - n]
        positions = np.flatnonzero(final >= cut).astype(np.int32)
    chosen_ids = ids[positions]
    if ties_by_time:
        order = np.lexsort((chosen_ids, at[chosen_ids], -final[positions]))
    else:
        order = np.lexsort((chosen_ids, -final[positions]))
    chosen: IntArray = positions[order]
    return chosen[:n] if n > 0 else chosen


def _age(at: float, now: float) -> float:
    if at <= 0:
        return 0.0
    return max(0.0, (now - at) / SECONDS_PER_DAY)


def _explain(
    index: InvertedIndex,
    doc: int,
    terms: Sequence[str],
    counted: Sequence[bool],
    ts: TermScores,
    fields_of: FieldsOf | None,
    options: RankOptions,
    *,
    bm25: float,
    coverage: float,
    matched: int,
    denominator: int,
    threshold: float,
    recency_factor: float,
    age: float,
    success_factor: float,
    score: float,
    best: float,
    floor: float,
) -> Explanation:
    fields = fields_of(doc) if fields_of is not None else {}
    length = float(index.lengths[doc])
    k = options.k1 * (1.0 - options.b + options.b * length / ts.avg_len)
    contributions: list[TermContribution] = []
    missing: list[str] = []
    for i, term in enumerate(terms):
        per_field = [(name, float(tf[term])) for name, tf in fields.items() if tf.get(term)]
        tf_total = sum(v for _, v in per_field)
        if ts.dfs[i] == 0 or tf_total <= 0:
            missing.append(term)
            continue
        norm = tf_total * (options.k1 + 1.0) / (tf_total + k)
        part = ts.idfs[i] * norm
        shares = tuple((name, part * v / tf_total) for name, v in per_field)
        contributions.append(
            TermContribution(term, ts.idfs[i], ts.dfs[i], tf_total, norm, part, shares, counted[i])
        )
    return Explanation(
        terms=tuple(contributions),
        missing=tuple(missing),
        bm25=bm25,
        coverage=coverage,
        coverage_matched=matched,
        coverage_terms=denominator,
        min_coverage=threshold,
        recency=recency_factor,
        age_days=age,
        success_factor=success_factor,
        score=score,
        best=best,
        floor=floor,
        n_candidates=ts.n_candidates,
        avg_len=ts.avg_len,
        mode=options.mode,
    )


def rank_text(
    query: str,
    candidates: Sequence[TextCandidate],
    n: int,
    now: float,
    *,
    min_coverage: float = 0.0,
    explain: bool = False,
    options: RankOptions | None = None,
) -> list[RankHit]:
    """Rank texts against `query` with the episode pipeline, one field of weight 1 (S-3.9).

    Candidates failing a gate are absent; `RankHit.index` is the position in `candidates`.
    """
    opts = options or RankOptions()
    terms = query_terms([tokenize(query, opts.tokenizer)])
    if not terms or not candidates:
        return []
    docs = [weighted_tf([(tokenize(c.text, opts.tokenizer), 1)]) for c in candidates]
    index = InvertedIndex(opts.bm25)
    index.add_many(docs)
    at = np.array([c.at or 0.0 for c in candidates], dtype=np.float64)
    success = np.array([c.success for c in candidates], dtype=np.bool_)
    return rank_index(
        index, terms, at, success, now, n=n, options=opts, min_coverage=min_coverage,
        explain=explain, fields_of=lambda doc: {"text": docs[doc]},
    )
