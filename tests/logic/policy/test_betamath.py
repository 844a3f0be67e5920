"""Beta arithmetic: closed-form mean/stddev, and Marsaglia–Tsang sampling that is seeded and right."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.policy.betamath import beta_mean, beta_stddev, sample_beta, sample_gamma


def test_mean_and_stddev_closed_form() -> None:
    assert beta_mean(8, 2) == pytest.approx(0.8)
    # sqrt(αβ / ((α+β)²(α+β+1))) = sqrt(16 / (100 · 11))
    assert beta_stddev(8, 2) == pytest.approx(math.sqrt(16 / 1100))
    assert beta_stddev(1, 1) == pytest.approx(math.sqrt(1 / 12))


@pytest.mark.parametrize("shape", [0.3, 1.0, 2.5, 40.0])
def test_gamma_sample_mean_matches_shape(shape: float) -> None:
    rng = random.Random(11)
    draws = [sample_gamma(shape, rng) for _ in range(20_000)]
    # Gamma(k, 1) has mean k and variance k: allow 4 standard errors.
    assert statistics.fmean(draws) == pytest.approx(shape, abs=4 * math.sqrt(shape / 20_000))
    assert min(draws) >= 0.0


@pytest.mark.parametrize(("alpha", "beta"), [(8, 2), (3, 5), (0.5, 0.5), (120.0, 40.0)])
def test_beta_sample_moments(alpha: float, beta: float) -> None:
    rng = random.Random(5)
    draws = [sample_beta(alpha, beta, rng) for _ in range(20_000)]
    sd = beta_stddev(alpha, beta)
    assert statistics.fmean(draws) == pytest.approx(beta_mean(alpha, beta), abs=4 * sd / 141)
    assert statistics.pstdev(draws) == pytest.approx(sd, rel=0.05)


def test_sampling_is_reproducible_for_a_seed() -> None:
    first = [sample_beta(3.2, 4.7, random.Random(99)) for _ in range(3)]
    again = [sample_beta(3.2, 4.7, random.Random(99)) for _ in range(3)]
    assert first == again
    assert sample_beta(3.2, 4.7, random.Random(98)) != first[0]


@pytest.mark.parametrize("shape", [0.0, -1.0, math.inf, math.nan])
def test_invalid_shape_is_refused(shape: float) -> None:
    with pytest.raises(ValueError):
        sample_gamma(shape, random.Random(1))


@settings(derandomize=True, max_examples=200)
@given(st.floats(0.01, 1e4), st.floats(0.01, 1e4), st.integers(0, 2**32))
def test_beta_sample_in_unit_interval(alpha: float, beta: float, seed: int) -> None:
    assert 0.0 <= sample_beta(alpha, beta, random.Random(seed)) <= 1.0


@pytest.mark.parametrize("alpha,beta", [(0.0, 0.0), (-1.0, 3.0), (3.0, -1.0), (0.0, 5.0),
                                        (math.inf, 1.0), (math.nan, 2.0), (-math.inf, math.nan)])
def test_degenerate_shapes_are_clamped_to_a_draw_in_the_unit_interval(alpha: float,
                                                                     beta: float) -> None:
    # The seed's own cases (0, 0) and (-1, 3): a corrupt posterior must not raise mid-decision.
    for seed in range(50):
        assert 0.0 <= sample_beta(alpha, beta, random.Random(seed)) <= 1.0
    assert 0.0 <= beta_mean(alpha, beta) <= 1.0


@settings(derandomize=True, max_examples=200)
@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(allow_nan=True, allow_infinity=True),
       st.integers(0, 2**32))
def test_any_float_shapes_give_a_draw_in_the_unit_interval(alpha: float, beta: float,
                                                            seed: int) -> None:
    assert 0.0 <= sample_beta(alpha, beta, random.Random(seed)) <= 1.0
