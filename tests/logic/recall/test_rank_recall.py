"""Episode recall: query terms (S-3.5), filters (S-3.6), field weights (S-3.4), store-order ties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.recall.episode import IndexEntry
from slmactor.logic.recall.index import EpisodeIndex, RecallQuery, recall_terms
from slmactor.logic.recall.rank import RankOptions
from slmactor.logic.recall.tokenize import TokenizerOptions

NOW = 1_800_000_000.0
DAY = 86_400.0


def entry(i: str, query: str = "parser crash", **kw: object) -> IndexEntry:
    base: dict[str, object] = {"at": NOW - DAY, "offset": 0}
    base.update(kw)
    return IndexEntry(id=i, query=query, **base)  # type: ignore[arg-type]


def ids(index: EpisodeIndex, q: RecallQuery) -> list[str]:
    return [h.entry.id for h in index.recall(q, NOW)]


def test_query_terms_text_then_paths_then_tools_then_tags_deduplicated() -> None:
    q = RecallQuery("Fix parser", files=("src/parser.py",), tools=("ws_edit",), tags=("parser",))
    seed = RankOptions.seed().tokenizer
    assert recall_terms(q, seed) == ["fix", "parser", "src", "py", "ws", "edit"]
    assert "path:src/parser.py" in recall_terms(q, RankOptions().tokenizer)
    assert recall_terms(RecallQuery("the and"), seed) == []


def test_no_terms_no_results() -> None:
    index = EpisodeIndex()
    index.add(entry("a"))
    assert index.recall(RecallQuery("", language="python"), NOW) == []


def test_language_and_model_filter_only_when_both_sides_are_set() -> None:
    index = EpisodeIndex()
    index.add(entry("py", language="python", model="qwen"))
    index.add(entry("go", language="go"))
    index.add(entry("none"))
    assert sorted(ids(index, RecallQuery("parser crash", language="Python", n=0))) == ["none", "py"]
    assert sorted(ids(index, RecallQuery("parser crash", n=0))) == ["go", "none", "py"]
    assert sorted(ids(index, RecallQuery("parser crash", model="QWEN", n=0))) == [
        "go", "none", "py"]
    assert sorted(ids(index, RecallQuery("parser crash", model="llama", n=0))) == ["go", "none"]


def test_success_failures_and_since_filters() -> None:
    index = EpisodeIndex()
    index.add(entry("ok", success=True))
    index.add(entry("failed", failures=2))
    index.add(entry("old", at=NOW - 30 * DAY))
    both = RecallQuery("parser crash", n=0, min_coverage=-1)
    assert ids(index, RecallQuery("parser crash", success_only=True, n=0)) == ["ok"]
    assert ids(index, RecallQuery("parser crash", failures_only=True, n=0)) == ["failed"]
    since = RecallQuery("parser crash", since=NOW - 2 * DAY, n=0)
    assert sorted(ids(index, since)) == ["failed", "ok"]
    # recency 0.6 (30 d) against 0.978 × 1.15 for "ok": 0.53 of the best, above the 0.45 floor
    assert sorted(ids(index, both)) == ["failed", "ok", "old"]


def test_files_weigh_three_tools_one() -> None:
    index = EpisodeIndex(RankOptions(relative_floor=0))
    index.add(entry("tool", query="unrelated", tools=("deploy",)))
    index.add(entry("file", query="unrelated", files=("deploy",)))
    index.add(entry("other", query="zulu"))
    hits = index.recall(RecallQuery("deploy", n=0, explain=True), NOW)
    assert [h.entry.id for h in hits] == ["file", "tool"]
    assert hits[0].explanation is not None
    assert dict(hits[0].explanation.terms[0].fields) == pytest.approx(
        {"files": hits[0].explanation.bm25})


def test_ties_follow_store_order_oldest_first_then_insertion() -> None:
    index = EpisodeIndex()
    index.add(entry("future", at=NOW + DAY))  # recency 1 (no age)
    index.add(entry("now_b", at=NOW))
    index.add(entry("now_a", at=NOW))
    hits = index.recall(RecallQuery("parser crash", n=0), NOW)
    assert [h.entry.id for h in hits] == ["now_b", "now_a", "future"]
    assert len({h.score for h in hits}) == 1


def test_duplicate_ids_are_ignored_and_recent_is_newest_first() -> None:
    index = EpisodeIndex()
    assert index.add(entry("a", at=NOW - 2 * DAY))
    assert not index.add(entry("a", query="other"))
    assert index.add_many([entry("b", at=NOW - 3 * DAY), entry("a"), entry("c", at=NOW)]) == 2
    assert [e.id for e in index.recent(0)] == ["c", "a", "b"]
    assert [e.id for e in index.entries()] == ["b", "a", "c"]
    assert index.get("a") is not None and index.get("a").query == "parser crash"  # type: ignore[union-attr]


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    times=st.lists(st.integers(min_value=0, max_value=6), min_size=1, max_size=40),
    n=st.integers(min_value=-1, max_value=45),
)
def test_recent_n_is_the_head_of_all_newest_first(times: list[int], n: int) -> None:
    """recent(n) picks the newest n without sorting everything: the same entries, in the same
    order (ties in time by insertion, newest first), as the whole newest-first list cut at n."""
    index = EpisodeIndex()
    index.add_many([entry(f"e{k}", at=NOW - t * DAY) for k, t in enumerate(times)])
    whole = [e.id for e in index.recent(0)]
    expected = whole[:n] if n > 0 else whole
    assert [e.id for e in index.recent(n)] == expected


# --- recall without files ---------------------------------------------------------


def test_a_query_with_a_real_match_is_never_answered_with_nothing() -> None:
    # Three known terms, the only match holds one: 1/3 < 0.34. The seed answers nothing; the
    # default ranks the partial match (an explicit min_coverage stays strict).
    index = EpisodeIndex(RankOptions())
    seed = EpisodeIndex(RankOptions.seed())
    entries = [entry("a", "retry the upload"), entry("b", "parse the config"),
               entry("c", "render templates")]
    index.add_many(entries)
    seed.add_many(entries)
    query = RecallQuery(text="retry config templates rendering", n=3)
    assert [h.entry.id for h in index.recall(query, NOW)]
    assert seed.recall(query, NOW) == []
    strict = RecallQuery(text="retry config templates rendering", n=3, min_coverage=0.5)
    assert index.recall(strict, NOW) == []


def test_the_language_field_does_not_satisfy_the_query() -> None:
    index = EpisodeIndex(RankOptions())
    index.add_many([entry("py", "fix the cache", language="python"),
                    entry("doc", "python packaging guide", language="")])
    hits = index.recall(RecallQuery(text="python", n=3), NOW)
    assert [h.entry.id for h in hits] == ["doc"]  # matched by its text, not by a language field
    seed = EpisodeIndex(RankOptions.seed())
    seed.add_many([entry("py", "fix the cache", language="python")])
    assert [h.entry.id for h in seed.recall(RecallQuery(text="python", n=3), NOW)] == ["py"]


def test_seed_mode_keeps_the_seed_constants() -> None:
    seed = RankOptions.seed()
    assert seed.relative_floor == 0.45 and seed.default_min_coverage == 0.34
    assert seed.coverage == "all" and not seed.numbers_are_noise and not seed.gate_fallback
    assert seed.tokenizer == TokenizerOptions()
    assert RankOptions.named("seed") == seed and seed.mode == "seed"
