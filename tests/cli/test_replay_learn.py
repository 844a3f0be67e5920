"""`metrics replay PATH… --learn` on what a user has: a team's committed histories (`--git`: a
`Stop` hook's `logs/chat.json` copies in the tree's history and an `entire/checkpoints/v1`
branch), one project however many machines they ran on; `--html` draws it; nothing is stored
and no daemon is needed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.integration.test_import_hostile import transcript
from tests.integration.test_import_places import _checkpoint, git, repo


def _replay(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "SLMACTOR_HOME": str(home / ".slmcode"),
           "SLMACTOR_RUNTIME_DIR": str(home / "rt")}
    return subprocess.run([sys.executable, "-m", "slmactor", "--no-autostart", "metrics", "replay",
                           "--learn", *args], check=False, cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def _team(tmp_path: Path) -> Path:
    team = repo(tmp_path / "team")
    chat = team / "logs" / "chat.json"
    chat.parent.mkdir()
    for i, cwd in enumerate(("/home/ann/team", "/Users/bob/src/team")):  # two teammates' machines
        entries = [json.loads(line) for line in transcript(f"tree-{i}", cwd).splitlines()]
        chat.write_text(json.dumps(entries, indent=2))
        git(team, "add", "-A")
        git(team, "commit", "-qm", f"work {i}")
    git(team, "checkout", "-q", "--orphan", "entire/checkpoints/v1")
    git(team, "rm", "-rfq", ".")
    _checkpoint(team, "0a1b2c3d4e5f", 0, "cp-1", "2026-11-20T10:00:00Z",
                transcript("cp-1", "/home/dev/team", calls=1))
    _checkpoint(team, "a1b2c3d4e5f6", 0, "cp-1", "2026-11-21T10:00:00Z",
                transcript("cp-1", "/home/dev/team", calls=4, text="cp1"))
    git(team, "add", "-A")
    git(team, "commit", "-qm", "Checkpoint")
    git(team, "checkout", "-q", "main")
    return team


def test_committed_histories_of_both_layouts_are_one_project(tmp_path: Path) -> None:
    team = _team(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    done = _replay(tmp_path, home, "--json", "--git", str(team), "--html", str(tmp_path / "replay.html"))
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    claude = result["harnesses"]["claude"]
    # tree-0, tree-1 (two machines), cp-1 once (its later checkpoint): one project, the team's.
    assert (result["projects"], claude["sessions"], claude["calls"]) == (1, 3, 3 + 3 + 4)
    assert {f["project"] for f in result["failures"]} <= {"team"}
    page = (tmp_path / "replay.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "What memory would have done" in page
    assert "<script" not in page and "derivable repeats per harness" in page
    assert not (home / ".slmcode").exists()  # a measurement: nothing stored, no daemon started


def test_replay_learn_without_histories_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _replay(tmp_path, home, str(empty))
    assert done.returncode == 2 and "no session in" in done.stderr
    missing = _replay(tmp_path, home, str(tmp_path / "nope"))
    assert missing.returncode == 2 and "not found" in missing.stderr
