"""The real Claude Code CLI (pinned in pins.txt), two sessions in one project, against a scripted
Anthropic Messages server and a real daemon, offline: a shell command that failed and was
corrected in the first session is rewritten before it runs in the second (it fails once).

Session 1 runs `.venv/bin/python greet.py` (the project has no `.venv`: the shell says "No such
file or directory", exit 127), then `python3 greet.py`, which works. Session 2 makes the same
mistake: the command that worked runs instead, and the model of session 2 is told so (the
request log of the scripted server).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.realcli.harness import World, binary, claude_env, private_world
from tests.realcli.learning import (
    GREET,
    RIGHT,
    WRONG,
    assert_audit,
    assert_both_ran,
    assert_second_told,
    wait_learned,
)
from tests.realcli.models import Call, ModelServer, Turn, serving

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

MODEL = "claude-sonnet-4-5"
PROMPT = "Run greet.py and tell me what it prints."


def steps(*commands: str) -> list[Turn]:
    return [Turn(calls=(Call("Bash", {"command": c, "description": "run greet.py"}),))
            for c in commands]


@dataclass
class Sessions:
    world: World
    first: ModelServer
    second: ModelServer
    codes: tuple[int, int]
    rules: Any


def run_claude(world: World, claude: Path, turns: list[Turn], label: str,
               shell: str) -> tuple[int, ModelServer]:
    config = world.home / ".claude"
    config.mkdir(exist_ok=True)
    with serving("anthropic", turns, MODEL) as server:
        env = {**claude_env(config, server.base_url), "SHELL": shell}
        done = world.run([str(claude), "-p", PROMPT, "--model", MODEL, "--output-format",
                          "stream-json", "--verbose", "--dangerously-skip-permissions"],
                         extra_env=env, timeout=100, label=label)
        server.save(world.base / f"requests-{label}.jsonl")
    return done.returncode, server


@pytest.fixture(scope="module", params=["bash", "zsh"])
def sessions(request: pytest.FixtureRequest) -> Iterator[Sessions]:
    # Claude Code runs the user's shell (zsh by default on macOS, and whenever SHELL is unset
    # and zsh is installed); each shell words the missing file its own way.
    shell = shutil.which(request.param)
    if shell is None:
        pytest.skip(f"{request.param} is not installed")
    claude = binary("claude")
    with private_world() as world:
        (world.project / "greet.py").write_text(GREET)
        world.install_hooks("claude")
        first_code, first = run_claude(world, claude, steps(WRONG, RIGHT), "claude-1", shell)
        world.wait_episodes(1)
        wait_learned(world)
        second_code, second = run_claude(world, claude, steps(WRONG, RIGHT), "claude-2", shell)
        world.wait_episodes(2)
        yield Sessions(world, first, second, (first_code, second_code),
                       world.slmactor("evolve", "rules"))


def test_both_sessions_ran_both_commands(sessions: Sessions) -> None:
    assert sessions.codes == (0, 0)
    assert_both_ran(sessions.first, sessions.second)


def test_the_correction_is_learned_as_a_command_substitution(sessions: Sessions) -> None:
    learned = [r for r in sessions.rules["rules"] if r.get("repair", {}).get("kind") == "substitute_command"]
    assert learned, sessions.rules
    spec = json.loads(learned[0]["repair"]["spec"]) if isinstance(learned[0]["repair"].get("spec"), str) \
        else learned[0]["repair"].get("spec")
    assert "python3" in json.dumps(spec)


def test_the_second_session_is_told_the_command_that_worked(sessions: Sessions) -> None:
    assert_second_told(sessions.first, sessions.second)


def test_block_audit_what_the_model_received_is_true_and_said_once(sessions: Sessions) -> None:
    from tests.realcli.audit import our_text

    stored = sessions.world.stored_episodes()
    assert_audit([(sessions.first, []), (sessions.second, stored[:1])])
    # The second session did receive memory (so the audit read something).
    assert our_text(sessions.second.main_requests()[0].body)
