"""The policy bandit: Beta posteriors per (decision, model family, language) and Thompson sampling
over a harness's discrete choices (SPEC S-13.1–S-13.6, seed 000 "Policy learning").

* Key = decision (lowercased), model family (S-6.6 folding of the model id) and language (S-6.5);
  string form `decision|family|language`, a blank part written `*`.
* Every arm starts from a warm-start prior (S-13.1, overridable); the prior is never stored, it is
  recomputed from the table so a changed default reaches existing keys.
* `choose` follows S-13.5 exactly: warm-up (the least-pulled arm until it has MinPulls = 2), then
  ε = max(0.02, 0.20/(1 + key_pulls/40)) uniform exploration (a hyperbolic "half-life", H-S-27),
  then Thompson sampling; deterministic mode is the argmax of the posterior mean with no warm-up and
  no ε. Ties go to the alphabetically first arm. A `Choice` carries its reason and the posterior
  table it was made from, so a harness can log *why*.
* `update`: r clamped to [0, 1]; α += r; β += 1 − r; every 200 key pulls all arms decay halfway to
  their prior. Beyond the seed, a two-sided CUSUM (`changepoint`) watches each arm's rewards against
  its posterior mean; when they diverge the key is decayed early and hard (evidence cut to
  `ChangeConfig.keep_evidence` pseudo-observations per arm, prior kept), so a switched best arm is
  found again in tens of pulls rather than hundreds.
* `prune(max_keys)` keeps the most-pulled keys (S-19: least-used dropped first; ties drop the
  least recently used).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from slmactor.logic.policy import changepoint
from slmactor.logic.policy.betamath import beta_mean, beta_stddev, sample_beta
from slmactor.logic.policy.reward import clamp_reward
from slmactor.logic.text.models import model_family, normalize_language

EPSILON_START = 0.20
EXPLORE_HALF_LIFE = 40.0
MIN_EXPLORE_RATE = 0.02
MIN_PULLS = 2
DECAY_AFTER = 200
DECAY_FACTOR = 0.5
MAX_BANDIT_KEYS = 300
UNIFORM_PRIOR = (1.0, 1.0)

Prior = tuple[float, float]
PriorTable = Mapping[str, Mapping[str, Prior]]

SHIPPED_PRIORS: PriorTable = {
    "edit_format": {"search_replace": (8, 2), "unified_diff": (3, 5), "whole_file": (4, 4)},
    "think_passes": {"1": (5, 3), "2": (5, 4), "3": (3, 5)},
    "explore_phase": {"on": (6, 3), "off": (4, 4)},
    "review_strictness": {"normal": (6, 3), "strict": (4, 4), "lenient": (3, 5)},
    "role_model": {"fast": (5, 4), "heavy": (5, 4)},
    "retry_ladder": {"reread_then_shrink": (6, 3), "escalate_model": (3, 5)},
}


def epsilon(key_pulls: int) -> float:
    """Exploration rate after `key_pulls` updates: max(0.02, 0.20 / (1 + pulls/40))."""
    return max(MIN_EXPLORE_RATE, EPSILON_START / (1.0 + max(0, key_pulls) / EXPLORE_HALF_LIFE))


@dataclass(frozen=True, slots=True, order=True)
class PolicyKey:
    """Normalized (decision, model family, language); blank parts mean "any"."""

    decision: str
    family: str = ""
    language: str = ""

    @classmethod
    def make(cls, decision: str, model: str = "", language: str = "") -> PolicyKey:
        """Normalize: decision lowercased, model id folded to its family, language aliased."""
        fam = model_family(model) if model.strip() else ""
        return cls(decision.strip().lower(), fam, normalize_language(language))

    def __str__(self) -> str:
        return "|".join(part or "*" for part in (self.decision, self.family, self.language))


@dataclass(frozen=True, slots=True)
class ArmStats:
    """One arm's Beta posterior and bookkeeping (`last_used` in epoch seconds, 0 = never)."""

    name: str
    alpha: float
    beta: float
    pulls: int = 0
    reward_total: float = 0.0
    last_used: float = 0.0
    detector: changepoint.DetectorState = field(default_factory=changepoint.DetectorState)

    @property
    def mean(self) -> float:
        return beta_mean(self.alpha, self.beta)

    @property
    def stddev(self) -> float:
        return beta_stddev(self.alpha, self.beta)


@dataclass(slots=True)
class KeyState:
    """Every arm recorded under one key, the key's total pulls and its change history."""

    key: PolicyKey
    arms: dict[str, ArmStats] = field(default_factory=dict)
    pulls: int = 0
    early_decays: int = 0
    last_change: float = 0.0

    @property
    def last_used(self) -> float:
        return max((arm.last_used for arm in self.arms.values()), default=0.0)


