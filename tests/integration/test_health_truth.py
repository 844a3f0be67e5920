"""Health says the truth (issue 42): a store that cannot be written, a file of the wrong shape
and a symlink where a store file should be each make `status` degraded with the fault named —
never "healthy" beside STORE_ERROR answers, never a silent empty read, never a followed link."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from slmactor.protocol.messages import FactObserve, LessonsRender, MemoryBlock, RunFinish, Status
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly


def _faults(daemon: DaemonProcess) -> list[str]:
    with daemon.client(timeout=30) as client:
        status = client.ask(Status())
    return [f"{f.get('dir') or f.get('file')}: {f['reason']}" for f in status["store_faults"]] \
        if status["health"] == "degraded" else []


def test_a_read_only_project_is_degraded_with_its_store_named(tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount the project read-only")
    first = spawn_daemon(base=tmp_path / "a")
    try:
        with first.client(timeout=30) as client:
            client.ask(FactObserve(kind="command", subject="tests", text="pytest -q"))
            client.ask(RunFinish(report={"run_id": "r1", "query": "fix the parser"}, wait=True))
    finally:
        first.stop()
    project = first.project
    if subprocess.run(["mount", "--bind", str(project), str(project)], check=False).returncode:
        pytest.skip("bind mounts are not allowed here")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(project)], check=True)
        daemon = spawn_daemon(base=tmp_path / "b", home=first.home, project=project)
        try:
            with daemon.client(timeout=30) as client, pytest.raises(Exception, match="STORE_ERROR"):
                client.ask(FactObserve(kind="command", subject="lint", text="make lint"))
            faults = _faults(daemon)
            assert any(str(project / ".slmcode") in f and "Read-only" in f for f in faults), faults
        finally:
            stop_quietly(daemon)
    finally:
        subprocess.run(["umount", str(project)], check=False)
        stop_quietly(first)


def test_symlinks_where_store_files_should_be_are_not_followed_and_are_named(
        tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    secret_text = "# Project memory\n\n- ⚙ the deploy password is hunter2hunter2\n"
    outside.write_text(secret_text)
    first = spawn_daemon(base=tmp_path / "a")
    first.stop()
    store = first.project / ".slmcode"
    store.mkdir(mode=0o700, exist_ok=True)
    (store / "MEMORY.md").symlink_to(outside)
    (store / ".gitignore").symlink_to(outside)
    key = first.home / ".memory-key"
    key.unlink(missing_ok=True)
    key.symlink_to(outside)
    daemon = spawn_daemon(base=tmp_path / "b", home=first.home, project=first.project)
    try:
        with daemon.client(timeout=30) as client:
            rendered = client.ask(LessonsRender(query="deploy", max_bytes=4000))
            client.ask(FactObserve(kind="command", subject="tests", text="pytest -q"))
            block = client.ask(MemoryBlock(query="deploy", budget=2000))
        assert "hunter2" not in json.dumps(rendered) + json.dumps(block)
        faults = "\n".join(_faults(daemon))
        for name in ("MEMORY.md", ".gitignore", ".memory-key"):
            assert name in faults, faults
        assert "symlink" in faults
        assert outside.read_text() == secret_text  # nothing was written through a link
    finally:
        stop_quietly(daemon)
        stop_quietly(first)


@pytest.mark.parametrize(("relative", "content"), [
    ("memory/facts.json", '{"version": 1, "facts": "not a list"}'),
    ("evolve/rules.json", '{"version": 1, "rules": {"a": 1}}'),
    ("evolve/regressions.json", '"checks"'),
    ("graph/edges.index.json", '[1, 2, 3]'),
])
def test_a_store_file_of_the_wrong_shape_is_set_aside_and_named(
        tmp_path: Path, relative: str, content: str) -> None:
    first = spawn_daemon(base=tmp_path / "a")
    first.stop()
    path = first.project / ".slmcode" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    if relative.startswith("graph"):
        (path.parent / "edges.jsonl").write_text("")
    daemon = spawn_daemon(base=tmp_path / "b", home=first.home, project=first.project)
    try:
        from slmactor.protocol.messages import EvolveRegressions, EvolveRules, FactList, GraphStats

        with daemon.client(timeout=30) as client:
            for message in (FactList(), EvolveRules(), EvolveRegressions(), GraphStats()):
                client.ask(message)
        faults = "\n".join(_faults(daemon))
        assert path.name in faults and "corrupt" in faults, faults
        assert [p.name for p in path.parent.iterdir() if p.name.startswith(path.name + ".corrupt")]
    finally:
        stop_quietly(daemon)
        stop_quietly(first)


#: Every store document that is an object, in the project and in the user store: a bare `[]`
#: in any of them (a hand edit, another tool) was read as an empty store and overwritten at the
#: next save, with no `.corrupt` copy and `status` healthy.
BARE_LIST_PROJECT = ("evolve/rules.json", "evolve/regressions.json", "evolve/policy.json",
                     "evolve/environment.json", "memory/facts.json", "memory/retired.json",
                     "memory/episodes.index.json", "graph/edges.index.json")
BARE_LIST_USER = ("evolve/rules.json", "evolve/policy.json", "memory/procedures.json",
                  "memory/latency.json", "memory/calibration.json", "memory/working.checkpoint.json")


def test_a_bare_list_where_a_store_keeps_an_object_is_set_aside_and_named(tmp_path: Path) -> None:
    from slmactor.protocol.messages import (
        CalibrationGet,
        EpisodeRecent,
        EvolveOnFailure,
        EvolveRegressions,
        EvolveRules,
        FactList,
        GraphStats,
        PolicyWhy,
    )

    first = spawn_daemon(base=tmp_path / "a")
    first.stop()
    paths = [first.project / ".slmcode" / r for r in BARE_LIST_PROJECT] + \
        [first.home / r for r in BARE_LIST_USER]
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("[]\n")
    (first.project / ".slmcode" / "graph" / "edges.jsonl").write_text("")
    daemon = spawn_daemon(base=tmp_path / "b", home=first.home, project=first.project)
    try:
        with daemon.client(timeout=30) as client:
            for message in (FactList(), EvolveRules(include_all=True), EvolveRegressions(),
                            GraphStats(), EpisodeRecent(n=3), CalibrationGet(model="m"),
                            PolicyWhy(decision="edit_format", scope="project"),
                            PolicyWhy(decision="edit_format", scope="user"),
                            MemoryBlock(query="fix the parser", budget=2000),
                            EvolveOnFailure(tool="bash", message="bash: poetry: command not found",
                                            args='{"command": "poetry install"}')):
                client.ask(message)
            status = client.ask(Status())
        named = "\n".join([f"{f.get('dir') or f.get('file')}: {f['reason']}"
                           for f in status["store_faults"]]
                          + [w["text"] for w in status["warnings"]])
        assert status["health"] == "degraded"
        left = {str(p): p.read_text() for p in paths if p.exists() and p.read_text() == "[]\n"}
        assert left == {}  # none read as an empty store and left to be overwritten
        for path in paths:
            assert (path.parent / (path.name + ".corrupt")).read_text() == "[]\n", path
            assert f"{path.name} has the wrong shape" in named, (path, named)
    finally:
        stop_quietly(daemon)
        stop_quietly(first)
