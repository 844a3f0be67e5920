"""`metrics replay` on a terminal shows progress on stderr: per trajectory replayed (offline A/B),
per tenth of the files read (`--learn`).

stderr is a real pseudo-terminal here (os.openpty), as when a person runs it; piped or logged,
the command prints nothing but its result.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from slmactor.testing import DaemonProcess

TRAJECTORIES = Path(__file__).resolve().parents[2] / "slmactor" / "demo_data" / "trajectories"


def _trajectories(tmp_path: Path, n: int) -> Path:
    directory = tmp_path / "trajs"
    directory.mkdir()
    for path in sorted(TRAJECTORIES.glob("*.json"))[:n]:
        shutil.copy(path, directory / path.name)
    return directory


def _replay(daemon: DaemonProcess, directory: Path, *extra: str,
            tty: bool) -> tuple[subprocess.CompletedProcess[bytes], str]:
    argv = [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
            "--project", str(daemon.project), "--no-autostart", "--json", "metrics", "replay",
            str(directory), *extra]
    if not tty:
        done = subprocess.run(argv, env=daemon.env, capture_output=True, timeout=180, check=False)
        return done, done.stderr.decode()
    leader, follower = os.openpty()
    try:
        done = subprocess.run(argv, env=daemon.env, stdout=subprocess.PIPE, stderr=follower,
                              timeout=180, check=False)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal has no writer left and nothing more to read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    return done, b"".join(chunks).decode()


@pytest.mark.parametrize("mode", [["--learn"], []], ids=["learn", "ab"])
def test_progress_on_a_terminal(daemon: DaemonProcess, tmp_path: Path, mode: list[str]) -> None:
    directory = _trajectories(tmp_path, 3)
    done, terminal = _replay(daemon, directory, *mode, tty=True)
    assert done.returncode == 0, terminal
    json.loads(done.stdout)  # stdout keeps the one JSON document
    lines = [ln for ln in terminal.splitlines() if ln.strip()]
    if mode:
        assert lines == ["read 1/3 file(s)", "read 2/3 file(s)", "read 3/3 file(s)"], lines
        return
    assert [re.match(r"\[(\d)/3\] ", ln).group(1) for ln in lines] == ["1", "2", "3"]  # type: ignore[union-attr]
    assert "01-py-pagination" in lines[0]


@pytest.mark.parametrize("mode", [["--learn"], []], ids=["learn", "ab"])
def test_no_progress_when_stderr_is_not_a_terminal(daemon: DaemonProcess, tmp_path: Path,
                                                   mode: list[str]) -> None:
    done, stderr = _replay(daemon, _trajectories(tmp_path, 2), *mode, tty=False)
    assert done.returncode == 0 and stderr == ""
