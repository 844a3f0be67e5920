"""`slmactor memory audit` against a real daemon: every claim memory holds is listed with the
records it rests on and its verdict now; a claim whose check fails (a path it presents is not in
the project) is not told in the block, is listed as stale with the reason, and `--fix` retires
it; what a session was told is listed line by line with its check."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from slmactor.protocol.messages import FactObserve, MemoryAudit, MemoryBlock, RunFinish
from slmactor.testing import DaemonProcess
from tests.integration.test_loop import _report


def _cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", *args],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=60)


def _by_says(rows: list[dict[str, Any]], words: str) -> dict[str, Any]:
    found = [r for r in rows if words in r["says"]]
    assert len(found) == 1, (words, rows)
    return found[0]


def test_the_audit_lists_every_claim_with_its_records_and_fix_retires_what_fails(
        daemon: DaemonProcess) -> None:
    (daemon.project / "scripts").mkdir()
    (daemon.project / "scripts" / "check.py").write_text("print('ok')\n")
    (daemon.project / "tools").mkdir()  # a folder of the project, without the script named
    (daemon.project / "tools" / "other.py").write_text("")
    with daemon.client(timeout=30) as client:
        client.ask(FactObserve(kind="command", subject="check",
                               text="`python scripts/check.py` works here (3/3 runs succeeded)",
                               sources=["run-a"]))
        client.ask(FactObserve(kind="command", subject="gone",
                               text="`python tools/gone.py` works here (2/2 runs succeeded)",
                               sources=["run-b"]))
        block = client.ask(MemoryBlock())["text"]
        # Checked when told: the fact whose script is not in the project is not said.
        assert "scripts/check.py" in block and "tools/gone.py" not in block
        told = "- `python scripts/check.py` works here (3/3 runs succeeded)"
        client.ask(RunFinish(report=_report("run-told", told=[
            {"text": told, "channel": "block", "evidence": ["run-a"]},
            {"text": "slmactor memory: run `python tools/gone.py` first", "channel": "advice",
             "evidence": ["rule_x"]}]), wait=True))
        reply = client.ask(MemoryAudit())
    good = _by_says(reply["claims"], "scripts/check.py")
    assert good["verdict"] == "true" and good["evidence"] == ["run-a"]
    stale = _by_says(reply["claims"], "tools/gone.py")
    assert stale["verdict"] == "stale" and "tools/gone.py" in stale["why"]
    assert stale["evidence"] == ["run-b"]
    assert reply["passing"] == reply["total"] - 1
    # What the session was told, line by line, each with its check now.
    lines = {t["says"]: t for t in reply["told"]}
    assert lines[told]["verdict"] == "true" and lines[told]["run_id"] == "run-told"
    advice = lines["slmactor memory: run `python tools/gone.py` first"]
    assert advice["verdict"] == "stale" and advice["channel"] == "advice"
    # The CLI: the same ask; text names what fails and why; --fix retires it.
    out = _cli(daemon, "memory", "audit", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["total"] == reply["total"]
    text = _cli(daemon, "memory", "audit")
    assert "stale: `python tools/gone.py` works here" in text.stdout
    fixed = _cli(daemon, "memory", "audit", "--fix", "--json")
    assert fixed.returncode == 0, fixed.stderr
    retired = json.loads(fixed.stdout)["retired"]
    assert [r["text"] for r in retired] == ["`python tools/gone.py` works here (2/2 runs succeeded)"]
    assert retired[0]["why"].startswith("stale: ")
    with daemon.client(timeout=30) as client:
        after = client.ask(MemoryAudit())
    assert all("tools/gone.py" not in r["says"] for r in after["claims"])
    assert after["passing"] == after["total"]
