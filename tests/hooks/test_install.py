"""`slmactor hook install/uninstall`: our entries in, exactly they out, the user's bytes back."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from slmactor.hooks import breaker, install
from slmactor.hooks.dialects import EVENTS
from slmactor.hooks.install import entries, gate_line, is_ours, settings_path, snippet

CMD = "/opt/venv/bin/slmactor"
JSON_HARNESSES = ("claude", "codex", "gemini", "openhands")


@pytest.fixture(autouse=True)
def _private_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Backups (the user's state directory) and HOME inside the test's own folder."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)


def apply(harness: str, path: Path, command: str, **kw: Any) -> install.Change:
    return install.apply(harness, path, command, home=path.parent / "nohome", env={}, **kw)


def remove(harness: str, path: Path, **kw: Any) -> install.Change:
    return install.remove(harness, path, home=path.parent / "nohome", env={}, **kw)


def _no_copies_beside(folder: Path) -> bool:
    return not [p for p in folder.rglob("*") if p.name.endswith(".slmactor-backup")]


def _settings(harness: str) -> bytes:
    """A user's settings file with their own hook, unrelated keys and their own formatting."""
    own = {"type": "command", "command": "prettier --write", "timeout": 5}
    event = {"claude": "PostToolUse", "codex": "PostToolUse", "gemini": "AfterTool", "openhands": "PostToolUse"}[harness]
    doc: dict[str, Any] = {"hooks": {event: [{"matcher": "Edit", "hooks": [own]}]}}
    if harness != "openhands":  # the SDK forbids other top-level keys
        doc = {"model": "x", "permissions": {"allow": ["Bash(ls)"]}, **doc}
    return (json.dumps(doc, separators=(",", ": ")) + "\n\n").encode()  # not our indentation


def _count_ours(doc: dict[str, Any], harness: str) -> dict[str, int]:
    container = doc.get("hooks", doc)
    return {event: sum(is_ours(h, harness) for g in groups for h in g.get("hooks", []))
            for event, groups in container.items()}


