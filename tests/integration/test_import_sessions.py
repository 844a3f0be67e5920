"""`slmactor import sessions` against a real daemon, over the real-format fixtures of every
reader (`tests/fixtures/sessions/`): each session becomes one run in the project it ran in, a
second import adds nothing, an interrupted one resumes without doubling anything, a foreign
JSON file is skipped and counted, a session whose directory is gone is counted and skipped, and
a secret in a session reaches no store."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from slmactor.protocol.messages import MetricsShow
from slmactor.testing import DaemonProcess, wait_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
FOREIGN = Path(__file__).resolve().parents[1] / "fixtures" / "trajectories" / "foreign-package.json"
#: Sessions in the fixture tree (claude 1, codex 1, gemini 2, cline 2, mini 1, swe 1, openhands 2).
SESSIONS = 10
#: A credential of a documented shape (AWS's example access key id, docs.aws.amazon.com IAM
#: "Managing access keys"), planted in a failed command.
SECRET = "AKIAIOSFODNN7EXAMPLE"


def run(daemon: DaemonProcess, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "--no-autostart",
         "--json", "import", "sessions", *args],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "history"
    shutil.copytree(FIXTURES, root, ignore=shutil.ignore_patterns("*.md"))
    shutil.copy(FOREIGN, root / "codex" / "package.json")
    # Plant a secret in the Codex session's failing command output.
    rollout = root / "codex" / "rollout.jsonl"
    rollout.write_text(rollout.read_text().replace("No such file or directory",
                                                   f"No such file or directory AWS_KEY={SECRET}", 1))
    return root


def runs(daemon: DaemonProcess, project: Path) -> list[dict[str, Any]]:
    with daemon.client(project=project) as c:
        found: list[dict[str, Any]] = c.ask(MetricsShow(last=0))["runs"]
        return found


def test_import_twice_imports_each_session_once(daemon: DaemonProcess, tmp_path: Path) -> None:
    root = tree(tmp_path)
    first = run(daemon, str(root), "--project", str(daemon.project))
    assert first["new"] == SESSIONS and first["sessions"] == SESSIONS
    assert first["skipped_files"] == {"not a session": 1}  # package.json, counted, not fatal
    assert any(e.endswith("package.json: not a session") for e in first["skipped_examples"])
    assert first["companion_files"] == 2  # Cline's ui_messages.json and SDK manifest
    assert set(first["by_harness"]) == {"claude", "codex", "gemini", "cline", "mini_swe_agent",
                                        "sweagent", "openhands"}
    assert first["failed_calls"] >= 8 and sum(first["failures_by_class"].values()) >= 6
    wait_for(lambda: len(runs(daemon, daemon.project)) == SESSIONS, "every session a run", timeout=60)
    ids = {r["run_id"] for r in runs(daemon, daemon.project)}
    assert "import:claude:3c7e488d-d200-4459-a292-559880d9917c" in ids
    assert "import:codex:019c9b17-3a1b-7f72-99f4-fbc8348da5a8" in ids

    second = run(daemon, str(root), "--project", str(daemon.project))
    assert second["new"] == 0 and second["unchanged_files"] == SESSIONS  # not even read again
    assert len(runs(daemon, daemon.project)) == SESSIONS

    # Nothing stored anywhere still holds the planted secret (the calls are redacted before
    # they are sent, the daemon redacts what it stores).
    stored = [p for p in (daemon.project / ".slmcode").rglob("*") if p.is_file()]
    assert stored and not [p for p in stored if SECRET in p.read_text(errors="replace")]
    assert SECRET not in (daemon.home / "import-sessions.jsonl").read_text()


def test_an_interrupted_import_resumes(daemon: DaemonProcess, tmp_path: Path) -> None:
    root = tree(tmp_path)
    run(daemon, str(root), "--project", str(daemon.project))
    state = daemon.home / "import-sessions.jsonl"
    # As if the run had stopped right after the daemon accepted its third session.
    kept = [line for line in state.read_text().splitlines() if line.startswith('{"s":')][:3]
    state.write_text("\n".join(kept) + "\n{\"s\":\"import:cut")  # and its last line was cut
    again = run(daemon, str(root), "--project", str(daemon.project))
    assert again["already_imported"] == 3 and again["new"] == SESSIONS - 3
    # Re-sent sessions are the same runs: the daemon still holds each once.
    wait_for(lambda: len(runs(daemon, daemon.project)) == SESSIONS, "every session a run", timeout=60)
    assert run(daemon, str(root), "--project", str(daemon.project))["new"] == 0


def test_each_session_goes_to_the_directory_it_ran_in(daemon: DaemonProcess, tmp_path: Path) -> None:
    root = tree(tmp_path)
    elsewhere = tmp_path / "agents-md-evaluator"
    elsewhere.mkdir()
    transcript = root / "claude" / "session.jsonl"
    transcript.write_text(transcript.read_text().replace("/Users/user/Code/agents-md-evaluator", str(elsewhere)))
    done = run(daemon, str(root))
    assert done["new"] == 1  # the one session whose directory exists
    assert done["skipped_sessions"] == {"ran in a directory not here (give --project)": 3,
                                        "names no directory (give --project)": 6}
    wait_for(lambda: len(runs(daemon, elsewhere)) == 1, "the run in its own project", timeout=60)
    [only] = runs(daemon, elsewhere)
    assert only["run_id"] == "import:claude:3c7e488d-d200-4459-a292-559880d9917c"
    assert only["tool_errors"] == 1 and only["edits_attempted"] == 1


def test_dry_run_sends_and_remembers_nothing(daemon: DaemonProcess, tmp_path: Path) -> None:
    root = tree(tmp_path)
    done = run(daemon, str(root), "--project", str(daemon.project), "--dry-run")
    assert done["new"] == SESSIONS and done["dry_run"] is True
    assert runs(daemon, daemon.project) == []
    assert not (daemon.home / "import-sessions.jsonl").exists()


def test_by_default_the_harnesses_own_locations_are_read(daemon: DaemonProcess, tmp_path: Path) -> None:
    env = {**daemon.env, "HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
           "CODEX_HOME": str(tmp_path / "codex"), "GEMINI_CLI_HOME": str(tmp_path / "gemini-home"),
           "CLINE_DIR": str(tmp_path / "cline")}
    placed = {
        FIXTURES / "claude" / "session.jsonl": tmp_path / "claude" / "projects" / "-p" / "s.jsonl",
        FIXTURES / "codex" / "rollout.jsonl": tmp_path / "codex" / "sessions" / "2026" / "02" / "26" / "rollout-x.jsonl",
        FIXTURES / "gemini" / "session-2026-jsonl.jsonl":
            tmp_path / "gemini-home" / ".gemini" / "tmp" / "repo" / "chats" / "session-x.jsonl",
    }
    for source, target in placed.items():
        target.parent.mkdir(parents=True)
        shutil.copy(source, target)
    (tmp_path / "gemini-home" / ".gemini" / "tmp" / "repo" / ".project_root").write_text(str(daemon.project))
    done = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "--no-autostart",
         "--json", "import", "sessions", "--since", "2025-01-01"],
        check=False, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert sorted(result["by_harness"]) == ["claude", "codex", "gemini"]
    # The Gemini chat's folder names this project; the others' directories are not on this machine.
    assert result["new"] == 1 and result["skipped_sessions"] == {"ran in a directory not here (give --project)": 2}
    wait_for(lambda: len(runs(daemon, daemon.project)) == 1, "the Gemini session a run", timeout=60)


def test_a_session_that_went_on_is_imported_from_its_first_new_call(daemon: DaemonProcess,
                                                                    tmp_path: Path) -> None:
    root = tmp_path / "codex"
    root.mkdir()
    rollout = root / "rollout.jsonl"
    lines = (FIXTURES / "codex" / "rollout.jsonl").read_text().splitlines(keepends=True)
    # The rollout as it stood after its first call: the rest of it was written later.
    first_output = next(i for i, line in enumerate(lines) if '"function_call_output"' in line)
    rollout.write_text("".join(lines[: first_output + 1]))
    assert run(daemon, str(root), "--project", str(daemon.project))["new"] == 1
    rollout.write_text("".join(lines))
    later = run(daemon, str(root), "--project", str(daemon.project))
    assert later["new"] == 0 and later["continued"] == 1 and later["calls"] == 2
    wait_for(lambda: len(runs(daemon, daemon.project)) == 2, "the session and its next part", timeout=60)
    parts = {r["run_id"]: r["tool_calls"] for r in runs(daemon, daemon.project)}
    assert parts == {"import:codex:019c9b17-3a1b-7f72-99f4-fbc8348da5a8": 1,
                     "import:codex:019c9b17-3a1b-7f72-99f4-fbc8348da5a8#2": 2}
    assert run(daemon, str(root), "--project", str(daemon.project))["unchanged_files"] == 1
