"""The harness verbs against a real daemon: typed results, the run report the daemon
builds from working memory, the merge with a given report, the project rule, run restarts, and
drops counted the moment a tell cannot be delivered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import zmq

import slmactor
from slmactor.client import AsyncClient, Client, DaemonUnavailable, RequestFailed
from slmactor.protocol import ErrorCode
from slmactor.protocol.messages import EvolveOnFailure, MetricsShow, RunStart
from slmactor.results import Advice, Block, Finished, Run
from slmactor.testing import DaemonProcess
from tests.integration.test_runtime import wait_for

GUTTER_ARGS = '{"path": "app.py", "old_str": "  7|     x = 1", "new_str": "  7|     x = 2"}'
FIXED_ARGS = '{"path": "app.py", "old_str": "    x = 1", "new_str": "    x = 2"}'
EDIT_FAILURE = "old_str not found in app.py"


def metrics_of(client: Client, run_id: str) -> dict[str, Any] | None:
    runs = client.ask(MetricsShow(last=0))["runs"]
    return next((r for r in runs if r["run_id"] == run_id), None)


def test_verbs_return_typed_results_and_teach_the_next_run(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        run = c.start_run("fix the off-by-one in app.py")
        assert isinstance(run, Run) and run.run_id.startswith("run-") and not run.restarted
        advice = c.on_failure(run.run_id, "Edit", EDIT_FAILURE, args=GUTTER_ARGS)
        assert isinstance(advice, Advice)
        # The first time, only the shipped read-again rule answers: nothing is rewritten.
        assert advice.found and advice.repaired_args == ""
        assert "read" in advice.guidance.lower()
        assert advice.fingerprint.startswith("fp_") and advice.args == GUTTER_ARGS
        learned = c.resolved(advice, fixed_args=FIXED_ARGS)
        assert learned.transform == "strip_line_number_prefix" and learned.learned is not None
        assert isinstance(c.finish_run(run.run_id, success=True, wait=True), Finished)

        second = c.start_run("fix the off-by-one in app.py")
        again = c.on_failure(second.run_id, "Edit", EDIT_FAILURE, args=GUTTER_ARGS)
        assert again.apply and again.rule_id
        assert again.repaired_args.replace(" ", "") == FIXED_ARGS.replace(" ", "")
        assert "remembered repair" in again.observation()
        assert c.resolved(again).fingerprint == again.fingerprint  # credited to the rule

        text = c.memory_block("fix the off-by-one in app.py", run_id=second.run_id)
        assert isinstance(text, str) and "fix the off-by-one" in text
        block = c.memory_block("fix the off-by-one in app.py", sections=True)
        assert isinstance(block, Block) and str(block) == block.text and block.sections
        hits = c.recall("off-by-one app.py")
        assert hits and hits[0].query == "fix the off-by-one in app.py" and hits[0].success
        fact = c.remember("tests", "run the tests with pytest -q", kind="command")
        assert fact


def test_finish_without_a_report_is_built_from_what_the_daemon_saw(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        run = c.start_run("tidy the parser")
        c.record_tool(run.run_id, "Read", path="parser.py")
        c.record_tool(run.run_id, "Edit", path="parser.py", args='{"path": "parser.py"}')
        c.record_tool(run.run_id, "Bash", command="pytest -q", ok=False, error="2 failed")
        c.record_tool(run.run_id, "Bash", command="pytest -q", ok=False, error="2 failed")
        finished = c.finish_run(run.run_id, wait=True)
        assert finished.accepted and finished.tally["unresolved"] == 1
        record = metrics_of(c, run.run_id)
    assert record is not None
    assert (record["tool_calls"], record["tool_errors"], record["redundant_calls"]) == (4, 2, 1)
    assert record["failures"] == 1 and record["unresolved"] == 1


def test_a_given_report_is_merged_without_counting_twice(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        run = c.start_run("rename the flag")
        for _ in range(3):
            c.record_tool(run.run_id, "Bash", command="make", ok=False, error="boom")
        c.record_tool(run.run_id, "Edit", path="cli.py")
        # The harness counted the same calls itself and reports the same failure.
        report = {"tool_calls": 4, "tool_errors": 3, "completed_tasks": 1, "planned_tasks": 1,
                  "failures": [{"tool": "bash", "message": "boom", "resolved_by": "retry"}]}
        c.finish_run(run.run_id, report, wait=True)
        record = metrics_of(c, run.run_id)
    assert record is not None
    assert (record["tool_calls"], record["tool_errors"], record["failures"]) == (4, 3, 1)
    assert record["tasks_passed"] == 1


def test_a_re_sent_run_start_resets_the_run(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        c.start_run("first", run_id="run-again")
        c.record_tool("run-again", "Bash", command="ls", ok=False, error="nope")
        assert c.working_snapshot("run-again")["snapshot"]["counters"]["calls"] == 1
        again = c.start_run("first", run_id="run-again")
        assert again.restarted and again.counters == {"calls": 0, "errors": 0, "redundant": 0}
        kept = c.start_run("second task", run_id="run-again", keep=True)
        assert not kept.restarted


def test_the_project_rule_is_the_same_for_every_kind(daemon: DaemonProcess, tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-dir")
    with Client(daemon.runtime_dir, project=missing) as c:
        for msg in (RunStart(run_id="r"), EvolveOnFailure(run_id="r", tool="Edit", message="x")):
            with pytest.raises(RequestFailed) as err:
                c.ask(msg)
            assert err.value.code == ErrorCode.BAD_PROJECT
        assert c.ping()["actor"] == "control"  # daemon-wide kinds carry no project
    with Client(daemon.runtime_dir) as no_project:
        with pytest.raises(RequestFailed) as err:
            no_project.ask(RunStart(run_id="r"))
        assert err.value.code == ErrorCode.BAD_PROJECT
        # A tell without a project would be filed nowhere: dropped and counted at once.
        assert no_project.record_tool("r", "Read", path="a.py") is False
        assert no_project.dropped == 1
    with Client(daemon.runtime_dir, project=daemon.project) as c:
        # Sent anyway (a foreign client), the daemon drops and counts it.
        before = c.status()["events"]["invalid"]
        c._tells().send(b"record_tool", {"v": 1, "run_id": "r", "tool": "Read", "project": ""})
        wait_for(lambda: c.status()["events"]["invalid"] > before, "the tell counted")


def test_tells_are_counted_as_dropped_at_once_while_the_daemon_is_down(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    nowhere = tmp_path / "rt"
    nowhere.mkdir()
    with Client(nowhere, project=tmp_path) as idle:
        for _ in range(50):
            idle.record_tool("r", "Read")
        assert idle.dropped == 50  # at once, not after 10,000 queued tells
    c = daemon.client()
    assert c.record_tool("r", "Read") and c.dropped == 0
    daemon.stop()
    sock = c._tells()._sock  # the PUSH side notices the daemon is gone
    wait_for(lambda: not sock.getsockopt(zmq.EVENTS) & zmq.POLLOUT, "disconnect seen")
    results = [c.record_tool("r", "Read") for _ in range(30)]
    assert results.count(False) == 30 and c.dropped == 30
    c.close()


def test_session_helper_runs_start_to_finish(daemon: DaemonProcess) -> None:
    with slmactor.session(daemon.project, "add a retry to upload", model="qwen2.5-coder:7b",
                          runtime_dir=daemon.runtime_dir) as run:
        run.record_tool("Edit", path="upload.py")
        assert "add a retry to upload" in run.memory_block()
        run_id = run.run_id
    assert run.finished is not None and run.finished.success
    with daemon.client() as c:
        record = wait_for(lambda: metrics_of(c, run_id), "the session's run recorded")
    assert record["model"] == "qwen2.5-coder:7b" and record["tool_calls"] == 1

    with pytest.raises(ZeroDivisionError), slmactor.session(
        daemon.project, "doomed", runtime_dir=daemon.runtime_dir
    ) as doomed:
        1 / 0  # noqa: B018 - the block fails: the run is finished as failed, the error kept
    assert doomed.finished is not None and not doomed.finished.success


@pytest.mark.anyio
async def test_async_client_has_the_same_verbs(daemon: DaemonProcess) -> None:
    async with AsyncClient(daemon.runtime_dir, project=daemon.project) as c:
        run = await c.start_run("async task")
        advice = await c.on_failure(run.run_id, "Edit", EDIT_FAILURE, args=GUTTER_ARGS)
        await c.resolved(advice, fixed_args=FIXED_ARGS)
        assert isinstance(await c.memory_block("async task", run_id=run.run_id), str)
        assert "episodic" in (await c.memory_block("async task", sections=True)).sections
        assert isinstance(await c.recall("async task"), list)
        assert (await c.remember("lint", "ruff check", kind="command")) is not None
        finished = await c.finish_run(run.run_id, success=True)
        assert finished.accepted and finished.run_id == run.run_id


def test_a_fail_open_session_runs_without_a_daemon(tmp_path: Path) -> None:
    nowhere = tmp_path / "rt"
    nowhere.mkdir()
    with pytest.raises(DaemonUnavailable):
        slmactor.session(tmp_path, "no daemon", runtime_dir=nowhere)
    with slmactor.session(tmp_path, "no daemon", runtime_dir=nowhere, fail_open=True) as run:
        assert run.run_id.startswith("run-")
        assert run.record_tool("Bash", command="make", ok=False, error="boom") is False
        advice = run.on_failure("Bash", "boom", args="make")
        assert (advice.found, advice.repaired_args, advice.observation()) == (False, "", "")
        assert run.resolved(advice, fixed_args="make all").learned is None
        assert run.memory_block() == "" and run.recall() == [] and run.remember("a", "b") == {}
    assert run.finished is not None and not run.finished.accepted
    assert run.client.dropped == 1
    assert len(run.errors) == 7 and all("not reachable" in e for e in run.errors)


@pytest.mark.anyio
async def test_async_client_confirms_a_backlog_of_tells_on_exit(daemon: DaemonProcess) -> None:
    async with AsyncClient(daemon.runtime_dir, project=daemon.project, tell_hwm=100_000) as c:
        queued = sum(c.record_tool("async-backlog", "Bash", command=f"echo {i}") for i in range(30_000))
    assert c.unconfirmed == 0
    assert c.dropped == 30_000 - queued
    with Client(daemon.runtime_dir, project=daemon.project) as check:
        snapshot = check.working_snapshot("async-backlog", wait=False)["snapshot"]
    assert snapshot["counters"]["calls"] == queued
