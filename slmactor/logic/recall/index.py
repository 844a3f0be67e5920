"""Episode recall: the in-memory inverted index over index entries and the query of S-3.4–S-3.6.

`EpisodeIndex` holds the projection of every episode (`IndexEntry`), a BM25F document per entry
(fields query 3, files 3, summary 2, tags 2, language 2, tools 1 — S-3.4) and per-document columns
for the filters. It is built once when a store opens and updated on every append, so a recall
costs the postings of the query terms, not a pass over the store. Scoring and gates are
`rank.rank_index`, the same code `rank_text` runs for facts and lessons.

Filters (S-3.6) narrow the candidate set before scoring, so df and avgLen are taken over the
candidates exactly as the seed does: language and model compare case-insensitively only when both
the query and the episode name one; `success_only`; `failures_only` (≥ 1 failure); `since`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from slmactor.logic.recall.bm25f import BoolArray, FloatArray, InvertedIndex, weighted_tf
from slmactor.logic.recall.episode import IndexEntry
from slmactor.logic.recall.explain import Explanation
from slmactor.logic.recall.rank import RankOptions, query_terms, rank_index
from slmactor.logic.recall.tokenize import TokenizerOptions, path_tokens, tokenize

#: Episode recall returns this many hits unless asked otherwise (S-3.7).
DEFAULT_RECALL_N = 3


@dataclass(frozen=True, slots=True)
class EpisodeWeights:
    """Field weights of the episode document (S-3.1; language uses the tag weight)."""

    query: int = 3
    files: int = 3
    summary: int = 2
    tags: int = 2
    language: int = 2
    tools: int = 1


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """What to recall: terms (text, files, tools, tags) and filters (the rest)."""

    text: str = ""
    files: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    language: str = ""
    model: str = ""
    success_only: bool = False
    failures_only: bool = False
    since: float | None = None
    n: int = DEFAULT_RECALL_N
    min_coverage: float = 0.0
    min_score: float = 0.0
    explain: bool = False


@dataclass(frozen=True, slots=True)
class EpisodeHit:
    """One recalled episode (its index entry), its final score and optionally why."""

    entry: IndexEntry
    score: float
    explanation: Explanation | None = None


def episode_fields(
    entry: IndexEntry, weights: EpisodeWeights, tokenizer: TokenizerOptions
) -> dict[str, tuple[list[str], int]]:
    """Tokens and weight of each field of the episode document (S-3.4)."""
    files: list[str] = []
    for path in entry.files:
        files.extend(path_tokens(path, tokenizer))
    tools: list[str] = []
    for tool in entry.tools:
        tools.extend(tokenize(tool, tokenizer))
    tags: list[str] = []
    for tag in entry.tags:
        tags.extend(tokenize(tag, tokenizer))
    return {
        "query": (list(tokenize(entry.query, tokenizer)), weights.query),
        "summary": (list(tokenize(entry.summary, tokenizer)), weights.summary),
        "files": (files, weights.files),
        "tools": (tools, weights.tools),
        "tags": (tags, weights.tags),
        "language": (_language_terms(entry.language, tokenizer), weights.language),
    }


def _language_terms(language: str, tokenizer: TokenizerOptions) -> list[str]:
    if tokenizer.namespaced_language:
        clean = language.strip().lower()
        return [f"lang:{clean}"] if clean else []
    return list(tokenize(language, tokenizer))


def recall_terms(query: RecallQuery, tokenizer: TokenizerOptions) -> list[str]:
    """Text tokens + path tokens of each file + tools + tags, each term once (S-3.5)."""
    parts: list[Iterable[str]] = [tokenize(query.text, tokenizer)]
    parts.extend(path_tokens(f, tokenizer) for f in query.files)
    parts.extend(tokenize(t, tokenizer) for t in query.tools)
    parts.extend(tokenize(t, tokenizer) for t in query.tags)
    return query_terms([list(p) for p in parts])


class _Column:
    """A growable numpy column (amortised doubling)."""

    def __init__(self, dtype: type[np.generic]) -> None:
        self._data = np.zeros(16, dtype=dtype)
        self._n = 0

    def append(self, value: float | bool) -> None:
        if self._n >= len(self._data):
            grown = np.zeros(2 * len(self._data), dtype=self._data.dtype)
            grown[: self._n] = self._data[: self._n]
            self._data = grown
        self._data[self._n] = value
        self._n += 1

    @property
    def values(self) -> np.ndarray:
        return self._data[: self._n]


class EpisodeIndex:
    """Every episode's projection, searchable. Duplicate ids are ignored (S-2.6)."""

    def __init__(
        self, options: RankOptions | None = None, weights: EpisodeWeights | None = None
    ) -> None:
        self.options = options or RankOptions()
        self.weights = weights or EpisodeWeights()
        self._index = InvertedIndex(self.options.bm25)
        self._entries: list[IndexEntry] = []
        self._by_id: dict[str, int] = {}
        self._at = _Column(np.float64)
        self._success = _Column(np.bool_)
        self._has_failures = _Column(np.bool_)
        self._language = _Column(np.int32)
        self._model = _Column(np.int32)
        self._codes: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, episode_id: object) -> bool:
        return episode_id in self._by_id

    @property
    def vocabulary_size(self) -> int:
        return self._index.vocabulary_size

    def _code(self, value: str) -> int:
        key = value.strip().lower()
        if not key:
            return -1
        return self._codes.setdefault(key, len(self._codes))

    def _document(self, entry: IndexEntry) -> dict[str, int]:
        fields = episode_fields(entry, self.weights, self.options.tokenizer)
        return weighted_tf(fields.values())

    def _register(self, entry: IndexEntry) -> None:
        self._by_id[entry.id] = len(self._entries)
        self._entries.append(entry)
        self._at.append(entry.at if entry.at > 0 else 0.0)
        self._success.append(entry.success)
        self._has_failures.append(entry.failures > 0)
        self._language.append(self._code(entry.language))
        self._model.append(self._code(entry.model))

    def add(self, entry: IndexEntry) -> bool:
        """Index one entry; False (and nothing changes) when its id is already known."""
        if not entry.id or entry.id in self._by_id:
            return False
        self._index.add(self._document(entry))
        self._register(entry)
        return True

    def add_many(self, entries: Iterable[IndexEntry]) -> int:
        """Index entries in bulk; returns how many were new."""
        fresh: list[IndexEntry] = []
        for entry in entries:
            if entry.id and entry.id not in self._by_id:
                self._register(entry)
                fresh.append(entry)
        self._index.add_many(self._document(e) for e in fresh)
        return len(fresh)

    def get(self, episode_id: str) -> IndexEntry | None:
        doc = self._by_id.get(episode_id)
        return None if doc is None else self._entries[doc]

    def entries(self) -> list[IndexEntry]:
        """Oldest first: by time, then by insertion (the order S-2.4 keeps entries in)."""
        at = self._at.values
        order = np.lexsort((np.arange(len(self._entries)), at))
        return [self._entries[int(i)] for i in order]

    def recent(self, n: int) -> list[IndexEntry]:
        """Newest first; n ≤ 0 = all."""
        total = len(self._entries)
        if n <= 0 or n >= total:
            return self.entries()[::-1]
        # The newest n without sorting every entry (a distill pass asks for 120 of 10,000: 1.1 →
        # ~0.2 ms): every one of them is at least as new as the n-th newest time, so sort only
        # the entries that are (ties at that time are all kept, then ordered by insertion).
        at = self._at.values
        threshold = np.partition(at, total - n)[total - n]
        candidates = np.flatnonzero(at >= threshold)
        order = candidates[np.lexsort((candidates, at[candidates]))]
        return [self._entries[int(i)] for i in order[::-1][:n]]

    def _mask(self, query: RecallQuery) -> BoolArray | None:
        mask: BoolArray | None = None

        def narrow(condition: BoolArray) -> None:
            nonlocal mask
            mask = condition if mask is None else mask & condition

        for wanted, column in ((query.language, self._language), (query.model, self._model)):
            key = wanted.strip().lower()
            if key:
                code = self._codes.get(key, -2)
                values = column.values
                narrow((values == -1) | (values == code))
        if query.success_only:
            narrow(self._success.values.astype(np.bool_))
        if query.failures_only:
            narrow(self._has_failures.values.astype(np.bool_))
        if query.since is not None and query.since > 0:
            narrow(self._at.values >= query.since)
        return mask

    def recall(self, query: RecallQuery, now: float) -> list[EpisodeHit]:
        """Rank the episodes for `query` (S-3.5–S-3.7); no terms → no results."""
        terms = recall_terms(query, self.options.tokenizer)
        if not terms or not self._entries:
            return []
        at: FloatArray = self._at.values
        hits = rank_index(
            self._index,
            terms,
            at,
            self._success.values.astype(np.bool_),
            now,
            n=query.n,
            options=self.options,
            min_coverage=query.min_coverage,
            min_score=query.min_score,
            mask=self._mask(query),
            explain=query.explain,
            fields_of=self._fields_of,
            ties_by_time=True,
        )
        return [EpisodeHit(self._entries[h.index], h.score, h.explanation) for h in hits]

    def _fields_of(self, doc: int) -> Mapping[str, Mapping[str, int]]:
        fields = episode_fields(self._entries[doc], self.weights, self.options.tokenizer)
        return {name: weighted_tf([(tokens, weight)]) for name, (tokens, weight) in fields.items()}
