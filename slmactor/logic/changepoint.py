"""Change detection for the policy bandit: a two-sided CUSUM of rewards against the posterior mean.

Why: the seed keeps a bandit responsive only by decaying a key halfway to its prior every 200
pulls. After a model upgrade or a refactor changes which arm is best, a leader backed by a few
hundred observations then needs roughly as many bad pulls again before Thompson sampling lets go of
it. Page's CUSUM notices a sustained shift within tens of pulls instead, and costs three numbers per
arm on disk.

For each arm, with μ the arm's posterior mean just before an observation r arrives:

    up   = max(0, up   + (r − μ − drift))     # rewards persistently above what we believe
    down = max(0, down + (μ − r − drift))     # rewards persistently below what we believe

An alarm is raised when either sum exceeds `threshold`, but only once the arm has `min_samples`
observations since its last reset, so the first pulls of a fresh arm (whose posterior is still
mostly prior) do not trigger it. `drift` is the shift we are willing to ignore; under no change the
sums drift down by `drift` per pull and rarely reach `threshold` (rewards are bounded in [0, 1], so
one pull moves a sum by at most 1 − drift). A shift of size s is detected after about
threshold / (s − drift) pulls: with the defaults, a 0.4 drop takes ~13 pulls.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class DetectorConfig:
    """Tuning of the CUSUM; the defaults are the ones the bandit simulation was measured with."""

    drift: float = 0.10
    threshold: float = 4.0
    min_samples: int = 10


@dataclass(frozen=True, slots=True)
class DetectorState:
    """Per-arm CUSUM sums and the number of observations since the last reset."""

    up: float = 0.0
    down: float = 0.0
    samples: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"up": round(self.up, 6), "down": round(self.down, 6), "samples": self.samples}

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
        return cls(up=up, down=down, samples=samples)


def observe(
    state: DetectorState, reward: float, expected: float, config: DetectorConfig
) -> tuple[DetectorState, bool]:
    """Feed one reward; returns the new state and whether a change was detected.

    The sums only start accumulating once `min_samples` observations have been counted.
    """
    samples = state.samples + 1
    if samples <= config.min_samples:
        return DetectorState(0.0, 0.0, samples), False
    up = max(0.0, state.up + (reward - expected - config.drift))
    down = max(0.0, state.down + (expected - reward - config.drift))
    alarm = up > config.threshold or down > config.threshold
    return DetectorState(up, down, samples), alarm
