"""MEMORY.md files: append-only lesson bullets, global memory, damage survived (SPEC S-8.9)."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from slmactor.logic.memory.lessons import Lesson, parse_markdown
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.lessons import LessonFile, LessonStore, global_read_paths

NOW = 1_790_000_000.0


def make(tmp_path: Path) -> LessonStore:
    home = tmp_path / "home"
    return LessonStore(
        tmp_path / "proj" / ".slmcode" / "MEMORY.md",
        home / "MEMORY.md",
        [tmp_path / "xdg" / "slmcode" / "MEMORY.md", home / "MEMORY.md"],
        WarningLog(),
        now=lambda: NOW,
    )


def test_project_lessons_append_with_header_and_parse_back(tmp_path: Path) -> None:
    store = make(tmp_path)
    first = [
        Lesson(
            "T7",
            "failure",
            "Import cycle: pkg/graph must not import pkg/orchestrator",
            "2026-08-24T10:11:12+02:00",
        )
    ]
    store.add_project(first)
    store.add_project([Lesson("T8", "success", "Shipped the walk", "")])
    text = store.read_project()
    assert text.startswith("# Project memory\n\n## Lessons\n\n- ⚠ Import cycle")
    assert parse_markdown(text) == [*first, Lesson("T8", "success", "Shipped the walk", "")]


def test_append_keeps_hand_written_content_byte_for_byte(tmp_path: Path) -> None:
    store = make(tmp_path)
    path = tmp_path / "proj" / ".slmcode" / "MEMORY.md"
    path.parent.mkdir(parents=True)
    original = (
        b"# Mine\n\nnotes \xff\xfe binary junk\n- \xe2\x9a\xa0 old lesson"  # no final newline
    )
    path.write_bytes(original)
    store.add_project([Lesson("", "convention", "new lesson", "")])
    raw = path.read_bytes()
    assert raw.startswith(original + b"\n- ")
    lessons = parse_markdown(store.read_project())
    assert [le.text for le in lessons] == ["old lesson", "new lesson"]


def test_secrets_never_reach_memory_md(tmp_path: Path) -> None:
    store = make(tmp_path)
    secret = "sk-ant-api03-" + "x" * 40
    written = store.add_project([Lesson("T1", "failure", f"ANTHROPIC_API_KEY={secret} leaked", "")])
    assert secret not in store.read_project()
    assert secret not in written[0].text


def test_blank_lessons_write_nothing(tmp_path: Path) -> None:
    store = make(tmp_path)
    assert store.add_project([Lesson(text="  ")]) == []
    assert not (tmp_path / "proj" / ".slmcode" / "MEMORY.md").exists()


def test_global_memory_block_mode_and_joined_reads(tmp_path: Path) -> None:
    store = make(tmp_path)
    store.add_global("Run 42", [Lesson("T1", "convention", "Prefer small PRs", "")])
    path = tmp_path / "home" / "MEMORY.md"
    text = path.read_text()
    assert text.startswith(
        "# SLMCode Global Memory\n\n## Lessons\n\n\n\n## Run 42 (2026-09-21T14:13:20Z)\n\n- ⚙ Prefer small PRs"
    )
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # private, like every store file
    xdg = tmp_path / "xdg" / "slmcode" / "MEMORY.md"
    xdg.parent.mkdir(parents=True)
    xdg.write_text("- ⚙ from the config dir\n")
    joined = store.read_global()
    assert joined.startswith("- ⚙ from the config dir\n\n\n# SLMCode Global Memory")


def test_global_read_paths_follow_xdg(tmp_path: Path) -> None:
    paths = global_read_paths(tmp_path / "h", {"XDG_CONFIG_HOME": "/cfg"})
    assert paths == [Path("/cfg/slmcode/MEMORY.md"), tmp_path / "h" / "MEMORY.md"]
    assert global_read_paths(tmp_path, {})[0] == Path.home() / ".config" / "slmcode" / "MEMORY.md"


def test_a_directory_in_place_of_memory_md_is_moved_aside(tmp_path: Path) -> None:
    store = make(tmp_path)
    path = tmp_path / "proj" / ".slmcode" / "MEMORY.md"
    path.mkdir(parents=True)
    assert store.read_project() == ""
    store.add_project([Lesson(text="still learned")])
    assert path.is_file() and (path.parent / "MEMORY.md.corrupt").is_dir()


def test_a_symlink_is_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("- ⚙ secret outside\n")
    path = tmp_path / "proj" / ".slmcode" / "MEMORY.md"
    path.parent.mkdir(parents=True)
    os.symlink(outside, path)
    store = make(tmp_path)
    assert store.read_project() == ""
    store.add_project([Lesson(text="inside")])
    assert outside.read_text() == "- ⚙ secret outside\n"
    assert "inside" in store.read_project()


def test_rm_rf_then_append_recreates(tmp_path: Path) -> None:
    store = make(tmp_path)
    store.add_project([Lesson(text="one")])
    shutil.rmtree(tmp_path / "proj" / ".slmcode")
    store.add_project([Lesson(text="two")])
    assert [le.text for le in parse_markdown(store.read_project())] == ["two"]


def test_file_is_bounded_by_dropping_oldest_bullets(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    lessons = LessonFile(path, "# H\n\n", WarningLog(), max_bytes=2000)
    for i in range(100):
        lessons.append(f"- ⚙ lesson number {i:03d} with some padding text <!-- slm at={i} -->\n")
    text = path.read_text()
    assert len(text.encode()) <= 2000
    assert text.startswith("# H\n")
    assert "lesson number 099" in text and "lesson number 000" not in text


def test_a_huge_hand_grown_file_is_not_trimmed(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("- ⚙ old\n" * 200_000)  # 2 MB, more than is ever read back
    log = WarningLog()
    LessonFile(path, "# H\n\n", log, max_bytes=2000).append("- ⚙ newest\n")
    assert path.read_text().endswith("- ⚙ old\n- ⚙ newest\n")
    assert any("not trimmed" in w["text"] for w in log.recent())


def test_hand_written_text_over_the_budget_is_kept_and_said(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    mine = "".join(f"- ⚙ my own note {i:03d}, written by hand\n" for i in range(100))
    path.write_text(mine)
    log = WarningLog()
    lessons = LessonFile(path, "# H\n\n", log, max_bytes=2000)
    for i in range(3):
        lessons.append(f"- ⚙ learned {i} <!-- slm at={i} -->\n")
    assert path.read_text() == mine + "- ⚙ learned 2 <!-- slm at=2 -->\n"
    assert any("never trimmed" in w["text"] for w in log.recent())


def test_the_same_lesson_learned_a_hundred_times_is_one_line_with_its_count(tmp_path: Path) -> None:
    from slmactor.logic.memory.lessons import strip_provenance

    home = tmp_path / "home"
    path = tmp_path / "proj" / ".slmcode" / "MEMORY.md"
    store = LessonStore(path, home / "MEMORY.md", [], WarningLog(), now=lambda: NOW,
                        signing_key=b"k" * 32)
    path.parent.mkdir(parents=True)
    path.write_text("# Project memory\n\nmy own note\n- ⚠ `make test` failed here: hand-written\n")
    for session in range(100):  # a hundred imported sessions, the same failure in each
        store.add_project([Lesson(f"import:claude:s{session}", "failure",
                                  f"`make test` failed here and stayed unresolved: line {session}",
                                  f"2026-01-01T00:{session % 60:02d}:00Z")])
    store.add_project([Lesson("s-other", "convention", "edit: the file must be read first")])
    lines = path.read_text().splitlines()
    own = [ln for ln in lines if "stayed unresolved" in ln]
    assert len(own) == 1 and "n=100" in own[0] and "task=import:claude:s99" in own[0]
    # The user's own lines are untouched, the other lesson is appended once.
    assert lines[:4] == ["# Project memory", "", "my own note",
                         "- ⚠ `make test` failed here: hand-written"]
    assert [strip_provenance(ln) for ln in lines[4:]] == [
        "- ⚠ `make test` failed here and stayed unresolved: line 0",
        "- ⚙ edit: the file must be read first"]
