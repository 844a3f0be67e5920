"""The OpenHands SDK itself (from PyPI) with `MemoryCallback`, driven by the SDK's own `TestLLM`,
against a real daemon and a real temporary repository: two runs of the same task.

The SDK needs Python >= 3.12 and slmactor's venv may be older, so each run is a child process of
tests/integration/openhands_sdk_driver.py in a venv that has openhands-sdk: `$SLMACTOR_SDK_VENV`,
else `.venv312` at the repository root (`.ci/run` makes it, best effort). The interpreter that
venv needs is found as `$SLMACTOR_PY312`, else `~/.pyenv/versions/3.1[2-9]*/bin/python`, else
`python3.12` on PATH. Without either the test is skipped and says which is missing.

Run 1 meets a failing check, fixes the code, re-runs the check and finishes. Run 2 starts with
the memory block in the agent's system message, and the same failure is answered with the
remembered fix, sent to the agent as a message it reads before its next completion.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from slmactor.protocol.messages import EpisodeRecent, EvolveRules
from slmactor.testing import DaemonProcess
from tests.fixtures.calc_repo import BUGGY, FIX, make_calc_repo
from tests.integration.test_runtime import wait_for

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("openhands_sdk_driver.py")
TASK = "add() returns the wrong sum; make check.py pass"


def _runs(python: str) -> bool:
    try:
        probe = subprocess.run([python, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                               capture_output=True, text=True, timeout=30, check=False)
    except OSError:
        return False
    return probe.returncode == 0 and probe.stdout.strip() == "True"


def python312() -> str | None:
    """A Python >= 3.12 that runs (a pyenv shim without that version selected does not)."""
    if os.environ.get("SLMACTOR_PY312"):
        return os.environ["SLMACTOR_PY312"] if _runs(os.environ["SLMACTOR_PY312"]) else None
    candidates = [str(p) for p in sorted(Path.home().glob(".pyenv/versions/3.1[2-9]*/bin/python"))]
    candidates += [c for c in [shutil.which("python3.12")] if c]
    return next((c for c in candidates if _runs(c)), None)


def sdk_python() -> Path | None:
    """The python of a venv where `import openhands.sdk` works."""
    venv = Path(os.environ.get("SLMACTOR_SDK_VENV") or ROOT / ".venv312")
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    probe = subprocess.run([str(python), "-c", "import openhands.sdk"], capture_output=True,
                           timeout=120, check=False)
    return python if probe.returncode == 0 else None


def _skip_reason() -> str:
    if python312() is None:
        return ("openhands-sdk needs Python >= 3.12: none found (set SLMACTOR_PY312, or install "
                "one with pyenv)")
    return ("no venv with openhands-sdk: .ci/run makes .venv312 (or set SLMACTOR_SDK_VENV), e.g. "
            "python3.12 -m venv .venv312 && .venv312/bin/pip install openhands-sdk -e .")



def _conversation(python: Path, daemon: DaemonProcess, repo: Path, out: Path) -> dict[str, Any]:
    # The slmactor under test (this tree) first on the path, not a copy installed in the venv.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SLMACTOR_RUNTIME_DIR": str(daemon.runtime_dir),
           "OPENHANDS_SUPPRESS_BANNER": "1", "PYTHONDONTWRITEBYTECODE": "1",
           # LiteLLM (under the SDK) fetches its model price list on import: no network here.
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([str(python), str(DRIVER), str(repo), TASK, str(out)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert result["errors"] == [] and result["finished"], result
    assert result["status"] == "finished"
    return result


def _texts(call: list[list[str]], role: str) -> list[str]:
    return [text for who, text in call if who == role]


@pytest.mark.slow
@pytest.mark.timeout(900)  # two SDK start-ups in child interpreters on a shared machine
def test_two_conversations_the_second_starts_from_memory_and_gets_the_remembered_fix(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    python = sdk_python()
    if python is None:
        pytest.skip(_skip_reason())
    repo = make_calc_repo(tmp_path)

    first = _conversation(python, daemon, repo, tmp_path / "run1.json")
    assert "return a + b" in (repo / "calc.py").read_text()
    assert first["sent"] == [] and first["advice"] == []  # nothing known yet
    assert not any("[slmactor]" in text for call in first["seen"] for _, text in call)
    with daemon.client(project=repo) as client:
        wait_for(lambda: len(client.ask(EpisodeRecent(n=5))["episodes"]) == 1, "run 1's episode")
        wait_for(lambda: any(not r.get("seeded") for r in
                             client.ask(EvolveRules(include_all=True))["rules"]),
                 "a rule learned from run 1")

    (repo / "calc.py").write_text(BUGGY)  # the same bug again
    second = _conversation(python, daemon, repo, tmp_path / "run2.json")
    assert "return a + b" in (repo / "calc.py").read_text()

    # The memory block is in the system message of the agent's very first completion.
    block = second["block"]
    assert TASK in block and len(block) > len(first["block"])
    assert any(block in text for text in _texts(second["seen"][0], "system"))
    # The repeated failure: the remembered fix reaches the agent before its next completion,
    # after the failed call's result.
    assert len(second["sent"]) == 1 and FIX in second["sent"][0]
    after_failure = second["seen"][1]
    assert "should be 5" in after_failure[-2][1]  # the failed check's result ...
    assert after_failure[-1] == ["user", second["sent"][0]]  # ... then the advice
    assert not any(second["sent"][0] in text for _, text in second["seen"][0])

    with daemon.client(project=repo) as client:
        wait_for(lambda: len(client.ask(EpisodeRecent(n=5))["episodes"]) == 2, "both episodes")
    shown = subprocess.run(
        [sys.executable, "-m", "slmactor", "memory", "episodes", "--json",
         "--runtime-dir", str(daemon.runtime_dir), "--project", str(repo)],
        capture_output=True, text=True, env=daemon.env or None, check=True)
    episodes = json.loads(shown.stdout)["episodes"]
    # Both conversations, each with its failed check and its success, by the SDK's model name.
    assert [(e["query"], e["tools"], e["model"], e["success"], e["failures"])
            for e in episodes] == [(TASK, ["terminal"], "test-model", True, 1)] * 2
