"""Beta-distribution arithmetic for the policy bandit (SPEC S-13.5, S-13.7).

Sampling uses the Gamma-ratio construction: if X ~ Gamma(α, 1) and Y ~ Gamma(β, 1) then
X / (X + Y) ~ Beta(α, β). Gamma variates come from Marsaglia & Tsang (2000), "A simple method for
generating gamma variables" — one normal and one uniform per attempt, accepted > 95 % of the time
for every shape ≥ 1; shapes below 1 use the standard boost Gamma(a) = Gamma(a + 1)·U^(1/a).

Randomness is always a caller-supplied `random.Random`, so a seeded caller gets a bit-for-bit
reproducible stream (the stdlib generator is specified across platforms for a given seed).
"""

from __future__ import annotations

import math
import random


def sample_gamma(shape: float, rng: random.Random) -> float:
    """One Gamma(shape, 1) variate (Marsaglia–Tsang). `shape` must be positive and finite."""
    if not shape > 0 or not math.isfinite(shape):
        raise ValueError(f"gamma shape must be positive and finite, got {shape!r}")
    if shape < 1.0:
        # Boost: Gamma(a) = Gamma(a + 1) · U^(1/a); 1 - random() lies in (0, 1], never 0.
        boost = float((1.0 - rng.random()) ** (1.0 / shape))
        return sample_gamma(shape + 1.0, rng) * boost
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = rng.normalvariate(0.0, 1.0)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = 1.0 - rng.random()
        x2 = x * x
        # Squeeze first (cheap), then the exact log test.
        if u < 1.0 - 0.0331 * x2 * x2:
            return d * v
        if math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
            return d * v


#: Shapes are clamped into [MIN_SHAPE, MAX_SHAPE] before sampling: a posterior read from a
#: hand-edited or corrupt policy file (0, negative, inf, NaN) still yields a draw in [0, 1]
#: instead of an exception in the middle of a decision.
MIN_SHAPE = 1e-3
MAX_SHAPE = 1e12


def clamp_shape(shape: float) -> float:
    """`shape` forced into [MIN_SHAPE, MAX_SHAPE]; NaN (no information at all) becomes 1."""
    if math.isnan(shape):
        return 1.0
    return min(max(shape, MIN_SHAPE), MAX_SHAPE)


def sample_beta(alpha: float, beta: float, rng: random.Random) -> float:
    """One Beta(alpha, beta) variate in [0, 1] via the Gamma ratio (shapes clamped first)."""
    alpha, beta = clamp_shape(alpha), clamp_shape(beta)
    x = sample_gamma(alpha, rng)
    y = sample_gamma(beta, rng)
    total = x + y
    if total <= 0.0:
        # Both gammas underflowed (tiny shapes): fall back to the mean rather than divide by 0.
        return beta_mean(alpha, beta)
    return min(max(x / total, 0.0), 1.0)


def beta_mean(alpha: float, beta: float) -> float:
    """Posterior mean α / (α + β) (shapes clamped, so it is always defined)."""
    alpha, beta = clamp_shape(alpha), clamp_shape(beta)
    return alpha / (alpha + beta)


def beta_stddev(alpha: float, beta: float) -> float:
    """Standard deviation sqrt(αβ / ((α+β)²(α+β+1))) (S-13.7)."""
    total = alpha + beta
    return math.sqrt(alpha * beta / (total * total * (total + 1.0)))
