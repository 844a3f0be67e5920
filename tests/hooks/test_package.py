"""The packages `slmactor hook package` writes: the repository's own are its output, they run
each user's entry point, and without slmactor every command in them answers neutrally, exit 0.

The formats are the harnesses' (cited in their rooms' `package`); the real CLIs load them in
tests/realcli/test_claude_plugin.py and test_gemini_extension.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from slmactor.hooks.install import ENTRY_POINT
from slmactor.hooks.package import files, packageable, stale, write

REPO = Path(__file__).resolve().parents[2]


def _commands(harness: str) -> list[str]:
    out = []
    for rel, data in files(harness).items():
        if not rel.endswith(".json"):
            continue  # the README and the icon
        doc = json.loads(data)
        if rel.endswith("hooks/hooks.json"):
            out += [h["command"] for groups in doc["hooks"].values() for g in groups for h in g["hooks"]]
        for server in (doc.get("mcpServers") or {}).values():
            out.append(server["args"][-1])
    return out


def test_a_plugin_and_an_extension_are_packaged() -> None:
    assert set(packageable()) >= {"claude", "gemini"}


@pytest.mark.parametrize("harness", packageable())
def test_the_committed_package_is_what_the_generator_writes(harness: str) -> None:
    # Regenerate with `slmactor hook package --out .` after changing hooks or rooms.
    assert stale(harness, REPO) == []


@pytest.mark.parametrize("harness", packageable())
def test_every_command_runs_the_users_entry_point(harness: str) -> None:
    commands = _commands(harness)
    assert commands and all(f"$HOME/{ENTRY_POINT}" in c for c in commands)
    assert str(Path.home()) not in "".join(commands) and sys.executable not in "".join(commands)


@pytest.mark.parametrize("harness", packageable())
def test_without_slmactor_each_command_exits_0_at_once(harness: str, tmp_path: Path) -> None:
    for command in _commands(harness):
        done = subprocess.run(["sh", "-c", command], check=False, input="{}", capture_output=True, text=True,
                              env={"HOME": str(tmp_path), "PATH": os.environ["PATH"]}, timeout=10)
        assert done.returncode == 0 and done.stderr == ""
        assert done.stdout.strip() in ("", "{}"), done.stdout  # hooks: the neutral answer


@pytest.mark.parametrize("harness", packageable())
def test_with_an_entry_point_each_command_runs_it(harness: str, tmp_path: Path) -> None:
    entry = tmp_path / ENTRY_POINT
    entry.parent.mkdir(parents=True)
    entry.write_text(f'#!/bin/sh\necho "ran $*" > {tmp_path}/seen\necho "{{}}"\n')
    entry.chmod(0o755)
    for command in _commands(harness):
        done = subprocess.run(["sh", "-c", command], check=False, input="{}", capture_output=True, text=True,
                              env={"HOME": str(tmp_path), "PATH": os.environ["PATH"]}, timeout=10)
        assert done.returncode == 0
        seen = (tmp_path / "seen").read_text()
        assert seen.startswith("ran hook " + harness) or seen == "ran mcp\n", seen


@pytest.mark.parametrize("harness", packageable())
def test_each_package_carries_a_readme_and_a_square_icon(harness: str) -> None:
    import struct

    made = files(harness)
    readme = made[f"plugins/{harness}/README.md"].decode()
    assert "slmactor hook entry-point" in readme and len(readme.split()) >= 40
    icon = made[f"plugins/{harness}/assets/icon.png"]
    assert icon.startswith(b"\x89PNG\r\n\x1a\n")
    assert struct.unpack(">II", icon[16:24]) == (512, 512)  # square, in the directory's range


def test_writing_twice_changes_nothing_and_keeps_other_files(tmp_path: Path) -> None:
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "mine.txt").write_text("keep")
    for harness in packageable():
        assert all(w.changed for w in write(harness, tmp_path))
        assert not any(w.changed for w in write(harness, tmp_path))
        assert stale(harness, tmp_path) == []
    (tmp_path / "plugins" / "gemini" / "hooks" / "hooks.json").write_text("{}")
    assert stale("gemini", tmp_path) == ["plugins/gemini/hooks/hooks.json"]
    assert (tmp_path / "plugins" / "mine.txt").read_text() == "keep"


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    written = write("claude", tmp_path, dry_run=True)
    assert written and all(w.changed for w in written) and not any(tmp_path.iterdir())


def test_a_harness_without_packaging_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no plugin or extension"):
        write("codex", tmp_path)


def _cli(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "slmactor", *args], check=False,
                          capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=60)


def test_cli_check_fails_on_a_stale_file_and_package_writes_the_entry_point(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "out"
    done = _cli("hook", "package", "--out", str(out), "--json", home=home, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["entry_point"] == str(home / ENTRY_POINT) and (home / ENTRY_POINT).is_file()
    assert _cli("hook", "package", "--out", str(out), "--check", home=home,
                cwd=tmp_path).returncode == 0
    (out / ".claude-plugin" / "marketplace.json").write_text("{}\n")
    done = _cli("hook", "package", "--out", str(out), "--check", "--json", home=home,
                cwd=tmp_path)
    assert done.returncode == 1 and json.loads(done.stdout)["stale"] == [".claude-plugin/marketplace.json"]
