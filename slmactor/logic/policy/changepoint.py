"""Change detection for the policy bandit: a two-sided, standardized CUSUM of rewards against the
arm's posterior mean.

Why: the seed keeps a bandit responsive only by decaying a key halfway to its prior every 200
pulls. After a model upgrade or a refactor changes which arm is best, a leader backed by a few
hundred observations then needs roughly as many bad pulls again before Thompson sampling lets go of
it. Page's CUSUM notices a sustained shift within tens of pulls instead, for a few numbers per arm.

For each arm, with μ the arm's posterior mean just before an observation r arrives and σ an
exponentially weighted estimate of the reward's standard deviation around μ:

    z    = (r − μ) / σ
    up   = max(0, up   + z − drift)     # rewards persistently above what we believe
    down = max(0, down − z − drift)     # rewards persistently below what we believe

An alarm is raised when either sum exceeds `threshold`, but only once the arm has `min_samples`
observations since its last reset, so the first pulls of a fresh arm (whose posterior is still
mostly prior) do not trigger it. Working in σ units lets one tuning serve 0/1 rewards and the
finer-grained S-13.8 rewards. `drift` (in σ) is the shift we are willing to ignore; a shift of
s·σ is detected after about threshold / (s − drift) pulls. The defaults (drift 0.25σ, threshold
14σ) were chosen on the bench_bandit simulation (3 arms, switch of the best arm): a 0.4 drop of a
0/1 reward (≈ 0.9σ) should be flagged after ≈ 14/(0.9 − 0.25) ≈ 22 pulls (measured median 20),
while a stationary 0/1 stream alarms about once per 3,000–20,000 pulls; a false alarm
costs little (the key forgets most of its evidence and re-learns). Each arm also keeps its last
`window` rewards: on an alarm they become the changed arm's evidence of the new regime.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MIN_VARIANCE = 0.0025  # σ ≥ 0.05: a run of identical rewards must not make every wobble an alarm
# σ² ≥ half the Bernoulli bound μ(1 − μ): after a run of equal rewards the weighted estimate
# collapses, and one ordinary reward would then look like a many-σ event.
MIN_VARIANCE_FRACTION = 0.5


@dataclass(frozen=True, slots=True)
class DetectorConfig:
    """Tuning of the CUSUM; the defaults are the ones the bandit simulation was measured with."""

    drift: float = 0.25
    threshold: float = 14.0
    min_samples: int = 10
    window: int = 12
    variance_weight: float = 0.05


@dataclass(frozen=True, slots=True)
class DetectorState:
    """Per-arm CUSUM sums and the number of observations since the last reset."""

    up: float = 0.0
    down: float = 0.0
    samples: int = 0
    recent: tuple[float, ...] = ()
    var: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"up": self.up, "down": self.down, "samples": self.samples,
                "recent": list(self.recent), "var": self.var}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> DetectorState:
        if not isinstance(data, Mapping):
            return cls()
        try:
            up = max(0.0, float(data.get("up", 0.0)))
            down = max(0.0, float(data.get("down", 0.0)))
            samples = max(0, int(data.get("samples", 0)))
        except (TypeError, ValueError):
            return cls()
        if not (math.isfinite(up) and math.isfinite(down)):  # a hand-edited file
            return cls()
        raw_recent = data.get("recent")
        recent = tuple(
            min(1.0, max(0.0, float(r))) for r in (raw_recent if isinstance(raw_recent, list) else ())
            if isinstance(r, int | float) and not isinstance(r, bool) and math.isfinite(r)
        )
        var = data.get("var", 0.0)
        var = float(var) if isinstance(var, int | float) and math.isfinite(var) else 0.0
        return cls(up=up, down=down, samples=samples, recent=recent, var=max(0.0, var))


def observe(
    state: DetectorState, reward: float, expected: float, config: DetectorConfig
) -> tuple[DetectorState, bool]:
    """Feed one reward; returns the new state and whether a change was detected.

    Steps are measured in units of the arm's reward standard deviation (an exponentially weighted
    mean of (r − μ)², started at the Bernoulli bound μ(1 − μ)), so the same tuning fits 0/1
    rewards and the finer-grained S-13.8 rewards. The sums only start accumulating once
    `min_samples` observations have been counted.
    """
    samples = state.samples + 1
    recent = (*state.recent, reward)[-config.window:] if config.window > 0 else ()
    bound = expected * (1.0 - expected)
    var = state.var if state.var > 0 else max(bound, MIN_VARIANCE)
    sigma = math.sqrt(max(var, MIN_VARIANCE_FRACTION * bound, MIN_VARIANCE))
    deviation = (reward - expected) / sigma
    var = (1.0 - config.variance_weight) * var + config.variance_weight * (reward - expected) ** 2
    if samples <= config.min_samples:
        return DetectorState(0.0, 0.0, samples, recent, var), False
    up = max(0.0, state.up + deviation - config.drift)
    down = max(0.0, state.down - deviation - config.drift)
    alarm = up > config.threshold or down > config.threshold
    return DetectorState(up, down, samples, recent, var), alarm
