"""The real Claude Code CLI (pinned in pins.txt) through our installed hooks, against a scripted
Anthropic Messages server and a real daemon, offline.

One session (`claude -p`, stream-json) reads `calc.py`, tries an `Edit` whose `old_string`
carries the Read tool's line-number gutter (Claude Code rejects it in input validation), makes
the right `Edit`, runs a shell command that exits 4, and ends with a command that passes. The
tests then check what the daemon recorded and what the model was told.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.realcli.harness import World, binary, claude_env, private_world, write_calc
from tests.realcli.models import Call, ModelServer, Seen, Turn, serving

# The module fixture runs the CLI session(s) inside the first test's setup: its timeout.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

MODEL = "claude-sonnet-4-5"
PROMPT = "Fix add() in calc.py so that check.py passes."
FAILING = "sh -c 'echo boom >&2; exit 4'"


@dataclass
class Session:
    world: World
    server: ModelServer
    returncode: int
    stdout: str
    episodes: list[dict[str, Any]]
    stored: list[dict[str, Any]]
    metrics: dict[str, Any]
    rules: Any

    def debug_log(self) -> str:
        """Claude Code's own `--debug` log of the session (one file per session)."""
        logs = sorted((self.world.home / ".claude" / "debug").glob("*.txt"))
        return "".join(path.read_text(errors="replace") for path in logs)


def scenario(calc: str) -> list[Any]:
    def edit_with_gutter(seen: Seen) -> Turn:
        # What a weak model does: copies the Read result's line, gutter ("2\t") included.
        line = next(text for text in seen.last_result.splitlines() if "a - b" in text)
        return Turn(calls=(Call("Edit", {"file_path": calc, "old_string": line,
                                         "new_string": "    return a + b"}),))

    return [
        Turn(text="Let me read it.", calls=(Call("Read", {"file_path": calc}),)),
        edit_with_gutter,
        Turn(calls=(Call("Edit", {"file_path": calc, "old_string": "    return a - b",
                                  "new_string": "    return a + b"}),)),
        Turn(calls=(Call("Bash", {"command": FAILING, "description": "a failing command"}),)),
        Turn(calls=(Call("Bash", {"command": "python3 check.py", "description": "run check"}),)),
    ]


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    claude = binary("claude")
    with private_world() as world:
        write_calc(world.project)
        world.install_hooks("claude")
        config = world.home / ".claude"
        config.mkdir()
        with serving("anthropic", scenario(str(world.project / "calc.py")), MODEL) as server:
            env = claude_env(config, server.base_url)
            done = world.run([str(claude), "-p", PROMPT, "--model", MODEL,
                              "--output-format", "stream-json", "--verbose",
                              "--include-hook-events", "--dangerously-skip-permissions",
                              "--debug"],
                             extra_env=env, timeout=100)
            server.save(world.base / "requests.jsonl")
        episodes = world.wait_episodes(1)
        yield Session(world, server, done.returncode, done.stdout, episodes,
                      world.stored_episodes(), world.slmactor("metrics", "show"),
                      world.slmactor("evolve", "rules"))


def test_session_completes_and_is_one_episode(session: Session) -> None:
    assert session.returncode == 0, session.stdout[-2000:]
    result = [json.loads(line) for line in session.stdout.splitlines() if '"type":"result"' in line]
    assert result and result[-1]["subtype"] == "success"
    # Every scripted turn was asked for: the CLI really ran the five calls.
    assert session.server.scenario.consumed == 5
    assert len(session.episodes) == 1
    episode = session.episodes[0]
    assert episode["query"] == PROMPT
    assert episode["model"] == MODEL
    assert "calc.py" in episode["files"]
    assert (session.world.project / "calc.py").read_text().count("a + b") == 1


def test_the_model_is_told_each_failure(session: Session) -> None:
    results = session.server.results_sent()
    assert any(r.startswith("<tool_use_error>String to replace not found in file.")
               and "2\t    return a - b" in r for r in results), results
    assert any(r.startswith("Exit code 4\nboom") for r in results), results


def test_claude_code_still_validates_edits_before_any_hook(session: Session) -> None:
    # The facts the transcript work builds on, re-checked on every run of this pin: the
    # rejected Edit is a validation error with no PreToolUse (only the second Edit has one), a
    # failing Bash fires PostToolUseFailure, and the transcript holds the rejected Edit.
    log = session.debug_log()
    assert "Edit tool validation error" in log, log[-3000:]
    assert log.count("Hooks: PreToolUse:Edit ") == 1
    assert "Hooks: PostToolUseFailure:Bash " in log
    transcripts = list((session.world.home / ".claude" / "projects").glob("*/*.jsonl"))
    assert len(transcripts) == 1
    assert '"toolUseResult":"Error: String to replace not found in file.' in \
        transcripts[0].read_text()


def test_failing_shell_command_is_recorded_as_failed(session: Session) -> None:
    stored = session.stored[0]
    assert {"cmd": FAILING, "ok": False} in stored["commands"]
    failure = next(f for f in stored["failures"] if f["tool"].lower() == "bash")
    assert failure["message"].startswith("Exit code 4") and "boom" in failure["message"]
    assert session.metrics["summary"]["totals"]["tool_errors"] >= 1


def test_edit_rejected_by_validation_is_an_edit_failure(session: Session) -> None:
    stored = session.stored[0]
    edit_failures = [f for f in stored["failures"] if f["tool"].lower() == "edit"]
    assert edit_failures and "String to replace not found" in edit_failures[0]["message"]
    totals = session.metrics["summary"]["totals"]
    assert totals["edits_attempted"] == 2
    assert session.metrics["summary"]["rates"]["first_attempt_rate"] < 1.0
    assert session.episodes[0]["failures"] == 2


def test_a_repair_rule_is_learned_from_the_edit_that_got_past_it(session: Session) -> None:
    # The retry differs from the rejected call by the Read gutter alone. `evolve rules` lists
    # the rules used or learned (shipped ones only with --all).
    learned = [rule for rule in session.rules["rules"]
               if rule.get("repair", {}).get("transform") == "strip_line_number_prefix"]
    assert learned, session.rules


def test_last_call_of_a_fast_session_is_recorded(session: Session) -> None:
    # `claude -p` cancels the async PostToolUse of the last call when it exits (a race): the
    # call reaches the report either way, by its hook or from the transcript.
    assert {"cmd": "python3 check.py", "ok": True} in session.stored[0]["commands"]


def test_each_failed_call_is_one_failure(session: Session) -> None:
    # Hooks and the transcript both report the Bash failure: it is counted once.
    assert sorted(f["tool"].lower() for f in session.stored[0]["failures"]) == ["bash", "edit"]
