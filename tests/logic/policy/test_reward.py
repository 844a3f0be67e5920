"""The S-13.8 reward: the spec's worked examples, the cost terms, the failure cap, tolerant input."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.policy.reward import Outcome, clamp_reward, correctness, efficiency, reward


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        # perfect, unknown budgets
        (Outcome(applied=True, gate_passed=True, gate_ran=True), 0.925),
        # applied, gate failed
        (Outcome(applied=True, gate_passed=False, gate_ran=True), 0.7125),
        # nothing applied, gate not run, 0 retries, unknown budgets
        (Outcome(), 0.30875),
        # applied, gate passed, 3 retries
        (Outcome(applied=True, gate_passed=True, gate_ran=True, retries=3), 0.7975),
        # applied, gate not run
        (Outcome(applied=True), 0.81875),
    ],
)
def test_spec_worked_examples(outcome: Outcome, expected: float) -> None:
    assert reward(outcome) == pytest.approx(expected, abs=1e-12)


def test_retries_beyond_three_count_as_three() -> None:
    three = Outcome(applied=True, gate_passed=True, gate_ran=True, retries=3)
    many = Outcome(applied=True, gate_passed=True, gate_ran=True, retries=40)
    assert reward(many) == reward(three)
    assert reward(Outcome(applied=True, retries=-5)) == reward(Outcome(applied=True))


def test_cost_breaks_ties_but_never_outweighs_correctness() -> None:
    cheap_broken = Outcome(applied=True, gate_ran=True, tokens_used=1, token_budget=10_000,
                           wall_ms=1, wall_budget_ms=10_000)
    costly_working = Outcome(applied=True, gate_passed=True, gate_ran=True, tokens_used=10_000,
                             token_budget=10_000, wall_ms=20_000, wall_budget_ms=10_000)
    assert reward(costly_working) > reward(cheap_broken)
    # Same correctness: the cheaper run wins.
    cheap = Outcome(applied=True, gate_passed=True, gate_ran=True, tokens_used=2_000,
                    token_budget=10_000, wall_ms=1_000, wall_budget_ms=10_000)
    assert reward(cheap) > reward(Outcome(applied=True, gate_passed=True, gate_ran=True))
    # 0.85 + 0.15 * (0.5 * 0.8 + 0.5 * 0.9)
    assert reward(cheap) == pytest.approx(0.85 + 0.15 * 0.85)


def test_efficiency_is_neutral_when_unknown_and_clamped() -> None:
    assert efficiency(0, 100) == 0.5
    assert efficiency(50, 0) == 0.5
    assert efficiency(-3, 100) == 0.5
    assert efficiency(math.nan, 100) == 0.5
    assert efficiency(25, 100) == pytest.approx(0.75)
    assert efficiency(300, 100) == 0.0


def test_hard_failure_caps_reward_at_a_tenth() -> None:
    assert reward(Outcome(applied=True, gate_passed=True, gate_ran=True, failed=True)) == 0.10
    assert reward(Outcome(failed=True, retries=3, gate_ran=True)) < 0.10


def test_a_passed_gate_counts_as_run() -> None:
    assert correctness(Outcome(applied=True, gate_passed=True)) == pytest.approx(1.0)


def test_from_dict_reads_what_harnesses_send() -> None:
    out = Outcome.from_dict({"applied": True, "gate_passed": True, "retries": "2",
                             "tokens_used": 500.0, "token_budget": 1000, "wall_ms": None,
                             "extra": "ignored"})
    assert out == Outcome(applied=True, gate_passed=True, gate_ran=True, retries=2,
                          tokens_used=500, token_budget=1000)
    assert Outcome.from_dict({"gate_passed": False, "gate_ran": "yes"}).gate_ran is True
    assert Outcome.from_dict({"retries": float("nan"), "wall_ms": "fast"}) == Outcome()
    assert Outcome.from_dict(Outcome(applied=True, retries=1).to_dict()) == Outcome(
        applied=True, retries=1)


def test_clamp_reward() -> None:
    assert clamp_reward(1.5) == 1.0
    assert clamp_reward(-0.2) == 0.0
    assert clamp_reward(math.nan) == 0.0


_values = st.one_of(st.none(), st.booleans(), st.integers(-10**9, 10**9),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8))


@settings(derandomize=True, max_examples=300)
@given(st.dictionaries(st.sampled_from(["applied", "gate_passed", "gate_ran", "retries",
                                        "tokens_used", "token_budget", "wall_ms",
                                        "wall_budget_ms", "failed"]), _values))
def test_reward_is_always_a_number_in_unit_interval(raw: dict[str, object]) -> None:
    value = reward(Outcome.from_dict(raw))
    assert 0.0 <= value <= 1.0
