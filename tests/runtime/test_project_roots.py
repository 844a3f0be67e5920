"""A project path resolves to the directory it names, and a repointed symlink is followed soon."""

from __future__ import annotations

from pathlib import Path

from slmactor.runtime import projects
from slmactor.runtime.projects import ROOT_REUSE_S, real_root


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_a_symlinked_project_repointed_is_followed_once_the_reuse_time_is_over(
        tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    link = tmp_path / "project"
    link.symlink_to(first)
    clock = Clock()
    assert real_root(str(link), clock) == first.resolve()
    link.unlink()
    link.symlink_to(second)
    clock.t += ROOT_REUSE_S / 2
    assert real_root(str(link), clock) == first.resolve()  # reused: no system calls
    clock.t += ROOT_REUSE_S
    assert real_root(str(link), clock) == second.resolve()


def test_the_resolved_paths_kept_are_bounded(tmp_path: Path) -> None:
    clock = Clock()
    for n in range(projects._ROOTS_MAX + 10):
        real_root(str(tmp_path / f"p{n}"), clock)
        assert len(projects._roots) <= projects._ROOTS_MAX
