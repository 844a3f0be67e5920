"""The distiller actor through the real daemon, sockets and client.

Facts, lessons, procedures and the memory block a role receives; forgetting; corrupt files and
`rm -rf` of the memory directory while the daemon runs.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from typing import Any

import pytest

from slmactor.client import RequestFailed
from slmactor.logic.memory.lessons import FOREIGN_LABEL
from slmactor.logic.text.strings import count_tokens_chars
from slmactor.protocol import ErrorCode
from slmactor.protocol.messages import (
    FactList,
    FactObserve,
    FactRefute,
    LatencyObserve,
    LessonAdd,
    LessonsRender,
    MemoryBlock,
    MemoryForget,
    MemoryPrune,
    ProcedureBest,
    ProcedureObserve,
    RunStart,
    WorkingRender,
)
from slmactor.stores.base.layout import ProjectLayout, UserLayout
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

MODEL = "Qwen3-Coder-30B-A3B-Instruct-MLX-4bit"


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll an observable condition (a file the daemon writes in the background)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def seed_memory(client: Any) -> None:
    for subject, text in (
        ("pytest", "`pytest` works here (3/3 runs succeeded)"),
        ("make lint", "`make lint` works here (2/2 runs succeeded)"),
    ):
        client.ask(FactObserve(kind="command", subject=subject, text=text, sources=["ep1"]))
    client.ask(
        FactObserve(kind="gotcha", subject="graph-cycle", text="pkg/graph must not import pkg/loop")
    )
    for ok in (True, True, True, False):
        client.ask(
            ProcedureObserve(topic="edit_format", option="diff", model=MODEL, language="py", ok=ok)
        )


def test_empty_memory_gives_an_empty_block(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        reply = client.ask(MemoryBlock(role="worker", query="anything at all"))
        assert reply["text"] == ""
        assert reply["budget"] == 1200
        assert client.ask(LessonsRender(query="x"))["text"] == ""
        assert client.ask(FactList())["facts"] == []


def test_block_sections_in_order_within_budget(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        seed_memory(client)
        client.ask(RunStart(run_id="r1", task="fix the graph import cycle", role="worker"))
        client.record_tool("r1", "ws_read", path="pkg/graph/walk.go")
        client.ask(WorkingRender(run_id="r1", client=client.client_id, seq=client.last_seq))
        reply = client.ask(
            MemoryBlock(
                role="worker",
                budget=300,
                query="graph import cycle",
                run_id="r1",
                model=MODEL,
                language="python",
            )
        )
        text = reply["text"]
        assert count_tokens_chars(text) <= 300
        order = [
            text.index("## Working memory (this run)"),
            text.index("## What we know about this project"),
            text.index("## What works for this model"),
        ]
        assert order == sorted(order)
        assert "- edit_format → `diff` (67% over 4 runs)" in text
        # the relevant gotcha leads its kind; every command still shown (ordering, not filtering)
        assert "- `pytest` works here" in text and "- pkg/graph must not import pkg/loop" in text
        assert reply["sections"]["working"] > 0 and reply["sections"]["procedural"] > 0
        # a model from another family learns nothing from this one
        other = client.ask(MemoryBlock(role="worker", model="gpt-4o-mini", language="python"))
        assert "What works for this model" not in other["text"]


def test_facts_observe_refute_list(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        first = client.ask(
            FactObserve(kind="command", subject="make", text="`make` works (1/1 runs)")
        )
        assert first["fact"]["confidence"] == pytest.approx(2 / 3, abs=1e-6)
        again = client.ask(
            FactObserve(kind="command", subject="make", text="`make` works (5/6 runs)")
        )
        assert again["fact"]["support"] == 2
        refuted = client.ask(FactRefute(kind="command", subject="make"))
        assert refuted["refuted"] and refuted["fact"]["contradict"] == 1
        assert client.ask(FactRefute(kind="command", subject="nope"))["refuted"] is False
        client.ask(FactObserve(kind="file", subject="a.py", text="`a.py` changed in 2 recent runs"))
        listed = client.ask(FactList())["facts"]
        assert [f["subject"] for f in listed] == ["a.py", "make"]
        assert [f["subject"] for f in client.ask(FactList(kind="command"))["facts"]] == ["make"]
        with pytest.raises(RequestFailed) as err:
            client.ask(FactObserve(kind="command", subject="", text="x"))
        assert err.value.code == ErrorCode.BAD_FIELD
        secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
        stored = client.ask(FactObserve(kind="gotcha", subject="auth", text=f"use token {secret}"))
        assert secret not in stored["fact"]["text"]
        assert secret not in client.ask(MemoryBlock(role="worker"))["text"]


def test_lessons_reach_memory_md_facts_and_prompts(daemon: DaemonProcess) -> None:
    lessons = [
        {
            "task_id": "T7",
            "kind": "failure",
            "text": "Import cycle: pkg/graph must not import pkg/orchestrator",
            "at": "2026-08-24T12:11:12+02:00",
        },
        {"task_id": "T8", "kind": "convention", "text": "Run make lint before pushing"},
    ]
    with daemon.client() as client:
        added = client.ask(LessonAdd(lessons=lessons, run_id="run-42"))
        assert added == {"added": 2, "facts": 2, "polar": 2, "scope": "project"}
        client.ask(
            LessonAdd(
                lessons=[{"kind": "convention", "text": "Never commit secrets"}],
                scope="global",
                run_id="run-42",
            )
        )
        md = (daemon.project / ".slmcode" / "MEMORY.md").read_text()
        # The provenance ends with this daemon's signature (its own lines are told
        # from lines a repository brought along).
        assert "<!-- slm task=T7 kind=failure at=2026-08-24T12:11:12+02:00 sig=" in md
        assert "Never commit secrets" in (daemon.home / "MEMORY.md").read_text()
        rendered = client.ask(LessonsRender(query="graph orchestrator import"))["text"].splitlines()
        assert (
            rendered[0]
            == "- project memory: ⚠ Import cycle: pkg/graph must not import pkg/orchestrator"
        )
        assert "- global memory: ⚙ Never commit secrets" in rendered
        facts = {f["subject"]: f for f in client.ask(FactList())["facts"]}
        cycle = facts["lesson: import cycle pkg graph must"]
        assert cycle["kind"] == "gotcha" and cycle["sources"] == ["T7", "run-42"]
        with pytest.raises(RequestFailed):
            client.ask(LessonAdd(lessons=lessons, scope="team"))


def test_procedure_best_widens_and_latency_is_recorded(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        for _ in range(3):
            client.ask(ProcedureObserve(topic="recovery", option="reread", language="go", ok=True))
        client.ask(
            ProcedureObserve(
                topic="recovery", option="retry", model=MODEL, language="golang", ok=True
            )
        )
        best = client.ask(ProcedureBest(topic="recovery", model=MODEL, language="go"))
        assert best["option"] == "reread"  # the exact namespace has 1 sample only (H-S-28)
        assert [p["key"]["option"] for p in best["ranked"]] == ["retry"]
        assert client.ask(ProcedureBest(topic="knob", model=MODEL))["best"] is None
        for ms in (900, 1000, 1100):
            reply = client.ask(LatencyObserve(role="worker", model=MODEL, ms=ms))
        assert reply == {"recorded": True, "samples": 3, "p95_ms": 1100, "count": 3}
        assert client.ask(LatencyObserve(role="worker", model=MODEL, ms=-1))["recorded"] is False
    assert daemon.stop() == 0  # flushes on the way out
    user = UserLayout(daemon.home)
    procs = json.loads(user.procedures.read_text())["procedures"]
    assert {(p["key"]["option"], p["key"]["model_family"]) for p in procs} == {
        ("reread", ""),
        ("retry", "qwen3-coder"),
    }
    assert json.loads(user.latency.read_text())["roles"][0]["samples_ms"] == [900, 1000, 1100]
    assert "| recovery | reread | * | go |" in user.procedures_md.read_text()
    assert user.latency_md.exists()


def test_forget_scopes(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        seed_memory(client)
        client.ask(LatencyObserve(role="worker", model=MODEL, ms=10))
        with pytest.raises(RequestFailed) as err:
            client.ask(MemoryForget(scope="everything"))
        assert (
            err.value.code == ErrorCode.BAD_FIELD
            and "memory: unknown scope everything" in err.value.reason
        )
        client.ask(RunStart(run_id="r1", task="x", role="worker"))
        client.ask(RunStart(run_id="r2", task="y", role="worker"))
        assert client.ask(MemoryForget(scope="working", run_id="r1"))["forgotten"] == ["working"]
        assert client.ask(WorkingRender(run_id="r1"))["live"] is False
        assert client.ask(WorkingRender(run_id="r2"))["live"] is True
        assert client.ask(MemoryForget(scope="working"))["forgotten"] == ["working"]  # every run
        assert client.ask(WorkingRender(run_id="r2"))["live"] is False
        semantic = client.ask(MemoryForget(scope="semantic"))
        assert semantic["forgotten"] == ["semantic"] and client.ask(FactList())["facts"] == []
        procedural = client.ask(MemoryForget(scope="procedural"))
        assert procedural["forgotten"] == ["procedural"]
        assert (
            client.ask(ProcedureBest(topic="edit_format", model=MODEL, language="py"))["best"]
            is None
        )
        assert not UserLayout(daemon.home).procedures.exists()
        # usable afterwards
        client.ask(FactObserve(kind="command", subject="go test", text="`go test` works"))
        assert [f["subject"] for f in client.ask(FactList())["facts"]] == ["go test"]
        pruned = client.ask(MemoryPrune())
        assert pruned["facts_removed"] == 0 and pruned["procedures_removed"] == 0


def test_corrupt_files_are_survived(daemon: DaemonProcess) -> None:
    assert daemon.stop() == 0
    layout = ProjectLayout(daemon.project)
    user = UserLayout(daemon.home)
    layout.memory_dir.mkdir(parents=True, exist_ok=True)
    user.memory_dir.mkdir(parents=True, exist_ok=True)
    layout.facts.write_text('{"version": 1, "facts": [{"subject": ')
    user.procedures.write_bytes(b"\x00\xff garbage")
    user.latency.write_text("[")
    layout.memory_md.write_bytes(
        b"# Project memory\n\xff\xfe\x00 junk line\n- \xe2\x9a\x99 Keep PRs small\n"
    )
    again = spawn_daemon(project=daemon.project, home=daemon.home)
    try:
        with again.client() as client:
            assert client.ask(FactList())["facts"] == []
            assert client.ask(ProcedureBest(topic="knob"))["best"] is None
            lines = client.ask(LessonsRender())["text"].splitlines()
            # Written by hand, not by this daemon: shown, and labelled so.
            assert f"- {FOREIGN_LABEL}: «⚙ Keep PRs small»" in lines
            client.ask(FactObserve(kind="command", subject="make", text="make works"))
            client.ask(LatencyObserve(role="worker", model="m", ms=5))
            warnings = " ".join(w["text"] for w in client.status().get("warnings", []))
        assert again.stop() == 0
        assert (layout.memory_dir / "facts.json.corrupt").exists()
        assert (user.memory_dir / "procedures.json.corrupt").exists()
        assert (user.memory_dir / "latency.json.corrupt").exists()
        assert "facts.json unreadable" in warnings
        assert "procedures.json unreadable" in warnings and "latency.json unreadable" in warnings
        assert json.loads(layout.facts.read_text())["facts"][0]["subject"] == "make"
    finally:
        stop_quietly(again)


def test_rm_rf_memory_while_running(daemon: DaemonProcess) -> None:
    layout = ProjectLayout(daemon.project)
    with daemon.client() as client:
        client.ask(FactObserve(kind="command", subject="make", text="make works"))
        client.ask(LessonAdd(lessons=[{"kind": "success", "text": "shipped"}]))
        client.ask(MemoryBlock(role="worker"))
        # Writes are flushed in the background; wait until this one is on disk before deleting it.
        # (SEMANTIC.md is the last file a flush writes.)
        wait_for(
            lambda: layout.semantic_md.exists() and "shipped" in layout.semantic_md.read_text()
        )
        shutil.rmtree(daemon.project / ".slmcode")
        shutil.rmtree(UserLayout(daemon.home).memory_dir, ignore_errors=True)
        # the deleted memory is forgotten, not written back
        assert client.ask(FactList())["facts"] == []
        client.ask(FactObserve(kind="command", subject="go test", text="go test works"))
        client.ask(LessonAdd(lessons=[{"kind": "success", "text": "shipped again"}]))
        client.ask(ProcedureObserve(topic="knob", option="t=0", model=MODEL, ok=True))
        assert client.ask(MemoryBlock(role="worker"))["text"].count("go test works") == 1
    assert daemon.stop() == 0
    assert [f["subject"] for f in json.loads(layout.facts.read_text())["facts"]] == [
        "go test",
        "lesson: shipped again",
    ]
    assert layout.semantic_md.exists() and (layout.slmcode / ".gitignore").exists()
    assert "shipped again" in layout.memory_md.read_text()
    assert UserLayout(daemon.home).procedures.exists()
