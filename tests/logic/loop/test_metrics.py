"""Metrics logic: normalisation, pooled rates, "no data", the compare table and the verdict rule."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.loop.metrics import (
    METRICS,
    Gate,
    Run,
    aggregate,
    normalize,
    per_run_series,
    prune,
    select,
)
from slmactor.logic.loop.metrics_compare import NOT_ENOUGH, compare, compare_last


def test_pooled_rates_are_not_the_mean_of_per_run_rates() -> None:
    small = Run(tasks=1, tasks_passed=1, edits_attempted=1, edits_applied=1)
    large = Run(tasks=9, tasks_passed=0, edits_attempted=9, edits_applied=0)
    summary = aggregate([small, large])
    # Averaging would claim 50 %; the pooled ratio is 1 of 10 tasks.
    assert summary.task_pass_rate() == 0.1
    assert summary.edit_apply_rate() == 0.1
    averaged = sum(aggregate([r]).task_pass_rate() or 0 for r in (small, large)) / 2
    assert averaged == 0.5


def test_a_rate_without_a_denominator_is_no_data_not_zero() -> None:
    summary = aggregate([Run(tasks=2, tasks_passed=1)])
    assert summary.edit_apply_rate() is None
    assert summary.gate_pass_rate() is None
    assert summary.memory_resolution_rate() is None
    assert summary.tokens_in_per_task() is None  # nothing measured, not "0 tokens"
    assert summary.wall_seconds_per_task() is None
    assert summary.llm_calls_per_task() == 0.0  # 0 calls over 2 tasks is a real measurement
    text = summary.render()
    assert "- edit-format apply rate   –" in text
    assert "-100" not in text and "-1.00" not in text  # H-S-10


def test_normalize_clamps_counts_into_a_consistent_record() -> None:
    run = normalize(
        Run(
            at=1_700_000_000.75,
            language="Python",
            tasks=1,
            tasks_passed=3,
            edits_attempted=2,
            edits_applied=5,
            edits_first_attempt=9,
            tool_errors=-4,
            gates=tuple(Gate(f"g{i}", True) for i in range(20)) + (Gate("   ", False),),
        )
    )
    assert run.at == 1_700_000_000.0
    assert run.language == "python"
    assert (run.tasks, run.tasks_passed) == (3, 3)
    assert (run.edits_attempted, run.edits_applied, run.edits_first_attempt) == (5, 5, 5)
    assert run.tool_errors == 0
    assert len(run.gates) == 12


def test_run_round_trips_through_json_with_rfc3339_time() -> None:
    run = normalize(Run(run_id="r1", at=1_700_000_000, label="pass-1", gates=(Gate("tests", True),)))
    data = run.to_dict()
    assert data["at"] == "2023-11-14T22:13:20Z"
    assert Run.from_dict(data) == run
    assert Run.from_dict({"tasks": "x", "at": None, "gates": [1, {"name": 3}]}) == Run()


def _seed_like_sides() -> tuple[list[Run], list[Run]]:
    base = [
        Run(tasks=4, tasks_passed=2, edits_attempted=10, edits_applied=6, edits_first_attempt=6,
            failures=4, resolved_from_llm=4, llm_calls=20, tool_calls=10, tool_errors=4),
    ]
    cur = [
        Run(tasks=4, tasks_passed=3, edits_attempted=10, edits_applied=9, edits_first_attempt=6,
            failures=4, repair_hits=3, resolved_from_memory=3, resolved_from_llm=1, llm_calls=12,
            tool_calls=10, tool_errors=4),
    ]
    return base, cur


def test_compare_renders_exactly_as_the_spec_table() -> None:
    base, cur = _seed_like_sides()
    text = compare(base, cur).render()
    expected = """\
## Metrics: 1 baseline run(s) → 1 current run(s)

| Metric | Baseline | Current | Change |
|---|---:|---:|---:|
| task pass rate | 50.0% | 75.0% | +25.0 pp ✅ |
| edit-format apply rate | 60.0% | 90.0% | +30.0 pp ✅ |
| first-attempt edit-format rate | 60.0% | 60.0% | 0.0 pp |
| gate pass rate | – | – | no data |
| repair-rule hit rate | 0.0% | 75.0% | +75.0 pp ✅ |
| failures fixed from memory | 0.0% | 75.0% | +75.0 pp ✅ |
| unresolved failures per run | 0.00 | 0.00 | 0.00 |
| tool error rate | 40.0% | 40.0% | 0.0 pp |
| redundant-call rate | 0.0% | 0.0% | 0.0 pp |
| LLM calls per task | 5.00 | 3.00 | −2.00 ✅ |
| tokens in per task | – | – | no data |
| tokens out per task | – | – | no data |
| wall seconds per task | – | – | no data |

