"""Phase-budget history (SPEC C-18; H-C-4, H-C-6)."""

from __future__ import annotations

from slmactor.logic.memory.budgets import (
    DEFAULT_BUDGETS,
    PhaseOutcome,
    compute_budgets,
    recall_phase_stats,
)

NOW = 1_790_000_000.0


def rows(phase: str, rounds: list[int], tags: tuple[str, ...]) -> list[PhaseOutcome]:
    return [PhaseOutcome(NOW, phase, r, 3, tags) for r in rounds]


def test_defaults_are_the_seeds() -> None:
    assert DEFAULT_BUDGETS == {"analyze": 0, "plan": 4, "deps": 5, "scaffold": 20, "review": 6,
                               "build": 30, "integrate": 0, "validate": 10, "package": 5}


def test_p90_is_nearest_rank_and_needs_three_rows() -> None:
    history = rows("build", [10, 50, 20, 40, 30, 60, 70, 80, 90, 100], ("pygame",))
    stats = recall_phase_stats(history, "BUILD", ["pygame"])
    assert stats is not None
    assert (stats.p90, stats.max, stats.count, stats.mean) == (100, 100, 10, 55.0)
    assert recall_phase_stats(rows("build", [1, 2], ("x",)), "build") is None


def test_history_raises_a_budget_to_p90_times_1_2() -> None:
    # the seed's case: pygame BUILD needs ~45 rounds where the static budget said 30
    history = rows("BUILD", [38, 40, 45, 42, 44], ("python", "pygame"))
    budgets, used = compute_budgets(history, ["pygame"])
    assert budgets["build"] == int(45 * 1.2) == 54
    assert used["build"].count == 5
    assert budgets["plan"] == 4  # no history for that phase: the default


def test_history_never_shrinks_a_budget_below_the_default() -> None:
    history = rows("build", [5, 6, 8, 7], ("python", "click"))
    budgets, _used = compute_budgets(history, ["python"])
    assert budgets["build"] == 30


def test_no_fallback_to_other_stacks_history() -> None:
    # H-C-4: a TypeScript task got BUILD = 78 rounds from pygame history via the fallback.
    history = rows("build", [60, 65, 70, 65], ("python", "pygame"))
    budgets, used = compute_budgets(history, ["typescript"])
    assert budgets["build"] == 30 and used == {}
    # H-C-6: recall_phase_stats does what its docstring says: no rows of other stacks
    assert recall_phase_stats(history, "build", ["typescript"]) is None
    assert recall_phase_stats.__doc__ is not None and "no fallback" in recall_phase_stats.__doc__


def test_a_task_without_stack_tags_gets_the_defaults() -> None:
    history = rows("build", [60, 65, 70], ("python",))
    assert compute_budgets(history, [])[0] == DEFAULT_BUDGETS


def test_custom_defaults_and_rows_from_disk() -> None:
    budgets, _u = compute_budgets(rows("lint", [3, 4, 9], ("go",)), ["go"], {"LINT": 2})
    assert budgets == {"lint": 10}
    assert PhaseOutcome.from_record({"phase": "Build", "rounds": 3, "tags": ["Go"]}) == \
        PhaseOutcome(0.0, "build", 3, 0, ("go",))
    for bad in (None, [], {"phase": "", "rounds": 1}, {"phase": "x", "rounds": -1},
                {"phase": "x", "rounds": True}, {"phase": "x", "rounds": 1.5}):
        assert PhaseOutcome.from_record(bad) is None


def test_phase_words_are_not_a_stack_match() -> None:
    # Every BUILD row of a "Build …" task carries the tag `build`: it must not match a new task.
    history = rows("build", [70, 75, 78], ("build", "pygame"))
    budgets, used = compute_budgets(history, ["build", "typescript"])
    assert budgets["build"] == 30 and used == {}
    assert compute_budgets(history, ["build"])[0] == DEFAULT_BUDGETS
