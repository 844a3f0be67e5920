"""`rank_text` for candidate lists that repeat from call to call (facts, lesson lines).

`logic.recall.rank.rank_text` builds a throwaway index of its candidates on every call, re-tokenizing
each text (texts over 64 characters bypass the tokenizer's cache). Facts and lessons are ranked
against every new task while the candidates themselves rarely change: with 200 facts that was
7–19 ms per memory block on the daemon's event loop. Here the candidate index is kept between
calls (a small LRU keyed by the candidate texts) and the query goes through the very same
`rank_index` pipeline with the same options, so the hits are exactly `rank_text`'s
(tests/logic/recall/test_text_rank.py checks equality).

The heavy modules (numpy, the index) are imported on first use, so importing this module — and
the actors that use it — stays cheap at daemon start. Not thread-safe: call from one thread.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

CACHE_SIZE = 8

_cache: OrderedDict[tuple[str, ...], tuple[list[Any], Any]] = OrderedDict()


def _index_of(texts: tuple[str, ...], options: Any) -> tuple[list[Any], Any]:
    """(per-document term counts, InvertedIndex) for `texts`, built once per distinct list."""
    hit = _cache.get(texts)
    if hit is not None:
        _cache.move_to_end(texts)
        return hit
    from slmactor.logic.recall.bm25f import InvertedIndex, weighted_tf
    from slmactor.logic.recall.tokenize import tokenize

    docs = [weighted_tf([(tokenize(text, options.tokenizer), 1)]) for text in texts]
    index = InvertedIndex(options.bm25)
    index.add_many(docs)
    _cache[texts] = (docs, index)
    while len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return docs, index


def rank_texts(
    query: str,
    texts: Sequence[str],
    now: float,
    *,
    at: Sequence[float | None] | None = None,
    n: int = 0,
) -> list[tuple[int, float]]:
    """(candidate position, score) of the texts that pass every gate, best first.

    Same result as `rank_text(query, [TextCandidate(t, a) …], n, now)` with default options.
    """
    import numpy as np

    from slmactor.logic.recall.rank import RankOptions, query_terms, rank_index
    from slmactor.logic.recall.tokenize import tokenize

    options = _default_options()
    terms = query_terms([tokenize(query, options.tokenizer)])
    if not terms or not texts:
        return []
    docs, index = _index_of(tuple(texts), options)
    times = at if at is not None else [None] * len(texts)
    at_array = np.array([t or 0.0 for t in times], dtype=np.float64)
    success = np.zeros(len(texts), dtype=np.bool_)
    assert isinstance(options, RankOptions)
    hits = rank_index(
        index,
        terms,
        at_array,
        success,
        now,
        n=n,
        options=options,
        fields_of=lambda doc: {"text": docs[doc]},
    )
    return [(hit.index, hit.score) for hit in hits]


_options: list[Any] = []


def _default_options() -> Any:
    if not _options:
        from slmactor.logic.recall.rank import RankOptions

        _options.append(RankOptions())
    return _options[0]


def clear_cache() -> None:
    _cache.clear()