**Verdict: improved.**
"""
    assert text == expected


def test_worse_rows_get_the_warning_marker_and_seconds_unit() -> None:
    base = [Run(tasks=2, wall_ms=4000, tool_calls=10, redundant_calls=1)]
    cur = [Run(tasks=2, wall_ms=7000, tool_calls=10, redundant_calls=3)]
    rows = {r.metric.key: r.render() for r in compare(base, cur).rows}
    assert rows["wall_seconds_per_task"] == "| wall seconds per task | 2.0s | 3.5s | +1.5s ⚠️ |"
    assert rows["redundant_rate"] == "| redundant-call rate | 10.0% | 30.0% | +20.0 pp ⚠️ |"


def test_verdict_rule_is_more_better_than_worse() -> None:
    # One better (pass rate up), one worse (LLM calls up): a tie is no net improvement.
    tie = compare([Run(tasks=2, tasks_passed=1, llm_calls=2)],
                  [Run(tasks=2, tasks_passed=2, llm_calls=4)])
    assert (tie.better, tie.worse) == (1, 1)
    assert not tie.improved()
    assert tie.render().endswith("**Verdict: no net improvement.**\n")
    # Two better, one worse: improved.
    win = compare([Run(tasks=2, tasks_passed=1, llm_calls=2, tool_calls=4, tool_errors=2)],
                  [Run(tasks=2, tasks_passed=2, llm_calls=4, tool_calls=4, tool_errors=0)])
    assert (win.better, win.worse) == (2, 1)
    assert win.improved() and win.verdict() == "improved"
    # Nothing changed at all: no net improvement.
    same = compare([Run(tasks=1)], [Run(tasks=1)])
    assert (same.better, same.worse) == (0, 0) and not same.improved()


def test_an_empty_side_is_not_enough_runs_and_never_nan() -> None:
    cmp = compare([], [Run(tasks=1, tasks_passed=1)])
    text = cmp.render()
    assert text == "## Metrics: 0 baseline run(s) → 1 current run(s)\n\n" + NOT_ENOUGH + "\n"
    assert "nan" not in text.lower()
    assert not cmp.improved() and cmp.verdict() == "not enough runs"


def test_compare_last_splits_the_newest_runs() -> None:
    runs = [Run(run_id=f"r{i}", at=float(i), tasks=1, tasks_passed=i % 2) for i in range(7)]
    cmp = compare_last(runs, 5)  # 2·5 > 7 → n = 3: baseline r1..r3, current r4..r6
    assert cmp is not None
    assert (cmp.baseline.runs, cmp.current.runs) == (3, 3)
    assert cmp.baseline.total("tasks_passed") == 2  # r1, r3
    assert cmp.current.total("tasks_passed") == 1  # r5
    assert compare_last(runs[:1], 5) is None


def test_select_filters_and_last() -> None:
    runs = [
        Run(run_id="a", at=1, label="pass-1", model="m", language="python"),
        Run(run_id="b", at=2, label="pass-2", model="m", language="Go"),
        Run(run_id="c", at=3, label="pass-2", model="n", language="go"),
    ]
    assert [r.run_id for r in select(runs, label="pass-2")] == ["b", "c"]
    assert [r.run_id for r in select(runs, language="GO")] == ["b", "c"]
    assert [r.run_id for r in select(runs, model="m", last=1)] == ["b"]
    assert [r.run_id for r in select(runs, since=2, until=2)] == ["b"]


def test_prune_keeps_the_newest() -> None:
    runs = [Run(run_id=str(i), at=float(10 - i)) for i in range(10)]
    kept = prune(runs, 3)
    assert [r.run_id for r in kept] == ["2", "1", "0"]
    assert len(prune(runs, 0)) == 10


def test_per_run_series_has_gaps_for_no_data() -> None:
    runs = [Run(at=1, edits_attempted=2, edits_applied=1), Run(at=2)]
    assert per_run_series(runs, "edit_apply_rate") == [0.5, None]


counts = st.integers(min_value=-5, max_value=50)


@settings(derandomize=True, max_examples=200)
@given(st.lists(st.tuples(counts, counts, counts, counts), min_size=1, max_size=6))
def test_normalized_rates_stay_within_bounds(values: list[tuple[int, int, int, int]]) -> None:
    runs = [
        normalize(Run(tasks=a, tasks_passed=b, edits_attempted=c, edits_applied=d,
                      edits_first_attempt=d))
        for a, b, c, d in values
    ]
    summary = aggregate(runs)
    for metric in METRICS:
        value = metric.value(summary)
        if value is not None and metric.unit == "percent":
            assert 0.0 <= value <= 1.0
    assert normalize(runs[0]) == runs[0]  # idempotent
