"""Other harnesses' trajectories read as replayable trajectories; anything else refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.harnesses import read_trajectory as to_trajectory
from slmactor.harnesses import trajectory_format_of as format_of
from slmactor.logic.loop.importers import UnknownTrajectoryFormat
from slmactor.logic.loop.replay import RunTally, StepResult

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "trajectories"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def tools(name: str) -> list[tuple[str, bool]]:
    traj = to_trajectory(load(name), name)
    return [(s.tool, s.ok) for s in traj.steps if s.kind == "tool"]


def test_mini_swe_agent_trajectory() -> None:
    data = load("mini-swe-agent.traj.json")
    assert format_of(data) == "mini-swe-agent"
    traj = to_trajectory(data, "mini")
    assert traj.query.startswith("Please solve this issue: Fix the off-by-one in paginate()")
    assert traj.model == "deterministic" and traj.task_passed
    steps = [s for s in traj.steps if s.kind == "tool"]
    assert [(s.args.split()[0], s.ok) for s in steps] == [
        ("cat", True), ("python", False), ("sed", True), ("python", True)]
    failed = steps[1]
    assert "1 failed" in failed.error
    assert failed.fixed_args == "python -m pytest -q tests/test_pagination.py"  # the re-run passed
    assert sum(1 for s in traj.steps if s.kind == "assistant") == 5


def test_swe_agent_traj() -> None:
    data = load("swe-agent-missing-colon.traj")
    assert format_of(data) == "swe-agent"
    traj = to_trajectory(data, "swe")
    assert "the def line lacks its colon" in traj.query
    assert traj.model == "instant_empty_submit" and traj.task_passed
    assert tools("swe-agent-missing-colon.traj") == [
        ("find_file", True), ("python", False), ("edit", False), ("edit", True), ("python", True),
        ("submit", True)]
    edit = next(s for s in traj.steps if s.tool == "edit" and not s.ok)
    assert edit.edit_attempt and edit.fixed_args.startswith("edit 4:4\ndef division(a: float, b: float) -> float:")
    tally = RunTally(traj)
    for step in traj.steps:
        if step.kind == "assistant":
            tally.assistant(step)
        else:
            tally.tool(step, StepResult("ok") if step.ok else StepResult("llm"))
    report = tally.report("swe-run", "import")
    assert (report["tokens_in"], report["tokens_out"]) == (18450, 612)
    assert report["tool_errors"] == 2 and len(report["failures"]) == 2


def test_openhands_events() -> None:
    data = load("openhands-events.json")
    assert format_of(data) == "openhands" and format_of({"trajectory": data}) == "openhands"
    traj = to_trajectory(data, "oh")
    assert traj.query.startswith("Make `python -m pytest tests/test_slug.py` pass")
    assert traj.model == "claude-sonnet-4-5" and traj.task_passed
    assert tools("openhands-events.json") == [
        ("execute_bash", False), ("str_replace_editor", True), ("execute_bash", True)]
    first = next(s for s in traj.steps if s.kind == "tool")
    assert first.args == "python -m pytest -q tests/test_slug.py" and "AssertionError" in first.error
    edit = next(s for s in traj.steps if s.tool == "str_replace_editor")
    assert json.loads(edit.args)["new_str"] == "    return title.lower().replace(' ', '-')"
    assert traj.steps[0].tokens_in == 9120


def test_openhands_sdk_event_log() -> None:
    lines = (FIXTURES / "openhands-sdk-events.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    assert format_of(events) == "openhands-sdk"
    traj = to_trajectory(events, "sdk")
    assert traj.query.startswith("Make tests/test_dates.py pass")
    assert traj.model == "litellm_proxy/claude-sonnet-4-5" and traj.task_passed
    steps = [s for s in traj.steps if s.kind == "tool"]
    assert [(s.tool, s.ok) for s in steps] == [
        ("terminal", False), ("file_editor", True), ("terminal", True)]
    assert "Invalid isoformat string" in steps[0].error
    assert steps[0].fixed_args == "python -m pytest -q tests/test_dates.py"
    assert json.loads(steps[1].args)["path"] == "/workspace/project/dates.py" and steps[1].edit_attempt
    assert (traj.steps[0].tokens_in, traj.steps[0].tokens_out) == (12400, 510)


def test_native_trajectories_still_read() -> None:
    native = {"id": "t1", "query": "q", "steps": [{"kind": "tool", "tool": "Read", "ok": True}]}
    assert format_of(native) == "slmactor" and to_trajectory(native, "x").id == "t1"


@pytest.mark.parametrize("data", [
    load("foreign-package.json"), {}, [], [1, 2], {"messages": []}, {"trajectory": []},
    {"trajectory_format": "something-else", "messages": []}, "text", 3, None,
])
def test_anything_else_is_refused_not_read_as_an_empty_run(data: Any) -> None:
    with pytest.raises(UnknownTrajectoryFormat, match="not a trajectory this tool reads"):
        to_trajectory(data, "foreign")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8)
    | st.sampled_from(["ActionEvent", "ObservationEvent", "AgentErrorEvent", "MessageEvent"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["steps", "messages", "trajectory", "info", "action", "observation",
                         "source", "trajectory_format", "role", "extra", "args", "kind",
                         "action_id", "tool_name", "x"]),
        inner, max_size=5),
    max_leaves=20)


@settings(max_examples=300, derandomize=True)
@given(json_values)
def test_any_json_is_read_or_refused_never_crashes(data: Any) -> None:
    try:
        to_trajectory(data, "fuzz")
    except UnknownTrajectoryFormat:
        pass
