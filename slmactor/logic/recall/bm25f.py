"""The BM25F inverted index: weighted term frequencies, postings in numpy, exact scores (S-3.4, S-3.7).

A document is a bag of weighted tokens: every token of a field adds that field's weight to the
token's term frequency and to the document length (S-3.4). A query scores each document that holds
at least one term as `Σ idf(t)·norm(t)` with

    idf  = max(min_idf, ln(1 + (N − df + 0.5)/(df + 0.5)))
    norm = tf·(k1+1) / (tf + k1·(1 − b + b·len/avgLen))

where N, df and avgLen are taken over the *candidate set* (the documents that passed the filters),
exactly as S-3.7 says. The index only makes that arithmetic fast; it never changes a score: the
per-term contributions are added in query-term order, so a plain Python loop over the same
documents gives the same floats (tests/logic/recall/test_rank_property.py checks this to 1e-9).

Layout: a compressed base (CSR: one array of doc ids and one of term frequencies, sliced per term)
plus a small delta of documents added since the last compaction, merged once it grows past a
fraction of the base. Documents are dense ids 0..n-1 and are never removed (a prune rebuilds).
For long postings the saturated `norm` values are cached per average length; a term held by at
least a tenth of a large index is kept as a dense per-document `idf × norm` array (within a 64 MB
budget), so the commonest query words cost one contiguous add instead of a scatter over ~n
postings. Documents without the term get `+ 0.0`, which leaves their sums bit-identical.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int32]
BoolArray = npt.NDArray[np.bool_]

_EMPTY_IDS: IntArray = np.zeros(0, dtype=np.int32)
_EMPTY_TFS: FloatArray = np.zeros(0, dtype=np.float64)
# Postings at least this long keep their saturated weights cached (short ones are cheap anyway).
_CACHE_MIN_POSTINGS = 256
# A term held by at least 1/_DENSE_SHARE of the documents is scored from a dense per-document
# array (a contiguous add beats a scatter over ~n postings by 5-10x); those arrays are cached per
# average length within a memory budget, least recently used dropped first.
_DENSE_SHARE = 10
_DENSE_MIN_DOCS = 4096
_DENSE_BUDGET_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class BM25Params:
    """The constants of S-3.1."""

    k1: float = 1.2
    b: float = 0.75
    min_idf: float = 0.25


def idf(n_docs: int, df: int, min_idf: float) -> float:
    """`max(min_idf, ln(1 + (N − df + 0.5)/(df + 0.5)))` (S-3.7)."""
    return max(min_idf, math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)))


def weighted_tf(fields: Iterable[tuple[Sequence[str], int]]) -> dict[str, int]:
    """Term frequencies of a document built from (tokens, field weight) pairs (S-3.4)."""
    tf: dict[str, int] = {}
    for tokens, weight in fields:
        for token in tokens:
            tf[token] = tf.get(token, 0) + weight
    return tf


@dataclass(slots=True)
class TermScores:
    """What one query did to the candidate set: dense per-document sums, term by term."""

    scores: FloatArray  # Σ idf·norm per document id (0 where nothing matched)
    matched: npt.NDArray[np.int16]  # number of coverage-counted terms each document holds
    idfs: list[float]  # idf per query term (0.0 for a term no candidate holds)
    dfs: list[int]  # document frequency per query term over the candidates
    n_candidates: int
    avg_len: float


class InvertedIndex:
    """Postings of weighted term frequencies over dense document ids."""

    def __init__(self, params: BM25Params | None = None) -> None:
        self.params = params or BM25Params()
        self._term_ids: dict[str, int] = {}
        self._offsets: npt.NDArray[np.int64] = np.zeros(1, dtype=np.int64)
        self._docs: IntArray = _EMPTY_IDS
        self._tfs: FloatArray = _EMPTY_TFS
        self._delta: dict[int, tuple[list[int], list[int]]] = {}
        self._delta_postings = 0
        self._lengths: FloatArray = np.zeros(16, dtype=np.float64)
        self._n = 0
        self._total_len = 0.0
        self._sat_cache: dict[int, tuple[float, FloatArray]] = {}
        self._dense_cache: dict[int, tuple[float, int, FloatArray, BoolArray]] = {}
        self._k_cache: tuple[float, int, FloatArray] | None = None

    def __len__(self) -> int:
        return self._n

    @property
    def vocabulary_size(self) -> int:
        return len(self._term_ids)

    @property
    def lengths(self) -> FloatArray:
        """Document lengths (sum of field weights of their tokens), indexed by document id."""
        return self._lengths[: self._n]

    @property
    def total_length(self) -> float:
        return self._total_len

    # ----------------------------------------------------------------------------- building
    def add(self, tf: Mapping[str, int]) -> int:
        """Add one document (its weighted term frequencies); returns its id."""
        doc = self._append(tf)
        if self._delta_postings > max(4096, len(self._docs) // 8):
            self.compact()
        return doc

    def add_many(self, docs: Iterable[Mapping[str, int]]) -> None:
        """Add documents in bulk: flat triplets, then one stable sort into the compressed base."""
        self.compact()
        term_ids = self._term_ids
        # Typed arrays, not lists: millions of postings must not become millions of int objects.
        tids = array("q")
        counts = array("q")
        sizes = array("q")
        lengths: list[float] = []
        for tf in docs:
            tids.extend([term_ids.setdefault(term, len(term_ids)) for term in tf])
            counts.extend(tf.values())
            sizes.append(len(tf))
            lengths.append(float(sum(tf.values())))
        if not sizes:
            return
        first, added = self._n, len(sizes)
        if first + added > len(self._lengths):
            grown = np.zeros(max(16, first + added), dtype=np.float64)
            grown[:first] = self._lengths[:first]
            self._lengths = grown
        self._lengths[first : first + added] = lengths
        self._n += added
        self._total_len += float(sum(lengths))
        new_tids = np.frombuffer(tids, dtype=np.int64)
        new_docs = np.repeat(
            np.arange(first, first + added, dtype=np.int32), np.frombuffer(sizes, dtype=np.int64)
        )
        new_tfs = np.frombuffer(counts, dtype=np.int64).astype(np.float64)
        positive = new_tfs > 0
        new_tids, new_docs, new_tfs = new_tids[positive], new_docs[positive], new_tfs[positive]
        base_terms = len(self._offsets) - 1
        old_tids = np.repeat(np.arange(base_terms, dtype=np.int64), np.diff(self._offsets))
        all_tids = np.concatenate((old_tids, new_tids))
        # Stable: within a term the old postings (smaller doc ids) stay before the new ones.
        order = np.argsort(all_tids, kind="stable")
        offsets = np.zeros(len(term_ids) + 1, dtype=np.int64)
        np.cumsum(np.bincount(all_tids, minlength=len(term_ids)), out=offsets[1:])
        self._docs = np.concatenate((self._docs, new_docs))[order]
        self._tfs = np.concatenate((self._tfs, new_tfs))[order]
        self._offsets = offsets
        self._sat_cache.clear()
        self._dense_cache.clear()

    def _append(self, tf: Mapping[str, int]) -> int:
        doc = self._n
        if doc >= len(self._lengths):
            grown = np.zeros(max(16, 2 * len(self._lengths)), dtype=np.float64)
            grown[:doc] = self._lengths[:doc]
            self._lengths = grown
        length = float(sum(tf.values()))
        self._lengths[doc] = length
        self._total_len += length
        self._n += 1
        delta = self._delta
        term_ids = self._term_ids
        for term, count in tf.items():
            if count <= 0:
                continue
            tid = term_ids.setdefault(term, len(term_ids))
            bucket = delta.get(tid)
            if bucket is None:
                bucket = delta[tid] = ([], [])
            bucket[0].append(doc)
            bucket[1].append(count)
            self._delta_postings += 1
        return doc

    def compact(self) -> None:
        """Merge the delta into the compressed base (doc ids stay sorted within each term)."""
        if not self._delta:
            return
        n_terms = len(self._term_ids)
        old_counts = np.zeros(n_terms, dtype=np.int64)
        base_terms = len(self._offsets) - 1
        old_counts[:base_terms] = np.diff(self._offsets)
        add_counts = np.zeros(n_terms, dtype=np.int64)
        for tid, (docs, _) in self._delta.items():
            add_counts[tid] = len(docs)
        offsets = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(old_counts + add_counts, out=offsets[1:])
        total = int(offsets[-1])
        new_docs = np.empty(total, dtype=np.int32)
        new_tfs = np.empty(total, dtype=np.float64)
        # Old postings move as blocks: each term's slice shifts by the delta inserted before it.
        if len(self._docs):
            old_starts = self._offsets[:-1]
            shift = offsets[:base_terms] - old_starts
            position = np.arange(len(self._docs), dtype=np.int64)
            owner = np.repeat(np.arange(base_terms), old_counts[:base_terms])
            dest = position + shift[owner]
            new_docs[dest] = self._docs
            new_tfs[dest] = self._tfs
        for tid, (docs, tfs) in self._delta.items():
            start = int(offsets[tid] + old_counts[tid])
            new_docs[start : start + len(docs)] = docs
            new_tfs[start : start + len(docs)] = tfs
        self._offsets, self._docs, self._tfs = offsets, new_docs, new_tfs
        self._delta.clear()
        self._delta_postings = 0
        self._sat_cache.clear()
        self._dense_cache.clear()

    # ------------------------------------------------------------------------------ reading
    def postings(self, term: str) -> tuple[IntArray, FloatArray]:
        """Document ids (ascending) and weighted term frequencies of `term`."""
        tid = self._term_ids.get(term)
        if tid is None:
            return _EMPTY_IDS, _EMPTY_TFS
        return self._postings_of(tid)

    def _postings_of(self, tid: int) -> tuple[IntArray, FloatArray]:
        if tid < len(self._offsets) - 1:
            lo, hi = int(self._offsets[tid]), int(self._offsets[tid + 1])
            ids, tfs = self._docs[lo:hi], self._tfs[lo:hi]
        else:
            ids, tfs = _EMPTY_IDS, _EMPTY_TFS
        bucket = self._delta.get(tid)
        if bucket is not None:
            ids = np.concatenate((ids, np.asarray(bucket[0], dtype=np.int32)))
            tfs = np.concatenate((tfs, np.asarray(bucket[1], dtype=np.float64)))
        return ids, tfs

    def _k(self, avg_len: float) -> FloatArray:
        """Per-document `k1·(1 − b + b·len/avgLen)` for the whole index, cached per avgLen."""
        cached = self._k_cache
        if cached is not None and cached[0] == avg_len and cached[1] == self._n:
            return cached[2]
        p = self.params
        k = p.k1 * (1.0 - p.b + p.b * self.lengths / avg_len)
        self._k_cache = (avg_len, self._n, k)
        return k

    def _dense(
        self, tid: int, ids: IntArray, sat: FloatArray, avg_len: float, term_idf: float
    ) -> tuple[FloatArray, BoolArray]:
        """`idf × norm` of a common term as a dense per-document array, and where it occurs.

        Cached per (avgLen, n): with no filter both fix idf and norm, so a repeated common term
        costs one contiguous add.
        """
        hit = self._dense_cache.pop(tid, None)
        if hit is None or hit[0] != avg_len or hit[1] != self._n:
            dense = np.zeros(self._n, dtype=np.float64)
            dense[ids] = term_idf * sat
            present = np.zeros(self._n, dtype=np.bool_)
            present[ids] = True
            hit = (avg_len, self._n, dense, present)
        self._dense_cache[tid] = hit  # most recently used last
        budget = max(1, _DENSE_BUDGET_BYTES // (9 * max(self._n, 1)))
        while len(self._dense_cache) > budget:
            self._dense_cache.pop(next(iter(self._dense_cache)))
        return hit[2], hit[3]

    def score(
        self,
        terms: Sequence[str],
        counted: Sequence[bool],
        mask: BoolArray | None = None,
    ) -> TermScores:
        """Score every document for `terms` (distinct, in order), restricted to `mask` if given.

        `counted[i]` says whether term i counts for the coverage gate (`matched`).
        """
        n = self._n
        p = self.params
        if mask is None:
            n_cand = n
            total = self._total_len
        else:
            n_cand = int(np.count_nonzero(mask))
            total = float(self.lengths[mask].sum())
        avg_len = total / n_cand if n_cand > 0 else 0.0
        if avg_len <= 0:
            avg_len = 1.0
        scores = np.zeros(n, dtype=np.float64)
        matched = np.zeros(n, dtype=np.int16)
        idfs: list[float] = []
        dfs: list[int] = []
        k_all: FloatArray | None = None
        kp1 = p.k1 + 1.0
        for term, counts in zip(terms, counted, strict=True):
            tid = self._term_ids.get(term)
            if tid is None or n_cand == 0:
                idfs.append(0.0)
                dfs.append(0)
                continue
            ids, tfs = self._postings_of(tid)
            cacheable = mask is None and tid not in self._delta
            if mask is not None and len(ids):
                keep = mask[ids]
                ids, tfs = ids[keep], tfs[keep]
            df = len(ids)
            dfs.append(df)
            if df == 0:
                idfs.append(0.0)
                continue
            term_idf = idf(n_cand, df, p.min_idf)
            idfs.append(term_idf)
            dense_term = cacheable and df >= _DENSE_MIN_DOCS and df * _DENSE_SHARE >= n
            if dense_term:
                cached = self._dense_cache.get(tid)
                if cached is not None and cached[0] == avg_len and cached[1] == n:
                    self._dense_cache[tid] = self._dense_cache.pop(tid)  # most recently used
                    dense, present = cached[2], cached[3]
                else:
                    if k_all is None:
                        k_all = self._k(avg_len)
                    fresh = tfs * kp1 / (tfs + k_all[ids])
                    dense, present = self._dense(tid, ids, fresh, avg_len, term_idf)
                # Adding idf·0 = 0.0 to the documents without the term leaves them bit-identical.
                scores += dense
                if counts:
                    matched += present
                continue
            sat: FloatArray | None = None
            if cacheable and df >= _CACHE_MIN_POSTINGS:
                hit = self._sat_cache.get(tid)
                if hit is not None and hit[0] == avg_len:
                    sat = hit[1]
            if sat is None:
                if k_all is None:
                    k_all = self._k(avg_len)
                sat = tfs * kp1 / (tfs + k_all[ids])
                if cacheable and df >= _CACHE_MIN_POSTINGS:
                    self._sat_cache[tid] = (avg_len, sat)
            scores[ids] += term_idf * sat
            if counts:
                matched[ids] += 1
        return TermScores(scores, matched, idfs, dfs, n_cand, avg_len)
