"""`claude plugin validate --profile directory` (the real Claude Code pinned in pins.txt) passes,
with no warning, on this repository's plugin and on a plugin `slmactor hook package --out`
writes anywhere else: each carries its README and a square icon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realcli.harness import REPO, binary

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _validate(plugin: Path, home: Path) -> dict[str, object]:
    env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
           "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "NO_COLOR": "1"}
    done = subprocess.run([str(binary("claude")), "plugin", "validate", "--profile", "directory",
                           "--json", str(plugin)], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def _warnings(report: object) -> list[str]:
    """Every warning or error code anywhere in the report."""
    found: list[str] = []
    if isinstance(report, dict):
        for key, value in report.items():
            # `manifest.warnings/errors`, and the directory profile's `directory.findings`
            # (README_MISSING, ICON_MISSING, …: a code and a severity each).
            if key in ("warnings", "errors", "findings") and isinstance(value, list):
                found += [str(v.get("code") if isinstance(v, dict) else v) for v in value]
            else:
                found += _warnings(value)
    elif isinstance(report, list):
        for value in report:
            found += _warnings(value)
    return found


def test_the_check_sees_a_plugin_without_readme_or_icon(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    for rel in (".claude-plugin/plugin.json", "hooks/hooks.json", ".mcp.json"):
        (bare / rel).parent.mkdir(parents=True, exist_ok=True)
        (bare / rel).write_bytes((REPO / "plugins" / "claude" / rel).read_bytes())
    env = {**os.environ, "HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude")}
    done = subprocess.run([str(binary("claude")), "plugin", "validate", "--profile", "directory",
                           "--json", str(bare)], env=env, capture_output=True, text=True,
                          timeout=120, check=False, cwd=tmp_path)
    assert done.returncode == 1
    assert {"README_MISSING", "ICON_MISSING"} <= set(_warnings(json.loads(done.stdout)))


def test_the_repositorys_plugin_passes_the_directory_profile(tmp_path: Path) -> None:
    report = _validate(REPO / "plugins" / "claude", tmp_path)
    assert _warnings(report) == [], report


def test_a_packaged_plugin_elsewhere_passes_too(tmp_path: Path) -> None:
    out = tmp_path / "out"
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run([sys.executable, "-m", "slmactor", "hook", "package", "--harness",
                           "claude", "--out", str(out), "--json"],
                          env={**os.environ, "HOME": str(home)}, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    plugin = out / "plugins" / "claude"
    assert (plugin / "README.md").is_file() and (plugin / "assets" / "icon.png").is_file()
    report = _validate(plugin, home)
    assert _warnings(report) == [], report
