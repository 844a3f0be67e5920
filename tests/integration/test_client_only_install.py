"""`pip install slmactor` with no extra is the harness side: the client, pyzmq and msgpack only.

A fresh venv gets the package from this checkout with plain `pip install` (pip resolves the
dependencies itself, so a daemon dependency listed by mistake would be installed and caught
here), then a script in that venv drives the real daemon through `slmactor.session` and checks
that none of the daemon's dependencies was imported — or even installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from slmactor.testing import DaemonProcess

REPO = Path(__file__).resolve().parents[2]
DAEMON_ONLY = ("numpy", "anyio", "aiofiles", "psutil", "platformdirs")

SCRIPT = """
import importlib.metadata, importlib.util, json, sys
import slmactor
DAEMON_ONLY = sys.argv[2].split(",")
with slmactor.session(sys.argv[1], "client-only smoke test") as run:
    run.record_tool("Read", path="README.md")
    block = run.memory_block()
print(json.dumps({
    "block": block,
    "success": run.finished.success,
    "imported": sorted(m for m in DAEMON_ONLY if m in sys.modules),
    "installed": sorted(m for m in DAEMON_ONLY if importlib.util.find_spec(m)),
    "requires": importlib.metadata.requires("slmactor"),
}))
"""


@pytest.mark.slow
def test_a_client_only_install_talks_to_the_daemon_without_numpy(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    venv = tmp_path / "harness-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(REPO)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the venv's copy only
    env["SLMACTOR_RUNTIME_DIR"] = str(daemon.runtime_dir)
    result = subprocess.run([str(python), "-c", SCRIPT, str(daemon.project), ",".join(DAEMON_ONLY)], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout)
    assert seen["imported"] == [] and seen["installed"] == []
    assert seen["success"] is True and "client-only smoke test" in seen["block"]
    plain = [r for r in seen["requires"] if "extra ==" not in r]
    assert sorted(r.split(">")[0].split("=")[0] for r in plain) == ["msgpack", "pyzmq"]
