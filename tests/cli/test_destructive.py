"""One rule for destructive commands: nothing is forgotten without `--yes`.

Refusals happen before the daemon is contacted, so these run without one (`--no-autostart`,
an empty runtime dir): a command that did reach for the daemon would exit 1, not 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from slmactor.cli.memory.facts import SCOPES

DESTRUCTIVE = [["memory", "forget", scope] for scope in SCOPES] + [
    ["evolve", "reset"], ["graph", "forget"], ["memory", "working", "--run", "r1", "--reset"]]


def _cli(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--no-autostart", "--runtime-dir", str(tmp_path / "rt"),
         "--project", str(tmp_path), *argv],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, env=dict(os.environ),
        timeout=60, check=False)


@pytest.mark.parametrize("argv", DESTRUCTIVE, ids=" ".join)
def test_json_without_yes_is_refused(tmp_path: Path, argv: list[str]) -> None:
    done = _cli(tmp_path, "--json", *argv)
    assert done.returncode == 2
    assert "--yes" in json.loads(done.stdout)["error"]


@pytest.mark.parametrize("argv", DESTRUCTIVE, ids=" ".join)
def test_no_terminal_without_yes_is_refused(tmp_path: Path, argv: list[str]) -> None:
    done = _cli(tmp_path, *argv)
    assert done.returncode == 2 and "--yes" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("argv", DESTRUCTIVE, ids=" ".join)
def test_with_yes_it_goes_to_the_daemon(tmp_path: Path, argv: list[str]) -> None:
    done = _cli(tmp_path, *argv, "--yes")
    assert done.returncode == 1 and "not reachable" in done.stderr  # past the confirmation
