"""Distillation from real episodes and the `memory` CLI against a real daemon."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from slmactor.logic.text.strings import count_tokens_chars
from slmactor.protocol.messages import (
    EpisodeAppend,
    FactList,
    LessonAdd,
    MemoryBlock,
    MemoryDistill,
    MemoryForget,
    ProcedureObserve,
    RunStart,
    WorkingRender,
)
from slmactor.stores.base.layout import ProjectLayout
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

MODEL = "qwen2.5-coder:7b-instruct-q4_K_M"


def episode(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "at": f"2026-09-0{i + 1}T10:00:00Z",
        "query": f"fix the graph walker bug number {i}",
        "files_changed": ["pkg/graph/walk.go", f"pkg/loop/runner{i}.go"],
        "commands": [
            {"cmd": "go test ./...", "ok": True},
            {"cmd": "$ go vet -all", "ok": i % 2 == 0},
        ],
        "failures": [
            {
                "fingerprint": "fp_edit",
                "message": "old_str not found in walk.go",
                "resolution": "re-read the file first",
                "resolved_by": "rule:r1",
            }
        ],
        "edit_format": "diff",
        "edits_attempted": 4,
        "edits_applied": 3,
        "language": "go",
        "model": MODEL,
        "success": True,
        **extra,
    }


def seed_runs(client: Any) -> None:
    for i in range(4):
        client.ask(EpisodeAppend(episode=episode(i)))
    for _ in range(3):
        client.ask(
            ProcedureObserve(
                topic="edit_format", option="diff", model=MODEL, language="go", ok=True
            )
        )


def cli(daemon: DaemonProcess, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "slmactor",
            "--runtime-dir",
            str(daemon.runtime_dir),
            "--project",
            str(daemon.project),
            "--no-autostart",
            *args,
        ],
        check=False,
        env=daemon.env,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
    )


def test_a_full_window_is_fetched_once_then_one_new_episode_per_pass(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        for i in range(125):
            at = f"2026-09-01T{i // 60:02d}:{i % 60:02d}:00Z"
            client.ask(EpisodeAppend(episode=episode(1, at=at, query=f"task number {i}")))
        first = client.ask(MemoryDistill(wait=True))
        assert first["episodes"] == 120 and first["fetched"] == 120
        for i in range(125, 128):
            at = f"2026-09-01T{i // 60:02d}:{i % 60:02d}:00Z"
            client.ask(EpisodeAppend(episode=episode(1, at=at, query=f"task number {i}")))
            step = client.ask(MemoryDistill(wait=True))
            # the window slid by one: one episode fetched, the 119 others counted from memory
            assert step["episodes"] == 120 and step["fetched"] == 1


def _distills(client: Any) -> int:
    row = next(r for r in client.status()["actors"] if r["name"] == "distiller")
    return int(row["extra"]["distills"])


def test_background_passes_are_spaced_and_a_waiting_caller_is_served_at_once() -> None:
    proc = spawn_daemon(env={"SLMACTOR_DISTILL_INTERVAL": "60"})
    try:
        with proc.client() as client:
            seed_runs(client)
            assert client.ask(MemoryDistill(wait=True))["episodes"] == 4
            assert _distills(client) == 1
            client.ask(EpisodeAppend(episode=episode(4)))
            first = client.ask(MemoryDistill())
            assert first["started"] is True  # a pass is on its way, a minute after the last
            for _ in range(20):  # asked again and again: coalesced into that one
                assert client.ask(MemoryDistill())["queued"] is True
            assert _distills(client) == 1
            # a caller that waits does not wait for the interval, and gets the pending pass
            served = client.ask(MemoryDistill(wait=True))
            assert served["episodes"] == 5 and served["fetched"] == 1
            assert _distills(client) == 2
    finally:
        stop_quietly(proc)


def test_distill_from_episodes_feeds_the_block(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        seed_runs(client)
        done = client.ask(MemoryDistill(wait=True))
        assert done["started"] and done["episodes"] == 4 and done["facts"] >= 6
        assert done["fetched"] == 4  # a first pass reads every episode of the window
        facts = {(f["kind"], f["subject"]): f["text"] for f in client.ask(FactList())["facts"]}
        assert (
            facts[("command", "go test ./...")] == "`go test ./...` works here (4/4 runs succeeded)"
        )
        # `$ go vet -all` keyed `go vet` never ran as shown: not said as a command that works.
        assert ("command", "go vet") not in facts
        assert facts[("gotcha", "fp_edit")].startswith(
            "old_str not found in walk.go — fix: re-read"
        )
        assert (
            facts[("layout", "hot-directories")]
            == "Most work happens in: `pkg/graph` (4), `pkg/loop` (4)"
        )
        assert (
            facts[("file", "pkg/graph/walk.go")] == "`pkg/graph/walk.go` changed in 4 recent runs"
        )
        assert facts[("convention", "edit-format:diff")] == (
            "Edit format `diff` applies 75% of the time here (12/16 hunks)"
        )
        assert (
            facts[("dependency", "primary-language")] == "Primary language is go (4/4 recent runs)"
        )
        # the same episodes again are not new evidence
        assert client.ask(MemoryDistill(wait=True))["unchanged"] is True
        same = {f["subject"]: f for f in client.ask(FactList(kind="command"))["facts"]}
        assert same["go test ./..."]["support"] == 1
        # a new run is: support, not contradiction ("5/5" vs "4/4" is numeric drift)
        client.ask(EpisodeAppend(episode=episode(4)))
        grown = client.ask(MemoryDistill(wait=True))
        assert "unchanged" not in grown
        # episodes never change once recorded: only the new one is fetched, all 5 are counted
        assert grown["episodes"] == 5 and grown["fetched"] == 1
        again = {f["subject"]: f for f in client.ask(FactList(kind="command"))["facts"]}
        assert again["go test ./..."]["support"] == 2 and again["go test ./..."]["contradict"] == 0
        assert again["go test ./..."]["text"] == "`go test ./...` works here (5/5 runs succeeded)"
        # forgetting the facts forgets what the distiller held too: the next pass starts afresh
        client.ask(MemoryForget(scope="semantic"))
        rebuilt = client.ask(MemoryDistill(wait=True))
        assert rebuilt["episodes"] == 5 and rebuilt["fetched"] == 5 and rebuilt["facts"] >= 6
        rebuilt_facts = {f["subject"]: f for f in client.ask(FactList(kind="command"))["facts"]}
        assert rebuilt_facts["go test ./..."]["support"] == 1

        client.ask(RunStart(run_id="r9", task="fix the graph walker again", role="worker"))
        client.ask(WorkingRender(run_id="r9"))
        reply = client.ask(
            MemoryBlock(
                role="worker",
                budget=600,
                query="graph walker bug",
                files=["pkg/graph/walk.go"],
                run_id="r9",
                model=MODEL,
                language="golang",
            )
        )
        text = reply["text"]
        assert count_tokens_chars(text) <= 600
        headings = [line for line in text.splitlines() if line.startswith("## ")]
        assert headings == [
            "## Working memory (this run)",
            "## What we know about this project",
            "## Similar work done before",
            "## What works for this model",
        ]
        # The fix the gotchas already give is said once: the episode's hit does not repeat it.
        assert text.count("re-read the file first") == 1, text
        # without a query the run's own task conditions the block (S-7.3)
        from_run = client.ask(MemoryBlock(role="worker", run_id="r9", model=MODEL))["text"]
        assert "## Similar work done before" in from_run
        assert "fix the graph walker bug number 3" in from_run
        small = client.ask(
            MemoryBlock(role="worker", budget=120, query="graph walker bug", model=MODEL)
        )
        assert 0 < small["tokens"] <= 120


def test_memory_cli(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        seed_runs(client)
        client.ask(MemoryDistill(wait=True))
        client.ask(
            LessonAdd(
                lessons=[
                    {"task_id": "T3", "kind": "failure", "text": "Flaky fixture in conftest.py"}
                ]
            )
        )
    show = cli(
        daemon,
        "memory",
        "show",
        "--role",
        "worker",
        "--budget",
        "400",
        "--query",
        "graph walker",
        "--model",
        MODEL,
        "--language",
        "go",
    )
    assert show.returncode == 0, show.stderr
    lines = show.stdout.splitlines()
    headings = [line for line in lines if line.startswith("## ")]
    assert headings == [
        "## What we know about this project",
        # the failure lesson's don't-twin, in the semantic section
        "## Anti-patterns from past builds (NEVER do these):",
        "## Similar work done before",
        "## What works for this model",
    ]
    assert count_tokens_chars(show.stdout.rstrip("\n") + "\n") <= 400
    as_json = json.loads(cli(daemon, "--json", "memory", "show", "--role", "planner").stdout)
    assert as_json["role"] == "planner" and as_json["budget"] == 1200 and as_json["text"]

    # pin a fact by hand while the daemon runs: it is picked up and marked
    path = ProjectLayout(daemon.project).facts
    doc = json.loads(path.read_text())
    for fact in doc["facts"]:
        if fact["subject"] == "primary-language":
            fact["pinned"] = True
    path.write_text(json.dumps(doc))
    facts = cli(daemon, "memory", "facts")
    assert facts.returncode == 0
    rows = facts.stdout.splitlines()
    assert [r for r in rows if r.startswith("★")] == [
        next(r for r in rows if "primary-language" in r)
    ]
    confidences = [float(r.split()[2] if r.startswith("★") else r.split()[1]) for r in rows]
    assert confidences == sorted(confidences, reverse=True)  # by confidence (S-20.2)
    commands = cli(daemon, "memory", "facts", "--kind", "command").stdout.splitlines()
    assert len(commands) == 1 and all(" command " in line for line in commands)
    lessons = cli(daemon, "memory", "lessons", "--query", "flaky fixture")
    assert lessons.stdout.splitlines()[0] == "- project memory: ⚠ Flaky fixture in conftest.py"

    distilled = cli(daemon, "memory", "distill", "--wait")
    assert distilled.returncode == 0
    assert distilled.stdout.strip() == "no new episodes since the last pass (4 in the window)"
    with daemon.client() as client:
        client.ask(EpisodeAppend(episode=episode(5)))
    distilled = cli(daemon, "memory", "distill", "--wait")
    assert distilled.stdout.startswith("distilled 5 episode(s) into ")
    assert cli(daemon, "memory", "distill").returncode == 0

    bad = cli(daemon, "memory", "forget", "everything")
    assert bad.returncode == 2 and "memory forget: invalid scope" in bad.stderr
    needs_yes = cli(daemon, "--json", "memory", "forget", "all")
    assert needs_yes.returncode == 2 and json.loads(needs_yes.stdout)["ok"] is False
    unconfirmed = cli(daemon, "memory", "forget", "procedural", stdin="y\n")  # not a tty: refused
    assert unconfirmed.returncode == 2
    forgot = cli(daemon, "--json", "memory", "forget", "all", "--yes")
    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    assert json.loads(forgot.stdout)["forgotten"] == [
        "working",
        "episodic",
        "graph",
        "semantic",
        "mirrors",
        "lessons",
        "memory_md",
        "procedural",
    ]
    empty = cli(daemon, "memory", "show", "--role", "worker", "--query", "graph walker")
    assert empty.stdout.strip() == "(nothing remembered yet — finish a run with your harness first)"


def _finished_run(i: int) -> dict[str, Any]:
    return {
        "run_id": f"run-{i}",
        "query": f"add retry to the http client ({i})",
        "language": "python",
        "model": MODEL,
        "planned_tasks": 1,
        "completed_tasks": 1,
        "edit_format": "search_replace",
        "edits_attempted": 2,
        "edits_applied": 2,
        "edits_first_attempt": 2,
        "llm_calls": 3,
        "tool_calls": 4,
        "tool_errors": 0,
        "files_changed": ["src/http/client.py", "tests/test_client.py"],
        "commands": [{"cmd": "pytest -q tests", "ok": True}],
        "decisions": [
            {
                "decision": "edit_format",
                "arm": "search_replace",
                "outcome": {"applied": True, "gate_passed": True},
            }
        ],
    }


def test_memory_show_after_a_few_finished_runs(daemon: DaemonProcess) -> None:
    """Acceptance: runs finished through the real loop, then `memory show --role worker`."""
    from slmactor.protocol.messages import RunFinish

    with daemon.client(timeout=30) as client:
        for i in range(3):
            assert client.ask(RunFinish(report=_finished_run(i), wait=True))["accepted"]
        client.ask(MemoryDistill(wait=True))  # the pipelines' own passes may still be running
    show = cli(
        daemon,
        "memory",
        "show",
        "--role",
        "worker",
        "--budget",
        "300",
        "--query",
        "retry in the http client",
        "--model",
        MODEL,
        "--language",
        "python",
    )
    assert show.returncode == 0, show.stderr
    text = show.stdout.rstrip("\n") + "\n"
    assert count_tokens_chars(text) <= 300
    documented = [
        "## Working memory (this run)",
        "## What we know about this project",
        "## Similar work done before",
        "## What works for this model",
    ]
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## What we know about this project", "## Similar work done before"]
    assert headings == sorted(headings, key=documented.index)
    assert "pytest" not in text.split("## Similar work")[0]  # `pytest tests` never ran as shown
    assert "add retry to the http client" in text
