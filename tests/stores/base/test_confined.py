"""Offline file checks read only regular files inside the project root, bounded and non-blocking."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slmactor.stores.base import confined
from slmactor.stores.base.confined import observe


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    (tmp_path / "secret.txt").write_text("TOP SECRET fix\n")
    return root


def test_reads_a_regular_file_inside_the_root(project: Path) -> None:
    assert observe(project, "src/app.py").state == "present"
    assert observe(project, "src/app.py", "return 42").contains
    assert not observe(project, "src/app.py", "return 41").contains
    assert observe(project, "src/none.py").state == "missing"
    assert observe(project, "nodir/none.py").state == "missing"


def test_refuses_parent_and_absolute_paths(project: Path) -> None:
    assert observe(project, "../secret.txt", "SECRET").state == "refused"
    assert observe(project, str(project.parent / "secret.txt"), "SECRET").state == "refused"


def test_refuses_symlinks_out_of_and_inside_the_root(project: Path) -> None:
    (project / "link.txt").symlink_to(project.parent / "secret.txt")
    (project / "outdir").symlink_to(project.parent)
    (project / "inlink.py").symlink_to(project / "src" / "app.py")
    for path in ["link.txt", "outdir/secret.txt", "inlink.py"]:
        seen = observe(project, path, "SECRET")
        assert seen.state == "refused", path
        assert not seen.contains


def test_a_fifo_never_blocks_and_is_refused(project: Path) -> None:
    os.mkfifo(project / "pipe")
    seen = observe(project, "pipe", "anything")  # would hang forever without O_NONBLOCK
    assert seen.state == "refused" and seen.reason == "not a regular file"


def test_a_directory_is_not_a_file(project: Path) -> None:
    assert observe(project, "src").state == "refused"


def test_large_files_are_skipped_not_guessed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(confined, "MAX_SCAN_BYTES", 100)
    (project / "big.txt").write_text("x" * 200 + "needle")
    assert observe(project, "big.txt", "needle").state == "refused"
    assert observe(project, "big.txt").state == "present"  # existence needs no read


def test_a_needle_across_chunk_boundaries_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(confined, "CHUNK", 7)
    (project / "c.txt").write_text("abcdefNEEDLEghij")
    assert observe(project, "c.txt", "NEEDLE").contains
    assert not observe(project, "c.txt", "NEEDLF").contains


names = st.sampled_from(["..", ".", "src", "app.py", "link", "outdir", "pipe", "secret.txt", ""])


@settings(derandomize=True, max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(names, min_size=1, max_size=5), st.booleans())
def test_no_path_reads_anything_outside_the_root_or_through_a_link(
    project: Path, parts: list[str], absolute: bool
) -> None:
    if not (project / "link").exists():
        (project / "link").symlink_to(project.parent / "secret.txt")
        (project / "outdir").symlink_to(project.parent)
        os.mkfifo(project / "pipe")
    path = ("/" if absolute else "") + "/".join(parts)
    if absolute:
        path = str(project.parent) + path
    seen = observe(project, path, "SECRET")
    # The only file containing SECRET lives outside the root: it must never be seen.
    assert not seen.contains
    if any(p in ("link", "outdir", "pipe") for p in parts) and seen.state != "missing":
        assert seen.state == "refused"
