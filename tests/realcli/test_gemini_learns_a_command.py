"""The real Gemini CLI (pinned in pins.txt), two headless sessions in one trusted project, against
a scripted Gemini API server and a real daemon, offline: a shell command that failed and was
corrected in the first session is rewritten before it runs in the second (it fails once); the
model reads so in the rewritten call's `AfterTool` context, beside Gemini's own "Tool input
parameters … were modified by a hook".
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.realcli.harness import World, binary, gemini_env, gemini_settings, private_world
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

MODEL = "gemini-2.5-pro"
PROMPT = "Run greet.py and tell me what it prints."


def steps() -> list[Turn]:
    return [Turn(calls=(Call("run_shell_command", {"command": c, "description": "run greet.py"}),))
            for c in (WRONG, RIGHT)]


@dataclass
class Sessions:
    world: World
    first: ModelServer
    second: ModelServer
    codes: tuple[int, int]
    episodes: list[dict[str, Any]]


def run_gemini(world: World, gemini: Path, label: str) -> tuple[int, ModelServer]:
    with serving("gemini", steps(), MODEL) as server:
        env = gemini_env(server.base_url)
        done = world.run([str(gemini), "-p", PROMPT, "-m", MODEL, "--yolo"],
                         extra_env=env, timeout=100, label=label)
        server.save(world.base / f"requests-{label}.jsonl")
    return done.returncode, server


@pytest.fixture(scope="module")
def sessions() -> Iterator[Sessions]:
    gemini = binary("gemini")
    with private_world() as world:
        (world.project / "greet.py").write_text(GREET)
        world.install_hooks("gemini")
        config = world.home / ".gemini"
        gemini_settings(config)
        first_code, first = run_gemini(world, gemini, "gemini-1")
        world.wait_episodes(1)
        wait_learned(world)
        second_code, second = run_gemini(world, gemini, "gemini-2")
        episodes = world.wait_episodes(2)
        yield Sessions(world, first, second, (first_code, second_code), episodes)


def test_both_sessions_ran_both_commands(sessions: Sessions) -> None:
    assert sessions.codes == (0, 0)
    assert_both_ran(sessions.first, sessions.second)


def test_the_second_session_is_told_the_command_that_worked(sessions: Sessions) -> None:
    assert_second_told(sessions.first, sessions.second)


def test_the_stored_query_is_the_users_prompt_without_our_context(sessions: Sessions) -> None:
    # Gemini prepends the session-start context to the prompt its hooks see.
    assert {e["query"] for e in sessions.episodes} == {PROMPT}


def test_block_audit_nothing_masked_internal_or_said_twice(sessions: Sessions) -> None:
    stored = sessions.world.stored_episodes()
    assert_audit([(sessions.first, []), (sessions.second, stored[:1])])
