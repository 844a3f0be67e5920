"""`metrics replay` on other harnesses' trajectories, against a real daemon: each
real-format fixture becomes a run (`run.finish` → metrics), a foreign JSON file named alone exits 2,
one in a directory is skipped and counted."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from slmactor.protocol.messages import MetricsShow
from slmactor.testing import DaemonProcess

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "trajectories"
FORMATS = ("mini-swe-agent.traj.json", "swe-agent-missing-colon.traj", "openhands-events.json",
           "openhands-sdk-events.jsonl")


def replay(daemon: DaemonProcess, path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", "--json", "metrics", "replay",
         str(path), *extra],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=120,
    )


def test_each_format_replays_into_a_finished_run(daemon: DaemonProcess, tmp_path: Path) -> None:
    directory = tmp_path / "trajectories"
    directory.mkdir()
    for name in FORMATS:
        shutil.copy(FIXTURES / name, directory / name)
    done = replay(daemon, directory, "--learn", "--label", "imported")
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["trajectories"] == 4 and result["skipped_files"] == []
    assert result["failures"] == 1 + 2 + 1 + 1  # pytest; syntax error + bad edit; pytest; pytest
    with daemon.client() as c:
        runs = c.ask(MetricsShow(last=0, label="imported"))["runs"]
    assert len(runs) == 4
    assert sorted(r["tool_calls"] for r in runs) == [3, 3, 4, 6]
    assert {r["model"] for r in runs} == {"deterministic", "instant_empty_submit",
                                          "claude-sonnet-4-5", "litellm_proxy/claude-sonnet-4-5"}


def test_one_file_replays_offline(daemon: DaemonProcess) -> None:
    done = replay(daemon, FIXTURES / "swe-agent-missing-colon.traj")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["baseline"]["runs"] == 1


def test_a_foreign_json_file_alone_is_refused_with_exit_2(daemon: DaemonProcess) -> None:
    done = replay(daemon, FIXTURES / "foreign-package.json", "--learn")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not a trajectory this tool reads" in json.dumps(json.loads(done.stdout))
    with daemon.client() as c:
        assert c.ask(MetricsShow(last=0))["runs"] == []


def test_a_foreign_json_file_in_a_directory_is_skipped_and_counted(daemon: DaemonProcess,
                                                                   tmp_path: Path) -> None:
    directory = tmp_path / "mixed"
    directory.mkdir()
    shutil.copy(FIXTURES / "mini-swe-agent.traj.json", directory / "a.json")
    shutil.copy(FIXTURES / "foreign-package.json", directory / "b.json")
    done = replay(daemon, directory, "--learn")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["trajectories"] == 1
    assert len(result["skipped_files"]) == 1 and result["skipped_files"][0].startswith("b.json: not a trajectory")
    with daemon.client() as c:
        assert len(c.ask(MetricsShow(last=0))["runs"]) == 1  # a.json was replayed all the same
