"""Polar lessons through the real daemon: the asks, outcome feedback at run.finish, the memory
block, phase budgets, and concurrent writers (H-C-1)."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from slmactor.client import RequestFailed
from slmactor.protocol import ErrorCode
from slmactor.protocol.messages import (
    BudgetsCompute,
    BudgetsRecord,
    LessonsBoost,
    LessonsFormat,
    LessonsImport,
    LessonsMeta,
    LessonsParseReflection,
    LessonsPenalize,
    LessonsRecall,
    MemoryBlock,
    MemoryForget,
    RunFinish,
)
from slmactor.stores.base.layout import ProjectLayout
from slmactor.testing import DaemonProcess

FLASK_TASK = "Build a Python Flask REST API"
REFLECTION = """- ARCHITECTURE | Flask app factory with blueprints | register blueprints in create_app
- ANTI | f-string SQL with user input | SQL injection, use parameterized queries
- ERROR_PATTERN | cargo build fails on borrowed config | clone the config into the thread
NONE"""
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def stored(daemon: DaemonProcess) -> list[dict[str, Any]]:
    path = ProjectLayout(daemon.project).lessons
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_reflection_recall_format_boost_penalize(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        parsed = client.ask(LessonsParseReflection(text=REFLECTION, source_task=FLASK_TASK))
        assert (parsed["added"], parsed["merged"]) == (3, 0)
        assert [le["polarity"] for le in parsed["lessons"]] == ["do", "dont", "do"]
        assert parsed["lessons"][0]["confidence"] == 0.3
        again = client.ask(LessonsParseReflection(text=REFLECTION, source_task=FLASK_TASK))
        assert (again["added"], again["merged"]) == (0, 3)  # deduplicated
        dry = client.ask(LessonsParseReflection(text="TOOL_PATTERN | x y | z", save=False))
        assert dry["added"] == 0 and len(dry["lessons"]) == 1

        recalled = client.ask(LessonsRecall(task=FLASK_TASK))
        assert recalled["task_tags"] == ["build", "flask", "python"]
        triggers = [le["trigger"] for le in recalled["lessons"]]
        assert "cargo build fails on borrowed config" not in triggers  # tagged rust: filtered
        assert triggers[0] == "Flask app factory with blueprints"

        text = client.ask(LessonsFormat(task=FLASK_TASK))["text"]
        assert "- NEVER: f-string SQL with user input (Reason: SQL injection" in text
        assert text.index("apply these") < text.index("NEVER do these")
        given = client.ask(LessonsFormat(lessons=[
            {"type": "dependency", "trigger": "t", "fix": "f", "polarity": "dont"}, {"bad": 1}]))
        assert given == {"text": "\n## Anti-patterns from past builds (NEVER do these):\n"
                                 "- NEVER: t (Reason: f)", "lessons": 1, "dont": 1}

        boosted = client.ask(LessonsBoost(triggers=["FLASK APP FACTORY WITH BLUEPRINTS"]))
        assert boosted["boosted"] == ["Flask app factory with blueprints"]
        penalized = client.ask(LessonsPenalize(
            triggers=["f-string SQL with user input"],
            error_text="sqlite3.OperationalError near user: f-string sql built from input"))
        assert penalized["penalized"] == ["f-string SQL with user input"]
    rows = {row["trigger"]: row for row in stored(daemon)}
    assert rows["Flask app factory with blueprints"]["confidence"] == pytest.approx(0.4)
    assert rows["Flask app factory with blueprints"]["used"] == 1
    assert rows["f-string SQL with user input"]["confidence"] == pytest.approx(0.2)


def _report(run_id: str, ok: bool, failure: str = "") -> dict[str, Any]:
    report: dict[str, Any] = {
        "run_id": run_id, "query": FLASK_TASK, "language": "python", "model": "qwen3-coder",
        "planned_tasks": 1, "completed_tasks": 1 if ok else 0,
        "files_changed": ["app/__init__.py"], "tool_calls": 3,
    }
    if failure:
        report["failures"] = [{"tool": "bash", "message": failure, "resolved_by": "llm"}]
    return report


def test_run_finish_boosts_shown_lessons_of_a_passing_run_and_penalizes_backfired_ones(
        daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        client.ask(LessonsParseReflection(text=REFLECTION, source_task=FLASK_TASK))
        block = client.ask(MemoryBlock(role="worker", query=FLASK_TASK, run_id="run-ok"))
        assert "Flask app factory with blueprints" in block["text"]
        assert "NEVER: f-string SQL with user input" in block["text"]
        # the run passed, but hit an error matching the anti-pattern's trigger words
        finish = client.ask(RunFinish(report=_report(
            "run-ok", True, "f-string SQL with user input broke the query"), wait=True))
        steps = finish["pipeline"]
        assert steps["lessons.penalize"]["ok"] and steps["lessons.boost"]["ok"]
        assert client.ask(LessonsBoost(run_id="run-ok"))["boosted"] == []  # once per run
        shown = client.ask(LessonsRecall(task=FLASK_TASK, run_id="run-bad"))["lessons"]
        assert shown
        client.ask(RunFinish(report=_report("run-bad", False), wait=True))
    rows = {row["trigger"]: row for row in stored(daemon)}
    factory = rows["Flask app factory with blueprints"]
    assert (factory["confidence"], factory["used"]) == (pytest.approx(0.4), 1)
    sql = rows["f-string SQL with user input"]
    assert (sql["confidence"], sql["used"]) == (pytest.approx(0.2), 0)  # penalized, not boosted
    # the failed run without errors changed nothing; the Rust lesson was never shown
    assert rows["cargo build fails on borrowed config"]["used"] == 0


def test_the_memory_block_keeps_lessons_within_its_budget(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        empty = client.ask(MemoryBlock(role="worker", query=FLASK_TASK))
        assert "NEVER" not in empty["text"]
        many = "\n".join(f"ANTI | never do thing number {i} in flask views | reason {i}"
                         for i in range(40))
        client.ask(LessonsParseReflection(text=many))
        for budget in (60, 120, 400):
            block = client.ask(MemoryBlock(role="worker", query=FLASK_TASK, budget=budget))
            assert block["tokens"] <= budget
            for line in block["text"].splitlines():
                if "NEVER:" in line:
                    assert line.endswith(")")  # whole lines only
        assert "NEVER: never do thing" in client.ask(
            MemoryBlock(role="worker", query=FLASK_TASK, budget=400))["text"]


def test_secrets_never_reach_the_file_or_a_prompt(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        reply = client.ask(LessonsParseReflection(
            text=f"DEPENDENCY | token {SECRET} rejected by the registry | rotate {SECRET}"))
        assert SECRET not in json.dumps(reply)
        client.ask(LessonsBoost(triggers=[reply["lessons"][0]["trigger"]]))
        assert SECRET not in client.ask(LessonsFormat(task="registry token"))["text"]
    assert SECRET not in ProjectLayout(daemon.project).lessons.read_text()


def test_secrets_sent_through_every_lesson_and_budget_ask_never_reach_a_file(
        daemon: DaemonProcess) -> None:
    line = json.dumps({"trigger": f"npm login with {SECRET}", "fix": f"use {SECRET}",
                       "source_task": f"publish with {SECRET}", "tags": ["node"]})
    with daemon.client() as client:
        client.ask(LessonsImport(lines=[line]))
        client.ask(LessonsMeta(weakness_id=SECRET, target_file="a.py", delta=0.5,
                               reason=f"token {SECRET} rotated"))
        client.ask(BudgetsRecord(phase=f"deploy {SECRET}", rounds=3, task="a flask app"))
        client.ask(LessonsPenalize(triggers=[f"npm login with {SECRET}"],
                                   error_text=f"npm login with {SECRET} failed"))
        recalled = client.ask(LessonsRecall(task=f"npm {SECRET}"))
        assert recalled["lessons"] and SECRET not in json.dumps(recalled)
    store = ProjectLayout(daemon.project).memory_dir
    for path in store.iterdir():
        assert SECRET not in path.read_text(errors="replace"), path.name


def test_import_meta_and_bad_requests(daemon: DaemonProcess) -> None:
    good = json.dumps({"ts": 1.0, "type": "performance", "trigger": "slow list scan in hot loop",
                       "fix": "use a set", "confidence": 0.9, "used": 4, "polarity": "do",
                       "tags": ["python"], "source_task": "speed up", "extra": True})
    with daemon.client() as client:
        result = client.ask(LessonsImport(lines=[good, "{broken", "", good]))
        assert result == {"read": 4, "bad": 1, "added": 1, "merged": 1, "total": 1}
        assert client.ask(LessonsMeta(weakness_id="W1", target_file="a.py", delta=0.01))[
            "recorded"] is False
        meta = client.ask(LessonsMeta(weakness_id="W1", target_file="a.py", delta=0.2,
                                      iteration=3, commit="abc", reason="fewer retries"))
        assert meta["recorded"] and meta["added"] == 1
        with pytest.raises(RequestFailed) as err:
            client.ask(LessonsRecall(task="x", limit=-1))
        assert err.value.code == ErrorCode.BAD_FIELD
        forgot = client.ask(MemoryForget(scope="project"))
        assert "lessons" in forgot["forgotten"]
        assert client.ask(LessonsRecall(task="x"))["lessons"] == []


def test_phase_budgets(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        for rounds in (40, 44, 45):
            client.ask(BudgetsRecord(phase="BUILD", rounds=rounds, n_files=6,
                                     task="Build a pygame tetris game in Python"))
        pygame = client.ask(BudgetsCompute(task="Build a pygame platformer"))
        assert pygame["budgets"]["build"] == 54 and pygame["history"]["build"]["count"] == 3
        typescript = client.ask(BudgetsCompute(task="Build a TypeScript CLI"))
        assert typescript["budgets"]["build"] == 30 and typescript["history"] == {}
        custom = client.ask(BudgetsCompute(tags=["pygame"], defaults={"build": 100}))
        assert custom["budgets"] == {"build": 100}
        for bad in (BudgetsRecord(phase="", rounds=1), BudgetsRecord(phase="x", rounds=-1),
                    BudgetsCompute(defaults={"build": "many"})):
            with pytest.raises(RequestFailed) as err:
                client.ask(bad)
            assert err.value.code == ErrorCode.BAD_FIELD
    rows = ProjectLayout(daemon.project).phase_budgets.read_text().splitlines()
    assert json.loads(rows[0])["tags"] == ["build", "pygame", "python"]


def test_concurrent_writers_lose_nothing(daemon: DaemonProcess) -> None:
    # H-C-1: concurrent builds lost or interleaved lines; here one actor writes them all.
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            with daemon.client() as client:
                for i in range(10):
                    client.ask(LessonsParseReflection(
                        text=f"PERFORMANCE | writer{n} lesson{i} unique{n}x{i} | fix {n} {i}"))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    rows = stored(daemon)
    assert len(rows) == 40 and len({row["trigger"] for row in rows}) == 40
