"""The README taken literally: from a fresh clone, its shell lines pasted in order into one shell
(a private home, the real Claude Code pinned in pins.txt) give the demo, Claude Code's hooks in
the user's settings, and then the plugin — and `claude mcp list` shows slmactor connected, both
as the user's server and as the plugin's. Every line, not a paraphrase: the README's fenced `sh`
blocks are read from the file, except the test command (this suite is its own run of it).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.realcli.harness import REPO, binary

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def readme_lines() -> list[str]:
    """Every command line of the README's `sh` blocks, in order, but the test command's block."""
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)
    lines = []
    for block in blocks:
        if "pytest" in block:
            continue
        lines += [line for line in block.splitlines() if line.strip()]
    return lines


def test_the_readme_works_pasted_into_one_shell(tmp_path: Path) -> None:
    claude = binary("claude")
    lines = readme_lines()
    assert any("slmactor demo" in line for line in lines)
    assert any("claude plugin install" in line for line in lines)
    clone = tmp_path / "slmactor"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
    home = tmp_path / "home"
    home.mkdir()
    runtime = tmp_path / "rt"
    script = "set -euo pipefail\n" + "\n".join(
        f"echo {shlex.quote('$ ' + line)}\n{line}" for line in lines) + "\nslmactor stop\n"
    drop = ("VIRTUAL_ENV", "PYTHONPATH", "SLMACTOR_HOME", "CLAUDE_CONFIG_DIR")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("ANTHROPIC")}
    env.update({"HOME": str(home), "SLMACTOR_RUNTIME_DIR": str(runtime),
                "PATH": os.pathsep.join([str(claude.parent), env.get("PATH", "")]),
                "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "NO_COLOR": "1"})
    try:
        done = subprocess.run(["bash", "-c", script], cwd=clone, env=env, capture_output=True,
                              text=True, timeout=800, check=False)
    finally:  # a line that failed half-way may have left the daemon it started
        if (clone / ".venv/bin/slmactor").exists():
            subprocess.run([str(clone / ".venv/bin/slmactor"), "stop"], env=env, timeout=60,
                           capture_output=True, check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    # The demo ran: its replay's verdict, with no wrong rewrite.
    assert "Verdict: memory would have helped" in done.stdout and "0 wrong rewrite(s)" in done.stdout, out[-4000:]
    # Claude Code's hooks were in the user's settings (the plugin block takes them out again
    # before the plugin brings its own): they ran the per-user entry point, not the clone.
    hooks_out = done.stdout.split("$ slmactor hook install --harness claude", 1)[1]
    assert "installed slmactor hooks (user)" in hooks_out
    entry = home / ".local/share/slmactor/bin/slmactor"
    assert entry.is_file() and str(clone) in entry.read_text()
    # Both `claude mcp list` runs: the user's server, then the plugin's, connected.
    listings = done.stdout.split("$ claude mcp list")[1:]
    assert len(listings) == 2
    assert re.search(r"^slmactor: .*[✓✔] Connected", listings[0], flags=re.MULTILINE), listings[0]
    assert re.search(r"^plugin:slmactor:slmactor: .*[✓✔] Connected", listings[1], flags=re.MULTILINE), listings[1]
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert "slmactor" not in json.dumps(settings.get("hooks", {}))  # no hooks twice
