"""`rm -rf <project>/.slmcode` while the daemon runs: learned rules and regression checks stay
gone (README: deleting a store is always safe).

Episodes, facts, policy and graph noticed such a deletion; the rule and regression stores kept
their state in memory and wrote it back at the next save.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from slmactor.protocol.messages import (
    EvolveFingerprint,
    EvolveLearn,
    EvolveRegressions,
    EvolveRules,
    RunFinish,
)
from slmactor.stores.base.layout import ProjectLayout
from slmactor.testing import DaemonProcess

GUTTER_ARGS = json.dumps({"path": "a.py", "old_str": "  3| x = 1", "new_str": "  3| x = 2"})
FIXED_ARGS = json.dumps({"path": "a.py", "old_str": "x = 1", "new_str": "x = 2"})
GUTTER_MSG = "old_str still contains ws_read's line-number prefix; remove the gutter"


def _report(run_id: str) -> dict[str, Any]:
    return {
        "run_id": run_id, "query": "fix x in a.py", "language": "python",
        "model": "qwen2.5-coder:7b", "planned_tasks": 1, "completed_tasks": 1,
        "edits_attempted": 2, "edits_applied": 2, "llm_calls": 3, "tool_calls": 4,
        "tool_errors": 1, "files_changed": ["a.py"],
        "failures": [{"tool": "ws_edit", "message": GUTTER_MSG, "resolved_by": "llm",
                      "failed_args": GUTTER_ARGS, "fixed_args": FIXED_ARGS,
                      "recheck": {"path": "a.py", "substring": "x = 2"}}],
    }


def rm_rf(path: Path) -> None:
    """`rm -rf path`, as a user runs it while the daemon may still be writing memory files."""
    for _ in range(50):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return
    raise AssertionError(f"{path} keeps coming back")


def _learned_ids(client: Any) -> set[str]:
    return {r["id"] for r in client.ask(EvolveRules())["rules"] if not r.get("seeded")}


def test_rules_and_checks_deleted_by_hand_are_not_written_back(daemon: DaemonProcess) -> None:
    layout = ProjectLayout(daemon.project)
    (daemon.project / "a.py").write_text("x = 2\n")
    with daemon.client(timeout=30) as client:
        done = client.ask(RunFinish(report=_report("before"), wait=True))
        assert done["checks"] == 1 and done["candidates"] == 1
        old_rules = _learned_ids(client)
        assert old_rules and layout.rules.exists() and layout.regressions.exists()
        assert len(client.ask(EvolveRegressions())["checks"]) == 1

        rm_rf(daemon.project / ".slmcode")

        # What the daemon shows right away: nothing learned, nothing to check.
        assert _learned_ids(client) == set()
        assert client.ask(EvolveRegressions())["checks"] == []
        # Writes to both books after the deletion: a new project rule, a run of the checks.
        fp = client.ask(EvolveFingerprint(tool="bash", message="pytest: command not found",
                                          language="python", model="gpt-4o"))
        cand = {"fingerprint": fp["id"], "class": fp["class"], "tool": "bash",
                "language": "python", "model": "gpt-4o", "message": "pytest: command not found",
                "repair": {"kind": "shell", "command": "pip install pytest",
                           "guidance": "install pytest first"},
                "evidence": "after", "scope": "project", "proven": True}
        new_rules = set(client.ask(EvolveLearn(candidates=[cand]))["learned"])
        assert new_rules and not new_rules & old_rules
        ran = client.ask(EvolveRegressions(run=True))
        assert ran["checks"] == [] and ran["ran"] == 0
    assert daemon.stop() == 0
    on_disk = {r["id"] for r in json.loads(layout.rules.read_text())["rules"]}
    assert not on_disk & old_rules and new_rules <= on_disk
    assert not layout.regressions.exists()
