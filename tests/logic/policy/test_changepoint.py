"""The standardized CUSUM change detector: quiet on stationary rewards, quick on a real shift."""

from __future__ import annotations

import random

import pytest

from slmactor.logic.policy.changepoint import DetectorConfig, DetectorState, observe

CONFIG = DetectorConfig()


def _feed(stream: list[float], expected: float, state: DetectorState | None = None,
          ) -> tuple[DetectorState, list[int]]:
    state = state or DetectorState()
    alarms = []
    for i, r in enumerate(stream):
        state, alarm = observe(state, r, expected, CONFIG)
        if alarm:
            alarms.append(i)
            state = DetectorState()
    return state, alarms


def test_no_alarm_while_counting_the_first_samples() -> None:
    state, alarms = _feed([0.0] * CONFIG.min_samples, expected=0.95)
    assert alarms == [] and state.up == state.down == 0.0
    assert state.samples == CONFIG.min_samples
    assert state.recent == (0.0,) * min(CONFIG.window, CONFIG.min_samples)


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_stationary_bernoulli_rewards_rarely_alarm(p: float) -> None:
    # Measured: 5 (p=0.2), 5 (0.5), 1 (0.8) false alarms per 20,000 pulls — at most one per 2,000.
    rng = random.Random(17)
    stream = [1.0 if rng.random() < p else 0.0 for _ in range(20_000)]
    _, alarms = _feed(stream, expected=p)
    assert len(alarms) <= 10


def test_sustained_drop_is_detected_within_tens_of_samples() -> None:
    rng = random.Random(5)
    warm = [1.0 if rng.random() < 0.8 else 0.0 for _ in range(50)]
    state, alarms = _feed(warm, expected=0.8)
    assert alarms == []
    dropped = [1.0 if rng.random() < 0.3 else 0.0 for _ in range(200)]
    _, alarms = _feed(dropped, expected=0.8, state=state)
    assert alarms and alarms[0] < 40


def test_rise_is_detected_too() -> None:
    state, _ = _feed([0.2] * 20, expected=0.2)
    _, alarms = _feed([0.9] * 60, expected=0.2, state=state)
    assert alarms and alarms[0] < 20


def test_state_round_trips_and_survives_garbage() -> None:
    state, _ = _feed([0.3, 0.9, 0.1] * 8, expected=0.5)
    assert DetectorState.from_dict(state.to_dict()) == state
    assert DetectorState.from_dict(None) == DetectorState()
    assert DetectorState.from_dict({"up": "x"}) == DetectorState()
    assert DetectorState.from_dict({"up": float("nan")}) == DetectorState()
    odd = DetectorState.from_dict({"recent": [0.5, 3, True, "x", float("inf")], "samples": -4})
    assert odd.recent == (0.5, 1.0) and odd.samples == 0
