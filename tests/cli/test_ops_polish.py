"""What operators meet: a usage error under `--json` is JSON, `service install --dry-run` writes
nothing and shows the command the unit runs (the same line `install` prints), and `hook
entry-point` refuses — in one line naming the command that fixes it — where the MCP SDK the
plugin's server needs is missing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


def _run(*args: str, home: Path, code: str = "") -> subprocess.CompletedProcess[str]:
    prelude = code or "pass"
    script = (f"import sys\n{prelude}\nfrom slmactor.cli.entry import main\n"
              "sys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                          timeout=60, check=False,
                          env={**os.environ, "HOME": str(home),
                               "XDG_CONFIG_HOME": str(home / ".config")})


@pytest.mark.parametrize("argv", [["memory", "working", "--json"], ["--json", "memory", "nope"],
                                  ["status", "--json", "--bogus"]])
def test_a_usage_error_under_json_is_one_json_document(argv: list[str], tmp_path: Path) -> None:
    done = _run(*argv, home=tmp_path)
    assert done.returncode == 2
    reply = json.loads(done.stdout)
    assert reply["ok"] is False and reply["error"].startswith("slmactor") and reply["usage"]
    assert done.stderr == ""


def test_without_json_a_usage_error_stays_argparse_text(tmp_path: Path) -> None:
    done = _run("memory", "working", home=tmp_path)
    assert done.returncode == 2 and done.stdout == "" and "usage:" in done.stderr


def test_service_install_dry_run_writes_nothing_and_names_what_the_unit_runs(tmp_path: Path) -> None:
    dry = _run("service", "install", "--dry-run", "--manager", "systemd", "--json", home=tmp_path)
    assert dry.returncode == 0, dry.stderr
    data = json.loads(dry.stdout)
    assert data["dry_run"] is True and not Path(data["path"]).exists()
    exec_start = re.search(r"^ExecStart=(.*)$", data["content"], flags=re.MULTILINE)
    assert exec_start is not None
    assert data["runs"].split()[-2:] == ["serve", "--replace"]
    assert exec_start.group(1).endswith(" serve --replace")
    installed = _run("service", "install", "--manager", "systemd", home=tmp_path)
    assert installed.returncode == 0, installed.stderr
    assert f"runs: {data['runs']}" in installed.stdout
    unit = Path(data["path"]).read_text()
    assert unit == data["content"]  # the dry run showed exactly what install wrote


def test_entry_point_refuses_without_the_mcp_sdk(tmp_path: Path) -> None:
    done = _run("hook", "entry-point", home=tmp_path, code="sys.modules['mcp'] = None")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs the MCP SDK" in lines[0]
    assert "-m pip install 'mcp>=2.3,<3'" in lines[0]
    assert not (tmp_path / ".local/share/slmactor/bin/slmactor").exists()
    ok = _run("hook", "entry-point", home=tmp_path)
    assert ok.returncode == 0 and (tmp_path / ".local/share/slmactor/bin/slmactor").is_file()


def test_the_fix_names_what_the_mcp_extra_installs() -> None:
    from slmactor.cli.hook.package import MCP_REQUIREMENT

    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert f'mcp = ["{MCP_REQUIREMENT}"]' in pyproject


def test_the_entry_point_survives_its_installation_moving(tmp_path: Path) -> None:
    """Hooks run the entry point; when the installation it names is gone (a clone moved), it
    runs a `slmactor` on PATH, and with none a hook still answers neutrally, exit 0, and says
    in one line what to run."""
    from slmactor.hooks.install import ENTRY_POINT, write_entry_point

    entry = write_entry_point(tmp_path, str(tmp_path / "old-clone/.venv/bin/slmactor"))
    assert entry == tmp_path / ENTRY_POINT
    bare = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([str(entry), "hook", "claude", "SessionStart"], input="{}",
                          capture_output=True, text=True, timeout=30, env=bare, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "{}")
    assert done.stderr.count("\n") == 1 and "slmactor hook entry-point" in done.stderr
    mcp = subprocess.run([str(entry), "mcp"], capture_output=True, text=True, timeout=30,
                         env=bare, check=False)
    assert mcp.returncode == 0 and mcp.stdout == ""
    moved = tmp_path / "bin"
    moved.mkdir()
    (moved / "slmactor").write_text('#!/bin/sh\necho "moved: $*"\n')
    (moved / "slmactor").chmod(0o755)
    found = subprocess.run([str(entry), "hook", "claude", "SessionStart"], capture_output=True,
                           text=True, timeout=30, env={**bare, "PATH": f"{moved}:/usr/bin:/bin"},
                           check=False)
    assert found.stdout == "moved: hook claude SessionStart\n"
