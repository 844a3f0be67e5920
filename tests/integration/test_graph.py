"""The knowledge graph against a real daemon: runs recorded through `run.finish`, then the graph
materialised by asking the recall, distiller and rules actors (S-21, S-20.6)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from typing import Any

from slmactor.protocol.messages import (
    EvolveRules,
    GraphBackfill,
    GraphFile,
    GraphForget,
    GraphNeighbors,
    GraphStats,
    GraphWalk,
    MemoryForget,
    RunFinish,
)
from slmactor.testing import DaemonProcess

GUTTER_ARGS = json.dumps({"path": "pkg/a.py", "old_str": "  3| x = 1", "new_str": "  3| x = 2"})
FIXED_ARGS = json.dumps({"path": "pkg/a.py", "old_str": "x = 1", "new_str": "x = 2"})
GUTTER_MSG = "old_str still contains ws_read's line-number prefix; remove the gutter"
#: Recent enough that the finish pipeline's episode prune (180 days) keeps every run.
T0 = time.time() - 3600


def _report(run_id: str, n: int, files: list[str], failures: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "run_id": run_id, "query": f"fix x in {files[0]} ({n})", "language": "python",
        "model": "qwen2.5-coder:7b", "planned_tasks": 1, "completed_tasks": 1,
        "edit_format": "search_replace", "edits_attempted": 1, "edits_applied": 1,
        "llm_calls": 2, "tool_calls": 3, "tool_errors": len(failures), "files_changed": files,
        "ended_at": T0 + 60 * n, "failures": failures,
        "commands": [["pytest -q", True]],
    }


def _gutter(resolved_by: str) -> dict[str, Any]:
    return {"tool": "ws_edit", "message": GUTTER_MSG, "resolved_by": resolved_by,
            "failed_args": GUTTER_ARGS, "fixed_args": FIXED_ARGS}


def _cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", *args],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=60,
    )


def _record_runs(daemon: DaemonProcess) -> str:
    """Run 1 fixes the gutter failure with the model (a rule is learned); run 2 hits it again
    and the learned rule fixes it; run 3 touches another file and fails without a fix."""
    with daemon.client(timeout=30) as client:
        client.ask(RunFinish(report=_report("run-1", 1, ["pkg/a.py"], [_gutter("llm")]), wait=True))
        learned = [r for r in client.ask(EvolveRules(include_all=True))["rules"]
                   if not r["seeded"] and r["scope"] == "project"]
        assert len(learned) == 1, learned
        rule_id = str(learned[0]["id"])
        client.ask(RunFinish(report=_report("run-2", 2, ["pkg/a.py", "pkg/b.py"],
                                            [_gutter(f"rule:{rule_id}")]), wait=True))
        client.ask(RunFinish(report=_report("run-3", 3, ["pkg/c.py"], [
            {"tool": "bash", "message": "ModuleNotFoundError: No module named 'yaml'"}]),
            wait=True))
    return rule_id


def test_graph_file_shows_failure_classes_and_what_fixed_them(daemon: DaemonProcess) -> None:
    rule_id = _record_runs(daemon)
    # No explicit backfill: the graph notices the new episodes before answering.
    shown = _cli(daemon, "--json", "graph", "file", "pkg/a.py")
    assert shown.returncode == 0, shown.stderr
    known = json.loads(shown.stdout)
    assert len(known["episodes"]) == 2 and len(known["failures"]) == 1
    (failure,) = known["failures"]
    cls = known["failure_class"][failure]
    assert known["classes"] == {cls: 2}
    assert known["fixed_by"] == {failure: [rule_id]}
    text = _cli(daemon, "graph", "file", "./pkg/a.py")
    assert text.returncode == 0
    assert f"{cls}" in text.stdout and "×2" in text.stdout and f"fixed by {rule_id}" in text.stdout
    other = _cli(daemon, "graph", "file", "pkg/c.py")
    assert "not fixed by a rule yet" in other.stdout
    assert _cli(daemon, "graph", "file", "nope.py").stdout.strip() == "nothing known about nope.py"

    with daemon.client(timeout=30) as client:
        stats = client.ask(GraphStats())
        assert stats["by_type"]["touched"] == 4 and stats["by_type"]["parent_of"] == 3
        assert stats["by_type"]["resolved_by"] == 1 and stats["by_type"]["produced"] == 3
        assert stats["bytes"] == (daemon.project / ".slmcode/graph/edges.jsonl").stat().st_size
        # The chain is walkable from the file to the rule.
        walk = client.ask(GraphWalk(node="pkg/a.py", direction="either", depth=3))
        paths = [n["path"] for n in walk["nodes"] if n["node"] == f"rule:{rule_id}"]
        assert paths and paths[0].startswith("file:pkg/a.py <-touched- episode:")
        assert f"-resolved_by-> rule:{rule_id}" in paths[0]
        nb = client.ask(GraphNeighbors(node=f"failure:{failure}", direction="in"))
        assert len(nb["neighbors"]) == 2 and all(n.startswith("episode:") for n in nb["neighbors"])


def test_backfill_is_idempotent_and_rebuilds_a_deleted_graph(daemon: DaemonProcess) -> None:
    _record_runs(daemon)
    log = daemon.project / ".slmcode" / "graph" / "edges.jsonl"
    first = _cli(daemon, "graph", "backfill")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("materialized ") and " total" in first.stdout
    before = log.read_bytes()
    total = len(before.splitlines())
    again = _cli(daemon, "--json", "graph", "backfill")
    assert json.loads(again.stdout)["added"] == 0
    text = _cli(daemon, "graph", "backfill").stdout.strip()
    assert text == f"graph up to date — {total} edge(s), nothing new to materialize"
    assert log.read_bytes() == before  # a second backfill adds 0 and leaves the log as it was

    shutil.rmtree(daemon.project / ".slmcode" / "graph")  # supported while the daemon runs
    with daemon.client(timeout=30) as client:
        assert client.ask(GraphStats())["edges"] == 0
        rebuilt = client.ask(GraphBackfill())
    assert rebuilt["added"] == total and rebuilt["edges"] == total
    assert log.read_bytes() == before  # every edge rebuilt, in the same order
    assert (daemon.project / ".slmcode" / "graph" / "edges.index.json").exists()


def test_forget_is_honoured_until_new_episodes_arrive(daemon: DaemonProcess) -> None:
    _record_runs(daemon)
    with daemon.client(timeout=30) as client:
        client.ask(GraphBackfill())
        assert client.ask(GraphForget())["removed"] > 0
        assert not (daemon.project / ".slmcode" / "graph" / "edges.jsonl").exists()
        assert client.ask(GraphFile(path="pkg/a.py"))["episodes"] == []
        client.ask(RunFinish(report=_report("run-4", 4, ["pkg/d.py"], []), wait=True))
        # New episodes: the next query backfills everything again.
        assert len(client.ask(GraphFile(path="pkg/a.py"))["episodes"]) == 2


def test_forgetting_episodic_memory_forgets_the_graph_learned_from_it(daemon: DaemonProcess) -> None:
    _record_runs(daemon)
    with daemon.client(timeout=30) as client:
        assert client.ask(GraphBackfill())["edges"] > 0
        forgot = client.ask(MemoryForget(scope="episodic"))
        assert forgot["forgotten"] == ["episodic", "graph"] and forgot["ok"] is True
        assert client.ask(GraphStats())["edges"] == 0
        assert not (daemon.project / ".slmcode" / "graph" / "edges.jsonl").exists()
        assert client.ask(GraphFile(path="pkg/a.py"))["episodes"] == []


def test_cli_usage_errors_and_messages(daemon: DaemonProcess) -> None:
    bad_type = _cli(daemon, "graph", "neighbors", "pkg/a.py", "--type", "bogus")
    assert bad_type.returncode == 2 and "unknown edge type 'bogus'" in bad_type.stderr
    assert _cli(daemon, "graph", "walk", "pkg/a.py", "--depth", "-1").returncode == 2
    clamped = _cli(daemon, "--json", "graph", "walk", "pkg/a.py", "--depth", "9")
    assert clamped.returncode == 0
    assert "--depth clamped to the package ceiling of 6" in clamped.stderr
    assert json.loads(clamped.stdout)["depth"] == 6
    assert _cli(daemon, "--json", "graph", "forget").returncode == 2
    assert _cli(daemon, "graph", "nonsense").returncode == 2
    assert _cli(daemon, "graph", "neighbors", "x", "--dir", "up").returncode == 2
    empty = _cli(daemon, "graph", "stats")
    assert empty.returncode == 0 and empty.stdout.startswith("graph: 0 edge(s), 0 node(s), 0 B")
    pruned = _cli(daemon, "graph", "prune", "--max-age", "720h")
    assert pruned.returncode == 0 and pruned.stdout.strip() == "nothing to prune — 0 edge(s)"
    assert _cli(daemon, "graph", "prune", "--max-age", "soon").returncode == 2
    forgot = _cli(daemon, "--json", "graph", "forget", "--yes")
    assert forgot.returncode == 0 and json.loads(forgot.stdout) == {"removed": 0}
