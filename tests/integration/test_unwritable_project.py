"""A project whose store cannot be written — `.slmcode` is a regular file, or the project is
read-only — follows one rule for every store (docs/DURABILITY.md, SPEC S-7.1): each write is
refused with STORE_ERROR naming the path, nothing is acknowledged from memory; reads never
fail and find nothing stored; `status` is degraded with the project named, and its warnings name the project too."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from slmactor.client import RequestFailed
from slmactor.protocol import ErrorCode
from slmactor.protocol.messages import (
    BudgetsRecord,
    EpisodeAppend,
    EpisodeRecent,
    EvolveLearn,
    FactList,
    FactObserve,
    LessonAdd,
    LessonsImport,
    MemoryRecall,
    MetricsRecord,
    PolicyUpdate,
    RunFinish,
)
from slmactor.testing import DaemonProcess

CANDIDATE = {"fingerprint": "fp_0123456789ab", "class": "timeout", "tool": "bash",
             "repair": {"kind": "action", "action": "backoff_retry", "guidance": "Wait, retry."}}
WRITES: list[Any] = [
    FactObserve(kind="gotcha", subject="tz", text="tests need TZ=UTC"),
    EpisodeAppend(episode={"query": "fix the parser bug", "success": True}),
    LessonAdd(lessons=[{"kind": "convention", "text": "Run make lint first"}]),
    EvolveLearn(candidates=[CANDIDATE]),
    PolicyUpdate(decision="edit_format", arm="diff", outcome={"success": True},
                 scope="project"),
    RunFinish(report={"run_id": "r1", "query": "q", "planned_tasks": 1, "completed_tasks": 1},
              wait=True),
    MetricsRecord(run={"run_id": "r2", "success": True}),
    LessonsImport(lines=[json.dumps({"ts": 1.0, "type": "error_pattern", "trigger": "when x",
                                     "fix": "do y"})]),
    BudgetsRecord(phase="build", tags=["python"], task="t"),
]


def _refused(daemon: DaemonProcess, blocked: Path) -> dict[str, Any]:
    """Every write is refused naming `blocked` (or a path under it); status is returned."""
    with daemon.client(timeout=30) as client:
        for message in WRITES:
            with pytest.raises(RequestFailed) as caught:
                client.ask(message)
            assert caught.value.code == ErrorCode.STORE_ERROR, (message.KIND, caught.value)
            assert str(blocked) in str(caught.value), (message.KIND, str(caught.value))
        # Reads never fail; nothing refused was stored (a refused fact stays pending for the
        # retry loop, so this daemon may still list it until it is dropped or written).
        assert client.ask(EpisodeRecent(n=5))["total"] == 0
        assert isinstance(client.ask(FactList())["facts"], list)
        assert client.ask(MemoryRecall(query="parser bug"))["hits"] == []
        status: dict[str, Any] = client.status()
    return status


def _named(status: dict[str, Any], project: Path) -> None:
    assert status["health"] == "degraded"
    assert any(f["project"] == str(project) for f in status["store_faults"]), status["store_faults"]
    about = [w for w in status["warnings"] if w.get("project")]
    assert about and all(w["project"] == str(project) for w in about)


def test_slmcode_as_a_file_refuses_every_write(daemon: DaemonProcess) -> None:
    blocker = daemon.project / ".slmcode"
    blocker.write_text("a file where the store directory should be\n")
    status = _refused(daemon, blocker)
    _named(status, daemon.project)
    assert blocker.read_text().startswith("a file")
    shown = subprocess.run(
        [sys.executable, "-m", "slmactor", "status", "--runtime-dir", str(daemon.runtime_dir)],
        capture_output=True, text=True, env=daemon.env, timeout=60, check=False)
    assert shown.returncode == 150, shown.stderr  # degraded
    assert f"store fault (project {daemon.project}): " in shown.stdout
    assert any(line.startswith("warning [") and f"(project {daemon.project}): " in line
               for line in shown.stdout.splitlines()), shown.stdout


@pytest.fixture
def immutable(daemon: DaemonProcess) -> Iterator[Path]:
    """The project directory made immutable (`chattr +i`): read-only even for root."""
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not available")
    made = subprocess.run(["chattr", "+i", str(daemon.project)], capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"this file system cannot make a directory immutable: {made.stderr!r}")
    try:
        yield daemon.project
    finally:
        subprocess.run(["chattr", "-i", str(daemon.project)], check=False)


def test_a_read_only_project_degrades_status_naming_it(daemon: DaemonProcess,
                                                       immutable: Path) -> None:
    status = _refused(daemon, immutable / ".slmcode")
    _named(status, immutable)
    assert json.dumps(status).count(str(immutable)) >= 2
