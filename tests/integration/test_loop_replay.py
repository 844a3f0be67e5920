"""Learning replay through the real daemon (the driver `replay_driver.learning_replay` that
`bench loop` and `bench generalize` run): what one trajectory teaches, the next one uses. And
`metrics replay PATH --learn`, the replay engine, on the same trajectories."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from slmactor.protocol.messages import MetricsCompare
from slmactor.testing import DaemonProcess

MODEL = "qwen2.5-coder:7b-instruct-q4_K_M"


def _ws_step(path: str, old: str, new: str) -> list[dict[str, Any]]:
    """An OpenHands-style edit whose old_str carried trailing spaces (fix: trim them)."""
    bad = {"command": "str_replace", "path": path,
           "old_str": "\n".join(line + "  " for line in old.split("\n")), "new_str": new}
    fixed = {"command": "str_replace", "path": path, "old_str": old, "new_str": new}
    error = (f"ERROR:\nNo replacement was performed, old_str `{bad['old_str']}` did not appear "
             f"verbatim in {path}.")
    return [
        {"tool": "str_replace_editor", "args": bad, "ok": False, "error": error,
         "fixed_args": fixed, "edit_attempt": True},
        {"tool": "str_replace_editor", "args": fixed, "ok": True, "edit_attempt": True},
    ]


def _trajectories() -> list[dict[str, Any]]:
    missing = {"tool": "ws_shell", "args": {"command": "python -m app"}, "ok": False,
               "error": "ModuleNotFoundError: No module named 'yaml'"}
    test_fail = {"tool": "ws_shell", "args": {"command": "pytest -q"}, "ok": False,
                 "error": "FAILED tests/test_a.py::test_total - assert 3 == 4",
                 "fixed_args": {"command": "pytest -q"}}
    base = {"language": "python", "model": MODEL, "edit_format": "search_replace"}
    return [
        {**base, "id": "t1", "query": "add total", "task_passed": False, "steps": [
            {"kind": "assistant", "tokens_in": 1000, "tokens_out": 100},
            *_ws_step("/workspace/app/a.py", "def total(xs):\n    return 0",
                      "def total(xs):\n    return sum(xs)"),
            missing]},
        {**base, "id": "t2", "query": "add mean", "task_passed": True, "steps": [
            {"kind": "assistant", "tokens_in": 1000, "tokens_out": 100},
            *_ws_step("/workspace/app/b.py", "def mean(xs):\n    return 0",
                      "def mean(xs):\n    return sum(xs) / len(xs)"),
            test_fail]},
        {**base, "id": "t3", "query": "add max", "task_passed": True, "steps": [
            {"kind": "assistant", "tokens_in": 1000, "tokens_out": 100},
            *_ws_step("/workspace/app/c.py", "def top(xs):\n    return 0",
                      "def top(xs):\n    return max(xs)"),
            test_fail]},
    ]


def _write(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for traj in _trajectories():
        (directory / f"{traj['id']}.json").write_text(json.dumps(traj))
    return directory


def _replay(daemon: DaemonProcess, directory: Path, label: str) -> dict[str, Any]:
    from slmactor import harnesses
    from slmactor.cli.loop.replay_driver import learning_replay
    from slmactor.stores.trajectories import load_trajectories

    trajectories, skipped = load_trajectories(directory, harnesses.read_trajectory)
    assert skipped == []
    with daemon.client(timeout=60) as client:
        result: dict[str, Any] = learning_replay(client, trajectories, label).to_dict()
    return result


def _learn(daemon: DaemonProcess, directory: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", "--json", "metrics", "replay",
         str(directory), "--learn"],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_metrics_replay_learn_says_the_whitespace_fix_repairs_the_next_trajectories(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    directory = _write(tmp_path / "trajs")
    result = _learn(daemon, directory)
    fails = {(f["session"], f["call"]["tool"]): f for f in result["failures"]}
    assert fails[("t1", "str_replace_editor")]["repeat"] is False
    for later in ("t2", "t3"):
        edit = fails[(later, "str_replace_editor")]
        assert edit["repeat"] and edit["derivable"] and edit["right"], edit
        assert edit["answer"] == "repaired on the failure"
    # The test failure was fixed by reasoning (the same command after an edit): nothing to name.
    assert all(not f["right"] for f in result["failures"] if f["call"]["tool"] == "ws_shell")
    assert result["harnesses"]["all"]["wrong_rewrites"] == 0
    # Measured, not learned: nothing of the project's memory changed.
    assert not (daemon.project / ".slmcode" / "evolve" / "rules.json").exists()


def test_a_fix_learned_in_one_trajectory_repairs_the_next(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    directory = _write(tmp_path / "trajs")
    first = _replay(daemon, directory, "pass-1")
    assert first["trajectories"] == 3 and first["failures"] == 6
    assert first["wrong_repairs"] == 0
    assert first["unresolved"] == 1  # the missing module has no known fix
    by_run = {r["trajectory"]: r for r in first["runs"]}
    # t1 teaches the whitespace fix (whatever the shipped rules did); t2 and t3 use it.
    assert by_run["t2"]["memory"] == 1 and by_run["t3"]["memory"] == 1
    # The test failure was fixed by reasoning, not by a transform: it always costs a round trip.
    assert by_run["t2"]["llm"] >= 1 and by_run["t3"]["llm"] >= 1
    assert first["repeat_failures"] == 2 and first["repeat_share_from_memory"] == 1.0

    second = _replay(daemon, directory, "pass-2")
    assert second["fixed_from_memory"] == 3 and second["wrong_repairs"] == 0
    assert second["fixed_by_model"] == 2 and second["unresolved"] == 1

    with daemon.client(timeout=30) as client:
        cmp = client.ask(MetricsCompare(baseline_label="pass-1", current_label="pass-2"))
    assert cmp["verdict"] == "improved", cmp["text"]
    rows = {row["metric"]: row for row in cmp["rows"]}
    assert rows["task_pass_rate"]["judgement"] == "same"  # repairs save cost, not correctness
    assert rows["llm_calls_per_task"]["judgement"] == "better"


def test_offline_ab_learns_nothing(daemon: DaemonProcess, tmp_path: Path) -> None:
    directory = _write(tmp_path / "trajs")
    done = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", "--json", "metrics", "replay",
         str(directory)],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["baseline"]["runs"] == 3 and result["current"]["runs"] == 3
    assert not (daemon.project / ".slmcode" / "metrics" / "runs.jsonl").exists()
    missing = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", "metrics", "replay",
         str(tmp_path / "nope")],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=60,
    )
    assert missing.returncode == 2 and "not found" in missing.stderr


def _ambiguous(old: str, new: str, fixed_extra: dict[str, Any]) -> dict[str, Any]:
    args = {"path": "app/worker.py", "old_str": old, "new_str": new}
    return {"tool": "ws_edit", "args": args, "ok": False, "edit_attempt": True,
            "error": "old_str found 3 times in app/worker.py; add surrounding lines to make it "
                     "unique, or set replace_all if every occurrence should change",
            "fixed_args": {**args, **fixed_extra}}


def test_replace_all_learned_from_a_rename_never_rewrites_a_statement_everywhere(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    # Run 1 renames a call site with replace_all (right). Run 2 changes ONE of several identical
    # statements, which needs more context; replace_all there would rewrite every copy.
    base = {"language": "python", "model": MODEL, "edit_format": "search_replace",
            "task_passed": True}
    trajs = [
        {**base, "id": "r1", "query": "use the logger", "steps": [
            _ambiguous("print(", "logger.info(", {"replace_all": True})]},
        {**base, "id": "r2", "query": "return 0 from the empty case", "steps": [
            _ambiguous("    return None", "    return 0",
                       {"old_str": "    if not items:\n        return None",
                        "new_str": "    if not items:\n        return 0"})]},
        {**base, "id": "r3", "query": "use the logger for warnings too", "steps": [
            _ambiguous("warn(", "logger.warning(", {"replace_all": True})]},
    ]
    directory = tmp_path / "ambiguous"
    directory.mkdir()
    for traj in trajs:
        (directory / f"{traj['id']}.json").write_text(json.dumps(traj))
    result = _replay(daemon, directory, "ambiguous")
    assert result["wrong_repairs"] == 0
    by_run = {r["trajectory"]: r for r in result["runs"]}
    assert by_run["r2"]["memory"] == 0  # the statement edit went to the model, as it must
    assert by_run["r3"]["memory"] == 1  # the next token-level rewrite is repaired from memory
