"""The policy bandit (S-13.1–S-13.6): keys, priors, the exact choose order, update arithmetic,
the 200-pull decay, pruning, reproducibility, and the early decay on a detected change."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.policy.bandit import (
    MIN_PULLS,
    ChangeConfig,
    KeyState,
    Policy,
    PolicyKey,
    clean_arms,
    epsilon,
)
from slmactor.logic.policy.betamath import beta_mean

NOW = 1_790_000_000.0
EDIT = PolicyKey.make("edit_format", "qwen2.5-coder:7b-instruct-q4_K_M", "golang")
NO_CHANGE = ChangeConfig(enabled=False)


class FixedRandom(random.Random):
    """The first random() (the ε draw) returns `value`; after that a normal seeded generator."""

    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.first: float | None = value

    def random(self) -> float:
        if self.first is not None:
            value, self.first = self.first, None
            return value
        return super().random()


def test_key_normalization_and_string_form() -> None:
    key = PolicyKey.make(" Edit_Format ", "ollama/Qwen2.5-Coder:14b", "Golang")
    assert key == PolicyKey("edit_format", "qwen2.5-coder", "go")
    assert str(key) == "edit_format|qwen2.5-coder|go"
    assert str(PolicyKey.make("think_passes")) == "think_passes|*|*"


def test_shipped_priors_overrides_and_uniform_default() -> None:
    policy = Policy()
    assert policy.prior("edit_format", "search_replace") == (8.0, 2.0)
    assert policy.prior("retry_ladder", "escalate_model") == (3.0, 5.0)
    assert policy.prior("edit_format", "novel_format") == (1.0, 1.0)
    assert policy.prior("my_decision", "x") == (1.0, 1.0)
    custom = Policy({"edit_format": {"whole_file": (9, 1)}, "mine": {"x": (2, 7)}})
    assert custom.prior("edit_format", "whole_file") == (9.0, 1.0)
    assert custom.prior("edit_format", "search_replace") == (8.0, 2.0)
    assert custom.prior("mine", "x") == (2.0, 7.0)


@pytest.mark.parametrize(
    ("pulls", "expected"),
    [(0, 0.20), (40, 0.10), (80, 0.2 / 3), (120, 0.05), (320, 0.2 / 9), (360, 0.02), (5000, 0.02)],
)
def test_epsilon_schedule(pulls: int, expected: float) -> None:
    assert epsilon(pulls) == pytest.approx(expected)


def test_clean_arms_trims_and_dedupes_in_order() -> None:
    assert clean_arms([" b", "a ", "b", "", "  ", "c"]) == ["b", "a", "c"]


def test_no_arms_and_single_arm() -> None:
    policy = Policy()
    none = policy.choose(EDIT, ["", "  "], random.Random(1))
    assert (none.arm, none.reason, none.mode) == ("", "no arms offered", "none")
    one = policy.choose(EDIT, [" whole_file ", "whole_file"], random.Random(1))
    assert (one.arm, one.reason, one.explore) == ("whole_file", "only one option", False)


def test_every_arm_is_pulled_min_pulls_times_before_sampling() -> None:
    policy = Policy(change=NO_CHANGE)
    rng = random.Random(3)
    arms = ["whole_file", "unified_diff", "search_replace"]
    first = policy.choose(EDIT, arms, rng)
    assert first.arm == "search_replace"  # fewest pulls, ties by name
    assert first.reason == "warm-up: search_replace has 0/2 required samples"
    assert first.explore and first.mode == "warm-up"
    modes = []
    for _ in range(len(arms) * MIN_PULLS):
        choice = policy.choose(EDIT, arms, rng)
        modes.append(choice.mode)
        policy.update(EDIT, choice.arm, 1.0, NOW)
    assert modes == ["warm-up"] * 6
    assert {name: policy.arm(EDIT, name).pulls for name in arms} == dict.fromkeys(arms, 2)
    assert policy.choose(EDIT, arms, rng).mode in {"exploring", "thompson"}


def test_warm_up_applies_to_a_newly_offered_arm() -> None:
    policy = Policy(change=NO_CHANGE)
    for _ in range(10):
        for arm in ("search_replace", "whole_file"):
            policy.update(EDIT, arm, 0.9, NOW)
    choice = policy.choose(EDIT, ["search_replace", "whole_file", "patch_v2"], random.Random(0))
    assert choice.arm == "patch_v2"
    assert choice.reason == "warm-up: patch_v2 has 0/2 required samples"


def _warm(policy: Policy, key: PolicyKey, arms: list[str], reward: float = 0.8) -> None:
    for arm in arms:
        for _ in range(MIN_PULLS):
            policy.update(key, arm, reward, NOW)


def test_epsilon_exploration_picks_uniformly_and_says_so() -> None:
    policy = Policy(change=NO_CHANGE)
    arms = ["search_replace", "unified_diff", "whole_file"]
    _warm(policy, EDIT, arms)
    choice = policy.choose(EDIT, arms, FixedRandom(0.0))
    assert choice.mode == "exploring" and choice.explore
    assert choice.reason == "exploring (ε=0.17 after 6 pulls)"
    assert choice.epsilon == pytest.approx(0.2 / (1 + 6 / 40))
    assert all(row.sample is None for row in choice.table)


def test_thompson_sampling_reason_and_table() -> None:
    policy = Policy(change=NO_CHANGE)
    arms = ["search_replace", "unified_diff", "whole_file"]
    _warm(policy, EDIT, arms)
    choice = policy.choose(EDIT, arms, FixedRandom(0.99))
    assert choice.mode == "thompson" and not choice.explore
    samples = {row.name: row.sample for row in choice.table}
    assert all(s is not None for s in samples.values())
    assert choice.arm == max(samples, key=lambda n: samples[n] or 0.0)
    stats = policy.arm(EDIT, choice.arm)
    assert choice.reason == (f"Thompson sample favored {choice.arm} (posterior mean "
                             f"{stats.mean * 100:.0f}% over 2 pulls)")
    row = next(r for r in choice.table if r.name == "search_replace")
    assert (row.alpha, row.beta, row.pulls) == pytest.approx((9.6, 2.4, 2))


def test_thompson_prefers_the_clearly_better_arm() -> None:
    policy = Policy(change=NO_CHANGE)
    key = PolicyKey.make("custom")
    for _ in range(60):
        policy.update(key, "good", 0.95, NOW)
        policy.update(key, "bad", 0.05, NOW)
    rng = random.Random(8)
    picks = [policy.choose(key, ["bad", "good"], rng).arm for _ in range(400)]
    assert picks.count("good") > 380  # only ε (0.05 here) and negligible posterior overlap


def test_deterministic_mode_is_argmax_mean_without_warm_up_or_randomness() -> None:
    policy = Policy()
    rng = random.Random(1)
    state = rng.getstate()
    choice = policy.choose(EDIT, ["whole_file", "unified_diff", "search_replace"], rng,
                           deterministic=True)
    assert choice.arm == "search_replace"
    assert choice.reason == "deterministic mode: highest posterior mean 80% over 0 pulls"
    assert choice.mode == "deterministic" and choice.epsilon == 0.0 and not choice.explore
    assert rng.getstate() == state
    # Ties go to the alphabetically first arm.
    tie = policy.choose(PolicyKey.make("role_model"), ["heavy", "fast"], rng, deterministic=True)
    assert tie.arm == "fast"


def _replay(seed: int | None, deterministic: bool, steps: int = 300) -> tuple[list[str], dict[str, tuple[float, float]]]:
    policy = Policy()
    rng = random.Random(seed)
    world = random.Random(1234)  # the environment is the same in every replay
    truth = {"search_replace": 0.55, "unified_diff": 0.8, "whole_file": 0.6}
    picks = []
    for step in range(steps):
        arm = policy.choose(EDIT, list(truth), rng, deterministic=deterministic).arm
        picks.append(arm)
        policy.update(EDIT, arm, 1.0 if world.random() < truth[arm] else 0.0, NOW + step)
    posterior = {name: (a.alpha, a.beta) for name, a in policy.keys[str(EDIT)].arms.items()}
    return picks, posterior


def test_deterministic_mode_is_reproducible_bit_for_bit() -> None:
    assert _replay(1, True) == _replay(2, True)
    assert _replay(None, True) == _replay(1, True)


def test_seeded_stochastic_mode_is_reproducible() -> None:
    first = _replay(42, False)
    assert first == _replay(42, False)
    assert first[0] != _replay(43, False)[0]


def test_update_arithmetic_and_clamping() -> None:
    policy = Policy(change=NO_CHANGE)
    result = policy.update(EDIT, " search_replace ", 0.925, NOW)
    arm = policy.arm(EDIT, "search_replace")
    assert (arm.alpha, arm.beta) == pytest.approx((8.925, 2.075))
    assert (arm.pulls, arm.last_used) == (1, NOW)
    assert arm.reward_total == pytest.approx(0.925)
    assert result.reward == pytest.approx(0.925) and result.key_pulls == 1
    policy.update(EDIT, "search_replace", 1.7, NOW)
    policy.update(EDIT, "search_replace", -3.0, NOW)
    policy.update(EDIT, "search_replace", float("nan"), NOW)
    arm = policy.arm(EDIT, "search_replace")
    assert (arm.alpha, arm.beta) == pytest.approx((9.925, 4.075))
    assert policy.key_pulls(EDIT) == 4
    with pytest.raises(ValueError):
        policy.update(EDIT, "  ", 1.0, NOW)


def test_decay_halfway_to_prior_every_200_key_pulls() -> None:
    policy = Policy(change=NO_CHANGE)
    for i in range(199):
        policy.update(EDIT, "search_replace" if i % 2 else "whole_file", 1.0 if i % 2 else 0.0, NOW)
    sr, wf = policy.arm(EDIT, "search_replace"), policy.arm(EDIT, "whole_file")
    assert (sr.alpha, sr.beta, wf.alpha, wf.beta) == pytest.approx((8 + 99, 2, 4, 4 + 100))
    result = policy.update(EDIT, "search_replace", 1.0, NOW)  # pull 200
    assert result.decayed
    sr, wf = policy.arm(EDIT, "search_replace"), policy.arm(EDIT, "whole_file")
    # α = α₀ + (α − α₀)·0.5 ; β likewise
    assert (sr.alpha, sr.beta) == pytest.approx((8 + 100 * 0.5, 2.0))
    assert (wf.alpha, wf.beta) == pytest.approx((4.0, 4 + 100 * 0.5))
    assert (sr.pulls, wf.pulls) == (100, 100)  # counts are history, not evidence
    for _ in range(199):
        assert not policy.update(EDIT, "whole_file", 0.0, NOW).decayed
    assert policy.update(EDIT, "whole_file", 0.0, NOW).decayed  # pull 400
    assert policy.arm(EDIT, "search_replace").alpha == pytest.approx(8 + 25)


def _key_with(policy: Policy, decision: str, pulls: int, last_used: float) -> str:
    key = PolicyKey.make(decision)
    for _ in range(pulls):
        policy.update(key, "x", 0.5, last_used)
    return str(key)


def test_prune_drops_least_used_first_then_least_recent() -> None:
    policy = Policy()
    busy = _key_with(policy, "busy", 5, NOW)
    mid = _key_with(policy, "mid", 3, NOW)
    old_once = _key_with(policy, "old_once", 1, NOW - 1000)
    new_once = _key_with(policy, "new_once", 1, NOW)
    assert policy.prune(3) == [old_once]
    assert policy.prune(1) == [new_once, mid]
    assert list(policy.keys) == [busy]
    assert policy.prune(5) == []


def test_default_prune_cap_is_300_keys() -> None:
    policy = Policy()
    for i in range(305):
        _key_with(policy, f"d{i:03d}", 1 + (i % 7), NOW + i)
    dropped = policy.prune()
    assert len(policy.keys) == 300 and len(dropped) == 5
    assert all(policy_pulls == 1 for policy_pulls in (
        int(name[1:4]) % 7 + 1 for name in dropped))


def test_forget_all_or_one_decision() -> None:
    policy = Policy()
    _key_with(policy, "a", 1, NOW)
    _key_with(policy, "b", 1, NOW)
    assert policy.forget("B") == 1 and list(policy.keys) == ["a|*|*"]
    assert policy.forget() == 1 and policy.keys == {}


def test_a_drop_of_the_leader_is_detected_and_decays_the_key_early() -> None:
    policy = Policy()  # change detection on by default
    key = PolicyKey.make("custom")
    world = random.Random(7)
    for _ in range(150):
        policy.update(key, "a", 1.0 if world.random() < 0.85 else 0.0, NOW)
        policy.update(key, "b", 1.0 if world.random() < 0.4 else 0.0, NOW)
    assert policy.keys[str(key)].early_decays == 0
    detected_after = None
    for pull in range(1, 80):
        if policy.update(key, "a", 1.0 if world.random() < 0.2 else 0.0, NOW + pull).change_detected:
            detected_after = pull
            break
    assert detected_after is not None and detected_after <= 40
    state = policy.keys[str(key)]
    a, b = state.arms["a"], state.arms["b"]
    recent = policy.change.detector.window
    assert a.alpha + a.beta == pytest.approx(2 + recent)  # prior (1,1) + the recent window
    assert a.mean < 0.5
    assert b.alpha + b.beta == pytest.approx(2 + policy.change.keep_evidence)
    assert b.mean == pytest.approx(0.4, abs=0.1)  # evidence shrunk, its direction kept
    assert state.early_decays == 1 and state.last_change == NOW + detected_after
    assert a.detector.samples == 0 and b.detector.samples == 0


def test_no_detector_no_early_decay() -> None:
    policy = Policy(change=NO_CHANGE)
    key = PolicyKey.make("custom")
    for _ in range(100):
        policy.update(key, "a", 1.0, NOW)
    assert not any(policy.update(key, "a", 0.0, NOW).change_detected for _ in range(60))
    assert policy.keys[str(key)].early_decays == 0


def test_keys_for_lists_one_decision_sorted() -> None:
    policy = Policy()
    policy.update(PolicyKey.make("edit_format", "llama3.1", "go"), "x", 1, NOW)
    policy.update(PolicyKey.make("edit_format", "deepseek", "go"), "x", 1, NOW)
    policy.update(PolicyKey.make("think_passes"), "1", 1, NOW)
    assert [str(s.key) for s in policy.keys_for("Edit_Format")] == [
        "edit_format|deepseek|go", "edit_format|llama3.1|go"]
    assert isinstance(policy.keys["think_passes|*|*"], KeyState)
    assert beta_mean(*policy.prior("think_passes", "1")) == pytest.approx(5 / 8)


_rewards = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, 1.0]))


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["search_replace", "whole_file", "novel"]), _rewards),
                min_size=1, max_size=700))
def test_posteriors_stay_valid_and_bounded(updates: list[tuple[str, float]]) -> None:
    policy = Policy()
    for step, (name, r) in enumerate(updates):
        policy.update(EDIT, name, r, NOW + step)
    state = policy.keys[str(EDIT)]
    assert state.pulls == len(updates) == sum(a.pulls for a in state.arms.values())
    for arm in state.arms.values():
        alpha0, beta0 = policy.prior("edit_format", arm.name)
        assert arm.alpha >= alpha0 - 1e-9 and arm.beta >= beta0 - 1e-9  # priors never removed
        # Halving every 200 key pulls bounds the evidence on disk below 400 observations.
        assert (arm.alpha - alpha0) + (arm.beta - beta0) < 400
        assert 0.0 <= arm.mean <= 1.0
