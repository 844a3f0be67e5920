"""The finish pipeline and regression memory against a real daemon (run.finish → every actor)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from slmactor.protocol.messages import EvolveRegressions, MetricsShow, RunFinish
from slmactor.testing import DaemonProcess

GUTTER_ARGS = json.dumps({"path": "a.py", "old_str": "  3| x = 1", "new_str": "  3| x = 2"})
FIXED_ARGS = json.dumps({"path": "a.py", "old_str": "x = 1", "new_str": "x = 2"})
GUTTER_MSG = "old_str still contains ws_read's line-number prefix; remove the gutter"


def _report(run_id: str, **extra: Any) -> dict[str, Any]:
    report: dict[str, Any] = {
        "run_id": run_id, "query": "fix x in a.py", "language": "python",
        "model": "qwen2.5-coder:7b", "planned_tasks": 1, "completed_tasks": 1,
        "edit_format": "search_replace", "edits_attempted": 2, "edits_applied": 2,
        "edits_first_attempt": 1, "llm_calls": 3, "tool_calls": 4, "tool_errors": 1,
        "files_changed": ["a.py"], "label": "it",
        "failures": [{"tool": "ws_edit", "message": GUTTER_MSG, "resolved_by": "llm",
                      "failed_args": GUTTER_ARGS, "fixed_args": FIXED_ARGS,
                      "recheck": {"path": "a.py", "substring": "x = 2"}}],
        "decisions": [{"decision": "edit_format", "arm": "search_replace",
                       "outcome": {"applied": True, "gate_passed": True}}],
    }
    report.update(extra)
    return report


def _cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", *args],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=60,
    )


def test_finish_reflects_persists_and_runs_the_whole_pipeline(daemon: DaemonProcess) -> None:
    with daemon.client(timeout=30) as client:
        result = client.ask(RunFinish(report=_report("run-1"), wait=True))
        assert result["accepted"] and result["success"]
        assert result["tally"]["llm"] == 1 and result["candidates"] == 1
        assert result["checks"] == 1
        steps = result["pipeline"]
        assert steps["regressions"] == {"ok": True, "added": 1}
        for name in ("episode.append", "evolve.learn", "policy.update", "procedure.observe",
                     "metrics.record", "memory.distill", "memory.prune"):
            assert steps[name]["ok"], (name, steps[name])
        shown = client.ask(MetricsShow(last=1))
        assert [r["run_id"] for r in shown["runs"]] == ["run-1"]
        assert shown["runs"][0]["resolved_from_llm"] == 1
        # A client retry of the same run is answered, not learned twice.
        again = client.ask(RunFinish(report=_report("run-1"), wait=True))
        assert again["duplicate"] is True
        assert len(client.ask(MetricsShow(last=0))["runs"]) == 1
    md = (daemon.project / ".slmcode" / "memory" / "REFLECTION.md").read_text()
    assert md.startswith("# Reflection\n\n_Run `run-1`")
    assert "transform args: strip_line_number_prefix" in md


def test_background_pipelines_run_in_order_and_never_block(daemon: DaemonProcess) -> None:
    with daemon.client(timeout=30) as client:
        quick = client.ask(RunFinish(report=_report("bg-1")))
        assert quick["accepted"] and "pipeline" not in quick
        # The next finish waits behind the first pipeline, so afterwards both are recorded.
        client.ask(RunFinish(report=_report("bg-2"), wait=True))
        runs = client.ask(MetricsShow(last=0))["runs"]
        assert [r["run_id"] for r in runs] == ["bg-1", "bg-2"]


def test_summary_is_advisory_and_a_blank_one_changes_nothing(daemon: DaemonProcess) -> None:
    path = daemon.project / ".slmcode" / "memory" / "REFLECTION.md"
    report = _report("sum-1", ended_at=1_767_225_600.0)
    with daemon.client(timeout=30) as client:
        client.ask(RunFinish(report={**report, "run_id": "sum-1"}, summary="", wait=True))
        plain = path.read_bytes()
        client.ask(RunFinish(report={**report, "run_id": "sum-2"}, summary="   ", wait=True))
        # Same report, blank summary: the same document byte for byte (only the run id differs).
        assert path.read_bytes() == plain.replace(b"`sum-1`", b"`sum-2`")
        client.ask(RunFinish(report={**report, "run_id": "sum-1b"},
                             summary="Strip the gutter first.", wait=True))
        enriched = path.read_text()
    assert b"Model commentary" not in plain
    assert "## Model commentary\n\n_Advisory only" in enriched
    assert enriched.endswith("Strip the gutter first.\n")


def test_regressions_run_offline_confined_and_never_execute_commands(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    (daemon.project / "a.py").write_text("x = 2\n")
    marker = tmp_path / "executed"
    outside = daemon.project.parent / "outside.txt"
    outside.write_text("x = 2\n")
    failures = [
        {"tool": "ws_edit", "message": GUTTER_MSG, "resolved_by": "llm",
         "recheck": {"path": "a.py", "substring": "x = 2", "description": "a.py keeps the fix"}},
        {"tool": "bash", "message": "pytest failed", "resolved_by": "llm",
         "recheck": {"command": f"touch {marker}", "description": "tests pass"}},
        {"tool": "bash", "message": "escape", "resolved_by": "llm",
         "recheck": {"path": "../outside.txt", "substring": "x = 2", "description": "escape"}},
    ]
    with daemon.client(timeout=30) as client:
        client.ask(RunFinish(report=_report("reg-1", failures=failures), wait=True))
        listed = client.ask(EvolveRegressions())
        assert len(listed["checks"]) == 3 and listed["ran"] == 0
        assert [c["command"] for c in listed["commands"]] == [f"touch {marker}"]
        ran = client.ask(EvolveRegressions(run=True))
        assert (ran["ran"], ran["passed"], ran["failed"], ran["skipped"]) == (2, 1, 0, 1)
        (daemon.project / "a.py").write_text("x = 1\n")
        regressed = client.ask(EvolveRegressions(run=True))
        assert regressed["failed"] == 1
    assert not marker.exists()
    cli = _cli(daemon, "evolve", "regressions", "--run")
    assert cli.returncode == 150 and "no longer contains the fix" in cli.stdout
    assert "never executes commands" in cli.stdout
    assert not marker.exists()


def test_reset_forgets_regressions_and_json_requires_yes(daemon: DaemonProcess) -> None:
    with daemon.client(timeout=30) as client:
        client.ask(RunFinish(report=_report("rs-1"), wait=True))
    refused = _cli(daemon, "--json", "evolve", "reset")
    assert refused.returncode == 2
    done = _cli(daemon, "--json", "evolve", "reset", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["regressions"] == 1
    with daemon.client() as client:
        assert client.ask(EvolveRegressions())["checks"] == []
    assert not os.path.exists(daemon.project / ".slmcode" / "evolve" / "regressions.json")


def test_a_pipeline_interrupted_by_a_crash_is_replayed_once(daemon: DaemonProcess) -> None:
    # What a daemon killed between accepting a report and finishing its pipeline leaves behind.
    pending = daemon.project / ".slmcode" / "evolve" / "pending"
    pending.mkdir(parents=True)
    (pending / "fin_0123456789ab.json").write_text(json.dumps(
        {"at": 1_767_225_600.0, "summary": "", "report": _report("crashed-1")}))
    with daemon.client(timeout=30) as client:
        client.ask(EvolveRegressions())  # first use of the project: recovery is queued
        client.ask(RunFinish(report=_report("after-1"), wait=True))  # runs after it
        runs = client.ask(MetricsShow(last=0))["runs"]
        assert [r["run_id"] for r in runs] == ["crashed-1", "after-1"]
        status = client.status()
    assert list(pending.iterdir()) == []
    reflector = next(row for row in status["actors"] if row["name"] == "reflector")
    assert reflector["state"] == "running"


def test_a_burst_of_runs_is_distilled_once_and_replays_always_distil(
    daemon: DaemonProcess,
) -> None:
    with daemon.client(timeout=30) as client:
        client.ask(RunFinish(report=_report("burst-1")))  # distils (first time)
        client.ask(RunFinish(report=_report("burst-2")))  # within 30 s: deferred to the timer
        waited = client.ask(RunFinish(report=_report("burst-3"), wait=True))
        assert waited["pipeline"]["memory.distill"]["ok"] is True
        assert "deferred" not in waited["pipeline"]["memory.distill"]
        reflector = next(r for r in client.status()["actors"] if r["name"] == "reflector")
    assert reflector["extra"]["distills_deferred"] == 1
    assert reflector["extra"]["pipelines_done"] == 3
