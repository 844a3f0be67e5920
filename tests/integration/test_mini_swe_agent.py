"""mini-swe-agent (from PyPI) with `MemoryAgent`, driven by its own `DeterministicModel`, against a
real daemon and a real temporary repository: two runs of the same task.

Run 1 meets a failing check, fixes the code, re-runs the check and submits. Run 2 starts with the
memory block in its prompt, and the same failure comes back with the remembered fix appended to
the observation the model reads.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from slmactor.protocol.messages import EpisodeRecent, EvolveRules, MetricsCompare, MetricsShow
from slmactor.testing import DaemonProcess, wait_for
from tests.fixtures.calc_repo import BUGGY, FIX, make_calc_repo

pytest.importorskip("minisweagent", reason="mini-swe-agent is not installed")

from minisweagent.config import builtin_config_dir
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.test_models import DeterministicModel, make_output

from slmactor.harnesses.mini_swe_agent.agent import MemoryAgent

TASK = "add() returns the wrong sum; make check.py pass"


def _agent_config() -> dict[str, Any]:
    import yaml

    config = yaml.safe_load((builtin_config_dir / "mini_textbased.yaml").read_text())["agent"]
    return {**config, "step_limit": 10, "cost_limit": 0}



def _model() -> DeterministicModel:
    steps = ["python3 check.py", FIX, "python3 check.py", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]
    return DeterministicModel(outputs=[
        make_output(f"THOUGHT: step {i}\n\n```mswea_bash_command\n{cmd}\n```", [{"command": cmd}])
        for i, cmd in enumerate(steps)
    ])


def _env(repo: Path) -> LocalEnvironment:
    # An edit within the same second that keeps the file's size would reuse stale bytecode.
    return LocalEnvironment(cwd=str(repo), env={"PYTHONDONTWRITEBYTECODE": "1"})


def _run(daemon: DaemonProcess, repo: Path) -> MemoryAgent:
    agent = MemoryAgent(_model(), _env(repo), project=repo,
                        runtime_dir=daemon.runtime_dir, language="python", **_agent_config())
    result = agent.run(TASK)
    assert result["exit_status"] == "Submitted"
    return agent


def test_two_runs_the_second_starts_from_memory_and_gets_the_remembered_fix(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    repo = make_calc_repo(tmp_path)
    first = _run(daemon, repo)
    assert "return a + b" in (repo / "calc.py").read_text()
    with daemon.client(project=repo) as client:
        wait_for(lambda: len(client.ask(EpisodeRecent(n=5))["episodes"]) == 1, "run 1's episode")
        wait_for(lambda: any(not r.get("seeded") for r in
                              client.ask(EvolveRules(include_all=True))["rules"]),
                  "a rule learned from run 1")

    (repo / "calc.py").write_text(BUGGY)  # the same bug again
    second = _run(daemon, repo)

    first_prompt, second_prompt = first.messages[1]["content"], second.messages[1]["content"]
    assert TASK in second_prompt and "check.py" in second_prompt
    assert len(second_prompt) > len(first_prompt)  # the block of run 1's memory was added
    observations = [m["content"] for m in second.messages if m.get("role") == "user"][1:]
    failed_check = observations[0]
    assert "should be 5" in failed_check
    assert "[slmactor]" in failed_check and FIX in failed_check
    assert not any("[slmactor]" in m["content"] for m in first.messages
                   if m.get("role") == "user")

    with daemon.client(project=repo) as client:
        wait_for(lambda: len(client.ask(EpisodeRecent(n=5))["episodes"]) == 2, "both episodes")
        wait_for(lambda: len(client.ask(MetricsShow(last=10))["runs"]) == 2, "both runs' metrics")
        compared = client.ask(MetricsCompare(n=1))
    assert compared.get("enough_runs", True) is not False and "text" in compared
    shown = subprocess.run(
        [sys.executable, "-m", "slmactor", "memory", "episodes", "--json",
         "--runtime-dir", str(daemon.runtime_dir), "--project", str(repo)],
        capture_output=True, text=True, env=daemon.env or None, check=True)
    assert shown.stdout.count(TASK) >= 2


def test_a_daemon_that_is_down_leaves_the_agent_working(tmp_path: Path) -> None:
    repo = make_calc_repo(tmp_path)
    agent = MemoryAgent(_model(), _env(repo), project=repo,
                        runtime_dir=tmp_path / "no-daemon", **_agent_config())
    assert agent.run(TASK)["exit_status"] == "Submitted"
    assert agent.memory is None
    assert "return a + b" in (repo / "calc.py").read_text()
