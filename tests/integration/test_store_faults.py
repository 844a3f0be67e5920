"""Acknowledged = durable, against a real daemon.

Disk full: the project lives on a 2 MiB tmpfs that the test fills to the last byte. Every ask
that stores is either acknowledged — and then its record is on disk afterwards — or answered
STORE_ERROR (never INTERNAL, never a silent "accepted"); `status` is degraded while the disk is
full and names the directory and the reason; once space returns, what failed is written by the
daemon's own retries and `status` is healthy again.

SIGKILL under load: facts and finished runs acknowledged before the kill are all on disk (the
runs' pipelines replayed from their journals) after a restart.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from slmactor.client import DaemonUnavailable, RequestFailed
from slmactor.protocol import ErrorCode
from slmactor.protocol.messages import (
    FactObserve,
    LessonAdd,
    PolicyUpdate,
    ProcedureObserve,
    RunFinish,
)
from slmactor.testing import DaemonProcess, _short_tempdir, spawn_daemon, stop_quietly
from tests.integration.test_runtime import wait_for


@pytest.fixture
def small_disk() -> Iterator[Path]:
    """A 2 MiB tmpfs (root only); skipped where it cannot be mounted."""
    base = _short_tempdir()
    disk = base / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(disk)],
        capture_output=True, check=False,
    )  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
        subprocess.run(["rm", "-rf", str(base)], check=False)


def fill(disk: Path) -> Path:
    """Write a file until the file system has not one byte left; the file."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for chunk in (1 << 16, 1 << 12, 1):
            while True:
                try:
                    os.write(fd, b"\0" * chunk)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)
    return filler


def _report(run_id: str) -> dict[str, Any]:
    return {
        "run_id": run_id, "query": f"task of {run_id}", "language": "python",
        "planned_tasks": 1, "completed_tasks": 1, "files_changed": ["a.py"],
        "model": "qwen2.5-coder:7b",
        "decisions": [{"decision": "edit_format", "arm": "whole",
                       "outcome": {"applied": True, "gate_passed": True}}],
    }  # fmt: skip


def _facts(project: Path) -> set[str]:
    path = project / ".slmcode" / "memory" / "facts.json"
    return {f["subject"] for f in json.loads(path.read_text())["facts"]} if path.exists() else set()


def _runs(project: Path, name: str) -> set[str]:
    path = project / ".slmcode" / name
    if not path.exists():
        return set()
    return {json.loads(line).get("run_id", "") for line in path.read_text().splitlines() if line}


