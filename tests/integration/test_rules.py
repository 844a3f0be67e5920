"""The rules actor through the real daemon, real sockets and the real client.

The acceptance test: a failure resolved by a retry whose fix is a named transform teaches a rule,
and the second occurrence of the same failure is answered with `apply: true` and `new_args` equal
to the fix — no model involved — also after a daemon restart on the same stores.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from slmactor.client import RequestFailed
from slmactor.logic.evolve.rule_seeds import seed_rules
from slmactor.logic.failures.fingerprint import FINGERPRINT_VERSION
from slmactor.protocol.messages import (
    EvolveFingerprint,
    EvolveForget,
    EvolveLearn,
    EvolveObserve,
    EvolveOnFailure,
    EvolveResolved,
    EvolveRules,
    WorkingSnapshot,
)
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

TOOL = "str_replace_editor"
MESSAGE = ("ERROR:\nNo replacement was performed, old_str `  12| x = 1` did not appear verbatim "
           "in /repo/app/models.py.")
MESSAGE_2 = ("ERROR:\nNo replacement was performed, old_str `  40| y = 2` did not appear verbatim "
             "in /repo/app/views.py.")
FAILED = json.dumps({"command": "str_replace", "path": "/repo/app/models.py",
                     "old_str": "  12| x = 1", "new_str": "  12| x = 10"})
FIXED = json.dumps({"command": "str_replace", "path": "/repo/app/models.py",
                    "old_str": "x = 1", "new_str": "x = 10"})
FAILED_2 = json.dumps({"command": "str_replace", "path": "/repo/app/views.py",
                       "old_str": "  40| y = 2", "new_str": "  40| y = 3"})
FIXED_2 = {"command": "str_replace", "path": "/repo/app/views.py", "old_str": "y = 2",
           "new_str": "y = 3"}


def on_failure(client: Any, message: str, args: str, run: str = "r1") -> dict[str, Any]:
    return client.ask(EvolveOnFailure(run_id=run, tool=TOOL, message=message, language="python",
                                      model="qwen2.5-coder:7b", args=args))


def test_a_transform_fix_is_learned_and_applied_without_a_model(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        first = on_failure(client, MESSAGE, FAILED)
        fp = first["fingerprint"]
        assert fp["class"] == "edit_not_found" and fp["salient"] == ""
        # Only the shipped read-again rule answers the first time: guidance, no rewrite.
        assert first["found"] is True and first["seeded"] is True and first["new_args"] == ""
        assert first["repair"]["kind"] == "guidance"

        # Working memory holds the open failure under the fingerprint id.
        snap = client.ask(WorkingSnapshot(run_id="r1"))
        assert fp["id"] in json.dumps(snap)

        # The harness (or its model) fixed the call; the retry with these arguments worked.
        done = client.ask(EvolveResolved(run_id="r1", fingerprint=fp["id"], resolution="retry",
                                         failed_args=FAILED, fixed_args=FIXED))
        assert done["transform"] == "strip_line_number_prefix"
        assert done["learned"]["successes"] == 1 and done["learned"]["fingerprint"] == fp["id"]

        # Second occurrence (another file, another line): same fingerprint, repaired for free.
        second = on_failure(client, MESSAGE_2, FAILED_2, run="r2")
        assert second["fingerprint"]["id"] == fp["id"]
        assert second["found"] and second["apply"] and second["exact"]
        assert second["repair"]["transform"] == "strip_line_number_prefix"
        assert json.loads(second["new_args"]) == FIXED_2
        assert "seen this exact failure before (learned here)" in second["reason"]

        listed = client.ask(EvolveRules())["rules"]
        assert [r["id"] for r in listed] == [second["rule_id"]]
        assert len(client.ask(EvolveRules(include_all=True))["rules"]) == len(seed_rules()) + 1


def test_learned_rules_survive_a_restart(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        fp = on_failure(client, MESSAGE, FAILED)["fingerprint"]
        client.ask(EvolveResolved(run_id="r1", fingerprint=fp["id"], failed_args=FAILED,
                                  fixed_args=FIXED))
    assert daemon.stop() == 0
    again = spawn_daemon(home=daemon.home, project=daemon.project)
    try:
        with again.client() as client:
            advice = on_failure(client, MESSAGE_2, FAILED_2)
            assert advice["apply"] and json.loads(advice["new_args"]) == FIXED_2
    finally:
        stop_quietly(again)
    assert (daemon.project / ".slmcode" / "evolve" / "rules.json").exists()


def test_observe_outcomes_retire_a_bad_learned_rule(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        fp = on_failure(client, MESSAGE, FAILED)["fingerprint"]
        learned = client.ask(EvolveResolved(run_id="r1", fingerprint=fp["id"],
                                            failed_args=FAILED, fixed_args=FIXED))["learned"]
        # One success (the resolution) then failures: (1+1)/(3+1+7) = 0.18 is not yet below the
        # floor, (1+1)/(3+1+8) = 0.167 is.
        for _ in range(7):
            rule = client.ask(EvolveObserve(rule_id=learned["id"], ok=False))
        assert not rule["retired"]
        rule = client.ask(EvolveObserve(rule_id=learned["id"], ok=False))
        assert rule["retired"] and rule["failures"] == 8
        assert on_failure(client, MESSAGE_2, FAILED_2)["rule_id"] != learned["id"]
        with pytest.raises(RequestFailed, match="NOT_FOUND"):
            client.ask(EvolveObserve(rule_id="rule_000000000000", ok=True))


def test_cut_off_arguments_are_never_repaired_only_slips_are(daemon: DaemonProcess) -> None:
    """a call cut off mid-string is "cannot repair" (resend it); a slip is repaired."""
    message = "Failed to parse tool arguments: Unterminated string starting at: line 1 column 40"
    with daemon.client() as client:
        cut = '{"path": "a.go", "old_str": "x := 1", "new_str": "x := compute(a, b'
        advice = client.ask(EvolveOnFailure(run_id="rc", tool="ws_edit", language="go",
                                            args=cut, message=message))
        assert advice["apply"] is False and advice["new_args"] == ""
        assert advice["reason"].startswith("cannot repair") and "resend" in advice["guidance"]
        slip = '{"path": "a.go", "old_str": "x := 1", "new_str": "x := 2",}'
        advice = client.ask(EvolveOnFailure(run_id="rc", tool="ws_edit", language="go",
                                            args=slip, message=message))
        assert advice["apply"] is True
        assert json.loads(advice["new_args"]) == {"path": "a.go", "old_str": "x := 1",
                                                  "new_str": "x := 2"}


def test_shipped_rules_and_resolution_by_rule(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        broken = "{'path': 'a.py', 'content': 'x',}"
        advice = client.ask(EvolveOnFailure(
            run_id="r9", tool="write", language="python", args=broken,
            message="Failed to parse tool arguments: Expecting ',' delimiter: line 1 column 9"))
        assert advice["apply"] and advice["repair"]["transform"] == "repair_json"
        assert json.loads(advice["new_args"]) == {"path": "a.py", "content": "x"}
        assert "shipped with slmactor" in advice["reason"]
        done = client.ask(EvolveResolved(run_id="r9", fingerprint=advice["fingerprint"]["id"],
                                         rule_id=advice["rule_id"], resolution="applied"))
        assert done["bound"] is True
        assert client.ask(EvolveRules())["rules"][0]["fingerprint"] == advice["fingerprint"]["id"]
        with pytest.raises(RequestFailed, match="NOT_FOUND"):
            client.ask(EvolveResolved(run_id="r9", fingerprint="fp_x", rule_id="rule_nope"))


def test_learn_candidates_and_forget(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        fp = client.ask(EvolveFingerprint(tool="bash", message="pytest: command not found",
                                          language="python", model="gpt-4o"))
        assert fp["class"] == "dependency_missing" and fp["version"] == FINGERPRINT_VERSION
        cand = {"fingerprint": fp["id"], "class": fp["class"], "tool": "bash",
                "language": "python", "model": "gpt-4o", "message": "pytest: command not found",
                "repair": {"kind": "shell", "command": "pip install pytest",
                           "guidance": "install pytest first"},
                "evidence": "run-7", "scope": "user", "proven": True}
        out = client.ask(EvolveLearn(candidates=[cand, {"bogus": 1}]))
        assert len(out["learned"]) == 1 and out["rejected"] == 1
        advice = client.ask(EvolveOnFailure(run_id="r", tool="bash", language="python",
                                            model="gpt-4o", message="pytest: command not found"))
        assert advice["apply"] and advice["repair"]["command"] == "pip install pytest"
        assert (daemon.home / "evolve" / "rules.json").exists()
        assert client.ask(EvolveForget())["ok"]
        assert not (daemon.home / "evolve" / "rules.json").exists()
        assert client.ask(EvolveRules())["rules"] == []


def _cli(daemon: DaemonProcess, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "--project",
         str(daemon.project), *args], input=stdin, capture_output=True, text=True, env=daemon.env,
        timeout=60, check=False)


def test_cli_fingerprint_and_rules(daemon: DaemonProcess) -> None:
    out = _cli(daemon, "--json", "evolve", "fingerprint", "--tool", "go", "--language", "golang",
               "./main.go:5:2: undefined: alpha")
    assert out.returncode == 0, out.stderr
    fp = json.loads(out.stdout)
    assert fp["class"] == "compile_error" and fp["language"] == "go"
    text = _cli(daemon, "evolve", "fingerprint", "-", stdin="cat: x.txt: No such file or directory")
    assert text.returncode == 0 and "file_not_found" in text.stdout and "why:" in text.stdout
    lines = "\n".join(json.dumps({"tool": "go", "language": "go", "model": "",
                                  "message": f"./a.go:1:1: undefined: {n}"}) for n in ("a", "b"))
    batch = _cli(daemon, "evolve", "fingerprint", "--jsonl", stdin=lines + "\n")
    results = [json.loads(line) for line in batch.stdout.splitlines()]
    assert batch.returncode == 0 and len(results) == 2
    assert {"id", "class", "norm", "salient", "version"} <= set(results[0])
    assert results[0]["id"] != results[1]["id"]
    rules = _cli(daemon, "--json", "evolve", "rules", "--all")
    assert rules.returncode == 0 and len(json.loads(rules.stdout)["rules"]) == len(seed_rules())
    plain = _cli(daemon, "evolve", "rules")
    assert plain.returncode == 0 and "--all" in plain.stdout


def test_a_call_that_is_no_failure_is_answered_benign_and_not_opened(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        probe = client.ask(EvolveOnFailure(run_id="rb", tool="Bash", message="Exit code 1",
                                           args=json.dumps({"command": "which zsh"})))
        assert probe["found"] is False and probe["benign"] is True
        assert probe["fingerprint"]["class"] == "not_a_failure"
        assert probe["fingerprint"]["detail"] == "negative_probe"
        real = client.ask(EvolveOnFailure(
            run_id="rb", tool="Bash", message="Error: Exit code 143\nCommand timed out after 2m 0s",
            args=json.dumps({"command": "npm run e2e"})))
        assert real["benign"] is False and real["fingerprint"]["class"] == "timeout"
        # Only the real failure was opened in the run's working memory.
        snap = json.dumps(client.ask(WorkingSnapshot(run_id="rb")))
        assert real["fingerprint"]["id"] in snap and probe["fingerprint"]["id"] not in snap
        # The same timeout through another harness's shell tool is the same fingerprint.
        gemini = client.ask(EvolveFingerprint(
            tool="run_shell_command", message="Command: npm run e2e\nDirectory: (root)\n"
            "Output: (empty)\nError: (none)\nExit Code: 143\nSignal: (none)"))
        assert gemini["id"] == real["fingerprint"]["id"]
