"""`why` text (S-13.7), byte-exact for fixed posteriors, grouped by model family (H-S-6 fixed)."""

from __future__ import annotations

from slmactor.logic.policy.bandit import ArmStats, KeyState, Policy, PolicyKey
from slmactor.logic.policy.bandit_why import (
    NO_EVIDENCE_FOR_MODEL,
    OTHER_MODELS_DIVIDER,
    format_row,
    why,
)

QWEN_GO = PolicyKey.make("edit_format", "qwen2.5-coder:7b", "go")
LLAMA_GO = PolicyKey.make("edit_format", "llama3.1:8b", "go")


def _policy() -> Policy:
    policy = Policy()
    policy.keys[str(QWEN_GO)] = KeyState(
        QWEN_GO,
        {
            "search_replace": ArmStats("search_replace", 26.4, 2.6, 28),
            "whole_file": ArmStats("whole_file", 5.1, 3.1, 6),
            "unified_diff": ArmStats("unified_diff", 3.4, 4.9, 3),
        },
        pulls=37,
    )
    policy.keys[str(LLAMA_GO)] = KeyState(
        LLAMA_GO,
        {
            "whole_file": ArmStats("whole_file", 9.0, 3.0, 8),
            "search_replace": ArmStats("search_replace", 8.5, 3.5, 4),
        },
        pulls=12,
    )
    return policy


def test_row_format_is_exact() -> None:
    row = format_row(ArmStats("search_replace", 26.4, 2.6, 28), True)
    assert row == "→ search_replace       91% ±5%  (28 pulls, α=26.4 β=2.6)"
    assert format_row(ArmStats("x", 1.0, 1.0, 0), False) == (
        "  x                    50% ±29%  (0 pulls, α=1.0 β=1.0)")


def test_why_text_byte_exact_with_other_models_section() -> None:
    report = why(_policy(), QWEN_GO)
    assert report.text == (
        "edit_format (model qwen2.5-coder, language go) — 37 observations\n"
        "→ search_replace       91% ±5%  (28 pulls, α=26.4 β=2.6)\n"
        "  whole_file           62% ±16%  (6 pulls, α=5.1 β=3.1)\n"
        "  unified_diff         41% ±16%  (3 pulls, α=3.4 β=4.9)\n"
        "mode: Thompson sampling, ε=0.10\n"
        "— other models (recorded, not used here) —\n"
        "edit_format (model llama3.1, language go) — 12 observations\n"
        "→ whole_file           75% ±12%  (8 pulls, α=9.0 β=3.0)\n"
        "  search_replace       71% ±13%  (4 pulls, α=8.5 β=3.5)"
    )
    assert report.found and report.observations == 37


def test_deterministic_mode_line() -> None:
    text = why(_policy(), QWEN_GO, deterministic=True).text
    assert "mode: deterministic (no exploration)" in text.splitlines()


def test_model_without_evidence_says_so_above_the_other_models() -> None:
    key = PolicyKey.make("edit_format", "deepseek-chat", "go")
    lines = why(_policy(), key).text.splitlines()
    assert lines[:4] == [
        "edit_format (model deepseek, language go) — 0 observations",
        NO_EVIDENCE_FOR_MODEL,
        "mode: Thompson sampling, ε=0.20",
        OTHER_MODELS_DIVIDER,
    ]
    assert lines[4] == "edit_format (model llama3.1, language go) — 12 observations"
    assert lines[7] == "edit_format (model qwen2.5-coder, language go) — 37 observations"
    # H-S-6: "no evidence" is never printed for the key whose table is shown as evidence.
    assert NO_EVIDENCE_FOR_MODEL not in why(_policy(), QWEN_GO).text


def test_unknown_decision() -> None:
    report = why(_policy(), PolicyKey.make("think_passes", "qwen2.5-coder", "go"))
    assert report.text == "think_passes: no evidence yet — using the shipped defaults."
    assert not report.found and report.to_dict()["arms"] == []


def test_same_family_other_language_is_listed_before_other_families() -> None:
    policy = _policy()
    py = PolicyKey.make("edit_format", "qwen2.5-coder", "python")
    policy.update(py, "whole_file", 1.0, 1.0)
    headers = [line for line in why(policy, QWEN_GO).text.splitlines() if "observations" in line]
    assert headers[1:] == [
        "edit_format (model qwen2.5-coder, language python) — 1 observations",
        "edit_format (model llama3.1, language go) — 12 observations",
    ]


def test_json_form_carries_the_same_facts() -> None:
    data = why(_policy(), QWEN_GO).to_dict()
    assert data["key"] == "edit_format|qwen2.5-coder|go"
    assert [a["name"] for a in data["arms"]] == ["search_replace", "whole_file", "unified_diff"]
    assert data["mode"] == "thompson" and round(data["epsilon"], 2) == 0.10
    assert data["others"][0]["model_family"] == "llama3.1"
    assert data["text"].startswith("edit_format (model qwen2.5-coder")
