"""The bandit's reward: one [0, 1] score per decision outcome (SPEC S-13.8).

    correctness = 0.60·applied + 0.25·gate + 0.15·(1 − min(retries, 3)/3)
    cost        = 0.50·eff(tokens) + 0.50·eff(wall)
    reward      = 0.85·correctness + 0.15·cost,   capped at 0.10 on a hard failure

`gate` is 1 when the gate passed, 0 when it failed and 0.5 when it did not run (neutral);
`eff(used, budget) = clamp(1 − used/budget, 0, 1)`, or 0.5 when either number is unknown (≤ 0) —
an unknown budget is never a bonus and never a penalty. Correctness outweighs cost about six to one
so the harness never learns to prefer a cheap option that produces broken code.

Beyond the seed: a gate reported as passed counts as having run (a harness that only sets
`gate_passed` is not scored neutral), and non-finite or negative numbers from a harness are read as
"unknown" rather than poisoning the posterior with NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

FAILED_REWARD_CAP = 0.10
MAX_COUNTED_RETRIES = 3


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened after the harness acted on one decision."""

    applied: bool = False
    gate_passed: bool = False
    gate_ran: bool = False
    retries: int = 0
    tokens_used: int = 0
    token_budget: int = 0
    wall_ms: float = 0.0
    wall_budget_ms: float = 0.0
    failed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Outcome:
        """Tolerant reader for the dict a harness or the reflector sends.

        Missing keys take their defaults; `gate_ran` defaults to `gate_passed` when absent.
        """
        gate_passed = _as_bool(data.get("gate_passed"))
        gate_ran_raw = data.get("gate_ran")
        return cls(
            applied=_as_bool(data.get("applied")),
            gate_passed=gate_passed,
            gate_ran=gate_passed if gate_ran_raw is None else _as_bool(gate_ran_raw),
            retries=int(_as_number(data.get("retries"))),
            tokens_used=int(_as_number(data.get("tokens_used"))),
            token_budget=int(_as_number(data.get("token_budget"))),
            wall_ms=_as_number(data.get("wall_ms")),
            wall_budget_ms=_as_number(data.get("wall_budget_ms")),
            failed=_as_bool(data.get("failed")),
        )


def _as_bool(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "y", "on"}
    return bool(value)


def _as_number(value: object) -> float:
    """A finite number, or 0 (= unknown) for anything else."""
    if isinstance(value, bool) or value is None:
        return 0.0
    if isinstance(value, int | float | str):
        try:
            number = float(value)
        except ValueError:
            return 0.0
        return number if math.isfinite(number) else 0.0
    return 0.0


def efficiency(used: float, budget: float) -> float:
    """clamp(1 − used/budget, 0, 1); 0.5 when either side is unknown (≤ 0 or not finite)."""
    if not (math.isfinite(used) and math.isfinite(budget)) or budget <= 0 or used <= 0:
        return 0.5
    return min(1.0, max(0.0, 1.0 - used / budget))


def correctness(outcome: Outcome) -> float:
    """0.60·applied + 0.25·gate + 0.15·(1 − min(retries, 3)/3)."""
    if outcome.gate_passed:
        gate = 1.0
    elif outcome.gate_ran:
        gate = 0.0
    else:
        gate = 0.5
    retries = min(max(outcome.retries, 0), MAX_COUNTED_RETRIES)
    return (
        0.60 * (1.0 if outcome.applied else 0.0)
        + 0.25 * gate
        + 0.15 * (1.0 - retries / MAX_COUNTED_RETRIES)
    )


def cost_score(outcome: Outcome) -> float:
    """0.5·eff(tokens) + 0.5·eff(wall time)."""
    return 0.5 * efficiency(outcome.tokens_used, outcome.token_budget) + 0.5 * efficiency(
        outcome.wall_ms, outcome.wall_budget_ms
    )


def reward(outcome: Outcome) -> float:
    """The S-13.8 reward in [0, 1]."""
    value = 0.85 * correctness(outcome) + 0.15 * cost_score(outcome)
    if outcome.failed:
        value = min(value, FAILED_REWARD_CAP)
    return clamp_reward(value)


def clamp_reward(value: float) -> float:
    """Clamp to [0, 1]; a NaN counts as the worst outcome rather than corrupting α and β."""
    if math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, value))
