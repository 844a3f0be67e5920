"""The session ledger a hook keeps: bounded, private, only what pairing needs,
secrets redacted."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from slmactor import ledger as ledger_room
from slmactor.hooks import session

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_a_successful_read_keeps_no_arguments_and_a_command_only_redacted(tmp_path: Path) -> None:
    ledger = session.ledger_path(tmp_path, "/repo", "sess/1:x")
    assert ledger.parent == tmp_path / session.LEDGER_DIR and "/" not in ledger.name[:-6]
    session.append(ledger, session.call_fields(
        "Bash", "", json.dumps({"command": f"curl -H 'token {TOKEN}' x"}), f"curl -H 'token {TOKEN}' x",
        True, "", "", 1.0, edit=False))
    session.append(ledger, session.call_fields(
        "Read", "a.py", json.dumps({"file_path": "a.py"}), "", True, "", "", 2.0, edit=False))
    heredoc = "cat <<'EOF' > x.py\n" + "print(1)\n" * 200 + "EOF"
    session.append(ledger, session.call_fields(
        "Bash", "", json.dumps({"command": heredoc}), heredoc, True, "", "", 3.0, edit=False))
    command, read, long = session.read_ledger(ledger)
    # The command is kept (the fix a corrected command teaches), its secret never.
    assert command["cmd"] and "curl -H" in command["command"] and "redacted" in command["command"]
    assert "args" not in read and "command" not in read
    assert long["cmd"] and "command" not in long and "args" not in long
    assert TOKEN not in ledger.read_text()
    assert stat.S_IMODE(os.stat(ledger).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(ledger.parent).st_mode) == 0o700


def test_failed_calls_and_edits_are_kept_redacted(tmp_path: Path) -> None:
    ledger = session.ledger_path(tmp_path, "/repo", "s")
    args = json.dumps({"file_path": "a.py", "old_string": f"KEY = '{TOKEN}'", "new_string": "KEY = env()"})
    session.append(ledger, session.call_fields("Edit", "a.py", args, "", False, f"not found: {TOKEN}",
                                              "", 1.0, edit=True))
    [entry] = session.read_ledger(ledger)
    assert entry["path"] == "a.py" and "redacted" in entry["args"] and "redacted" in entry["error"]
    assert TOKEN not in ledger.read_text()


def test_past_the_cap_calls_are_noted_without_arguments(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger_room, "MAX_LEDGER_BYTES", 10)
    ledger = session.ledger_path(tmp_path, "/repo", "s")
    for _ in range(2):
        session.append(ledger, session.call_fields("Edit", "a.py", '{"old_string":"x"}', "", True, "",
                                                  "", 1.0, edit=True))
    session.append(ledger, session.prompt_entry("hello", 2.0))
    first, second = session.read_ledger(ledger)
    assert "args" in first and "args" not in second  # and the prompt past the cap was dropped


def test_a_cut_line_loses_only_itself_and_drop_keeps_late_entries(tmp_path: Path) -> None:
    ledger = session.ledger_path(tmp_path, "/repo", "s")
    session.append(ledger, session.prompt_entry("one", 1.0))
    with open(ledger, "a") as fh:
        fh.write('{"e": "call", "at": 2')  # a hook killed mid-write
        fh.write("\n")
    session.append(ledger, session.prompt_entry("three", 3.0))
    assert [e["text"] for e in session.read_ledger(ledger)] == ["one", "three"]
    session.drop(ledger, 1)
    assert [e["text"] for e in session.read_ledger(ledger)] == ["three"]
    session.drop(ledger, 1)
    assert not ledger.exists()


def test_a_drop_that_cannot_replace_the_ledger_leaves_it_whole_and_no_temp_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = session.ledger_path(tmp_path, "/repo", "s")
    for text in ("one", "two"):
        session.append(ledger, session.prompt_entry(text, 1.0))
    before = ledger.read_bytes()

    def full(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    session.drop(ledger, 1)
    assert sorted(p.name for p in ledger.parent.iterdir()) == [ledger.name]
    assert ledger.read_bytes() == before


def test_stale_ledgers_are_pruned(tmp_path: Path) -> None:
    old, new = (session.ledger_path(tmp_path, "/repo", name) for name in ("old", "new"))
    for path in (old, new):
        session.append(path, session.prompt_entry("x", 1.0))
    os.utime(old, (1.0, 1.0))
    assert session.prune(old.parent, now=10 * session.STALE_SECONDS) == 1
    assert new.exists() and not old.exists()
