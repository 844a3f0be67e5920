"""The metrics actor and `slmactor metrics …` against a real daemon."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from slmactor.protocol.messages import MetricsCompare, MetricsRecord, MetricsShow
from slmactor.testing import DaemonProcess


def _cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", *args],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=60,
    )


def _run(i: int, label: str, passed: int, llm: int, memory: int) -> dict[str, Any]:
    return {"run_id": f"{label}-{i}", "at": 1_767_225_600 + i, "label": label, "tasks": 1,
            "tasks_passed": passed, "llm_calls": llm, "failures": 2,
            "resolved_from_memory": memory, "resolved_from_llm": 2 - memory,
            "edits_attempted": 2, "edits_applied": 2, "edits_first_attempt": 1}


def test_record_show_compare_round_trip(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        empty = client.ask(MetricsShow(last=1))
        assert empty["runs"] == [] and empty["text"] == "no runs recorded yet\n"
        for i in range(3):
            client.ask(MetricsRecord(run=_run(i, "pass-1", 0, 5, 0)))
        for i in range(3, 6):
            client.ask(MetricsRecord(run=_run(i, "pass-2", 1, 3, 2)))
        shown = client.ask(MetricsShow(last=2))
        assert [r["run_id"] for r in shown["runs"]] == ["pass-2-4", "pass-2-5"]
        assert shown["summary"]["rates"]["task_pass_rate"] == 1.0
        by_label = client.ask(MetricsCompare(baseline_label="pass-1", current_label="pass-2"))
        assert by_label["verdict"] == "improved"
        assert "| failures fixed from memory | 0.0% | 100.0% | +100.0 pp ✅ |" in by_label["text"]
        newest = client.ask(MetricsCompare(n=3))
        assert newest["text"] == by_label["text"]
    runs = (daemon.project / ".slmcode" / "metrics" / "runs.jsonl").read_text().splitlines()
    assert len(runs) == 6 and json.loads(runs[0])["label"] == "pass-1"


def test_cli_show_compare_and_html_report(daemon: DaemonProcess, tmp_path: Path) -> None:
    shown = _cli(daemon, "metrics", "show")
    assert shown.returncode == 0 and "no runs recorded yet" in shown.stdout
    too_few = _cli(daemon, "--json", "metrics", "compare")
    assert too_few.returncode == 0 and json.loads(too_few.stdout)["enough_runs"] is False
    with daemon.client() as client:
        for i in range(4):
            client.ask(MetricsRecord(run=_run(i, "x", i % 2, 4 - i, min(i, 2))))
    text = _cli(daemon, "metrics", "show", "--last", "4")
    assert text.returncode == 0 and text.stdout.startswith("4 run(s), 4 task(s)")
    assert "- task pass rate           50.0%" in text.stdout
    cmp = _cli(daemon, "metrics", "compare", "2")
    assert cmp.returncode == 0 and "## Metrics: 2 baseline run(s) → 2 current run(s)" in cmp.stdout
    assert _cli(daemon, "metrics", "compare", "0").returncode == 2
    page = tmp_path / "report.html"
    made = _cli(daemon, "--json", "metrics", "report", "--html", str(page))
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["runs"] == 4
    html = page.read_text()
    assert html.count("<svg") == 5 and "<script" not in html and "Latest comparison" in html
    assert "Failures by class" in html and "What the loop learned" in html


@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_html_report_mode_follows_the_umask(daemon: DaemonProcess, tmp_path: Path, umask: int,
                                            mode: int) -> None:
    page = tmp_path / "shared" / "report.html"
    made = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", "metrics", "report", "--html",
         str(page)],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=60,
        preexec_fn=lambda: os.umask(umask),
    )
    assert made.returncode == 0, made.stderr
    assert stat.S_IMODE(page.stat().st_mode) == mode
    assert not [p for p in page.parent.iterdir() if p != page]  # no temp file left behind


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
def test_html_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    from slmactor.logic.loop.metrics import Run
    from slmactor.logic.loop.metrics_compare import compare
    from slmactor.logic.loop.report_html import failure_classes, render_html

    runs = [Run.from_dict(_run(i, "baseline" if i < 6 else "learning", i % 2, 5 - i % 4,
                               min(i // 4, 2))) for i in range(14)]
    rules = [{"id": "rule_0123456789ab", "trigger": {"class": "edit_no_match", "tool": "edit"},
              "repair": {"kind": "transform_args", "transform": "strip_line_number_prefix"},
              "successes": 4, "failures": 1, "confidence": 0.71, "scope": "project",
              "created_at": "2026-12-01T08:00:00Z"}]
    failures = failure_classes([{"failures": [{"class": "edit_no_match", "resolved_by": "rule_x"},
                                              {"class": "test_failure", "resolved_by": "llm"},
                                              {"class": "test_failure", "resolved_by": ""}]}])
    page = tmp_path / "report.html"
    html = render_html(runs, compare(runs[:6], runs[6:]), project="p",
                       generated_at=1_767_225_600, rules=rules, failures=failures)
    assert html.count('class="rolling-mean"') == 4 and html.count('class="pass-start"') == 8
    page.write_text(html)
    shot = tmp_path / "shot.png"
    done = subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1800",
         "--enable-logging=stderr", "--v=0", f"--screenshot={shot}", page.as_uri()],
        check=False, capture_output=True, text=True, timeout=90,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.stat().st_size > 10_000
    assert "Uncaught" not in done.stderr and "CONSOLE" not in done.stderr
