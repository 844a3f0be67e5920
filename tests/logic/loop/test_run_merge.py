"""What the daemon saw of a run as report fields, and the merge with a harness's report."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.loop.run_merge import merge_report, seen_report
from slmactor.logic.loop.run_report import RunReport

SNAPSHOT: dict[str, Any] = {
    "run_id": "r1",
    "task": "fix the parser",
    "role": "worker",
    "summary": "",
    "events": [
        {"tool": "read", "path": "p.py", "ok": True, "at": "2026-12-01T08:00:00Z"},
        {"tool": "bash", "command": "pytest", "ok": False, "error": "2 failed",
         "at": "2026-12-01T08:00:05Z"},
    ],
    "files_edited": ["p.py"],
    "commands": [{"command": "pytest", "status": "failed"}],
    "open_failures": [
        {"key": "wf_1", "tool": "bash", "message": "2 failed", "attempts": 2},
        # The same failure opened again by evolve.on_failure under its fingerprint key.
        {"key": "fp_1", "tool": "Bash", "message": "2 FAILED\ndetails", "attempts": 1},
    ],
    "resolved_failures": [
        {"key": "fp_2", "tool": "edit", "message": "old_str not found", "attempts": 1,
         "resolved_by": "rule:rule_abc", "resolution": "repaired from memory"},
    ],
    "counters": {"calls": 2, "errors": 1, "redundant": 0},
    "last_at": "2026-12-01T08:00:05Z",
}


def test_seen_report_reads_what_working_memory_holds() -> None:
    seen = seen_report(SNAPSHOT, "r1")
    report = RunReport.from_dict(seen)
    assert (report.tool_calls, report.tool_errors, report.redundant_calls) == (2, 1, 0)
    assert report.files_changed == ("p.py",) and report.query == "fix the parser"
    assert report.commands == (("pytest", False),)
    sources = [(f.tool, f.source) for f in report.failures]
    assert sources == [("edit", "memory"), ("bash", "unresolved")]
    assert report.failures[0].resolving_rule == "rule_abc"
    assert report.wall_ms == 5000 and report.success()  # a file was edited


def test_a_failure_opened_twice_and_resolved_once_is_reported_resolved() -> None:
    # record_tool(ok=False) opens it under its own key, evolve.on_failure under the fingerprint;
    # evolve.resolved then resolves the fingerprint's note only.
    snapshot = {
        "run_id": "r2",
        "open_failures": [{"key": "wf_9", "tool": "bash",
                           "message": "Traceback (most recent call last):", "attempts": 1}],
        "resolved_failures": [{"key": "fp_0123456789ab", "tool": "bash",
                               "message": "Traceback (most recent call last):",
                               "attempts": 1, "resolved_by": "llm",
                               "resolution": "fixed by running: sed -i s/a/b/ f.py"}],
    }
    seen = seen_report(snapshot, "r2")
    assert seen["failures"] == [{"tool": "bash", "message": "Traceback (most recent call last):",
                                 "attempts": 1, "fingerprint": "fp_0123456789ab",
                                 "resolved_by": "llm",
                                 "resolution": "fixed by running: sed -i s/a/b/ f.py"}]
    # Working memory keeps the first line only; reflection learns under the fingerprint that
    # evolve.on_failure gave the whole message, so the next occurrence finds the rule.
    from slmactor.logic.loop.reflect import reflect

    reflection = reflect(RunReport.from_dict({**seen, "query": "fix f"}), now=1_700_000_000.0)
    assert [c.fingerprint for c in reflection.candidates] == ["fp_0123456789ab"]
    assert RunReport.from_dict({"failures": [{"tool": "x", "message": "y",
                                              "fingerprint": "not-an-id"}]}).failures[0].fingerprint == ""


def test_a_blank_snapshot_adds_nothing() -> None:
    assert seen_report({}, "r") == {}
    given_report = {"tool_calls": 3, "failures": [{"tool": "x", "message": "y"}]}
    assert merge_report(given_report, {}) == given_report


def test_the_merge_counts_nothing_twice() -> None:
    given_report = {"tool_calls": 1, "tool_errors": 1, "query": "the harness's words",
                    "files_changed": ["q.py"],
                    "failures": [{"signal": {"tool": "BASH", "message": "2 failed"},
                                  "resolved_by": "retry"}]}
    merged = merge_report(given_report, seen_report(SNAPSHOT, "r1"))
    assert (merged["tool_calls"], merged["tool_errors"]) == (2, 1)
    assert merged["query"] == "the harness's words"
    assert merged["files_changed"] == ["q.py", "p.py"]
    tools = [f.get("tool") or f["signal"]["tool"] for f in merged["failures"]]
    assert tools == ["BASH", "edit"]  # the harness's bash failure is the daemon's bash failure


def test_a_failure_opened_twice_and_resolved_once_counts_as_resolved() -> None:
    snapshot = {
        "open_failures": [{"key": "wf_1", "tool": "bash", "message": "No module named app"}],
        "resolved_failures": [{"key": "fp_1", "tool": "bash", "message": "No module named app\n",
                               "resolved_by": "llm", "resolution": "ran it from src/"}],
    }
    failures = seen_report(snapshot, "r")["failures"]
    assert failures == [{"tool": "bash", "message": "No module named app\n", "attempts": 1,
                         "resolved_by": "llm", "resolution": "ran it from src/"}]


text = st.text(alphabet="abcAB \n.:", max_size=12)
failure = st.fixed_dictionaries({"tool": text, "message": text},
                                optional={"resolved_by": st.sampled_from(["", "llm", "rule:r"])})
report_strategy = st.fixed_dictionaries({}, optional={
    "tool_calls": st.integers(-3, 50), "tool_errors": st.integers(0, 50),
    "files_changed": st.lists(text, max_size=4), "failures": st.lists(failure, max_size=5),
    "query": text, "commands": st.lists(st.fixed_dictionaries({"cmd": text, "ok": st.booleans()}),
                                        max_size=3)})
snapshot_strategy = st.fixed_dictionaries({
    "counters": st.fixed_dictionaries({"calls": st.integers(0, 50), "errors": st.integers(0, 50)}),
    "files_edited": st.lists(text, max_size=4),
    "open_failures": st.lists(failure, max_size=5),
    "resolved_failures": st.lists(failure, max_size=5),
    "task": text,
})


@settings(max_examples=200, derandomize=True)
@given(report_strategy, snapshot_strategy)
def test_merging_is_idempotent_and_never_loses_a_count(given_report: dict[str, Any],
                                                      snapshot: dict[str, Any]) -> None:
    seen = seen_report(snapshot, "r")
    merged = merge_report(given_report, seen)
    assert merge_report(merged, seen) == merged  # merging what was already merged changes nothing
    for key in ("tool_calls", "tool_errors"):
        assert merged[key] >= max(0, given_report.get(key, 0), seen[key])
    assert len(merged["failures"]) <= len(given_report.get("failures", [])) + len(seen["failures"])
    files = {f for f in given_report.get("files_changed", []) if f.strip()}  # blanks mean nothing
    assert files <= set(merged["files_changed"])
    RunReport.from_dict(merged)  # always readable as a run report
