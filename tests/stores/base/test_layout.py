"""Store layout (SPEC S-18.1/S-18.2), project-root discovery, and the H-S-12 .gitignore."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from slmactor.stores import ProjectLayout, UserLayout, default_home, project_root_for


def test_project_paths_match_the_seed_layout(tmp_path: Path) -> None:
    layout = ProjectLayout(tmp_path)
    rel = {
        name: str(getattr(layout, name).relative_to(tmp_path))
        for name in (
            "slmcode", "memory_dir", "episodes", "episodes_index", "facts", "semantic_md",
            "working_md", "reflection_md", "memory_md", "evolve_dir", "rules", "regressions",
            "graph_dir", "edges", "edges_index", "metrics_dir", "runs",
        )
    }  # fmt: skip
    assert rel == {
        "slmcode": ".slmcode",
        "memory_dir": ".slmcode/memory",
        "episodes": ".slmcode/memory/episodes.jsonl",
        "episodes_index": ".slmcode/memory/episodes.index.json",
        "facts": ".slmcode/memory/facts.json",
        "semantic_md": ".slmcode/memory/SEMANTIC.md",
        "working_md": ".slmcode/memory/WORKING.md",
        "reflection_md": ".slmcode/memory/REFLECTION.md",
        "memory_md": ".slmcode/MEMORY.md",
        "evolve_dir": ".slmcode/evolve",
        "rules": ".slmcode/evolve/rules.json",
        "regressions": ".slmcode/evolve/regressions.json",
        "graph_dir": ".slmcode/graph",
        "edges": ".slmcode/graph/edges.jsonl",
        "edges_index": ".slmcode/graph/edges.index.json",
        "metrics_dir": ".slmcode/metrics",
        "runs": ".slmcode/metrics/runs.jsonl",
    }


def test_user_paths_match_the_seed_layout(tmp_path: Path) -> None:
    layout = UserLayout(tmp_path)
    rel = {
        name: str(getattr(layout, name).relative_to(tmp_path))
        for name in (
            "memory_md", "procedures", "procedures_md", "latency", "latency_md", "calibration",
            "calibration_md", "user_rules", "policy", "lock_file",
        )
    }  # fmt: skip
    assert rel == {
        "memory_md": "MEMORY.md",
        "procedures": "memory/procedures.json",
        "procedures_md": "memory/PROCEDURES.md",
        "latency": "memory/latency.json",
        "latency_md": "memory/LATENCY.md",
        "calibration": "memory/calibration.json",
        "calibration_md": "memory/CALIBRATION.md",
        "user_rules": "evolve/rules.json",
        "policy": "evolve/policy.json",
        "lock_file": ".lock",
    }


def test_ensure_creates_private_directories(tmp_path: Path) -> None:
    project = ProjectLayout(tmp_path / "repo")
    project.ensure()
    for directory in project.directories():
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    user = UserLayout(tmp_path / "home" / ".slmcode")
    user.ensure()
    user.ensure()  # idempotent
    for directory in user.directories():
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700


def test_an_existing_gitignore_is_left_alone(tmp_path: Path) -> None:
    layout = ProjectLayout(tmp_path)
    layout.slmcode.mkdir()
    layout.gitignore.write_text("# mine\n")
    layout.ensure()
    assert layout.gitignore.read_text() == "# mine\n"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_learned_memory_is_ignored_by_git_but_lessons_are_not(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    layout = ProjectLayout(tmp_path)
    layout.ensure()
    for path in (layout.episodes, layout.rules, layout.edges, layout.runs, layout.memory_md):
        path.write_text("{}\n")
    corrupt = layout.rules.with_name("rules.json.corrupt.1")
    corrupt.write_text("x")
    ignored = subprocess.run(
        ["git", "-C", str(tmp_path), "check-ignore", "--no-index", "--stdin"],
        check=False,
        input="\n".join(
            str(p.relative_to(tmp_path))
            for p in (layout.episodes, layout.rules, layout.edges, layout.runs, corrupt,
                      layout.memory_md, layout.gitignore)
        ),
        capture_output=True,
        text=True,
    ).stdout.split()  # fmt: skip
    assert ignored == [
        ".slmcode/memory/episodes.jsonl",
        ".slmcode/evolve/rules.json",
        ".slmcode/graph/edges.jsonl",
        ".slmcode/metrics/runs.jsonl",
        ".slmcode/evolve/rules.json.corrupt.1",
    ]


def test_project_root_is_the_enclosing_git_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    nested = repo / "src" / "pkg"
    nested.mkdir(parents=True)
    (repo / ".git").mkdir()
    assert project_root_for(nested) == repo.resolve()
    assert project_root_for(repo) == repo.resolve()
    worktree = tmp_path / "worktree"
    (worktree / "sub").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: /elsewhere\n")  # worktrees and submodules
    assert project_root_for(worktree / "sub") == worktree.resolve()
    plain = tmp_path / "plain" / "dir"
    plain.mkdir(parents=True)
    assert project_root_for(plain) in (plain.resolve(), *plain.resolve().parents)


def test_project_root_resolves_symlinks(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(repo)
    assert project_root_for(link) == repo.resolve()


def test_default_home_honours_slmactor_home() -> None:
    assert default_home({}) == Path.home() / ".slmcode"
    assert default_home({"SLMACTOR_HOME": "  "}) == Path.home() / ".slmcode"
    assert default_home({"SLMACTOR_HOME": "/srv/memory"}) == Path("/srv/memory")
    assert default_home({"SLMACTOR_HOME": "~/mem"}) == Path.home() / "mem"
