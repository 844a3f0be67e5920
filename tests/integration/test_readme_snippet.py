"""The README's "Use it from a harness" snippet, run verbatim against a real daemon.

The block is read out of README.md at test time, so editing the README is editing this test. It
runs twice in the daemon's project directory (the snippet's "."), as a user would run a script:
the first run teaches the daemon how the `Edit` failure was fixed; the second is repaired from
memory, and the daemon built both run reports from what it was told.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from slmactor.protocol.messages import EpisodeRecent, MetricsShow
from slmactor.testing import DaemonProcess

README = Path(__file__).resolve().parents[2] / "README.md"


def harness_snippet() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Use it from a harness", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "README: no python block under 'Use it from a harness'"
    return match.group(1)


def run_snippet(daemon: DaemonProcess, code: str) -> None:
    env = {**os.environ, "SLMACTOR_RUNTIME_DIR": str(daemon.runtime_dir)}
    result = subprocess.run([sys.executable, "-c", code], cwd=daemon.project, env=env,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr


def runs(daemon: DaemonProcess) -> list[dict[str, Any]]:
    with daemon.client() as c:
        found: list[dict[str, Any]] = c.ask(MetricsShow(last=0))["runs"]
        return found


def test_the_readme_snippet_runs_as_written_and_learns(daemon: DaemonProcess) -> None:
    code = harness_snippet()
    assert "slmactor.session(" in code
    run_snippet(daemon, code)
    run_snippet(daemon, code)
    deadline = time.monotonic() + 20
    while len(runs(daemon)) < 2:  # run.finish learns in the background
        assert time.monotonic() < deadline, "both runs recorded"
    recorded = runs(daemon)
    # Reports the daemon built itself: one Bash call that failed, two failures seen.
    assert [(r["tool_calls"], r["tool_errors"], r["failures"]) for r in recorded] == [(1, 1, 2)] * 2
    # The Edit failure: fixed by the model the first time, repaired from memory the second
    # (a run cannot be repaired from memory of nothing, so this is the order they ran in).
    assert sorted((r["resolved_from_memory"], r["resolved_from_llm"]) for r in recorded) == [
        (0, 1), (1, 0)]
    with daemon.client() as c:
        episode = c.ask(EpisodeRecent(n=1))["episodes"][0]
    assert episode["query"] == "fix the flaky upload test" and episode["tools"] == ["bash", "edit"]
