"""Folding recalled runs into one entry per task (`slmactor.logic.recall.repeats`)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.recall.repeats import past_tasks, render, task_key


def _episode(query: str, ok: bool, at: str, offset: int = 0, **more: Any) -> dict[str, Any]:
    return {"query": query, "success": ok, "at": at, "offset": offset, **more}


def test_three_runs_of_one_task_are_one_entry_that_counts_them() -> None:
    runs = [
        _episode("Fix the failing tests", True, "2026-12-01T10:00:00Z", 0, summary="first pass",
                 failures=[{"tool": "bash", "message": "FAILED test_x", "resolved_by": "llm",
                            "resolution": "fixed by pinning the seed"}]),
        _episode("fix the  failing tests", False, "2026-12-01T11:00:00Z", 10,
                 summary="still red", failures=[{"tool": "bash", "message": "FAILED test_x"}]),
        _episode("fix the failing tests", True, "2026-12-01T11:00:00Z", 20, summary="green",
                 files_changed=["tests/test_x.py"]),
        _episode("bump the version", True, "2026-12-01T09:00:00Z"),
    ]
    tasks = past_tasks(runs, 5)
    assert [t.task for t in tasks] == ["Fix the failing tests", "bump the version"]
    tests = tasks[0]
    # The newest run (same second: the later log offset) decides the outcome and the summary.
    assert (tests.runs, tests.successes, tests.succeeded, tests.summary) == (3, 2, True, "green")
    assert tests.files == ["tests/test_x.py"]
    assert [(f.message, f.fix, f.times) for f in tests.failures] == [
        ("FAILED test_x", "pinning the seed", 2)]
    assert render(tasks).splitlines() == [
        ("- [succeeded] Fix the failing tests (files: tests/test_x.py) — 3 runs, 2 succeeded; "
         "latest 2026-12-01T11:00:00Z"),
        "  green",
        "  failure (2 times): FAILED test_x → pinning the seed",
        "- [succeeded] bump the version",
    ]


def test_n_counts_tasks_not_runs() -> None:
    runs = [_episode("a", True, "2026-01-01T00:00:00Z"), _episode("a", True, "2026-01-02T00:00:00Z"),
            _episode("b", False, "2026-01-01T00:00:00Z"), _episode("c", True, "2026-01-01T00:00:00Z")]
    assert [t.task for t in past_tasks(runs, 2)] == ["a", "b"]
    assert past_tasks(runs, 2)[0].runs == 2


QUERIES = st.sampled_from(["fix tests", "Fix  tests", "fix lint", " FIX LINT ", "ship it", "",
                           "ship it\nfirst", "ship it\nsecond"])
EPISODES = st.lists(st.builds(
    _episode, QUERIES, st.booleans(),
    st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]),
    st.integers(min_value=0, max_value=50),
    failures=st.lists(st.fixed_dictionaries({
        "tool": st.sampled_from(["bash", "edit"]),
        "message": st.sampled_from(["boom", "not found\nString:  x ", ""]),
        "resolution": st.sampled_from(["", "fixed by retrying"]),
    }), max_size=3),
), max_size=12)


@settings(derandomize=True, max_examples=200)
@given(EPISODES, st.integers(min_value=1, max_value=10))
def test_each_task_once_and_every_run_of_a_shown_task_counted(
    episodes: list[dict[str, Any]], n: int
) -> None:
    tasks = past_tasks(episodes, n)
    keys = [task_key(t.task) for t in tasks]
    assert len(keys) == len(set(keys)) and len(tasks) <= n and "" not in keys
    for task, key in zip(tasks, keys, strict=True):
        mine = [e for e in episodes if task_key(e["query"]) == key]
        assert task.runs == len(mine)
        assert task.successes == sum(e["success"] for e in mine)
        pairs = [(f.tool, f.message) for f in task.failures]
        assert len(pairs) == len(set(pairs))
    text = render(tasks)
    heads = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(heads) == len(tasks) == len(set(heads))
    assert text.count("\n  failure") == sum(len(t.failures) for t in tasks)
