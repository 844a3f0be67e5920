"""`MEMORY.md` after a hundred imported sessions that fail the same way: each lesson once, with
its count — through `slmactor import sessions` of Claude Code transcripts and a real daemon, not
the store alone. The transcripts are written by `tests/fixtures/demo_histories/write.py`'s
Claude Code 2.1.328 writer (its format notes say which fields it follows)."""

from __future__ import annotations

import importlib.util
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from slmactor.testing import DaemonProcess, wait_for
from tests.integration.test_import_sessions import run

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = 100


def _writer() -> Any:
    spec = importlib.util.spec_from_file_location(
        "demo_histories_write", ROOT / "tests" / "fixtures" / "demo_histories" / "write.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _history(root: Path) -> Path:
    w = _writer()
    folder = root / "projects" / "-home-dev-shop"
    folder.mkdir(parents=True)
    start = datetime.now(UTC) - timedelta(days=20)
    for n in range(SESSIONS):
        session = w._id("memory-md", str(n))
        c = w.Claude(session, start + timedelta(hours=3 * n), "Get the tests running.")
        # The interpreter without pytest, then the project's venv: a fix a lesson names.
        w.bash(c, w.WRONG, f"Exit code 1\n{w.NO_PYTEST}", error=True)
        w.bash(c, w.RIGHT, w.PASSED)
        c.end("The tests pass with the project's venv.")
        (folder / f"{session}.jsonl").write_text(
            "".join(json.dumps(line) + "\n" for line in c.lines), encoding="utf-8")
    return root


def test_a_hundred_imported_sessions_with_one_failure_hold_its_lesson_once(
        daemon: DaemonProcess, tmp_path: Path) -> None:
    history = _history(tmp_path / "claude")
    result = run(daemon, str(history), "--project", str(daemon.project))
    assert result["new"] == SESSIONS, result
    memory_md = daemon.project / ".slmcode" / "MEMORY.md"
    # The lessons are written by the pipeline after each run is journalled.
    text = wait_for(lambda: memory_md.exists() and "n=100" in memory_md.read_text()
                    and memory_md.read_text(), "the hundredth lesson counted", timeout=60)
    bullets = [line for line in text.splitlines() if line.startswith("- ")]
    assert bullets, text
    fixed = [line for line in bullets if "pytest" in line]
    assert len(fixed) == 1, bullets
    assert "n=100" in fixed[0] and "fixed by" in fixed[0], fixed
    # Every lesson line once: no signature repeated.
    assert len(bullets) == len(set(bullets)), bullets