@dataclass(frozen=True, slots=True)
class ChangeConfig:
    """The early-decay guard; `enabled=False` gives the seed's behaviour (200-pull decay only)."""

    enabled: bool = True
    detector: changepoint.DetectorConfig = field(default_factory=changepoint.DetectorConfig)
    keep_evidence: float = 2.0


@dataclass(frozen=True, slots=True)
class ArmView:
    """A row of the posterior table a choice was made from."""

    name: str
    alpha: float
    beta: float
    pulls: int
    mean: float
    stddev: float
    sample: float | None = None


@dataclass(frozen=True, slots=True)
class Choice:
    """The chosen arm, why, and the posterior table behind it.

    `mode` is one of: none, single, warm-up, exploring, thompson, deterministic.
    """

    arm: str
    reason: str
    mode: str
    explore: bool
    key: PolicyKey
    key_pulls: int
    epsilon: float
    table: tuple[ArmView, ...]


@dataclass(frozen=True, slots=True)
class UpdateResult:
    reward: float
    arm: ArmStats
    key_pulls: int
    decayed: bool
    change_detected: bool


def clean_arms(arms: Iterable[str]) -> list[str]:
    """Trim, drop blanks and duplicates, keep the offered order."""
    seen: set[str] = set()
    out: list[str] = []
    for arm in arms:
        name = arm.strip()
        if name and name not in seen:
            seen.add(name)
            out.append(name)
    return out


def _pct(value: float) -> str:
    return f"{value * 100:.0f}%"


