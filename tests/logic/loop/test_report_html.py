"""The HTML report is self-contained, escapes what it shows, and draws gaps for missing data."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from slmactor.logic.loop.metrics import Run
from slmactor.logic.loop.metrics_compare import compare
from slmactor.logic.loop.report_html import ClassCount, failure_classes, render_html
from slmactor.logic.loop.report_svg import line_chart, pass_starts, plain_number, rolling_mean


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)


def _runs() -> list[Run]:
    return [
        Run(run_id=f"r{i}", at=float(i), label="pass-1" if i < 3 else "pass-2", tasks=1,
            tasks_passed=1, edits_attempted=2, edits_applied=1 + (i >= 3), failures=2,
            resolved_from_llm=2 if i < 3 else 0, resolved_from_memory=0 if i < 3 else 2,
            llm_calls=5 - (i >= 3) * 2)
        for i in range(6)
    ]


def test_page_is_self_contained_with_five_charts_and_the_tables() -> None:
    runs = _runs()
    page = render_html(runs, compare(runs[:3], runs[3:]), project="/tmp/p <x>",
                       generated_at=1_700_000_000)
    parser = _Collect()
    parser.feed(page)
    assert parser.tags.count("svg") == 5  # four trends and the failures by class
    assert "script" not in parser.tags and "link" not in parser.tags
    assert not any(v and v.startswith(("http://", "https://", "//"))
                   for k, v in parser.attrs if k in ("src", "href"))
    assert "Verdict: improved." in page
    assert "/tmp/p &lt;x&gt;" in page
    assert "failures fixed from memory" in page and "LLM calls per task" in page


def test_a_run_without_data_breaks_the_line() -> None:
    runs = [Run(run_id="a", at=1, edits_attempted=1, edits_applied=1), Run(run_id="b", at=2),
            Run(run_id="c", at=3, edits_attempted=2, edits_applied=1)]
    svg = line_chart("edit_apply_rate", "x", "#000", runs)
    # Each run on its own, and the rolling mean: both break at the run without data.
    assert svg.count("<polyline") == 4 and svg.count('class="rolling-mean"') == 2
    assert svg.count("<circle") == 2


def test_no_runs_renders_placeholders_not_errors() -> None:
    page = render_html([], None, project="p", generated_at=0)
    assert page.count("no data yet") == 4 and "no failures recorded yet" in page
    assert "No rules learned yet." in page
    assert "Compare needs at least two recorded runs." in page
    assert re.search(r"0 run\(s\), 0 task\(s\)", page)


def test_the_pass_rate_chart_has_a_rolling_mean_and_marks_each_labelled_pass() -> None:
    # One task per run: the per-run rate is a 0/100 % zig-zag; the mean is what to read.
    runs = [Run(run_id=f"r{i}", at=float(i), label="baseline" if i < 6 else "learning",
                tasks=1, tasks_passed=int(i % 2 == 0 or i >= 8)) for i in range(12)]
    svg = line_chart("task_pass_rate", "Task pass rate", "#000", runs)
    assert svg.count('class="pass-start"') == 2
    assert ">baseline</text>" in svg and ">learning</text>" in svg
    assert svg.count('class="rolling-mean"') == 1
    assert pass_starts(runs) == [(0, "baseline"), (6, "learning")]
    assert "50%" in svg and "50.0%" not in svg  # tick labels without a meaningless decimal


def test_rolling_mean_is_the_mean_of_the_last_runs_with_data() -> None:
    assert rolling_mean([1.0, 0.0, 1.0, 0.0, 1.0, 1.0], window=3) == pytest.approx(
        [1.0, 0.5, 2 / 3, 1 / 3, 2 / 3, 2 / 3])
    assert rolling_mean([1.0, None, 0.0], window=5) == [1.0, None, 0.5]
    # A new pass is averaged on its own.
    assert rolling_mean([0.0, 0.0, 1.0, 1.0], window=5, starts=[0, 2]) == [0.0, 0.0, 1.0, 1.0]


def test_numbers_carry_only_digits_that_mean_something() -> None:
    assert plain_number(5933.333) == "5,933"
    assert plain_number(42.46) == "42.5" and plain_number(2.25) == "2.25"
    assert plain_number(3.0) == "3" and plain_number(0.5) == "0.5"
    runs = [Run(run_id="a", at=1, tasks=3, tokens_in=17_800, llm_calls=7)]
    page = render_html(runs, None, project="p", generated_at=0)
    assert "5,933" in page and "5933.33" not in page and "2.33" in page


def test_rules_learned_and_failures_by_class_are_shown() -> None:
    episodes = [
        {"failures": [{"class": "edit_no_match", "resolved_by": "rule_abc"},
                      {"class": "edit_no_match", "resolved_by": "llm"},
                      {"class": "test_failure", "resolved_by": ""}]},
        {"failures": [{"class": "edit_no_match", "resolved_by": ""}, "junk"]},
        {"failures": None},
    ]
    classes = failure_classes(episodes)
    assert classes == [ClassCount("edit_no_match", 1, 1, 1), ClassCount("test_failure", 0, 0, 1)]
    rules = [{"id": "rule_0123456789ab", "trigger": {"class": "edit_no_match", "tool": "edit"},
              "repair": {"kind": "transform_args", "transform": "strip_line_number_prefix"},
              "successes": 4, "failures": 1, "confidence": 0.7142857, "scope": "project",
              "seeded": False, "created_at": "2026-12-01T08:00:00Z"}]
    page = render_html([], None, project="p", generated_at=0, rules=rules, failures=classes)
    assert "rule_0123456789ab" in page and "transform_args: strip_line_number_prefix" in page
    assert "4 / 1" in page and ">0.71<" in page
    assert "edit_no_match" in page and "test_failure" in page
    assert "edit_no_match: 1 fixed from memory" in page
