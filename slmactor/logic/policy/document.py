"""`policy.json` as data: the bandit `Policy` to and from its on-disk document (SPEC S-13.4).

Document: `{version, updated, keys: {<decision|family|language>: {key: {decision, model_family,
language}, arms: {<name>: {name, alpha, beta, pulls, reward_total, last_used}}, pulls}}}` — the
seed's layout, so a policy written by the Go harness loads here and vice versa (extra fields are
ignored by both). Additions: per arm `detector` (the CUSUM state of `changepoint`), per key
`early_decays` and `last_change`.

Load rules: arms with α ≤ 0 or β ≤ 0 (or non-finite) are dropped with a warning; a key whose
stored key object is missing is rebuilt from its map key; unreadable entries are skipped, never
fatal. Timestamps are RFC 3339 UTC strings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from slmactor.logic.policy import changepoint
from slmactor.logic.policy.bandit import (
    ArmStats,
    ChangeConfig,
    KeyState,
    Policy,
    PolicyKey,
    PriorTable,
)
from slmactor.logic.text.models import normalize_language
from slmactor.logic.text.timefmt import parse_rfc3339, to_rfc3339

POLICY_VERSION = 1


def _ts(epoch: float) -> str:
    return to_rfc3339(epoch) if epoch > 0 else ""


def policy_to_dict(policy: Policy, now: float) -> dict[str, Any]:
    keys: dict[str, Any] = {}
    for name in sorted(policy.keys):
        state = policy.keys[name]
        keys[name] = {
            "key": {"decision": state.key.decision, "model_family": state.key.family,
                    "language": state.key.language},
            "arms": {
                arm.name: {
                    "name": arm.name,
                    "alpha": arm.alpha,
                    "beta": arm.beta,
                    "pulls": arm.pulls,
                    "reward_total": arm.reward_total,
                    "last_used": _ts(arm.last_used),
                    "detector": arm.detector.to_dict(),
                }
                for arm in sorted(state.arms.values(), key=lambda a: a.name)
            },
            "pulls": state.pulls,
            "early_decays": state.early_decays,
            "last_change": _ts(state.last_change),
        }
    return {"version": POLICY_VERSION, "updated": _ts(now), "keys": keys}


def _float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _int(value: object) -> int:
    number = _float(value)
    return max(0, int(number)) if number is not None else 0


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _time(value: object) -> float:
    parsed = parse_rfc3339(value) if isinstance(value, str) else None
    return parsed if parsed is not None else 0.0


def _key_of(map_key: str, raw: object) -> PolicyKey | None:
    if isinstance(raw, Mapping):
        decision = _str(raw.get("decision")).strip().lower()
        family = _str(raw.get("model_family")).strip().lower()
        language = _str(raw.get("language"))
    else:
        parts = map_key.split("|")
        if len(parts) != 3:
            return None
        decision, family, language = ((p if p != "*" else "") for p in parts)
        decision, family = decision.strip().lower(), family.strip().lower()
    if not decision:
        return None
    return PolicyKey(decision, family, normalize_language(language))


def _arm_of(name: str, raw: object, warnings: list[str], where: str) -> ArmStats | None:
    if not isinstance(raw, Mapping):
        warnings.append(f"{where}: arm {name!r} is not an object; dropped")
        return None
    alpha, beta = _float(raw.get("alpha")), _float(raw.get("beta"))
    if alpha is None or beta is None or alpha <= 0 or beta <= 0:
        warnings.append(f"{where}: arm {name!r} has an invalid posterior; dropped")
        return None
    total = _float(raw.get("reward_total"))
    return ArmStats(
        name=_str(raw.get("name")).strip() or name,
        alpha=alpha,
        beta=beta,
        pulls=_int(raw.get("pulls")),
        reward_total=total if total is not None and total >= 0 else 0.0,
        last_used=_time(raw.get("last_used")),
        detector=changepoint.DetectorState.from_dict(raw.get("detector")),
    )


def policy_from_dict(
    data: object,
    *,
    priors: PriorTable | None = None,
    change: ChangeConfig | None = None,
    max_keys: int | None = None,
) -> tuple[Policy, list[str]]:
    """Build a Policy from a parsed document; returns it with the warnings about dropped parts."""
    policy = Policy(priors, change=change) if max_keys is None else Policy(
        priors, change=change, max_keys=max_keys)
    warnings: list[str] = []
    if not isinstance(data, Mapping):
        warnings.append("policy.json is not an object; starting from priors")
        return policy, warnings
    keys = data.get("keys")
    if not isinstance(keys, Mapping):
        return policy, warnings
    for map_key, raw in keys.items():
        if not isinstance(map_key, str) or not isinstance(raw, Mapping):
            warnings.append(f"policy key {map_key!r} is not an object; dropped")
            continue
        key = _key_of(map_key, raw.get("key"))
        if key is None:
            warnings.append(f"policy key {map_key!r} has no decision; dropped")
            continue
        state = policy.keys.get(str(key)) or KeyState(key)
        arms = raw.get("arms")
        for name, arm_raw in (arms.items() if isinstance(arms, Mapping) else ()):
            if not isinstance(name, str) or not name.strip():
                continue
            arm = _arm_of(name.strip(), arm_raw, warnings, str(key))
            if arm is not None:
                state.arms[arm.name] = arm
        state.pulls += max(_int(raw.get("pulls")), 0)
        state.early_decays += _int(raw.get("early_decays"))
        state.last_change = max(state.last_change, _time(raw.get("last_change")))
        if state.arms:
            policy.keys[str(key)] = state
    dropped = policy.prune()
    if dropped:
        warnings.append(f"policy held more than {policy.max_keys} keys; pruned {len(dropped)}")
    return policy, warnings
