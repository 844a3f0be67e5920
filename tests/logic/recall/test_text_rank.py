"""The cached text ranker returns exactly what the shared `rank_text` returns."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.recall.rank import TextCandidate, rank_text
from slmactor.logic.recall.text_rank import CACHE_SIZE, _cache, clear_cache, rank_texts

NOW = 1_790_000_000.0
DAY = 86_400.0
WORDS = [
    "graph",
    "walker",
    "imports",
    "import",
    "cycle",
    "fixture",
    "flaky",
    "pytest",
    "make",
    "lint",
    "URLs",
    "HTTPClient",
    "pkg/graph/walk.go",
    "#1234",
    "2",
    "the",
    "of",
    "retry",
]

texts = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join), min_size=0, max_size=30
)
times = st.one_of(st.none(), st.floats(min_value=NOW - 400 * DAY, max_value=NOW + DAY))


@settings(derandomize=True, max_examples=300)
@given(texts, st.lists(st.sampled_from(WORDS), max_size=5).map(" ".join), st.data())
def test_same_hits_as_rank_text(candidates: list[str], query: str, data: st.DataObject) -> None:
    at = [data.draw(times) for _ in candidates]
    expected = rank_text(
        query, [TextCandidate(t, a) for t, a in zip(candidates, at, strict=True)], 0, NOW
    )
    for _ in range(2):  # cold, then from the cache
        got = rank_texts(query, candidates, NOW, at=at)
        assert [i for i, _ in got] == [h.index for h in expected]
        assert [s for _, s in got] == [h.score for h in expected]


def test_index_is_reused_and_the_cache_bounded() -> None:
    clear_cache()
    facts = [
        f"fact {i} about the graph walker and its flaky fixture number {i}" * 2 for i in range(200)
    ]
    rank_texts("graph walker fixture", facts, NOW)
    (built,) = _cache.values()
    rank_texts("flaky walker", facts, NOW)  # another task, same facts: no rebuild
    assert len(_cache) == 1 and next(iter(_cache.values())) is built
    for i in range(CACHE_SIZE + 5):
        rank_texts("text", [f"text {i}"], NOW)
    assert len(_cache) == CACHE_SIZE
