"""Simulation benchmark of the policy bandit under a switch of the best arm.

Setup (all fixed seeds): 3 arms, 2,000 pulls, the best arm switches half-way. Every algorithm sees
the *same* reward streams: for each seed a table rewards[t][arm] is drawn up front, so pulling arm a
at step t yields the same reward whichever algorithm pulls it. Algorithms:

* `thompson+cusum` — slmactor's `Policy` as shipped (S-13.5 choose, S-13.6 update with the 200-pull
  decay, plus the CUSUM early decay of `logic/policy/changepoint.py`);
* `thompson` — the same `Policy` with change detection off (the seed's behaviour);
* `eps-greedy` — ε = 0.1, sample means (each arm once first);
* `ucb1` — Auer et al. UCB1 (each arm once first).

Reported per algorithm (mean over seeds): cumulative pseudo-regret Σ(μ*_t − μ_{a_t}) over the
whole run and after the switch, and recovery pulls: the first step after the switch from which the
new best arm takes ≥ 80 % of the next 50 pulls (median / p90 / max over seeds; "never" counts as the
remaining horizon), and the same with a ≥ 50 % share (the new best arm has become the arm
pulled most). Ratios are to the best baseline measured in the same run.

Reward models: `bernoulli` (reward 1 with probability μ, else 0) and `outcome` (a harness-like
outcome drawn per step and scored by the real S-13.8 reward function).

    .venv/bin/python bench/bench_bandit.py [--seeds 40] [--pulls 2000] [--model bernoulli|outcome]
    .venv/bin/python -m bench bandit          # both reward models, as benchmark rows
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from slmactor.logic.policy.bandit import ChangeConfig, Policy, PolicyKey
from slmactor.logic.policy.reward import Outcome, reward

ARMS = ("a", "b", "c")
BEFORE = (0.75, 0.55, 0.35)
AFTER = (0.35, 0.55, 0.75)
RECOVERY_WINDOW = 50
RECOVERY_SHARE = 0.8
MAJORITY_SHARE = 0.5

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


ALARMS: dict[str, list[int]] = {}


def policy_agent(seed: int, detect: bool, pulls: int) -> tuple[Chooser, Learner]:
    """slmactor's Policy; change alarms before the switch (false alarms) are tallied in ALARMS."""
    policy = Policy(change=ChangeConfig(enabled=detect))
    key = PolicyKey.make("simulated_choice", "sim-model", "python")
    rng = random.Random(seed * 7919 + 1)
    clock = [1_700_000_000.0]
    step = [0]
    tally = ALARMS.setdefault("cusum" if detect else "none", [])
    tally.append(0)

    def choose(_t: int) -> int:
        return ARMS.index(policy.choose(key, ARMS, rng).arm)

    def learn(arm: int, r: float) -> None:
        clock[0] += 60.0
        result = policy.update(key, ARMS[arm], r, clock[0])
        if result.change_detected and step[0] < pulls // 2:
            tally[-1] += 1
        step[0] += 1

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


def run_agent(agent: tuple[Chooser, Learner], table: list[list[float]],
              means: Sequence[Sequence[float]]) -> tuple[float, float, int, int]:
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
    return (regret, regret_after, recovery_pulls(picks, switch, best_after, RECOVERY_SHARE),
            recovery_pulls(picks, switch, best_after, MAJORITY_SHARE))


def recovery_pulls(picks: list[int], switch: int, best: int, share: float) -> int:
    """Pulls after the switch until `best` takes ≥ `share` of the next RECOVERY_WINDOW pulls
    (the remaining horizon when it never does)."""
    pulls = len(picks)
    for start in range(switch, pulls - RECOVERY_WINDOW + 1):
        if picks[start:start + RECOVERY_WINDOW].count(best) >= share * RECOVERY_WINDOW:
            return start - switch
    return pulls - switch


