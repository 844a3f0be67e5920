"""The session's calls in the order they happened: Claude Code 2.1.328 runs PostToolUse hooks
asynchronously, so an edit's hook may write its ledger entry after the next call's; the
transcript's timestamps (each tool_result's `timestamp`) say the order, and the report's fix
("it passed after editing `calc.py`") depends on it."""

from __future__ import annotations

import json
from typing import Any

from slmactor.ledger import merge_transcript
from slmactor.logic.loop.session_report import pair_failures

FAILED = "Exit code 1\nAssertionError: add(2, 3) should be 5"


def _call(tool: str, at: float, call_id: str, *, ok: bool = True, **more: Any) -> dict[str, Any]:
    return {"e": "call", "at": at, "tool": tool, "ok": ok, "id": call_id, **more}


def test_a_late_hook_entry_takes_the_transcript_s_time() -> None:
    bash = {"family": "shell", "command": "python3 test_calc.py",
            "args": json.dumps({"command": "python3 test_calc.py"})}
    edit = {"family": "edit", "path": "calc.py",
            "args": json.dumps({"path": "calc.py", "old_str": "a - b", "new_str": "a + b"})}
    # The hooks' ledger: the edit's entry was written last (its async hook ran late).
    ledger = [_call("Bash", 10.0, "t1", ok=False, error=FAILED, **bash),
              _call("Bash", 13.0, "t7", **bash),
              _call("Edit", 13.5, "t5", **edit)]
    transcript = [_call("Bash", 10.0, "t1", ok=False, error=FAILED, **bash),
                  _call("Edit", 12.0, "t5", **edit),
                  _call("Bash", 13.0, "t7", **bash)]
    merged = merge_transcript(ledger, transcript, lambda tool: tool == "Edit")
    assert [e["id"] for e in merged] == ["t1", "t5", "t7"]
    [failure] = pair_failures(merged)
    assert failure["resolution"] == "it passed after editing `calc.py`"
    # Without the transcript the ledger's order stands: the edit came after, nothing between.
    [alone] = pair_failures(sorted(ledger, key=lambda e: e["at"]))
    assert alone.get("resolution", "") == ""
