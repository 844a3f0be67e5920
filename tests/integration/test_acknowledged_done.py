"""Acknowledged means done (issue 42): once `run.finish` with `wait: true` has answered, nothing
more is written for that run — so `rm -rf .slmcode` right after it succeeds every time (no file
is being written into the directory while it goes) and nothing comes back: not the episode
index, not the distilled facts, not a Markdown mirror — however long the daemon's timers run on.
And `memory forget all` leaves no memory file behind, in the project or in the user store (what
is not memory stays: the store's lock and .gitignore, the learned repair rules — `evolve reset`
forgets those — and the run metrics)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from slmactor.client import Client
from slmactor.protocol.messages import FactObserve, MemoryForget, RunFinish
from slmactor.testing import DaemonProcess, actor_row, wait_for

RUNS = 50


def _report(i: int) -> dict[str, Any]:
    return {"run_id": f"run-{i}", "query": f"fix the flaky parser test number {i}",
            "summary": "the tokenizer dropped the last token", "planned_tasks": 1,
            "completed_tasks": 1, "files_changed": ["src/parser.py", "tests/test_parser.py"],
            "tools_used": ["bash", "edit"], "language": "python",
            "commands": [{"cmd": "pytest -q tests/test_parser.py", "ok": True}],
            "failures": [{"tool": "bash", "message": "ModuleNotFoundError: No module named 'lark'",
                          "resolved_by": "llm", "resolution": "pip install lark",
                          "failed_args": '{"command": "pytest -q"}',
                          "fixed_args": '{"command": "pip install lark && pytest -q"}'}]}


def _ticks(client: Client) -> tuple[int, int]:
    return (int(actor_row(client, "recall")["extra"]["flush_ticks"]),
            int(actor_row(client, "reflector")["extra"]["distill_ticks"]))


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir()) \
        if root.exists() else []


def test_rm_rf_right_after_a_finished_run_is_a_fresh_start(daemon: DaemonProcess) -> None:
    store = daemon.project / ".slmcode"
    with daemon.client(timeout=60) as client:
        for i in range(RUNS):
            assert not store.exists(), f"run {i}: {_files(store)} came back"
            client.ask(FactObserve(kind="command", subject="tests", text="pytest -q runs them"))
            finished = client.ask(RunFinish(report=_report(i), wait=True))
            assert finished["accepted"], finished
            shutil.rmtree(store)  # raises if a file is written into it meanwhile
        seen = _ticks(client)
        # Every timer that could write has run at least twice since the last removal.
        wait_for(lambda: all(now >= then + 2 for now, then in zip(_ticks(client), seen,
                                                                  strict=True)),
                 "two recall flush ticks and two distill ticks", timeout=60)
    assert _files(store) == [] and not store.exists()


def test_forget_all_leaves_no_file(daemon: DaemonProcess) -> None:
    with daemon.client(timeout=60) as client:
        client.run_start("run-forget", task="write the release notes")
        client.record_tool("run-forget", "bash", command="git log --oneline", ok=True)
        client.ask(RunFinish(report=_report(99), wait=True))
        client.ask(MemoryForget(scope="all", run_id="run-forget"))
        seen = _ticks(client)
        wait_for(lambda: all(now >= then + 1 for now, then in zip(_ticks(client), seen,
                                                                  strict=True)),
                 "a flush tick and a distill tick", timeout=60)
    kept = {".lock", ".gitignore", "evolve/rules.json", "metrics/runs.jsonl"}
    left = _files(daemon.project / ".slmcode")
    assert set(left) <= kept, left
    assert [f for f in _files(daemon.home) if f.startswith("memory/")] == []
