"""policy.json as data (S-13.4): round trip, the seed's layout, and tolerant loading."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.policy.bandit import Policy, PolicyKey
from slmactor.logic.policy.document import POLICY_VERSION, policy_from_dict, policy_to_dict

NOW = 1_790_000_000.0
KEY = PolicyKey.make("edit_format", "qwen2.5-coder", "go")


def test_round_trip_keeps_every_number() -> None:
    policy = Policy()
    for i in range(30):
        policy.update(KEY, "search_replace" if i % 3 else "whole_file", (i % 7) / 7, NOW + i)
    doc = policy_to_dict(policy, NOW + 100)
    assert doc["version"] == POLICY_VERSION and doc["updated"] == "2026-09-21T14:15:00Z"
    entry = doc["keys"]["edit_format|qwen2.5-coder|go"]
    assert entry["key"] == {"decision": "edit_format", "model_family": "qwen2.5-coder",
                            "language": "go"}
    assert entry["pulls"] == 30
    assert set(entry["arms"]["whole_file"]) >= {"name", "alpha", "beta", "pulls", "reward_total",
                                                "last_used"}
    loaded, warnings = policy_from_dict(doc)
    assert warnings == []
    again = policy_to_dict(loaded, NOW + 100)
    assert again == doc


def test_reads_the_go_harness_layout() -> None:
    doc = {
        "version": 1,
        "updated": "2026-08-01T00:00:00Z",
        "keys": {
            "edit_format|qwen2.5-coder|go": {
                "key": {"decision": "edit_format", "model_family": "qwen2.5-coder",
                        "language": "go"},
                "arms": {
                    "search_replace": {"name": "search_replace", "alpha": 26.4, "beta": 2.6,
                                       "pulls": 28, "reward_total": 24.1,
                                       "last_used": "2026-07-30T12:00:00Z"},
                },
                "pulls": 28,
            }
        },
    }
    policy, warnings = policy_from_dict(doc)
    assert warnings == []
    arm = policy.arm(KEY, "search_replace")
    assert (arm.alpha, arm.beta, arm.pulls) == (26.4, 2.6, 28)
    assert arm.last_used == pytest.approx(1785412800.0)


def test_bad_arms_are_dropped_with_warnings() -> None:
    doc = {"keys": {
        "edit_format|*|Golang": {"arms": {
            "ok": {"alpha": 2, "beta": 3, "pulls": 1},
            "zero": {"alpha": 0, "beta": 3},
            "negative": {"alpha": 2, "beta": -1},
            "text": {"alpha": "many", "beta": 1},
            "inf": {"alpha": float("inf"), "beta": 1},
            "list": [1, 2],
        }, "pulls": 5},
        "|x|y": {"arms": {"a": {"alpha": 1, "beta": 1}}},
        "nonsense": 7,
    }}
    policy, warnings = policy_from_dict(doc)
    assert list(policy.keys) == ["edit_format|*|go"]  # key rebuilt from its string, language folded
    assert list(policy.keys["edit_format|*|go"].arms) == ["ok"]
    assert len(warnings) == 7


@pytest.mark.parametrize("doc", [None, [], "x", {"keys": []}, {}])
def test_non_documents_give_priors(doc: object) -> None:
    policy, _ = policy_from_dict(doc)
    assert policy.keys == {}


def test_loading_prunes_to_the_key_cap() -> None:
    big = Policy()
    for i in range(12):
        for _ in range(i + 1):
            big.update(PolicyKey.make(f"d{i}"), "x", 1.0, NOW)
    policy, warnings = policy_from_dict(policy_to_dict(big, NOW), max_keys=10)
    assert len(policy.keys) == 10 and "d0|*|*" not in policy.keys
    assert warnings == ["policy held more than 10 keys; pruned 2"]


_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=25,
)


@settings(derandomize=True, max_examples=300)
@given(st.dictionaries(st.text(max_size=20), _json, max_size=4))
def test_any_keys_object_loads_without_raising(keys: dict[str, object]) -> None:
    policy, _ = policy_from_dict({"version": 1, "keys": keys})
    for state in policy.keys.values():
        assert all(a.alpha > 0 and a.beta > 0 for a in state.arms.values())
