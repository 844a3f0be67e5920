"""Simulation benchmark of the policy bandit under a switch of the best arm (issue 7).

Setup (all fixed seeds): 3 arms, 2,000 pulls, the best arm switches half-way. Every algorithm sees
the *same* reward streams: for each seed a table rewards[t][arm] is drawn up front, so pulling arm a
at step t yields the same reward whichever algorithm pulls it. Algorithms:

* `thompson+cusum` — slmactor's `Policy` as shipped (S-13.5 choose, S-13.6 update with the 200-pull
  decay, plus the CUSUM early decay of `logic/changepoint.py`);
* `thompson` — the same `Policy` with change detection off (the seed's behaviour);
* `eps-greedy` — ε = 0.1, sample means (each arm once first);
* `ucb1` — Auer et al. UCB1 (each arm once first).

Reported per algorithm (mean over seeds): cumulative pseudo-regret Σ(μ*_t − μ_{a_t}) over the
whole run and after the switch, and recovery pulls: the first step after the switch from which the
new best arm takes ≥ 80 % of the next 50 pulls (median / p90 / max over seeds; "never" counts as the
remaining horizon). Ratios are to the best baseline measured in the same run.

Reward models: `bernoulli` (reward 1 with probability μ, else 0) and `outcome` (a harness-like
outcome drawn per step and scored by the real S-13.8 reward function).

    .venv/bin/python bench/bench_bandit.py [--seeds 40] [--pulls 2000] [--model bernoulli|outcome]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence

from slmactor.logic.bandit import ChangeConfig, Policy, PolicyKey
from slmactor.logic.reward import Outcome, reward

ARMS = ("a", "b", "c")
BEFORE = (0.75, 0.55, 0.35)
AFTER = (0.35, 0.55, 0.75)
RECOVERY_WINDOW = 50
RECOVERY_SHARE = 0.8

Chooser = Callable[[int], int]
Learner = Callable[[int, float], None]


def outcome_reward(success_prob: float, rng: random.Random) -> float:
    """A harness-like step: the edit applies and the gate passes with `success_prob`; otherwise
    half the time it applies but the gate fails after a retry, else nothing applies (a failure)."""
    tokens = rng.randint(2_000, 9_000)
    wall = rng.uniform(5_000, 60_000)
    if rng.random() < success_prob:
        out = Outcome(applied=True, gate_passed=True, gate_ran=True, retries=0,
                      tokens_used=tokens, token_budget=10_000, wall_ms=wall,
                      wall_budget_ms=90_000)
    elif rng.random() < 0.5:
        out = Outcome(applied=True, gate_ran=True, retries=1, tokens_used=tokens,
                      token_budget=10_000, wall_ms=wall, wall_budget_ms=90_000)
    else:
        out = Outcome(retries=3, failed=True, tokens_used=tokens, token_budget=10_000)
    return reward(out)


def expected_outcome_reward(success_prob: float, rng_seed: int = 7, n: int = 20_000) -> float:
    rng = random.Random(rng_seed)
    return sum(outcome_reward(success_prob, rng) for _ in range(n)) / n


def reward_table(seed: int, pulls: int, model: str) -> list[list[float]]:
    rng = random.Random(seed)
    rows = []
    for t in range(pulls):
        means = BEFORE if t < pulls // 2 else AFTER
        if model == "bernoulli":
            rows.append([1.0 if rng.random() < m else 0.0 for m in means])
        else:
            rows.append([outcome_reward(m, rng) for m in means])
    return rows


def policy_agent(seed: int, detect: bool) -> tuple[Chooser, Learner]:
    policy = Policy(change=ChangeConfig(enabled=detect))
    key = PolicyKey.make("simulated_choice", "sim-model", "python")
    rng = random.Random(seed * 7919 + 1)
    clock = [1_700_000_000.0]

    def choose(_t: int) -> int:
        return ARMS.index(policy.choose(key, ARMS, rng).arm)

    def learn(arm: int, r: float) -> None:
        clock[0] += 60.0
        policy.update(key, ARMS[arm], r, clock[0])

    return choose, learn


def eps_greedy_agent(seed: int, eps: float = 0.1) -> tuple[Chooser, Learner]:
    rng = random.Random(seed * 104729 + 3)
    counts, sums = [0] * len(ARMS), [0.0] * len(ARMS)

    def choose(_t: int) -> int:
        for i, n in enumerate(counts):
            if n == 0:
                return i
        if rng.random() < eps:
            return rng.randrange(len(ARMS))
        return max(range(len(ARMS)), key=lambda i: (sums[i] / counts[i], -i))

    def learn(arm: int, r: float) -> None:
        counts[arm] += 1
        sums[arm] += r

    return choose, learn


def ucb1_agent(_seed: int) -> tuple[Chooser, Learner]:
    counts, sums = [0] * len(ARMS), [0.0] * len(ARMS)

    def choose(t: int) -> int:
        for i, n in enumerate(counts):
            if n == 0:
                return i
        total = sum(counts)
        return max(range(len(ARMS)), key=lambda i: (
            sums[i] / counts[i] + math.sqrt(2.0 * math.log(total) / counts[i]), -i))

    def learn(arm: int, r: float) -> None:
        counts[arm] += 1
        sums[arm] += r

    return choose, learn


def run(agent: tuple[Chooser, Learner], table: list[list[float]], means: Sequence[Sequence[float]],
        ) -> tuple[float, float, int]:
    choose, learn = agent
    pulls = len(table)
    switch = pulls // 2
    regret = regret_after = 0.0
    picks: list[int] = []
    for t in range(pulls):
        m = means[0] if t < switch else means[1]
        arm = choose(t)
        learn(arm, table[t][arm])
        loss = max(m) - m[arm]
        regret += loss
        if t >= switch:
            regret_after += loss
        picks.append(arm)
    best_after = max(range(len(ARMS)), key=lambda i: means[1][i])
    recovery = pulls - switch
    for start in range(switch, pulls - RECOVERY_WINDOW + 1):
        window = picks[start:start + RECOVERY_WINDOW]
        if window.count(best_after) >= RECOVERY_SHARE * RECOVERY_WINDOW:
            recovery = start - switch
            break
    return regret, regret_after, recovery


def pct(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--pulls", type=int, default=2000)
    parser.add_argument("--model", choices=("bernoulli", "outcome"), default="bernoulli")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    means: tuple[tuple[float, ...], tuple[float, ...]]
    if args.model == "bernoulli":
        means = (BEFORE, AFTER)
    else:
        means = (tuple(expected_outcome_reward(m) for m in BEFORE),
                 tuple(expected_outcome_reward(m) for m in AFTER))
    agents: dict[str, Callable[[int], tuple[Chooser, Learner]]] = {
        "thompson+cusum": lambda s: policy_agent(s, True),
        "thompson": lambda s: policy_agent(s, False),
        "eps-greedy": eps_greedy_agent,
        "ucb1": ucb1_agent,
    }
    results: dict[str, dict[str, list[float]]] = {
        name: {"regret": [], "after": [], "recovery": []} for name in agents}
    started = time.perf_counter()
    for seed in range(1, args.seeds + 1):
        table = reward_table(seed, args.pulls, args.model)
        for name, make in agents.items():
            regret, after, recovery = run(make(seed), table, means)
            results[name]["regret"].append(regret)
            results[name]["after"].append(after)
            results[name]["recovery"].append(recovery)
    elapsed = time.perf_counter() - started

    summary: dict[str, dict[str, float]] = {}
    for name, r in results.items():
        rec = [int(x) for x in r["recovery"]]
        summary[name] = {
            "regret_mean": statistics.fmean(r["regret"]),
            "regret_sd": statistics.pstdev(r["regret"]),
            "regret_after_switch_mean": statistics.fmean(r["after"]),
            "recovery_median": statistics.median(rec),
            "recovery_p90": pct(rec, 0.9),
            "recovery_max": max(rec),
            "never_recovered": sum(1 for x in rec if x >= args.pulls - args.pulls // 2),
        }
    floor = min(summary["eps-greedy"]["regret_mean"], summary["ucb1"]["regret_mean"])
    for row in summary.values():
        row["regret_ratio_to_best_baseline"] = row["regret_mean"] / floor if floor else math.nan
    if args.json:
        print(json.dumps({"args": vars(args), "means": means, "summary": summary,
                          "seconds": elapsed}, indent=2))
        return
    print(f"bandit simulation: {len(ARMS)} arms, {args.pulls} pulls, switch at {args.pulls // 2}, "
          f"{args.seeds} seeds, reward model {args.model}")
    print("  means before " + ", ".join(f"{m:.3f}" for m in means[0])
          + "; after " + ", ".join(f"{m:.3f}" for m in means[1]))
    print(f"  {'algorithm':<16}{'regret':>16}{'after switch':>14}{'× best base':>13}"
          f"{'recovery med/p90/max':>24}{'never':>7}")
    for name, row in summary.items():
        print(f"  {name:<16}{row['regret_mean']:>9.1f} ±{row['regret_sd']:>5.1f}"
              f"{row['regret_after_switch_mean']:>14.1f}{row['regret_ratio_to_best_baseline']:>13.2f}"
              f"{row['recovery_median']:>12.0f} /{row['recovery_p90']:>4d} /{row['recovery_max']:>5d}"
              f"{row['never_recovered']:>7d}")
    print(f"  ({elapsed:.1f} s)")


if __name__ == "__main__":
    main()
