"""Installs that keep the user's own setup: their file's layout and comments, their harness's own
hooks format, the switches they turned off, the hooks they keep elsewhere; backups outside the
project; uninstall gives back the bytes. The files are users' settings as the harnesses document
or write them (`tests/fixtures/settings/SOURCES.md`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from slmactor.hooks import install
from slmactor.hooks.install import entries, is_ours
from slmactor.logic.text import jsonedit

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "settings"
CMD = "/opt/venv/bin/slmactor"


@pytest.fixture(autouse=True)
def _private_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)


def _copy(name: str, to: Path) -> Path:
    to.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURES / name, to)
    return to


def _changed_lines(diff: str) -> tuple[int, int]:
    lines = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    return sum(line.startswith("+") for line in lines), sum(line.startswith("-") for line in lines)


def _our_lines(harness: str, indent: str) -> int:
    """Lines our groups take written out at `indent` (what a person adding them by hand types)."""
    return sum(len(json.dumps(g, indent=indent).splitlines()) for g in entries(harness, CMD).values())


@pytest.mark.parametrize(("harness", "name"), [
    ("claude", "claude-settings.json"), ("claude", "claude-settings-4space.json"),
    ("gemini", "gemini-settings.jsonc"), ("openhands", "openhands-hooks.json"),
])
def test_a_users_file_gets_only_our_lines_and_gets_its_bytes_back(harness: str, name: str, tmp_path: Path) -> None:
    path = _copy(name, tmp_path / "project" / name)
    original = path.read_bytes()
    change = install.apply(harness, path, CMD, home=tmp_path, env={})
    added, removed = _changed_lines(change.diff)
    # Nothing of the user's is rewritten: no line removed, and what is added is our entries
    # (their lines plus one bracket line per new event) at the file's own indentation.
    assert removed == 0, change.diff
    indent = "    " if "4space" in name else "  "
    assert added <= _our_lines(harness, indent) + len(entries(harness, CMD)) * 2, change.diff
    text = path.read_text()
    assert text.endswith("\n") == original.endswith(b"\n")
    assert f'\n{indent}"' in text  # the file's indent unit, not ours
    assert all(line in text.splitlines() for line in original.decode().splitlines() if "//" in line or "/*" in line)
    assert install.remove(harness, path, home=tmp_path, env={}).changed
    assert path.read_bytes() == original
    assert not list(path.parent.iterdir())[1:]  # nothing left beside it


def test_without_the_backup_uninstall_still_gives_the_bytes_back(tmp_path: Path) -> None:
    path = _copy("gemini-settings.jsonc", tmp_path / ".gemini" / "settings.json")
    original = path.read_bytes()
    store = tmp_path / "store"
    install.apply("gemini", path, CMD, home=tmp_path, env={}, store=store)
    shutil.rmtree(store)  # `rm -rf` of the state directory is safe
    install.remove("gemini", path, home=tmp_path, env={}, store=store)
    assert path.read_bytes() == original


def test_gemini_comments_are_kept_through_an_install(tmp_path: Path) -> None:
    path = _copy("gemini-settings.jsonc", tmp_path / ".gemini" / "settings.json")
    install.apply("gemini", path, CMD, home=tmp_path, env={})
    text = path.read_text()
    assert "// keep the code formatted" in text and '"GitHub" /* the light one */' in text
    doc = jsonedit.loads(text, comments=True)
    assert doc["hooks"]["AfterTool"][0]["hooks"][0]["name"] == "format"
    assert doc["hooks"]["AfterTool"][1]["hooks"][0]["name"] == "slmactor-AfterTool"


def test_claude_refuses_comments_it_would_not_read(tmp_path: Path) -> None:
    path = _copy("gemini-settings.jsonc", tmp_path / ".claude" / "settings.json")
    with pytest.raises(ValueError, match=r"not valid JSON \(expected"):
        install.apply("claude", path, CMD, home=tmp_path, env={})


# ------------------------------------------------------------------------------- OpenHands

def test_openhands_sdk_format_stays_the_sdk_format(tmp_path: Path) -> None:
    path = _copy("openhands-hooks.json", tmp_path / ".openhands" / "hooks.json")
    install.apply("openhands", path, CMD, home=tmp_path, env={})
    doc = json.loads(path.read_text())
    # No wrapper (the SDK would then ignore the user's own entries), no PascalCase twin (the SDK
    # refuses an event spelled both ways): every event a snake_case field at the top.
    assert "hooks" not in doc
    assert set(doc) == {"pre_tool_use", "post_tool_use", "user_prompt_submit", "session_start",
                        "session_end", "stop"} & set(doc)
    assert doc["pre_tool_use"] == [{"matcher": "terminal", "hooks": [{"command": "block_dangerous.sh"}]}]
    assert doc["post_tool_use"][0]["hooks"][0]["async"] is True
    # An event the user has already: ours joins it under their key.
    path.write_text('{"post_tool_use": [{"matcher": "terminal", "hooks": [{"command": "log.sh"}]}]}')
    install.apply("openhands", path, CMD, home=tmp_path, env={})
    doc = json.loads(path.read_text())
    assert "PostToolUse" not in doc and doc["post_tool_use"][0]["hooks"][0]["command"] == "log.sh"
    assert any(is_ours(h, "openhands") for g in doc["post_tool_use"] for h in g["hooks"])


def test_openhands_new_file_is_written_as_the_sdk_saves_it(tmp_path: Path) -> None:
    path = tmp_path / ".openhands" / "hooks.json"
    install.apply("openhands", path, CMD, home=tmp_path, env={})
    doc = json.loads(path.read_text())
    assert "hooks" not in doc and "session_start" in doc and "SessionStart" not in doc


def test_openhands_wrapper_file_keeps_its_wrapper(tmp_path: Path) -> None:
    path = tmp_path / ".openhands" / "hooks.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "terminal", "hooks": [{"command": "g.sh"}]}]}}))
    install.apply("openhands", path, CMD, home=tmp_path, env={})
    doc = json.loads(path.read_text())
    assert list(doc) == ["hooks"] and "PostToolUse" in doc["hooks"] and "post_tool_use" not in doc["hooks"]


# ----------------------------------------------------------------------------------- Codex

def test_codex_inline_hooks_of_the_user_get_ours_beside_them(tmp_path: Path) -> None:
    import tomllib

    home = tmp_path / "codex-home"
    config = _copy("codex-config.toml", home / "config.toml")
    before = config.read_bytes()
    env = {"CODEX_HOME": str(home)}
    path = install.settings_path("codex", "user", tmp_path, tmp_path, env)
    change = install.apply("codex", path, CMD, home=tmp_path, env=env)
    # One representation (Codex warns when a folder has both): ours join the user's [hooks].
    assert change.changed and change.path == config and not path.exists()
    assert len(change.notes) == 1 and "hooks of yours" in change.notes[0]
    assert config.read_bytes().startswith(before) and _changed_lines(change.diff)[1] == 0
    hooks = tomllib.loads(config.read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["command"] == "~/.codex/guard.sh"
    assert [g["matcher"] for g in hooks["PreToolUse"]] == ["^Bash$", entries("codex", CMD)["PreToolUse"]["matcher"]]
    assert sorted(hooks) == sorted({"PreToolUse", *entries("codex", CMD)})
    assert not install.apply("codex", path, CMD, home=tmp_path, env=env).changed  # twice: one entry
    again = install.apply("codex", path, "/new/venv/bin/slmactor", home=tmp_path, env=env)
    assert again.changed and "/new/venv/bin/slmactor" in config.read_text() and CMD not in config.read_text()
    undo = install.remove("codex", path, home=tmp_path, env=env)
    assert undo.changed and config.read_bytes() == before and not path.exists()


def test_codex_inline_hooks_it_cannot_extend_are_left_and_said(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    config = home / "config.toml"
    # An inline array cannot be extended by appended tables: hooks.json it is, beside it.
    config.write_text('[hooks]\nSessionStart = [{hooks = [{type = "command", command = "echo hi"}]}]\n')
    before = config.read_bytes()
    change = install.apply("codex", home / "hooks.json", CMD, home=tmp_path, env={"CODEX_HOME": str(home)})
    assert change.changed and change.path == home / "hooks.json" and config.read_bytes() == before
    assert [n for n in change.notes if str(config) in n and "kept" in n]


def test_codex_hooks_of_ours_in_config_toml_are_not_added_twice(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    config = _copy("codex-config.toml", home / "config.toml")
    with config.open("a") as fh:  # the user pasted our entry into config.toml
        fh.write(f'\n[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ntype = "command"\n'
                 f'command = "exec {CMD} hook codex SessionStart"\n')
    path = home / "hooks.json"
    change = install.apply("codex", path, CMD, home=tmp_path, env={"CODEX_HOME": str(home)})
    assert not change.changed and not path.exists()
    assert len(change.notes) == 1 and "already in" in change.notes[0] and "twice" in change.notes[0]
    undo = install.remove("codex", path, home=tmp_path, env={"CODEX_HOME": str(home)})
    assert not undo.changed and "by hand" in undo.notes[0]


def test_codex_hook_the_user_disabled_stays_disabled(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    path = home / "hooks.json"
    install.apply("codex", path, CMD, home=tmp_path, env={"CODEX_HOME": str(home)})
    events = list(json.loads(path.read_text())["hooks"])
    index = events.index("SessionStart")
    (home / "config.toml").write_text(
        f'[hooks.state."{path}:session_start:0:0"]\nenabled = false\n')
    again = install.apply("codex", path, "/new/venv/bin/slmactor", home=tmp_path, env={"CODEX_HOME": str(home)})
    assert again.changed and list(json.loads(path.read_text())["hooks"])[index] == "SessionStart"
    assert [n for n in again.notes if "SessionStart" in n and "stay disabled" in n]
    assert "enabled = false" in (home / "config.toml").read_text()


# --------------------------------------------------------------- switches the user turned off

def test_claude_disable_all_hooks_is_left_on_and_said(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  "disableAllHooks": true\n}\n')
    change = install.apply("claude", path, CMD, home=tmp_path, env={})
    assert json.loads(path.read_text())["disableAllHooks"] is True
    assert len(change.notes) == 1 and "disableAllHooks" in change.notes[0]
    # Turned off in the user's own settings: a project install says so too.
    user = tmp_path / "cc" / "settings.json"
    user.parent.mkdir()
    user.write_text('{"disableAllHooks": true}')
    project = tmp_path / "repo" / ".claude" / "settings.json"
    change = install.apply("claude", project, CMD, home=tmp_path, env={"CLAUDE_CONFIG_DIR": str(user.parent)})
    assert [n for n in change.notes if str(user) in n]


def test_gemini_hooks_turned_off_or_disabled_by_name_stay_so(tmp_path: Path) -> None:
    path = tmp_path / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  "hooksConfig": {"enabled": false}\n}\n')
    change = install.apply("gemini", path, CMD, home=tmp_path, env={})
    assert jsonedit.loads(path.read_text(), comments=True)["hooksConfig"] == {"enabled": False}
    assert "hooksConfig.enabled" in change.notes[0]
    path.write_text('{\n  "hooksConfig": {"disabled": ["slmactor-AfterTool"]}\n}\n')
    change = install.apply("gemini", path, CMD, home=tmp_path, env={})
    assert "slmactor-AfterTool stay disabled" in change.notes[0]


# ------------------------------------------------------------------------------------ Cline

def test_clines_own_hook_keeps_running_beside_ours(tmp_path: Path) -> None:
    folder = tmp_path / "Documents" / "Cline" / "Hooks"
    folder.mkdir(parents=True)
    theirs = folder / "PostToolUse"
    theirs.write_text("#!/bin/sh\necho '{\"cancel\": false}'\n")
    change = install.apply("cline", folder, CMD)
    assert theirs.read_text() == "#!/bin/sh\necho '{\"cancel\": false}'\n"
    assert "hook cline PostToolUse" in (folder / "PostToolUse.sh").read_text()
    assert [n for n in change.notes if "kept your" in n and "PostToolUse.sh" in n]
    assert not install.apply("cline", folder, CMD).changed
    install.remove("cline", folder)
    assert sorted(p.name for p in folder.iterdir()) == ["PostToolUse"]


def test_a_legacy_clinerules_file_gets_one_line_not_errno_20(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    (project / ".clinerules").write_text("Always write tests.\n")
    path = install.settings_path("cline", "project", project, tmp_path, {})
    assert path == project / ".cline" / "hooks"
    from slmactor import harnesses

    note = harnesses.get("cline").settings_path_note("project", project, tmp_path, {})
    assert ".clinerules is a file" in note and ".cline/hooks" in note
    install.apply("cline", path, install.SHARED)
    assert (project / ".clinerules").read_text() == "Always write tests.\n"
    with pytest.raises(ValueError, match="is a file, not a folder"):
        install.apply("cline", project / ".clinerules" / "hooks", CMD)


# ------------------------------------------------------------------------------- backups

def test_an_earlier_installs_backup_beside_the_file_moves_out(tmp_path: Path) -> None:
    path = _copy("claude-settings.json", tmp_path / "repo" / ".claude" / "settings.json")
    original = path.read_bytes()
    legacy = path.with_name("settings.json.slmactor-backup")
    legacy.write_bytes(original)
    path.write_text(json.dumps(install.merge(json.loads(original), "claude", CMD), indent=2) + "\n")
    change = install.remove("claude", path, home=tmp_path, env={})
    assert change.changed and path.read_bytes() == original and not legacy.exists()


# ----------------------------------------------------------------------------- the command

def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    from slmactor.cli.main import main

    assert main([*args, "--json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_user_scope_is_the_default(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    report = _cli(["hook", "install", "--harness", "claude"], capsys)
    assert report["scope"] == "user" and report["path"] == str(tmp_path / "home" / ".claude" / "settings.json")
    assert report["commit"] == [] and not (project / ".claude").exists()
    command = json.loads(Path(report["path"]).read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    # A user's own file runs the user's entry point too: moving the installation is one file
    # to refresh (`hook entry-point`), and the hooks answer neutrally meanwhile.
    assert command.startswith('h="$HOME/.local/share/slmactor/bin/slmactor"; [ -x "$h" ] && exec')
    assert (tmp_path / "home" / ".local/share/slmactor/bin/slmactor").is_file()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    assert _cli(["hook", "install", "--harness", "claude"], capsys)["path"] == str(tmp_path / "cc" / "settings.json")


def test_project_scope_when_asked_says_what_to_commit(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    report = _cli(["hook", "install", "--harness", "gemini", "--project"], capsys)
    assert report["scope"] == "project" and report["commit"] == [".gemini/settings.json"]
    report = _cli(["hook", "install", "--harness", "cline", "--project"], capsys)
    assert len(report["commit"]) >= 5 and all(p.startswith(".clinerules/hooks/") for p in report["commit"])
    assert not [p for p in project.rglob("*") if p.name.endswith(".slmactor-backup")]
    from slmactor.cli.main import main

    assert main(["hook", "install", "--harness", "gemini", "--project"]) == 0
    assert "commit for your team" not in capsys.readouterr().out  # nothing changed this time
    (project / ".clinerules").mkdir(exist_ok=True)
    assert main(["hook", "uninstall", "--harness", "cline", "--project"]) == 0
    out = capsys.readouterr().out
    assert "commit the change" in out


def test_the_command_says_one_line_for_a_legacy_clinerules_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from slmactor.cli.main import main

    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / ".clinerules").write_text("Always write tests.\n")
    monkeypatch.chdir(project)
    assert main(["hook", "install", "--harness", "cline", "--project"]) == 0
    out = capsys.readouterr().out
    assert "Errno" not in out and len([line for line in out.splitlines() if ".clinerules is a file" in line]) == 1
    assert (project / ".cline" / "hooks" / "TaskStart").is_file()
    assert main(["hook", "uninstall", "--harness", "cline", "--project"]) == 0
    assert not list((project / ".cline" / "hooks").iterdir())


def test_ours_in_both_scopes_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    _cli(["hook", "install", "--harness", "claude", "--project"], capsys)
    report = _cli(["hook", "install", "--harness", "claude"], capsys)
    assert [n for n in report["notes"] if "twice" in n and "--project" in n]
    again = _cli(["hook", "install", "--harness", "claude", "--project"], capsys)
    assert not again["changed"] and [n for n in again["notes"] if "twice" in n]
