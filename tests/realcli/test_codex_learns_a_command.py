"""The real Codex CLI (pinned in pins.txt), two sessions in one project, against a scripted OpenAI
Responses server and a real daemon, offline: a shell command that failed and was corrected in the
first session is rewritten before it runs in the second (it fails once), and the model is told
so. (Codex's shell `PostToolUse` carries no exit code; the failure is
read from the output and the rollout.)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.realcli.harness import World, binary, private_world
from tests.realcli.learning import (
    GREET,
    RIGHT,
    WRONG,
    assert_audit,
    assert_both_ran,
    assert_second_told,
    wait_learned,
)
from tests.realcli.models import ModelServer, Turn
from tests.realcli.test_codex_smoke import LOCAL_MODEL, run_codex, shell

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

STEPS = [Turn(calls=(shell(WRONG),)), Turn(calls=(shell(RIGHT),))]


@dataclass
class Sessions:
    world: World
    first: ModelServer
    second: ModelServer
    codes: tuple[int, int]
    episodes: list[dict[str, Any]]


@pytest.fixture(scope="module")
def sessions() -> Iterator[Sessions]:
    codex = binary("codex")
    with private_world() as world:
        (world.project / "greet.py").write_text(GREET)
        world.install_hooks("codex")
        first = run_codex(world, codex, LOCAL_MODEL, STEPS)
        world.wait_episodes(1)
        wait_learned(world)
        second = run_codex(world, codex, LOCAL_MODEL, STEPS)
        episodes = world.wait_episodes(2)
        yield Sessions(world, first.server, second.server, (first.returncode, second.returncode),
                       episodes)


def test_both_sessions_ran_both_commands(sessions: Sessions) -> None:
    assert sessions.codes == (0, 0)
    assert_both_ran(sessions.first, sessions.second)


def test_the_second_session_is_told_the_command_that_worked(sessions: Sessions) -> None:
    assert_second_told(sessions.first, sessions.second)


def test_block_audit_nothing_masked_internal_or_said_twice(sessions: Sessions) -> None:
    stored = sessions.world.stored_episodes()
    assert_audit([(sessions.first, []), (sessions.second, stored[:1])])