def test_disk_full_every_ack_is_stored_every_loss_is_an_error(small_disk: Path) -> None:
    project = small_disk / "project"
    home = small_disk / "home"  # the user store fills up too
    daemon = spawn_daemon(project=project, home=home)
    acked: dict[str, set[str]] = {k: set() for k in ("fact", "run", "policy", "procedure",
                                                     "lesson")}  # fmt: skip
    acked_facts, acked_runs = acked["fact"], acked["run"]
    refused: list[str] = []

    def attempt(kind: str, name: str, ask: Callable[[], Any]) -> None:
        try:
            ask()
        except RequestFailed as exc:
            assert exc.code == ErrorCode.STORE_ERROR, exc  # never INTERNAL, never BAD_*
            refused.append(f"{kind} {name}")
            return
        acked[kind].add(name)

    try:
        with daemon.client(timeout=30) as client:
            attempt("fact", "warm", lambda: client.ask(
                FactObserve(kind="convention", subject="warm", text="before the disk fills")))
            attempt("run", "warm-run", lambda: client.ask(
                RunFinish(report=_report("warm-run"), wait=True)))
            assert client.status()["health"] == "healthy"
            filler = fill(small_disk)
            for i in range(20):
                subject = f"full-{i}"
                attempt("fact", subject, lambda s=subject: client.ask(
                    FactObserve(kind="convention", subject=s, text="written on a full disk")))
                run = f"full-run-{i}"
                attempt("run", run, lambda r=run: client.ask(RunFinish(report=_report(r))))
                arm = f"arm-{i}"
                attempt("policy", arm, lambda a=arm: client.ask(PolicyUpdate(
                    decision="edit_format", arm=a, outcome={"applied": True})))
                option = f"option-{i}"
                attempt("procedure", option, lambda o=option: client.ask(ProcedureObserve(
                    topic="db", option=o, ok=True)))
                lesson = f"lesson number {i} from a full disk"
                attempt("lesson", lesson, lambda t=lesson: client.ask(LessonAdd(
                    lessons=[{"kind": "convention", "text": t}])))
            status = client.status()
            assert status["health"] == "degraded"
            faults = status["store_faults"]
            assert faults and all("ENOSPC" in f["reason"] for f in faults), faults
            assert any(f["dir"].startswith(str(project)) for f in faults)
            # The disk really was full for every kind of ask (measured: all 100 refused).
            assert {r.split()[0] for r in refused} == set(acked)
            filler.unlink()  # space returns
            attempt("fact", "after", lambda: client.ask(
                FactObserve(kind="convention", subject="after", text="space is back")))
            wait_for(lambda: client.status()["health"] == "healthy", "a healthy status", 30)
            pending = project / ".slmcode" / "evolve" / "pending"
            # Each poll is a status round trip, then a look at the journals the retries empty.
            wait_for(lambda: client.status() and not any(pending.glob("fin_*.json")),
                     "the kept journals to be replayed", 30)  # fmt: skip
        assert daemon.stop() == 0
        # Every acknowledged record is on disk.
        assert acked_facts <= _facts(project)
        assert acked_runs <= _runs(project, "memory/episodes.jsonl")
        assert acked_runs <= _runs(project, "metrics/runs.jsonl")
        policy = (home / "evolve" / "policy.json").read_text()
        assert all(f'"{arm}"' in policy for arm in acked["policy"])
        procedures = (home / "memory" / "procedures.json").read_text()
        assert all(f'"{option}"' in procedures for option in acked["procedure"])
        memory_md = (project / ".slmcode" / "MEMORY.md").read_text()
        assert all(lesson in memory_md for lesson in acked["lesson"])
        # Failed facts, arms and options stayed in memory and were written once space
        # returned (the retries).
        assert {f"full-{i}" for i in range(20)} <= _facts(project)
        assert all(f'"arm-{i}"' in policy for i in range(20))
        assert all(f'"option-{i}"' in procedures for i in range(20))
    finally:
        stop_quietly(daemon)


def test_sigkill_under_load_loses_no_acknowledged_fact_or_run(daemon: DaemonProcess) -> None:
    acked_facts: list[str] = []
    acked_runs: list[str] = []
    go = threading.Event()

    def load() -> None:
        with daemon.client(timeout=5, retries=1) as client:
            for i in range(150):
                if i == 40:
                    go.set()
                try:
                    if i % 5 == 4:
                        client.ask(RunFinish(report=_report(f"kill-run-{i}")))
                        acked_runs.append(f"kill-run-{i}")
                    else:
                        client.ask(FactObserve(kind="convention", subject=f"kill-{i}", text="x"))
                        acked_facts.append(f"kill-{i}")
                except (RequestFailed, DaemonUnavailable):
                    return

    worker = threading.Thread(target=load)
    worker.start()
    go.wait(30)
    daemon.proc.kill()  # SIGKILL, mid-stream
    daemon.proc.wait()
    worker.join(60)
    assert len(acked_facts) >= 30
    restarted = spawn_daemon(base=daemon.base / "again", runtime_dir=daemon.runtime_dir,
                             home=daemon.home, project=daemon.project)  # fmt: skip
    try:
        with restarted.client(timeout=30) as client:
            # The reflector replays the journals of a project when it next serves it.
            client.ask(RunFinish(report=_report("after-restart"), wait=True))
            pending = daemon.project / ".slmcode" / "evolve" / "pending"
            wait_for(lambda: client.status() and not any(pending.glob("fin_*.json")),
                     "the interrupted pipelines to be replayed", 30)  # fmt: skip
        assert restarted.stop() == 0
    finally:
        with contextlib.suppress(Exception):
            stop_quietly(restarted)
    assert set(acked_facts) <= _facts(daemon.project)
    assert set(acked_runs) <= _runs(daemon.project, "memory/episodes.jsonl")
