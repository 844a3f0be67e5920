"""`metrics replay` on other harnesses' trajectories: `--learn` reads each real format through its
harness room and replays it (nothing stored), the offline A/B replays a file through a real
daemon; a foreign JSON file named alone is refused (exit 2), one in a directory is skipped and
counted."""

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


def test_each_format_is_replayed_with_learning(daemon: DaemonProcess, tmp_path: Path) -> None:
    directory = tmp_path / "trajectories"
    directory.mkdir()
    for name in FORMATS:
        shutil.copy(FIXTURES / name, directory / name)
    done = replay(daemon, directory, "--learn")
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["files"] == 4 and result["skipped_files"] == {}
    harnesses = result["harnesses"]
    assert {h: harnesses[h]["sessions"] for h in harnesses if h != "all"} == {
        "mini_swe_agent": 1, "sweagent": 1, "openhands": 2}
    # pytest; syntax error + bad edit; pytest; pytest (as each harness itself says "failed")
    assert harnesses["all"]["failures"] + harnesses["all"]["not_failures"] == 1 + 2 + 1 + 1
    assert {h: harnesses[h]["calls"] for h in harnesses if h != "all"} == {
        "mini_swe_agent": 4, "sweagent": 6, "openhands": 3 + 3}
    with daemon.client() as c:
        assert c.ask(MetricsShow(last=0))["runs"] == []  # a measurement: nothing stored


def test_one_file_replays_offline(daemon: DaemonProcess) -> None:
    done = replay(daemon, FIXTURES / "swe-agent-missing-colon.traj")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["baseline"]["runs"] == 1


def test_a_foreign_json_file_alone_is_refused_with_exit_2(daemon: DaemonProcess) -> None:
    done = replay(daemon, FIXTURES / "foreign-package.json")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not a trajectory this tool reads" in json.dumps(json.loads(done.stdout))
    learned = replay(daemon, FIXTURES / "foreign-package.json", "--learn")
    assert learned.returncode == 2, learned.stdout + learned.stderr
    assert "no session in" in json.loads(learned.stdout)["error"]
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
    assert result["files"] == 1 and result["harnesses"]["mini_swe_agent"]["sessions"] == 1
    assert result["skipped_files"] == {"not a session": 1}
