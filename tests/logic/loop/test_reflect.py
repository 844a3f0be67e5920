"""Reflection (S-14): worked examples of every output, the fixed seed bugs and the summary fallback."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.loop.reflect import reflect
from slmactor.logic.loop.reflect_md import cap_document, enrich, summary_prompt
from slmactor.logic.loop.run_report import RunReport

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z
GUTTER_ARGS = json.dumps({"path": "a.py", "old_str": "  3| x = 1", "new_str": "  3| x = 2"})
FIXED_ARGS = json.dumps({"path": "a.py", "old_str": "x = 1", "new_str": "x = 2"})
GUTTER_MSG = "old_str still contains ws_read's line-number prefix; remove the gutter"


def _report(**kw: Any) -> RunReport:
    base: dict[str, Any] = {
        "run_id": "run-42", "query": "Fix the pagination bug", "language": "python",
        "model": "qwen2.5-coder:7b", "planned_tasks": 2, "completed_tasks": 2,
        "started_at": NOW - 90, "ended_at": NOW, "edit_format": "search_replace",
        "edits_attempted": 8, "edits_applied": 7, "edits_first_attempt": 6, "llm_calls": 9,
        "tokens_in": 12000, "tokens_out": 1500, "tool_calls": 20, "tool_errors": 3,
        "redundant_calls": 1, "retries": 1,
    }
    base.update(kw)
    return RunReport.from_dict(base)


def test_a_failure_fixed_by_an_existing_rule_synthesizes_nothing() -> None:
    r = reflect(_report(failures=[{
        "tool": "ws_edit", "message": GUTTER_MSG, "rule_id": "rule_seed1",
        "resolved_by": "rule:rule_seed1", "failed_args": GUTTER_ARGS, "fixed_args": FIXED_ARGS,
    }]), NOW)
    assert r.candidates == ()
    assert r.rule_outcomes == {"rule_seed1": True}
    assert (r.tally["memory"], r.tally["llm"], r.tally["unresolved"]) == (1, 0, 0)
    assert r.metrics.resolved_from_memory == 1 and r.metrics.repair_hits == 1


def test_a_failure_fixed_by_the_model_synthesizes_one_transform_candidate() -> None:
    r = reflect(_report(failures=[{
        "tool": "ws_edit", "message": GUTTER_MSG, "resolved_by": "llm",
        "failed_args": GUTTER_ARGS, "fixed_args": FIXED_ARGS,
    }]), NOW)
    (cand,) = r.candidates
    assert cand.repair["kind"] == "transform_args"
    assert cand.repair["transform"] == "strip_line_number_prefix"
    assert cand.cls == "edit_line_numbers" and cand.tool == "ws_edit"
    assert cand.evidence == "run-42" and cand.scope == "project"
    assert cand.fingerprint == r.notes[0].fingerprint
    assert r.tally["llm"] == 1 and r.metrics.resolved_from_llm == 1
    assert "transform args: strip_line_number_prefix" in r.markdown


def test_model_fix_without_a_transform_becomes_guidance_from_the_resolution() -> None:
    r = reflect(_report(failures=[{
        "tool": "bash", "message": "ModuleNotFoundError: No module named 'yaml'",
        "resolved_by": "llm", "resolution": "add pyyaml to requirements.txt and install it",
    }]), NOW)
    (cand,) = r.candidates
    assert cand.repair == {"kind": "guidance",
                           "guidance": "add pyyaml to requirements.txt and install it"}


def test_retry_is_not_memory_and_a_bare_rule_id_is_not_resolved() -> None:
    # H-S-20: a retry is its own source. H-S-22: a rule id without a resolution is unresolved,
    # in the tally and in the Markdown alike, and it counts against the rule.
    r = reflect(_report(failures=[
        {"tool": "http", "message": "429 Too Many Requests", "resolved_by": "retry"},
        {"tool": "ws_edit", "message": GUTTER_MSG, "rule_id": "rule_x"},
    ]), NOW)
    assert (r.tally["memory"], r.tally["retry"], r.tally["unresolved"]) == (0, 1, 1)
    assert r.rule_outcomes == {"rule_x": False}
    assert "**unresolved**" in r.markdown and "fixed from memory" not in r.markdown
    assert ("Resolved from memory: 0 · from a fresh LLM round-trip: 0 · unresolved: 1"
            " · by retry or a person: 1") in r.markdown
    assert r.metrics.resolved_from_memory == 0 and r.metrics.unresolved == 1


def test_a_rule_that_failed_once_stays_failed() -> None:
    r = reflect(_report(failures=[
        {"tool": "ws_edit", "message": GUTTER_MSG, "rule_id": "rule_a",
         "resolved_by": "rule:rule_a"},
        {"tool": "ws_edit", "message": GUTTER_MSG, "rule_id": "rule_a", "resolved_by": "llm",
         "failed_args": GUTTER_ARGS, "fixed_args": FIXED_ARGS},
    ]), NOW)
    assert r.rule_outcomes == {"rule_a": False}
    assert len(r.candidates) == 1  # the wrong rule can be out-learned by an exact one


def test_tallies_and_metrics_count_every_failure_not_only_the_listed_twelve() -> None:
    failures = [{"tool": "ws_edit", "message": GUTTER_MSG, "resolved_by": "rule:rule_a",
                 "rule_id": "rule_a"}] * 15 + [{"tool": "bash", "message": "boom"}] * 5
    r = reflect(_report(failures=failures), NOW)
    assert r.tally["memory"] == 15 and r.tally["unresolved"] == 5  # H-S-23
    assert r.metrics.failures == 20 and r.metrics.repair_hits == 15
    assert "- _…and 8 more_" in r.markdown
    assert len(r.episode["failures"]) == 16  # the episode keeps 16 (S-2.2 caps raised: counts)


def test_regression_checks_come_from_rechecks_of_fixed_failures() -> None:
    r = reflect(_report(failures=[
        {"tool": "ws_edit", "message": GUTTER_MSG, "resolved_by": "llm",
         "recheck": {"path": "a.py", "substring": "x = 2"}},
        {"tool": "bash", "message": "pytest failed", "recheck": {"command": "pytest -q"}},
    ]), NOW)
    (check,) = r.checks  # the unresolved failure proves nothing yet
    assert check.kind == "file_contains" and check.path == "a.py"
    # Default description: "<describe(class)>: <message ≤ 160>".
    assert check.description.endswith(": " + GUTTER_MSG)
    assert check.fingerprint == r.notes[0].fingerprint


def test_rewards_episode_lessons_procedure_and_metrics() -> None:
    r = reflect(_report(
        decisions=[{"decision": "edit_format", "arm": "search_replace",
                    "outcome": {"applied": True, "gate_passed": True, "gate_ran": True}}],
        gates=[{"name": "tests", "passed": True}, {"name": "lint", "passed": False,
                                                   "detail": "E501 line too long"}],
        failures=[{"tool": "bash", "message": "ModuleNotFoundError: No module named 'yaml'"}],
        files_changed=["a.py"],
    ), NOW)
    (reward,) = r.rewards
    assert (reward.decision, reward.arm) == ("edit_format", "search_replace")
    assert round(reward.reward, 4) == 0.925  # S-13.8: perfect with unknown budgets
    assert r.episode["verdict"] == "partial" and r.episode["success"] is False
    assert r.episode["plan"] == ["2 task(s) planned, 2 completed, 0 blocked"]
    assert r.episode["wall_ms"] == 90_000 and r.episode["run_id"] == "run-42"
    kinds = [lesson.kind for lesson in r.lessons]
    assert kinds == ["failure", "failure"]
    assert "Gate lint failed: E501 line too long" in r.lessons[1].text
    assert r.procedure == {"topic": "edit_format", "option": "search_replace",
                           "family": "qwen2.5-coder", "language": "python", "ok": False,
                           "note": "7/8 hunks applied"}
    assert (r.metrics.tasks, r.metrics.tasks_passed, r.metrics.wall_ms) == (2, 2, 90_000)
    assert len(r.metrics.gates) == 2


def test_markdown_has_the_spec_sections_and_numbers() -> None:
    md = reflect(_report(), NOW).markdown
    assert md.startswith("# Reflection\n\n_Run `run-42` — 2026-01-01T00:00:00Z_\n\n"
                         "**Task:** Fix the pagination bug\n")
    for row in ["| Tasks planned → done | 2 → 2 |", "| Edits applied | 7/8 (87%) |",
                "| Tokens in/out | 12000 / 1500 |", "| Tool calls (errors, repeats) | 20 (3, 1) |",
                "| Wall time | 90.0s |", "| Verdict | success |", "| Gates passed | 0/0 |"]:
        assert row in md
    for heading in ["## Intent vs outcome", "## Failures and how each was handled",
                    "## New repair rules learned", "## Choices made and what they earned",
                    "## Regression checks added"]:
        assert heading in md
    assert "suggested, not applied, until they prove themselves" not in md  # H-S-29


def test_an_empty_report_still_gives_a_valid_document() -> None:
    r = reflect(RunReport.from_dict({}), NOW)
    assert r.markdown.startswith("# Reflection\n\n_Run `unset` — 2026-01-01T00:00:00Z_")
    assert "| Verdict | incomplete |" in r.markdown
    assert r.candidates == () and r.checks == () and r.procedure is None


def test_reflection_is_deterministic() -> None:
    report = _report(failures=[{"tool": "ws_edit", "message": GUTTER_MSG, "resolved_by": "llm",
                                "failed_args": GUTTER_ARGS, "fixed_args": FIXED_ARGS}])
    assert reflect(report, NOW).to_dict() == reflect(report, NOW).to_dict()


def test_summary_fallback_is_byte_identical() -> None:
    md = reflect(_report(), NOW).markdown
    for bad in (None, "", "   \n", 42, {"error": "timeout"}, RuntimeError("model down")):
        assert enrich(md, bad) == md
    added = enrich(md, "Strip the gutter before editing.")
    assert added.startswith(md)
    assert added.endswith("\n## Model commentary\n\n_Advisory only — the sections above are "
                          "computed._\n\nStrip the gutter before editing.\n")
    long = enrich(md, "é" * 2000)
    assert len(long.encode()) - len(md.encode()) < 800 + 120
    assert summary_prompt(md).startswith("In at most three sentences")


def test_reflection_document_is_capped() -> None:
    text = "# Reflection\n" + "x" * 20_000
    capped = cap_document(text)
    assert len(capped.encode()) <= 16 * 1024 and capped.endswith("_[truncated]_\n")
    assert cap_document("short\n") == "short\n"


def test_report_parsing_is_tolerant() -> None:
    report = RunReport.from_dict({
        "planned_tasks": "3", "failures": [{"signal": {"tool": "Bash", "message": "x"}}, 7],
        "gates": [{"name": ""}, {"name": "t", "passed": 1}], "decisions": [{"arm": "a"}],
        "started_at": "2026-01-01T00:00:00Z", "ended_at": "2025-01-01T00:00:00Z",
    })
    assert report.planned_tasks == 0 and len(report.failures) == 1
    assert report.failures[0].tool == "Bash" and len(report.gates) == 1
    assert report.decisions == () and report.wall_ms == 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=True)
    | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                max_size=4),
    max_leaves=20,
)
report_keys = st.sampled_from(["run_id", "query", "planned_tasks", "completed_tasks", "failures",
                               "gates", "decisions", "started_at", "ended_at", "edits_attempted",
                               "edits_applied", "files_changed", "commands", "label", "model"])
failure_maps = st.dictionaries(
    st.sampled_from(["tool", "message", "resolved_by", "rule_id", "failed_args", "fixed_args",
                     "recheck", "repair", "attempts", "signal"]), json_values, max_size=6)


@settings(derandomize=True, max_examples=80)
@given(st.dictionaries(report_keys, json_values, max_size=8), st.lists(failure_maps, max_size=4))
def test_any_report_is_reflected_without_raising(data: dict[str, Any],
                                                 failures: list[dict[str, Any]]) -> None:
    data["failures"] = failures
    r = reflect(RunReport.from_dict(data), NOW)
    assert r.markdown.startswith("# Reflection\n")
    assert sum(r.tally.values()) == len(r.report.failures) == r.metrics.failures
    assert r.metrics.tasks >= r.metrics.tasks_passed >= 0
    json.dumps(r.to_dict())  # everything it emits is plain JSON


def test_episodes_and_lessons_keep_the_salient_line_of_an_error() -> None:
    # "Traceback (most recent call last):" or "Exit code 1" says nothing; the line
    # that says what went wrong does, normalised like the fingerprint's salient text.
    traceback = ("Traceback (most recent call last):\n  File \"app/cli.py\", line 12, in main\n"
                 "    run()\nKeyError: 'missing_option'")
    r = reflect(_report(failures=[
        {"tool": "ws_shell", "message": traceback, "resolved_by": "llm"},
        {"tool": "ws_shell", "message": "Exit code 1\nerror: could not compile `cfgtool` (bin) "
                                        "due to 2 previous errors"},
    ]), NOW)
    salient = [f["salient"] for f in r.episode["failures"]]
    assert salient[0] == "keyerror: 'missing_option'"
    assert salient[1].startswith("error: could not compile")
    unresolved = [lesson.text for lesson in r.lessons if "stayed unresolved" in lesson.text]
    assert unresolved and "error: could not compile" in unresolved[0]
    assert "Exit code" not in unresolved[0]


def test_an_unresolved_failure_is_named_by_its_command_as_the_program_said_it() -> None:
    r = reflect(_report(failures=[
        {"tool": "Bash", "message": "Exit code 4\nBoom: Widget FAILED at /srv/app",
         "failed_args": json.dumps({"command": "sh -c 'make widget'"})},
    ]), NOW)
    [lesson] = [x.text for x in r.lessons if "stayed unresolved" in x.text]
    # The command that failed, and the error in its own case and values (no class, no masks).
    assert lesson == "`sh -c 'make widget'` failed here and stayed unresolved: Boom: Widget FAILED at /srv/app"
    assert r.episode["failures"][0]["said"] == "Boom: Widget FAILED at /srv/app"
