"""Markdown mirrors: atomic, redacted, capped writes; reads that never raise."""

from __future__ import annotations

import os
from pathlib import Path

from slmactor.stores import WarningLog, read_text, write_markdown
from slmactor.stores.base.markdown import TRUNCATED_LINE, cap_markdown


def test_write_then_read_round_trip_with_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "SEMANTIC.md"
    write_markdown(path, "# Facts\n\n- uses **pytest**")
    assert path.read_text() == "# Facts\n\n- uses **pytest**\n"
    assert read_text(path) == "# Facts\n\n- uses **pytest**\n"
    write_markdown(path, "")
    assert read_text(path) == ""


def test_long_text_is_capped_with_a_truncated_line(tmp_path: Path) -> None:
    path = tmp_path / "WORKING.md"
    text = "".join(f"- item {n} ✓\n" for n in range(10_000))
    write_markdown(path, text, cap_bytes=1000)
    raw = path.read_bytes()
    assert len(raw) <= 1000
    assert raw.decode().endswith("\n\n" + TRUNCATED_LINE + "\n")
    assert raw.decode().startswith("- item 0 ✓\n- item 1 ✓\n")


def test_cap_never_splits_a_character() -> None:
    text = "é" * 100  # 2 bytes each
    capped = cap_markdown(text, 51)
    assert len(capped.encode()) <= 51
    assert capped.endswith(TRUNCATED_LINE + "\n")
    assert set(capped.split("\n")[0]) == {"é"}
    assert cap_markdown("short", 100) == "short"


def test_secrets_are_redacted_in_mirrors(tmp_path: Path) -> None:
    path = tmp_path / "REFLECTION.md"
    token = "xoxb-" + "1234567890-abcdefghij"
    write_markdown(path, f"- Slack call failed with {token}\n- export DB_PASSWORD=pa55word99\n")
    text = path.read_text()
    assert token not in text and "pa55word99" not in text
    assert "«redacted:slack_token»" in text and "«redacted:secret»" in text


def test_read_text_caps_and_tolerates_everything(tmp_path: Path) -> None:
    assert read_text(tmp_path / "missing.md") == ""
    path = tmp_path / "big.md"
    path.write_text("ü" * 1000)  # 2000 bytes
    capped = read_text(path, cap_bytes=101)
    assert capped == "ü" * 50  # the half character at the cap is held back
    assert read_text(path, cap_bytes=0) == ""
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"ok \xff\xfe end")
    assert read_text(bad) == "ok \ufffd\ufffd end"
    directory = tmp_path / "dir.md"
    directory.mkdir()
    assert read_text(directory) == ""
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    assert read_text(fifo) == ""  # must not block
    outside = tmp_path / "outside.txt"
    outside.write_text("private")
    link = tmp_path / "MEMORY.md"
    link.symlink_to(outside)
    assert read_text(link) == ""  # symlinks are not followed


def test_non_file_in_the_way_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.mkdir()
    warnings = WarningLog()
    write_markdown(path, "# Lessons\n", warnings=warnings)
    assert path.read_text() == "# Lessons\n"
    assert (tmp_path / "MEMORY.md.corrupt").is_dir()
    assert any("not a regular file" in text for text in warnings.texts())