@pytest.mark.parametrize("harness", JSON_HARNESSES)
def test_install_twice_gives_one_entry_and_uninstall_restores_the_bytes(harness: str, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = _settings(harness)
    path.write_bytes(original)
    os.chmod(path, 0o640)
    first = apply(harness, path, CMD)
    assert first.changed and first.backup is not None and (first.backup / "original").read_bytes() == original
    assert not first.backup.is_relative_to(tmp_path / "settings.json") and _no_copies_beside(tmp_path)
    second = apply(harness, path, CMD)
    assert not second.changed
    doc = json.loads(path.read_text())
    assert set(_count_ours(doc, harness).values()) <= {0, 1}
    assert sum(_count_ours(doc, harness).values()) == len(entries(harness, CMD))
    before = json.loads(original)
    assert {k: v for k, v in doc.items() if k != "hooks"} == {k: v for k, v in before.items() if k != "hooks"}
    theirs = [h for groups in doc["hooks"].values() for g in groups for h in g["hooks"] if not is_ours(h, harness)]
    assert theirs == [{"type": "command", "command": "prettier --write", "timeout": 5}]
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    undone = remove(harness, path)
    assert undone.changed and path.read_bytes() == original
    assert not first.backup.exists()  # the record goes with the install
    assert not remove(harness, path).changed


@pytest.mark.parametrize("harness", JSON_HARNESSES)
def test_a_file_we_created_goes_again(harness: str, tmp_path: Path) -> None:
    path = tmp_path / "deep" / "hooks.json"
    change = apply(harness, path, CMD)
    assert change.changed and change.backup is None and path.exists()
    assert json.loads(path.read_text()) == snippet(harness, CMD)
    remove(harness, path)
    assert not path.exists()


def test_a_new_command_replaces_ours_instead_of_adding_one(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    apply("claude", path, CMD)
    apply("claude", path, "/new/venv/bin/python -m slmactor")
    doc = json.loads(path.read_text())
    assert sum(_count_ours(doc, "claude").values()) == len(entries("claude", CMD))
    assert "/new/venv/bin/python -m slmactor hook claude SessionEnd" in path.read_text()


def test_dry_run_prints_the_diff_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(_settings("claude"))
    change = apply("claude", path, CMD, dry_run=True)
    assert change.changed and f'"command": "exec {CMD} hook claude PostToolUse"' in change.diff
    assert path.read_bytes() == _settings("claude")
    assert _no_copies_beside(tmp_path) and not (tmp_path / "state").exists()


def test_uninstall_after_other_edits_keeps_them_and_the_backup(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(_settings("gemini"))
    apply("gemini", path, CMD)
    doc = json.loads(path.read_text())
    doc["theme"] = "dark"
    path.write_text(json.dumps(doc))
    change = remove("gemini", path)
    after = json.loads(path.read_text())
    assert after["theme"] == "dark" and sum(_count_ours(after, "gemini").values()) == 0
    assert change.backup is not None and change.backup.read_bytes() == _settings("gemini") and change.notes


def test_openhands_events_at_the_top_level_stay_there(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    original = json.dumps({"PreToolUse": [{"matcher": "terminal", "hooks": [{"command": "guard.sh"}]}]}).encode()
    path.write_bytes(original)
    apply("openhands", path, CMD)
    doc = json.loads(path.read_text())
    assert "hooks" not in doc and doc["PreToolUse"][0]["hooks"] == [{"command": "guard.sh"}]
    assert doc["PostToolUse"][0]["hooks"][0]["async"] is True
    remove("openhands", path)
    assert path.read_bytes() == original


def test_entries_per_harness() -> None:
    claude = entries("claude", CMD)
    assert claude["PostToolUse"]["hooks"][0]["async"] is True  # a success: recorded, nothing returned
    assert "async" not in claude["PostToolUseFailure"]["hooks"][0]  # may carry a repair
    assert "async" not in claude["PreToolUse"]["hooks"][0]  # may rewrite the input
    # Pre-flight looks at edits, shell commands and reads (through the gate); every call is
    # recorded.
    assert claude["PreToolUse"]["matcher"] == "Bash|Edit|Read"
    assert claude["PostToolUse"]["matcher"] == "*"
    assert claude["PreToolUse"]["hooks"][0]["command"] == gate_line("claude")
    assert entries("gemini", CMD)["BeforeTool"]["matcher"] == "replace|run_shell_command"
    assert "matcher" not in claude["SessionStart"]
    assert all("async" not in g["hooks"][0] for g in entries("codex", CMD).values())  # Codex skips async hooks
    gemini = entries("gemini", CMD)
    assert gemini["AfterTool"]["matcher"] == ".*" and gemini["AfterTool"]["hooks"][0]["timeout"] == 10_000
    assert gemini["AfterTool"]["hooks"][0]["name"] == "slmactor-AfterTool"
    for harness in JSON_HARNESSES:
        for event, group in entries(harness, CMD).items():
            assert event in EVENTS[harness]
            # A session end the harness only waits on is answered at once (`--background`).
            background = " --background" if (harness, event) in (
                ("claude", "SessionEnd"), ("gemini", "SessionEnd")) else ""
            line = gate_line(harness) if event in ("PreToolUse", "BeforeTool") else \
                f"exec {CMD} hook {harness} {event}{background}"
            assert group["hooks"][0]["command"] == line


def test_settings_paths(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    assert settings_path("claude", "project", project, home, {}) == project / ".claude" / "settings.json"
    assert settings_path("claude", "user", project, home, {}) == home / ".claude" / "settings.json"
    # Claude Code reads a user's settings from CLAUDE_CONFIG_DIR when it is set.
    assert settings_path("claude", "user", project, home, {"CLAUDE_CONFIG_DIR": "/cc"}) == Path("/cc/settings.json")
    assert settings_path("claude", "project", project, home, {"CLAUDE_CONFIG_DIR": "/cc"}) == \
        project / ".claude" / "settings.json"
    assert settings_path("codex", "user", project, home, {"CODEX_HOME": "/c"}) == Path("/c/hooks.json")
    assert settings_path("codex", "project", project, home, {}) == project / ".codex" / "hooks.json"
    assert settings_path("gemini", "user", project, home, {}) == home / ".gemini" / "settings.json"
    assert settings_path("openhands", "project", project, home, {}) == project / ".openhands" / "hooks.json"
    assert settings_path("cline", "user", project, home, {}) == home / "Documents" / "Cline" / "Hooks"
    with pytest.raises(ValueError, match="unknown harness"):
        settings_path("vim", "user", project, home, {})


def test_cline_gets_one_executable_per_event_and_keeps_foreign_ones(tmp_path: Path) -> None:
    folder = tmp_path / ".clinerules" / "hooks"
    folder.mkdir(parents=True)
    (folder / "PreToolUse").write_text("#!/bin/sh\necho '{\"cancel\": false}'\n")
    change = apply("cline", folder, CMD)
    assert change.changed and any("PreToolUse" in n for n in change.notes)
    script = (folder / "PostToolUse").read_text()
    assert script.startswith("#!/bin/sh\n") and script.endswith(f"exec {CMD} hook cline PostToolUse\n")
    assert os.access(folder / "PostToolUse", os.X_OK)
    assert not apply("cline", folder, CMD).changed
    remove("cline", folder)
    assert sorted(p.name for p in folder.iterdir()) == ["PreToolUse"]


def test_a_broken_settings_file_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b"{ not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        apply("claude", path, CMD)
    assert path.read_bytes() == b"{ not json"


def test_the_cli_installs_into_the_project_and_reports_the_next_step(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from slmactor.cli.main import main

    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    for harness in install.installable():  # every room with hook settings (OpenCode has a plugin)
        assert main(["--project", str(project), "hook", "install", "--harness", harness, "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["changed"] and report["next"] and Path(report["path"]).is_relative_to(project)
        assert main(["--project", str(project), "--json", "hook", "install", "--harness", harness]) == 0
        assert json.loads(capsys.readouterr().out)["changed"] is False
        assert main(["--project", str(project), "hook", "uninstall", "--harness", harness, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["changed"] is True
    assert main(["--project", str(project), "hook", "install", "--harness", "codex", "--dry-run"]) == 0
    assert "+++" in capsys.readouterr().out and not (project / ".codex" / "hooks.json").exists()


def test_hook_config_prints_the_snippet(capsys: pytest.CaptureFixture[str]) -> None:
    from slmactor.cli.main import main
    from slmactor.cli.service import shell_join, slmactor_command

    assert main(["hook", "config", "claude"]) == 0
    block = json.loads(capsys.readouterr().out)
    command = block["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command == f"exec {shell_join(slmactor_command())} hook claude UserPromptSubmit"


def test_breaker_file(tmp_path: Path) -> None:
    rt = str(tmp_path)
    assert not breaker.is_open(rt, 1000.0)
    breaker.trip(rt, 1000.0, 30.0, "no reply within 2s\nmore")
    assert breaker.is_open(rt, 1029.0) and not breaker.is_open(rt, 1030.5)
    assert (tmp_path / breaker.FILE).read_text() == "1030.000\nno reply within 2s\n"
    breaker.clear(rt)
    assert not breaker.is_open(rt, 1001.0)
    breaker.trip(str(tmp_path / "missing"), 1000.0, 30.0, "x")  # no runtime dir: nothing to do
    (tmp_path / breaker.FILE).write_text("garbage")
    assert not breaker.is_open(rt, 0.0)
    assert breaker.open_seconds(None, {}) == breaker.DEFAULT_OPEN_SECONDS
    assert breaker.open_seconds(None, {breaker.ENV_OPEN_SECONDS: "5"}) == 5.0
    assert breaker.open_seconds(2.0, {breaker.ENV_OPEN_SECONDS: "5"}) == 2.0
    assert breaker.open_seconds(None, {breaker.ENV_OPEN_SECONDS: "soon"}) == breaker.DEFAULT_OPEN_SECONDS
