"""`evolve reset --yes` and `memory forget all --yes` against a real daemon: they say what they
removed, part by part, and nothing of it is left — neither the bullets slmactor wrote in
MEMORY.md (the user's own lines and a teammate's stay) nor the working-memory checkpoint.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from slmactor.protocol.messages import RunFinish, RunStart
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly, wait_for
from tests.integration.test_loop import _report

OWN_LINE = "- my own note: run make before committing\n"
# A bullet a teammate's daemon wrote (its signature is under their key, not this user's).
TEAMMATE = "- ⚙ use tabs in Makefiles <!-- slm kind=convention at=2026-01-01T00:00:00Z sig=0123456789abcdef -->\n"


@pytest.fixture()
def daemon() -> Iterator[DaemonProcess]:
    proc = spawn_daemon(env={"SLMACTOR_WORKING_CHECKPOINT_SECONDS": "0.1"})
    try:
        yield proc
    finally:
        stop_quietly(proc)


def _cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", *args],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=60,
    )


def _learn(daemon: DaemonProcess, run_id: str) -> Path:
    """A finished run (episode, facts, a lesson in MEMORY.md, a rule, a check) and a live one
    (in the working-memory checkpoint); the checkpoint's path."""
    with daemon.client(timeout=30) as client:
        client.ask(RunFinish(report={**_report(run_id), "success": True}, wait=True))
        client.ask(RunStart(run_id=f"{run_id}-live", task="still working"))
    checkpoint = daemon.home / "memory" / "working.checkpoint.json"
    wait_for(checkpoint.is_file, "the working-memory checkpoint", timeout=20)
    return checkpoint


def _memory_md(daemon: DaemonProcess) -> Path:
    return daemon.project / ".slmcode" / "MEMORY.md"


def test_reset_says_what_it_removed_and_leaves_none_of_it(daemon: DaemonProcess) -> None:
    checkpoint = _learn(daemon, "rs-1")
    memory_md = _memory_md(daemon)
    assert "strip_line_number_prefix" in memory_md.read_text()
    with memory_md.open("a") as fh:
        fh.write(OWN_LINE + TEAMMATE)

    done = _cli(daemon, "evolve", "reset", "--yes")
    assert done.returncode == 0, done.stderr
    said = done.stdout
    for line in ("regression checks: 1", "learned rules (this project's and your user-wide ones): 1",
                 "policy (user-wide and this project's): 1 key", "working memory: 1 run",
                 "episodes: 1 episode", "lessons: 1 lesson",
                 "MEMORY.md: 1 bullet slmactor wrote"):
        assert line in said, said
    assert "kept: run metrics" in said

    left = memory_md.read_text()
    assert "strip_line_number_prefix" not in left
    assert OWN_LINE in left and TEAMMATE in left
    assert not checkpoint.exists()
    memory = daemon.project / ".slmcode" / "memory"
    assert not any(memory.glob("*")) if memory.exists() else True
    assert not (daemon.project / ".slmcode" / "evolve" / "regressions.json").exists()
    assert not (daemon.home / "evolve" / "policy.json").exists()
    lessons = _cli(daemon, "memory", "lessons").stdout
    assert "strip_line_number_prefix" not in lessons

    again = _cli(daemon, "--json", "evolve", "reset", "--yes")
    reply = json.loads(again.stdout)
    assert reply["regressions"] == 0 and set(reply["memory"]["removed"].values()) == {0}


def test_forget_all_removes_the_checkpoint_and_slmactors_memory_md(daemon: DaemonProcess) -> None:
    checkpoint = _learn(daemon, "fa-1")
    done = _cli(daemon, "--json", "memory", "forget", "all", "--yes")
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["removed"]["working"] == 1 and reply["removed"]["memory_md"] == 1
    assert reply["removed"]["procedural"] >= 1
    assert not checkpoint.exists()
    # MEMORY.md held nothing but slmactor's header and bullet: it is gone.
    assert not _memory_md(daemon).exists()
    assert not (daemon.home / "memory" / "procedures.json").exists()
    text = _cli(daemon, "memory", "forget", "all", "--yes").stdout
    assert text.startswith("forgot all:") and "episodes: 0 episodes" in text
    # No memory file is left, empty or not, in either store: what stays is what the loop learned
    # (`evolve reset` forgets it), the run metrics and the stores' own files — and it says so.
    left = {str(p.relative_to(root)): p.stat().st_size for root in (daemon.project / ".slmcode",
                                                                    daemon.home)
            for p in root.rglob("*") if p.is_file()}
    kept = {".lock", ".gitignore", ".memory-key", "evolve/rules.json", "evolve/regressions.json",
            "evolve/policy.json", "metrics/runs.jsonl"}
    assert {f for f in left if f not in kept and not f.startswith("evolve/pending-projects/")} == set(), left
    assert [f for f, size in left.items() if size == 0 and f != ".lock"] == [], left
    said = text.splitlines()[-1]
    for part in ("learned rules", "regression checks", "policy", "evolve reset", "run metrics"):
        assert part in said, said
