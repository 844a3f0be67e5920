"""`why`: the human explanation of a bandit key (SPEC S-13.7), grouped by model family (H-S-6 fix).

The seed printed "no evidence yet" above a table that showed 10 pulls, because the lookup and the
table used different model-family namespaces (H-S-6). Here both come from the same normalized
`PolicyKey`: the section for the asked (family, language) is printed first — or the line
`no evidence for this model yet — the harness uses the shipped default` when that key has none —
and every other key recorded for the decision follows below the divider
`— other models (recorded, not used here) —`, so evidence is never hidden and never mistaken for
the evidence in use.

Row format (byte-exact): `%-20s %.0f%% ±%.0f%%  (%d pulls, α=%.1f β=%.1f)`, leader prefixed `→ `,
others by two spaces, arms ordered by posterior mean descending (ties by name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slmactor.logic.policy.bandit import ArmStats, KeyState, Policy, PolicyKey, epsilon

OTHER_MODELS_DIVIDER = "— other models (recorded, not used here) —"
NO_EVIDENCE_FOR_MODEL = "no evidence for this model yet — the harness uses the shipped default"


def format_row(arm: ArmStats, leader: bool) -> str:
    prefix = "→ " if leader else "  "
    return prefix + "%-20s %.0f%% ±%.0f%%  (%d pulls, α=%.1f β=%.1f)" % (  # noqa: UP031
        arm.name, arm.mean * 100, arm.stddev * 100, arm.pulls, arm.alpha, arm.beta,
    )


def ranked_arms(state: KeyState) -> list[ArmStats]:
    return sorted(state.arms.values(), key=lambda a: (-a.mean, a.name))


def header(key: PolicyKey, observations: int) -> str:
    return (f"{key.decision} (model {key.family or '*'}, language {key.language or '*'})"
            f" — {observations} observations")


def mode_line(key_pulls: int, deterministic: bool) -> str:
    if deterministic:
        return "mode: deterministic (no exploration)"
    return f"mode: Thompson sampling, ε={epsilon(key_pulls):.2f}"


def _section(state: KeyState) -> list[str]:
    rows = ranked_arms(state)
    return [header(state.key, state.pulls)] + [format_row(a, i == 0) for i, a in enumerate(rows)]


@dataclass(frozen=True, slots=True)
class WhyReport:
    """Text plus the same facts as data (for `--json`)."""

    text: str
    key: PolicyKey
    found: bool
    observations: int
    others: tuple[KeyState, ...]
    current: KeyState | None
    deterministic: bool

    def to_dict(self) -> dict[str, Any]:
        def arms(state: KeyState) -> list[dict[str, Any]]:
            return [
                {"name": a.name, "alpha": a.alpha, "beta": a.beta, "pulls": a.pulls,
                 "mean": a.mean, "stddev": a.stddev, "reward_total": a.reward_total}
                for a in ranked_arms(state)
            ]

        return {
            "decision": self.key.decision,
            "model_family": self.key.family,
            "language": self.key.language,
            "key": str(self.key),
            "found": self.found,
            "observations": self.observations,
            "arms": arms(self.current) if self.current is not None else [],
            "mode": "deterministic" if self.deterministic else "thompson",
            "epsilon": 0.0 if self.deterministic else epsilon(self.observations),
            "others": [
                {"model_family": s.key.family, "language": s.key.language,
                 "key": str(s.key), "observations": s.pulls, "arms": arms(s)}
                for s in self.others
            ],
            "text": self.text,
        }


def why(policy: Policy, key: PolicyKey, *, deterministic: bool = False) -> WhyReport:
    """Explain `key` (already normalized) with every other key of the same decision below it."""
    states = policy.keys_for(key.decision)
    current = next((s for s in states if s.key == key and s.arms), None)
    # Same family first (other languages), then the other families, alphabetically.
    others = tuple(sorted((s for s in states if s.key != key and s.arms),
                          key=lambda s: (s.key.family != key.family, s.key.family, s.key.language)))
    if current is None and not others:
        text = f"{key.decision}: no evidence yet — using the shipped defaults."
        return WhyReport(text, key, False, 0, (), None, deterministic)
    lines: list[str] = []
    if current is not None:
        lines += _section(current)
        lines.append(mode_line(current.pulls, deterministic))
    else:
        lines += [header(key, 0), NO_EVIDENCE_FOR_MODEL, mode_line(0, deterministic)]
    if others:
        lines.append(OTHER_MODELS_DIVIDER)
        for state in others:
            lines += _section(state)
    observations = current.pulls if current is not None else 0
    return WhyReport("\n".join(lines), key, current is not None, observations, others, current,
                     deterministic)
