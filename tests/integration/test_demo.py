"""`slmactor demo` on a clean machine: improves, repairs from memory, never wrongly, < 30 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def _env(tmp_path: Path) -> dict[str, str]:
    # No configuration at all: an empty home, no runtime dir, nothing of ours to find.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLMACTOR_", "XDG_"))}
    env["HOME"] = str(tmp_path / "home")
    (tmp_path / "home").mkdir()
    return env


def test_demo_prints_an_improved_verdict_and_cleans_up(tmp_path: Path) -> None:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "slmactor", "demo"], check=False,
                          env=_env(tmp_path), cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    seconds = time.monotonic() - start
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "**Verdict: improved.**" in out
    assert "| failures fixed from memory |" in out
    assert "$ slmactor evolve why edit_format" in out
    assert "The memory block a worker now receives:" in out
    summary = [line for line in out.splitlines() if line.startswith("Pass 2: ")][-1]
    fixed = int(summary.split()[2])
    assert fixed > 0 and " 0 wrong repair(s)" in summary
    assert seconds < 30, f"demo took {seconds:.1f}s"
    # Its private workspace (named in the first line) is gone. Other demos may run meanwhile,
    # so check this run's own directory rather than a glob of /tmp.
    project = Path(out.splitlines()[0].rsplit("project ", 1)[1].strip())
    assert project.name == "project" and project.parent.name.startswith("slmactor-demo-")
    assert not project.parent.exists()  # cleaned up
    assert not (tmp_path / "home" / ".slmcode").exists()  # the user's store was never touched


def test_demo_json(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "slmactor", "--json", "demo"], check=False,
                          env=_env(tmp_path), cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["verdict"] == "improved"
    assert data["pass_2"]["fixed_from_memory"] > 0
    assert data["pass_1"]["wrong_repairs"] == data["pass_2"]["wrong_repairs"] == 0
    assert data["learned_rules"]
    # the runs' lessons reach the block, each fix said once (as a convention or a lesson)
    block = data["memory_block"]
    for fix in ("set_replace_all", "unfence_code", "trim_trailing_whitespace"):
        assert block.count(fix) == 1, block
    # and nothing that names who fixed it instead of what the fix was
    assert "rule:rule_" not in block and "fix: llm" not in block
    # A don't says what to do instead: the demo's failures that nothing fixed leave no
    # content-free NEVER ("repeat what led to: … stayed unresolved").
    nevers = [line for line in block.splitlines() if line.startswith("- NEVER: ")]
    assert all("(Reason: instead: " in line for line in nevers), nevers
    assert "stayed unresolved" not in block
