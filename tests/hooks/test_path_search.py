"""What exists near a missing path, read from a real project tree on disk: the files of the same
(or an alike) name anywhere in the project, and the deepest existing folder's entries, found by a
bounded walk that skips what holds no sources and never follows a symlink."""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.hooks import path_search as ps

DEV = Path(__file__).resolve().parents[1] / "fixtures" / "real_failures" / "dev.jsonl"
#: A budget no loaded machine reaches, so the tree, not the clock, decides what is found.
AMPLE = 60.0


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")


def named(found: list[str], name: str) -> list[str]:
    return sorted(p for p in found if os.path.basename(p) == name)


def real_error(piece: str) -> str:
    """The error text of the first `path_not_found` row of dev.jsonl that holds `piece`."""
    with DEV.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row.get("kind") == "path_not_found" and piece in row["error"]:
                return str(row["error"])
    raise AssertionError(f"no row holds {piece!r}")


def test_a_relative_missing_path_finds_the_same_name_deeper_and_answers_relative(
        tmp_path: Path) -> None:
    touch(tmp_path, "src/pkg/x.py", "src/pkg/other.py", "README.md")
    found = ps.candidates("x.py", tmp_path, budget_s=AMPLE)
    assert named(found, "x.py") == ["src/pkg/x.py"]
    assert not any(os.path.isabs(p) for p in found)
    # The deepest existing folder of `x.py` is the project: its entries are there too.
    assert {"src", "README.md"} <= set(found)


def test_an_alike_name_is_found_too(tmp_path: Path) -> None:
    touch(tmp_path, "lib/deep/utils.py", "lib/deep/unrelated.py")
    found = ps.candidates("util.py", tmp_path, budget_s=AMPLE)
    assert "lib/deep/utils.py" in found and "lib/deep/unrelated.py" not in found


def test_an_absolute_missing_path_gets_absolute_candidates(tmp_path: Path) -> None:
    touch(tmp_path, "src/pkg/x.py")
    found = ps.candidates(str(tmp_path / "x.py"), tmp_path, budget_s=AMPLE)
    assert named(found, "x.py") == [str(tmp_path / "src" / "pkg" / "x.py")]
    assert all(os.path.isabs(p) for p in found)


def test_the_deepest_existing_folder_is_listed(tmp_path: Path) -> None:
    touch(tmp_path, "src/pkg/model.py", "src/pkg/views.py", "src/other/a.py")
    found = ps.candidates("src/pkg/gone/x.py", tmp_path, budget_s=AMPLE)
    assert {"src/pkg/model.py", "src/pkg/views.py"} <= set(found)
    assert "src/other/a.py" not in found  # neither listed nor named alike


def test_a_large_folder_listing_is_bounded(tmp_path: Path) -> None:
    touch(tmp_path, *(f"big/f{i:03}" for i in range(ps.MAX_LISTED + 50)))
    found = ps.candidates("big/q.py", tmp_path, budget_s=AMPLE)
    assert len(found) == ps.MAX_LISTED


def test_dependencies_hidden_folders_and_virtualenvs_are_not_walked(tmp_path: Path) -> None:
    touch(tmp_path, "src/x.py", "node_modules/pkg/x.py", ".hidden/x.py", ".git/x.py",
          "__pycache__/x.py", "myenv/lib/python3.12/x.py", "myenv/pyvenv.cfg")
    found = ps.candidates("x.py", tmp_path, budget_s=AMPLE)
    assert named(found, "x.py") == ["src/x.py"]
    # The same folders, not skipped by their names, are walked: the test can tell.
    touch(tmp_path, "plainenv/lib/x.py")
    found = ps.candidates("x.py", tmp_path, budget_s=AMPLE)
    assert named(found, "x.py") == ["plainenv/lib/x.py", "src/x.py"]


