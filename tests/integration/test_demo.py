"""`slmactor demo` on a clean machine: real harness formats imported and replayed, memory helps
and never rewrites wrongly, nothing left behind. (Each claim it prints is checked
against the histories in tests/cli/test_demo_histories.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from slmactor.testing import slack


def _env(tmp_path: Path) -> dict[str, str]:
    # No configuration at all: an empty home, no runtime dir, nothing of ours to find.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLMACTOR_", "XDG_"))}
    env["HOME"] = str(tmp_path / "home")
    (tmp_path / "home").mkdir()
    return env


def test_demo_replays_three_harnesses_histories_and_cleans_up(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "slmactor", "demo"], check=False,
                          env=_env(tmp_path), cwd=tmp_path, capture_output=True, text=True,
                          timeout=slack(60))  # a demo that hangs fails; its time is no claim here
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    for harness in ("Claude Code", "Codex CLI", "Gemini CLI"):
        assert harness in out
    assert "Imported into the private daemon (`slmactor import sessions`): 4 sessions" in out
    assert "memory: rewritten before it ran → `.venv/bin/python -m pytest -q`  ✓" in out
    assert "memory: rewritten before it ran → `npm run dev` (run_in_background: true)  ✓" in out
    verdict = [line for line in out.splitlines() if line.startswith("Verdict: ")][-1]
    assert verdict.startswith("Verdict: memory would have helped") and " 0 wrong rewrite(s)" in verdict
    # Its private workspace (named in the first line) is gone. Other demos may run meanwhile,
    # so check this run's own directory rather than a glob of /tmp.
    project = Path(out.splitlines()[0].rsplit("project ", 1)[1].strip())
    assert project.name == "project" and project.parent.name.startswith("slmactor-demo-")
    assert not project.parent.exists()  # cleaned up
    assert not (tmp_path / "home" / ".slmcode").exists()  # the user's store was never touched


def test_demo_keep_leaves_the_imported_project_for_the_daemon(tmp_path: Path) -> None:
    import shutil

    from slmactor.protocol.messages import EpisodeRecent
    from slmactor.testing import spawn_daemon, stop_quietly

    done = subprocess.run([sys.executable, "-m", "slmactor", "--json", "demo", "--keep"],
                          check=False, env=_env(tmp_path), cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    demo = json.loads(done.stdout)
    assert demo["replay"]["harnesses"]["all"]["wrong_rewrites"] == 0
    assert {s["harness"] for s in demo["sessions"]} == {"claude", "codex", "gemini"}
    home, project = Path(demo["home"]), Path(demo["project"])
    daemon = spawn_daemon(home=home, project=project)
    try:
        with daemon.client() as client:
            # The four sessions the demo imported are the project's memory now.
            assert client.ask(EpisodeRecent(n=0, ids_only=True))["total"] == 4
    finally:
        stop_quietly(daemon)
        shutil.rmtree(project.parent, ignore_errors=True)
