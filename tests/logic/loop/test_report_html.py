"""The HTML report is self-contained, escapes what it shows, and draws gaps for missing data."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from slmactor.logic.loop.metrics import Run
from slmactor.logic.loop.metrics_compare import compare
from slmactor.logic.loop.report_html import chart_svg, render_html


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


def test_page_is_self_contained_with_four_charts_and_the_table() -> None:
    runs = _runs()
    page = render_html(runs, compare(runs[:3], runs[3:]), project="/tmp/p <x>",
                       generated_at=1_700_000_000)
    parser = _Collect()
    parser.feed(page)
    assert parser.tags.count("svg") == 4
    assert "script" not in parser.tags and "link" not in parser.tags
    assert not any(v and v.startswith(("http://", "https://", "//"))
                   for k, v in parser.attrs if k in ("src", "href"))
    assert "Verdict: improved." in page
    assert "/tmp/p &lt;x&gt;" in page
    assert "failures fixed from memory" in page and "LLM calls per task" in page


def test_a_run_without_data_breaks_the_line() -> None:
    runs = [Run(run_id="a", at=1, edits_attempted=1, edits_applied=1), Run(run_id="b", at=2),
            Run(run_id="c", at=3, edits_attempted=2, edits_applied=1)]
    svg = chart_svg("edit_apply_rate", "x", "#000", runs)
    assert svg.count("<polyline") == 2 and svg.count("<circle") == 2


def test_no_runs_renders_placeholders_not_errors() -> None:
    page = render_html([], None, project="p", generated_at=0)
    assert page.count("no data yet") == 4
    assert "Compare needs at least two recorded runs." in page
    assert re.search(r"0 run\(s\), 0 task\(s\)", page)