class Policy:
    """All bandit keys; mutated only by its owner (the bandit actor)."""

    def __init__(
        self,
        priors: PriorTable | None = None,
        *,
        change: ChangeConfig | None = None,
        max_keys: int = MAX_BANDIT_KEYS,
    ) -> None:
        self.keys: dict[str, KeyState] = {}
        self.priors: PriorTable = SHIPPED_PRIORS if priors is None else priors
        self.change = ChangeConfig() if change is None else change
        self.max_keys = max_keys

    # -- priors and lookups ------------------------------------------------------------------
    def prior(self, decision: str, arm: str) -> Prior:
        """The warm-start (α₀, β₀) of an arm: override table, else shipped, else uniform (1, 1)."""
        for table in (self.priors, SHIPPED_PRIORS):
            found = table.get(decision, {}).get(arm)
            if found is not None and found[0] > 0 and found[1] > 0:
                return float(found[0]), float(found[1])
        return UNIFORM_PRIOR

    def arm(self, key: PolicyKey, name: str) -> ArmStats:
        """The stored arm, or a fresh one at its prior."""
        state = self.keys.get(str(key))
        if state is not None and name in state.arms:
            return state.arms[name]
        alpha0, beta0 = self.prior(key.decision, name)
        return ArmStats(name, alpha0, beta0)

    def key_pulls(self, key: PolicyKey) -> int:
        state = self.keys.get(str(key))
        return state.pulls if state is not None else 0

    def _table(
        self, key: PolicyKey, arms: list[str], samples: Mapping[str, float]
    ) -> tuple[ArmView, ...]:
        rows = []
        for name in arms:
            stats = self.arm(key, name)
            rows.append(
                ArmView(name, stats.alpha, stats.beta, stats.pulls, stats.mean, stats.stddev,
                        samples.get(name))
            )
        return tuple(rows)

    # -- choose (S-13.5) ---------------------------------------------------------------------
    def choose(
        self,
        key: PolicyKey,
        arms: Iterable[str],
        rng: random.Random,
        *,
        deterministic: bool = False,
    ) -> Choice:
        offered = clean_arms(arms)
        pulls = self.key_pulls(key)
        eps = 0.0 if deterministic else epsilon(pulls)

        def result(arm: str, reason: str, mode: str, explore: bool,
                   samples: Mapping[str, float] | None = None) -> Choice:
            table = self._table(key, offered, samples or {})
            return Choice(arm, reason, mode, explore, key, pulls, eps, table)

        if not offered:
            return result("", "no arms offered", "none", False)
        if len(offered) == 1:
            return result(offered[0], "only one option", "single", False)
        stats = {name: self.arm(key, name) for name in offered}
        if deterministic:
            best = min(offered, key=lambda n: (-stats[n].mean, n))
            return result(best, f"deterministic mode: highest posterior mean "
                          f"{_pct(stats[best].mean)} over {stats[best].pulls} pulls",
                          "deterministic", False)
        least = min(offered, key=lambda n: (stats[n].pulls, n))
        if stats[least].pulls < MIN_PULLS:
            return result(least, f"warm-up: {least} has {stats[least].pulls}/{MIN_PULLS} "
                          "required samples", "warm-up", True)
        if rng.random() < eps:
            pick = offered[rng.randrange(len(offered))]
            return result(pick, f"exploring (ε={eps:.2f} after {pulls} pulls)", "exploring", True)
        samples = {name: sample_beta(stats[name].alpha, stats[name].beta, rng) for name in offered}
        best = min(offered, key=lambda n: (-samples[n], n))
        return result(best, f"Thompson sample favored {best} (posterior mean "
                      f"{_pct(stats[best].mean)} over {stats[best].pulls} pulls)",
                      "thompson", False, samples)

    # -- update (S-13.6) ---------------------------------------------------------------------
    def update(self, key: PolicyKey, arm: str, reward: float, now: float) -> UpdateResult:
        """Record one reward for `arm` under `key`; may decay the key (every 200 pulls or on a
        detected change). Raises ValueError for a blank arm name."""
        name = arm.strip()
        if not name:
            raise ValueError("arm name is blank")
        r = clamp_reward(reward)
        state = self.keys.setdefault(str(key), KeyState(key))
        before = self.arm(key, name)
        detector, alarm = before.detector, False
        if self.change.enabled:
            detector, alarm = changepoint.observe(detector, r, before.mean, self.change.detector)
        state.arms[name] = replace(
            before,
            alpha=before.alpha + r,
            beta=before.beta + (1.0 - r),
            pulls=before.pulls + 1,
            reward_total=before.reward_total + r,
            last_used=max(now, before.last_used),
            detector=detector,
        )
        state.pulls += 1
        decayed = state.pulls % DECAY_AFTER == 0
        if decayed:
            self._decay(state, DECAY_FACTOR)
        if alarm:
            self._decay_to_evidence(state, self.change.keep_evidence, name)
            state.early_decays += 1
            state.last_change = now
        return UpdateResult(r, state.arms[name], state.pulls, decayed, alarm)

    def _decay(self, state: KeyState, factor: float) -> None:
        """α = α₀ + (α − α₀)·factor, same for β, for every arm of the key."""
        for name, stats in state.arms.items():
            alpha0, beta0 = self.prior(state.key.decision, name)
            state.arms[name] = replace(
                stats,
                alpha=max(alpha0 + (stats.alpha - alpha0) * factor, 1e-9),
                beta=max(beta0 + (stats.beta - beta0) * factor, 1e-9),
            )

    def _decay_to_evidence(self, state: KeyState, keep: float, changed: str) -> None:
        """Early decay after a detected change: the arm that changed is rebuilt from its prior plus
        its recent rewards (the evidence of the new regime); every other arm keeps at most `keep`
        pseudo-observations of evidence on top of its prior; every detector restarts."""
        for name, stats in state.arms.items():
            alpha0, beta0 = self.prior(state.key.decision, name)
            recent = stats.detector.recent
            if name == changed and recent:
                state.arms[name] = replace(
                    stats, alpha=alpha0 + sum(recent), beta=beta0 + len(recent) - sum(recent),
                    detector=changepoint.DetectorState(),
                )
                continue
            evidence = abs(stats.alpha - alpha0) + abs(stats.beta - beta0)
            factor = min(1.0, keep / evidence) if evidence > 0 else 1.0
            state.arms[name] = replace(
                stats,
                alpha=max(alpha0 + (stats.alpha - alpha0) * factor, 1e-9),
                beta=max(beta0 + (stats.beta - beta0) * factor, 1e-9),
                detector=changepoint.DetectorState(),
            )

    # -- housekeeping ------------------------------------------------------------------------
    def prune(self, max_keys: int | None = None) -> list[str]:
        """Keep the `max_keys` most-pulled keys; returns the dropped key strings, in drop order."""
        limit = self.max_keys if max_keys is None else max_keys
        if limit < 0 or len(self.keys) <= limit:
            return []
        order = sorted(self.keys.items(), key=lambda kv: (kv[1].pulls, kv[1].last_used, kv[0]))
        dropped = [name for name, _ in order[: len(self.keys) - limit]]
        for name in dropped:
            del self.keys[name]
        return dropped

    def forget(self, decision: str = "") -> int:
        """Drop every key (or only those of `decision`); returns how many were dropped."""
        wanted = decision.strip().lower()
        doomed = [k for k, s in self.keys.items() if not wanted or s.key.decision == wanted]
        for name in doomed:
            del self.keys[name]
        return len(doomed)

    def keys_for(self, decision: str) -> list[KeyState]:
        wanted = decision.strip().lower()
        return sorted((s for s in self.keys.values() if s.key.decision == wanted),
                      key=lambda s: s.key)


def is_valid_posterior(alpha: float, beta: float) -> bool:
    return math.isfinite(alpha) and math.isfinite(beta) and alpha > 0 and beta > 0