def pct(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def simulate(seeds: int, pulls: int, model: str) -> dict[str, Any]:
    """Every algorithm on the same reward tables; returns means and per-algorithm summaries."""
    means: tuple[tuple[float, ...], tuple[float, ...]]
    if model == "bernoulli":
        means = (BEFORE, AFTER)
    else:
        means = (tuple(expected_outcome_reward(m) for m in BEFORE),
                 tuple(expected_outcome_reward(m) for m in AFTER))
    ALARMS.clear()
    agents: dict[str, Callable[[int], tuple[Chooser, Learner]]] = {
        "thompson+cusum": lambda s: policy_agent(s, True, pulls),
        "thompson": lambda s: policy_agent(s, False, pulls),
        "eps-greedy": eps_greedy_agent,
        "ucb1": ucb1_agent,
    }
    results: dict[str, dict[str, list[float]]] = {
        name: {"regret": [], "after": [], "recovery": [], "majority": []} for name in agents}
    started = time.perf_counter()
    for seed in range(1, seeds + 1):
        table = reward_table(seed, pulls, model)
        for name, make in agents.items():
            regret, after, recovery, majority = run_agent(make(seed), table, means)
            results[name]["majority"].append(majority)
            results[name]["regret"].append(regret)
            results[name]["after"].append(after)
            results[name]["recovery"].append(recovery)
    elapsed = time.perf_counter() - started
    summary: dict[str, dict[str, float]] = {}
    for name, r in results.items():
        rec = [int(x) for x in r["recovery"]]
        maj = [int(x) for x in r["majority"]]
        summary[name] = {
            "majority_median": statistics.median(maj),
            "majority_p90": pct(maj, 0.9),
            "majority_max": max(maj),
            "regret_mean": statistics.fmean(r["regret"]),
            "regret_sd": statistics.pstdev(r["regret"]),
            "regret_after_switch_mean": statistics.fmean(r["after"]),
            "recovery_median": statistics.median(rec),
            "recovery_p90": pct(rec, 0.9),
            "recovery_max": max(rec),
            "never_recovered": sum(1 for x in rec if x >= pulls - pulls // 2),
        }
    summary["thompson+cusum"]["false_alarms_per_run"] = statistics.fmean(ALARMS["cusum"])
    floor = min(summary["eps-greedy"]["regret_mean"], summary["ucb1"]["regret_mean"])
    for row in summary.values():
        row["regret_ratio_to_best_baseline"] = row["regret_mean"] / floor if floor else math.nan
    return {"seeds": seeds, "pulls": pulls, "model": model, "means": means,
            "summary": summary, "seconds": elapsed}


def step_cost(n: int = 3000) -> tuple[float, float]:
    """µs per choose+update of the Policy (past warm-up) vs the floor: three stdlib
    `random.betavariate` draws and an argmax, the least a 3-arm Thompson step can do."""
    policy = Policy()
    key = PolicyKey.make("simulated_choice")
    rng = random.Random(1)
    for arm in ARMS:
        for _ in range(2):
            policy.update(key, arm, 0.5, 0.0)
    started = time.perf_counter()
    for i in range(n):
        arm = policy.choose(key, ARMS, rng).arm
        policy.update(key, arm, (i % 10) / 10, float(i))
    ours = (time.perf_counter() - started) / n * 1e6
    started = time.perf_counter()
    for _ in range(n):
        draws = [rng.betavariate(2.0 + i, 3.0) for i in range(len(ARMS))]
        max(range(len(ARMS)), key=draws.__getitem__)
    floor = (time.perf_counter() - started) / n * 1e6
    return ours, floor


def run(quick: bool) -> list[dict[str, Any]]:
    """Rows for `python -m bench bandit`."""
    seeds = 8 if quick else 40
    rows: list[dict[str, Any]] = []
    for model in ("bernoulli", "outcome"):
        result = simulate(seeds, 2000, model)
        summary = result["summary"]
        base = min(summary["eps-greedy"]["regret_mean"], summary["ucb1"]["regret_mean"])
        base_name = "eps-greedy" if base == summary["eps-greedy"]["regret_mean"] else "ucb1"
        for name in ("thompson+cusum", "thompson"):
            row = summary[name]
            rows.append({"name": f"{model}: regret {name}", "value": row["regret_mean"],
                         "unit": "reward", "floor": base, "floor_name": f"{base_name} regret",
                         "ratio": row["regret_mean"] / base, "target": "< 1 (beat baselines)"})
            rows.append({"name": f"{model}: recovery(50%) p90 {name}",
                         "value": row["majority_p90"], "unit": "pulls",
                         "floor": summary["ucb1"]["majority_p90"],
                         "floor_name": "ucb1 recovery(50%) p90",
                         "ratio": row["majority_p90"] / max(1, summary["ucb1"]["majority_p90"]),
                         "target": "bounded (< 500)"})
            rows.append({"name": f"{model}: recovery(80%) p90 {name}", "value": row["recovery_p90"],
                         "unit": "pulls", "floor": summary["ucb1"]["recovery_p90"],
                         "floor_name": "ucb1 recovery p90",
                         "ratio": row["recovery_p90"] / max(1, summary["ucb1"]["recovery_p90"]),
                         "target": "bounded (< 500)"})
        rows.append({"name": f"{model}: false alarms/run before switch", "unit": "alarms",
                     "value": summary["thompson+cusum"]["false_alarms_per_run"], "floor": None,
                     "floor_name": "", "ratio": None, "target": "< 1 per 1000 pulls"})
    ours, floor = step_cost(1000 if quick else 5000)
    rows.append({"name": "choose+update (3 arms)", "value": ours, "unit": "µs", "floor": floor,
                 "floor_name": "3× random.betavariate + argmax", "ratio": ours / floor,
                 "target": "informational"})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--pulls", type=int, default=2000)
    parser.add_argument("--model", choices=("bernoulli", "outcome"), default="bernoulli")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = simulate(args.seeds, args.pulls, args.model)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    means, summary = result["means"], result["summary"]
    print(f"bandit simulation: {len(ARMS)} arms, {args.pulls} pulls, switch at {args.pulls // 2}, "
          f"{args.seeds} seeds, reward model {args.model}")
    print("  means before " + ", ".join(f"{m:.3f}" for m in means[0])
          + "; after " + ", ".join(f"{m:.3f}" for m in means[1]))
    print(f"  {'algorithm':<16}{'regret':>16}{'after switch':>14}{'× best base':>13}"
          f"{'recovery med/p90/max':>24}{'never':>7}{'≥50% med/p90/max':>22}")
    for name, row in summary.items():
        print(f"  {name:<16}{row['regret_mean']:>9.1f} ±{row['regret_sd']:>5.1f}"
              f"{row['regret_after_switch_mean']:>14.1f}{row['regret_ratio_to_best_baseline']:>13.2f}"
              f"{row['recovery_median']:>12.0f} /{row['recovery_p90']:>4d} /{row['recovery_max']:>5d}"
              f"{row['never_recovered']:>7d}"
              f"{row['majority_median']:>10.0f} /{row['majority_p90']:>4d} /{row['majority_max']:>5d}")
    print(f"  thompson+cusum false alarms before the switch: "
          f"{summary['thompson+cusum']['false_alarms_per_run']:.2f} per run "
          f"({args.pulls // 2} stationary pulls)")
    print(f"  ({result['seconds']:.1f} s)")


if __name__ == "__main__":
    main()
