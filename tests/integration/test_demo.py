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


def test_the_report_and_compare_give_the_demos_verdict_for_its_runs(tmp_path: Path) -> None:
    import shutil

    from slmactor.testing import spawn_daemon, stop_quietly

    done = subprocess.run([sys.executable, "-m", "slmactor", "--json", "demo", "--keep"],
                          check=False, env=_env(tmp_path), cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    demo = json.loads(done.stdout)
    home, project = Path(demo["home"]), Path(demo["project"])
    daemon = spawn_daemon(home=home, project=project)
    try:
        def cli(*args: str) -> dict[str, object]:
            out = subprocess.run([sys.executable, "-m", "slmactor", "--json", "--no-autostart",
                                  "--runtime-dir", str(daemon.runtime_dir), "--project", str(project),
                                  *args], check=False, env=daemon.env, capture_output=True,
                                 text=True, timeout=60)
            assert out.returncode == 0, out.stderr
            parsed: dict[str, object] = json.loads(out.stdout)
            return parsed

        page = tmp_path / "report.html"
        report = cli("metrics", "report", "--html", str(page))
        compared = cli("metrics", "compare")
        # The same runs (the two passes), the same verdict, and each says which runs it compares.
        assert report["verdict"] == compared["verdict"] == demo["verdict"] == "improved"
        assert report["compared"] == compared["compared"]
        assert "`pass-1`" in str(report["compared"]) and "`pass-2`" in str(report["compared"])
        html = page.read_text()
        assert "Verdict: improved." in html and "Compares runs labelled <code>" not in html
        assert "pass-1" in html and "pass-2" in html
    finally:
        stop_quietly(daemon)
        shutil.rmtree(project.parent, ignore_errors=True)