def test_symlinked_folders_are_not_followed_and_a_loop_ends(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    touch(project, "src/x.py")
    touch(outside, "x.py")
    (project / "src" / "loop").symlink_to(project, target_is_directory=True)
    (project / "elsewhere").symlink_to(outside, target_is_directory=True)
    found = ps.candidates("x.py", project, max_entries=10**9, budget_s=AMPLE)
    assert named(found, "x.py") == ["src/x.py"]
    assert not any("loop/" in p or p.startswith("elsewhere/") for p in found)


def test_max_entries_bounds_the_walk(tmp_path: Path) -> None:
    # The project's own folder holds more entries than the bound: the walk ends there.
    touch(tmp_path, *(f"f{i:02}.txt" for i in range(30)), "d1/d2/d3/deep.py")
    small = ps.candidates("deep.py", tmp_path, max_entries=5, budget_s=AMPLE)
    assert named(small, "deep.py") == []
    large = ps.candidates("deep.py", tmp_path, max_entries=1_000, budget_s=AMPLE)
    assert named(large, "deep.py") == ["d1/d2/d3/deep.py"]


def test_one_folder_larger_than_the_bound_is_not_read_whole(tmp_path: Path) -> None:
    # A data folder of many alike names: the walk stops inside it, not after it.
    touch(tmp_path, *(f"data/x{i:02}.py" for i in range(40)))
    found = ps.candidates("x.py", tmp_path, max_entries=10, budget_s=AMPLE)
    assert found[0] == "data"  # the project's own listing
    assert 0 < len([p for p in found if p.startswith("data/")]) < 10
    assert len(ps.candidates("x.py", tmp_path, budget_s=AMPLE)) == 41


def test_a_spent_time_budget_ends_the_walk(tmp_path: Path) -> None:
    touch(tmp_path, "d1/d2/deep.py")
    assert named(ps.candidates("deep.py", tmp_path, budget_s=0.0), "deep.py") == []


def _as_unprivileged(fn: Callable[[], Any]) -> Any:
    """`fn()` as a user the permissions bind: here when not root, else in a forked child that
    drops to `nobody` (root reads every folder, which would make the test meaningless)."""
    if os.geteuid() != 0:
        return fn()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(read)
            try:
                os.setgid(65534)
                os.setuid(65534)
            except PermissionError:  # root without CAP_SETUID (some containers)
                payload = json.dumps({"skip": "cannot drop root: permissions cannot be tested"})
            else:
                payload = json.dumps({"ok": fn()})
        except BaseException:  # noqa: BLE001 - reported to the parent, which fails the test
            payload = json.dumps({"error": traceback.format_exc()})
        try:
            os.write(write, payload.encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    result = json.loads(data or b'{"error": "child wrote nothing"}')
    if "skip" in result:
        pytest.skip(result["skip"])
    if "error" in result:
        raise AssertionError(f"as nobody: {result['error']}")
    return result["ok"]


def test_an_unreadable_folder_is_skipped_without_raising(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() == 0 and not hasattr(os, "fork"):
        pytest.skip("root reads every folder, and cannot fork to drop that here")
    touch(tmp_path, "src/x.py", "locked/x.py", "locked/y.py")
    (tmp_path / "locked").chmod(0)
    tmp_path.chmod(0o755)  # `nobody` may enter the project itself (see _as_unprivileged)
    monkeypatch.chdir(tmp_path)  # relative from inside: `nobody` need not pass pytest's 0700 parents
    try:
        walked = _as_unprivileged(lambda: ps.candidates("x.py", Path("."), budget_s=AMPLE))
        # The deepest existing folder is the unreadable one: its listing fails, the walk goes on.
        inside = _as_unprivileged(lambda: ps.candidates("locked/z/x.py", Path("."),
                                                        budget_s=AMPLE))
    finally:
        (tmp_path / "locked").chmod(0o755)
    assert named(walked, "x.py") == ["src/x.py"]
    assert named(inside, "x.py") == ["src/x.py"]
    assert not any(p.startswith("locked/") for p in walked + inside)


def test_a_name_too_long_to_exist_is_no_error(tmp_path: Path) -> None:
    # A glob or URL a program called missing can be longer than a file name may be (ENAMETOOLONG).
    touch(tmp_path, "src/x.py")
    assert named(ps.candidates("a" * 300 + "/x.py", tmp_path, budget_s=AMPLE), "x.py") == \
        ["src/x.py"]
    assert ps.hint(f"no matches found: {'b' * 300}/*.py", "", tmp_path) == ""


#: Text with one part longer than a file name may be: the error no folder test on its own makes.
_long_part = st.builds(lambda head, n, tail: head + "d" * n + tail, st.sampled_from(["", "/", "src/"]),
                       st.integers(200, 400), st.sampled_from(["", "/x.py", "/*"]))


def test_candidates_never_raise_on_arbitrary_text(tmp_path: Path) -> None:
    touch(tmp_path, "src/pkg/x.py", "docs/README.md")

    @settings(derandomize=True, max_examples=200, deadline=None)
    @given(missing=st.text(max_size=300) | _long_part, error=st.text(max_size=300) | _long_part)
    def check(missing: str, error: str) -> None:
        found = ps.candidates(missing, tmp_path, budget_s=AMPLE)
        assert all(isinstance(p, str) for p in found)
        assert isinstance(ps.hint(error, missing, tmp_path), str)

    check()


def test_hint_end_to_end_names_the_existing_file(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ps.candidates, "__kwdefaults__",
                        {"max_entries": ps.MAX_ENTRIES, "budget_s": AMPLE})
    # A real GNU sed failure from a Go project whose module lives under src/.
    touch(tmp_path, "src/color/gradient_test.go", "src/color/gradient.go", "README.md")
    line = ps.hint(real_error("sed: can't read color/gradient_test.go"), "", tmp_path)
    assert line == ("`color/gradient_test.go` is not there; `src/color/gradient_test.go` is "
                    "(the same name under another folder).")


def test_hint_end_to_end_from_a_path_argument_with_a_typo(tmp_path: Path) -> None:
    # Claude Code's Read names no path in its error; the call's absolute file_path does.
    touch(tmp_path, "docs/README.md", "docs/SPEC.md")
    missing = str(tmp_path / "docs" / "READNE.md")
    line = ps.hint(real_error("<tool_use_error>File does not exist.</tool_use_error>"),
                   missing, tmp_path)
    assert f"`{tmp_path / 'docs' / 'README.md'}`" in line and "one part spelled differently" in line


def test_hint_end_to_end_lists_the_folder_when_nothing_is_alike(tmp_path: Path) -> None:
    touch(tmp_path, "build/docs/index.html", "build/docs/assets/app.js")
    line = ps.hint(real_error("ls: cannot access 'build/docs/category'"), "", tmp_path)
    assert line.startswith("`build/docs/category` is not there; `build/docs` holds ")
    assert "`build/docs/index.html`" in line and "`build/docs/assets`" in line


def test_hint_is_empty_without_a_path_or_anything_near(tmp_path: Path) -> None:
    touch(tmp_path, "a.txt")
    assert ps.hint("curl: (22) The requested URL returned error: 404", "", tmp_path) == ""
    assert ps.hint("", "zzz/qqq/nothing.py", tmp_path / "absent") == ""
    assert ps.candidates("/", tmp_path) == []


def test_a_missing_path_outside_the_project_lists_no_system_or_home_folder(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / "notes").mkdir()
    (home / "notes" / "todo.md").write_text("")
    project = home / "proj"
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    # `~/secret.txt` is missing: its folder is the home itself, which is not listed.
    assert not any(".ssh" in c for c in ps.candidates(str(home / "secret.txt"), project))
    assert ps.candidates("/no/such/root/file.txt", project) == []
    # Below the home, the folder is listed.
    assert str(home / "notes" / "todo.md") in ps.candidates(str(home / "notes" / "tod.md"), project)
