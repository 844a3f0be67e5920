"""The S-3 ranking rules with worked numbers, through `rank_text` (the shared pipeline)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from slmactor.logic.recall.rank import RankOptions, TextCandidate, rank_text, recency

DAY = 86_400.0
NOW = 1_800_000_000.0
SEED = RankOptions.seed()


def test_idf_floor_when_every_candidate_holds_the_term() -> None:
    # N = 2, df = 2: ln(1 + 0.5/2.5) = ln 1.2 = 0.182 < 0.25 → the floor 0.25.
    hits = rank_text("alpha", [TextCandidate("alpha"), TextCandidate("alpha")], 0, NOW, explain=True)
    assert [h.index for h in hits] == [0, 1]
    explanation = hits[0].explanation
    assert explanation is not None
    assert explanation.terms[0].idf == 0.25
    # len = avgLen, tf = 1 → norm = 2.2 / 2.2 = 1 → score = 0.25.
    assert hits[0].score == pytest.approx(0.25, abs=1e-12)


def test_idf_above_floor_worked_number() -> None:
    # N = 3, df = 1: ln(1 + 2.5/1.5) = ln(8/3) = 0.98083.
    cands = [TextCandidate("alpha"), TextCandidate("beta"), TextCandidate("gamma")]
    hits = rank_text("alpha", cands, 0, NOW, explain=True)
    assert [h.index for h in hits] == [0]
    assert hits[0].explanation is not None
    assert hits[0].explanation.terms[0].idf == pytest.approx(math.log(8 / 3), abs=1e-12)


def test_term_frequency_saturates_at_k1_plus_one() -> None:
    # One document "go go go": N = 1, df = 1 → idf = ln(1 + 0.5/1.5) = ln(4/3);
    # len = avgLen = 3 → norm = 3·2.2/(3 + 1.2) = 1.5714...
    hits = rank_text("go", [TextCandidate("go go go")], 0, NOW, explain=True)
    assert hits[0].score == pytest.approx(math.log(4 / 3) * 6.6 / 4.2, abs=1e-12)
    assert hits[0].explanation is not None
    assert hits[0].explanation.terms[0].norm == pytest.approx(6.6 / 4.2, abs=1e-12)
    many = rank_text("go", [TextCandidate(" ".join(["go"] * 500))], 0, NOW, explain=True)
    assert many[0].explanation is not None
    assert 2.19 < many[0].explanation.terms[0].norm < 2.2


def test_length_normalisation_prefers_the_shorter_document() -> None:
    cands = [TextCandidate("parser bug one two three four five six"), TextCandidate("parser bug")]
    hits = rank_text(
        "parser", cands, 0, NOW, min_coverage=-1, options=RankOptions(relative_floor=0)
    )
    assert [h.index for h in hits] == [1, 0]


def test_coverage_gate_at_034_in_seed_mode() -> None:
    cands = [TextCandidate("alpha zulu"), TextCandidate("alpha beta zulu"), TextCandidate("zulu")]
    # 3 query terms: matching 1 → 0.333 < 0.34 → dropped; matching 2 → 0.667 → kept.
    hits = rank_text("alpha beta gamma", cands, 0, NOW, options=SEED)
    assert [h.index for h in hits] == [1]
    # min_coverage 0 means the default; a negative value disables the gate.
    no_floor = replace(SEED, relative_floor=0.0)
    open_gate = rank_text("alpha beta gamma", cands, 0, NOW, min_coverage=-1, options=no_floor)
    assert sorted(h.index for h in open_gate) == [0, 1]
    stricter = rank_text("alpha beta gamma", cands, 0, NOW, min_coverage=0.9, options=SEED)
    assert stricter == []


def test_default_mode_counts_only_terms_the_store_knows() -> None:
    cands = [TextCandidate("alpha zulu"), TextCandidate("yankee zulu")]
    # "beta" and "gamma" are in no candidate: seed coverage 1/3 drops everything;
    # known-term coverage is 1/1 and keeps the match.
    assert rank_text("alpha beta gamma", cands, 0, NOW, options=SEED) == []
    hits = rank_text("alpha beta gamma", cands, 0, NOW, explain=True)
    assert [h.index for h in hits] == [0]
    assert hits[0].explanation is not None
    assert hits[0].explanation.coverage == 1.0
    assert hits[0].explanation.missing == ("beta", "gamma")


def test_default_mode_treats_numbers_as_noise_for_coverage() -> None:
    cands = [TextCandidate("fix parser crash (#1200)"), TextCandidate("tidy docs (#1234)")]
    # The issue number is known (candidate 1 holds it) but is noise: it neither counts for nor
    # against coverage. Candidate 1 matches only the number: coverage 0/3 → dropped.
    hits = rank_text("fix parser crash (#1234)", cands, 0, NOW, explain=True)
    assert [h.index for h in hits] == [0]
    seed = rank_text("fix parser crash (#1234)", cands, 0, NOW, options=SEED)
    assert [h.index for h in seed] == [0]  # 3/4 ≥ 0.34 in seed mode too; doc 1 (1/4) dropped


def test_only_numbers_known_still_finds_them() -> None:
    hits = rank_text("error 404", [TextCandidate("got 404 from api"), TextCandidate("ok")], 0, NOW)
    assert [h.index for h in hits] == [0]


def test_recency_is_hyperbolic_half_at_45_days() -> None:
    assert recency(NOW - 45 * DAY, NOW) == pytest.approx(0.5, abs=1e-12)
    assert recency(NOW - 90 * DAY, NOW) == pytest.approx(1 / 3, abs=1e-12)
    assert recency(None, NOW) == 1.0
    assert recency(0.0, NOW) == 1.0
    assert recency(NOW + DAY, NOW) == 1.0


def test_recency_multiplies_the_score_and_relative_floor_drops_below_040() -> None:
    fresh = TextCandidate("deploy script", at=NOW)
    at_45 = TextCandidate("deploy script", at=NOW - 45 * DAY)
    at_56 = TextCandidate("deploy script", at=NOW - 56 * DAY)  # recency 0.4455 < 0.45
    at_70 = TextCandidate("deploy script", at=NOW - 70 * DAY)  # recency 0.391 < 0.40
    zulu = TextCandidate("zulu")
    hits = rank_text("deploy script", [fresh, at_45, at_56, at_70, zulu], 0, NOW)
    assert [h.index for h in hits] == [0, 1, 2]
    seed = rank_text("deploy script", [fresh, at_45, at_56, at_70, zulu], 0, NOW,
                     options=RankOptions.seed())
    assert [h.index for h in seed] == [0, 1]  # the seed's floor is 0.45
    assert hits[1].score == pytest.approx(0.5 * hits[0].score, rel=1e-12)
    no_floor = rank_text(
        "deploy script", [fresh, at_45, at_56, zulu], 0, NOW, options=RankOptions(relative_floor=0)
    )
    assert [h.index for h in no_floor] == [0, 1, 2]
    assert no_floor[2].score == pytest.approx(no_floor[0].score / (1 + 56 / 45), rel=1e-12)


def test_success_nudges_by_115() -> None:
    cands = [TextCandidate("flaky test fix"), TextCandidate("flaky test fix", success=True)]
    hits = rank_text("flaky test", cands, 0, NOW, explain=True)
    assert [h.index for h in hits] == [1, 0]
    assert hits[0].score == pytest.approx(1.15 * hits[1].score, rel=1e-12)
    assert hits[0].explanation is not None
    assert hits[0].explanation.success_factor == 1.15


def test_ties_keep_input_order_and_n_caps() -> None:
    cands = [TextCandidate("cache bug"), TextCandidate("zulu"), TextCandidate("cache bug")] * 2
    hits = rank_text("cache bug", cands, 0, NOW)
    assert [h.index for h in hits] == [0, 2, 3, 5]
    assert len({h.score for h in hits}) == 1
    assert [h.index for h in rank_text("cache bug", cands, 3, NOW)] == [0, 2, 3]
    assert [h.index for h in rank_text("cache bug", cands, -1, NOW)] == [0, 2, 3, 5]


def test_no_terms_or_no_candidates_gives_nothing() -> None:
    assert rank_text("the and of", [TextCandidate("the and of")], 0, NOW) == []
    assert rank_text("alpha", [], 0, NOW) == []
    assert rank_text("alpha", [TextCandidate("beta")], 0, NOW) == []


def test_explanation_adds_up_to_the_score() -> None:
    cands = [
        TextCandidate("retry the flaky network test", at=NOW - 10 * DAY, success=True),
        TextCandidate("network timeout in test", at=NOW - 3 * DAY),
    ]
    for hit in rank_text("flaky network test", cands, 0, NOW, explain=True):
        e = hit.explanation
        assert e is not None
        assert sum(t.score for t in e.terms) == pytest.approx(e.bm25, rel=1e-12)
        assert sum(e.field_totals().values()) == pytest.approx(e.bm25, rel=1e-12)
        assert e.bm25 * e.recency * e.success_factor == pytest.approx(hit.score, rel=1e-12)
        assert e.best >= hit.score >= e.floor
        assert "score" in e.render() and e.to_dict()["mode"] == "default"


def test_named_modes() -> None:
    assert RankOptions.named("seed") == RankOptions.seed()
    assert RankOptions.named("default") == RankOptions()
    assert RankOptions.seed().mode == "seed"
    with pytest.raises(ValueError, match="unknown recall mode"):
        RankOptions.named("fuzzy")


def test_with_the_gate_off_a_match_on_noise_alone_still_counts() -> None:
    cands = [TextCandidate("zulu 1234"), TextCandidate("parser"), TextCandidate("yankee")]
    opts = RankOptions(relative_floor=0)
    hits = rank_text("parser 1234", cands, 0, NOW, min_coverage=-1, options=opts)
    assert sorted(h.index for h in hits) == [0, 1]
    gated = rank_text("parser 1234", cands, 0, NOW, options=opts)
    assert [h.index for h in gated] == [1]  # 0 of 1 counted terms: below the gate
