"""The real Gemini CLI (pinned in pins.txt), two headless sessions in one trusted project, against
a scripted Gemini API server and a real daemon, offline: a shell command that failed and was
corrected in the first session is named, corrected, when it fails again in the second — in the
request the model gets right after the failure (Gemini gives a failed call's response as
`{error: …}`, without the context a hook adds to a successful one: the advice must come through
the channel that still reaches the model).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.realcli.harness import World, binary, private_world
from tests.realcli.models import Call, ModelServer, Turn, serving

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

MODEL = "gemini-2.5-pro"
PROMPT = "Run greet.py and tell me what it prints."
WRONG = ".venv/bin/python greet.py"
RIGHT = "python3 greet.py"


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
        env = {
            "GOOGLE_GEMINI_BASE_URL": server.base_url,
            "GEMINI_API_KEY": "offline-scripted",
            # Project hooks run only in a trusted folder (headless untrusted: exit 55).
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_TELEMETRY_ENABLED": "false",
        }
        done = world.run([str(gemini), "-p", PROMPT, "-m", MODEL, "--yolo"],
                         extra_env=env, timeout=100, label=label)
        server.save(world.base / f"requests-{label}.jsonl")
    return done.returncode, server


@pytest.fixture(scope="module")
def sessions() -> Iterator[Sessions]:
    gemini = binary("gemini")
    with private_world() as world:
        (world.project / "greet.py").write_text('print("hello from greet")\n')
        world.install_hooks("gemini")
        config = world.home / ".gemini"
        config.mkdir()
        # With only a base URL set, 0.61 picks an auth type it then rejects (exit 41).
        (config / "settings.json").write_text(json.dumps({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
        }))
        first_code, first = run_gemini(world, gemini, "gemini-1")
        world.wait_episodes(1)
        second_code, second = run_gemini(world, gemini, "gemini-2")
        episodes = world.wait_episodes(2)
        yield Sessions(world, first, second, (first_code, second_code), episodes)


def after_failure(server: ModelServer) -> str:
    requests = server.main_requests()
    index = next(i for i, r in enumerate(requests) if "No such file or directory" in r.last_result)
    return json.dumps(requests[index].body)


def test_both_sessions_ran_both_commands(sessions: Sessions) -> None:
    assert sessions.codes == (0, 0)
    for server in (sessions.first, sessions.second):
        results = server.results_sent()
        assert any("No such file or directory" in r for r in results), results
        assert any("hello from greet" in r for r in results), results


def test_the_second_session_is_told_the_command_that_worked(sessions: Sessions) -> None:
    told = after_failure(sessions.second)
    assert "`python3` instead of `.venv/bin/python`" in told, told[-3000:]
    assert "instead of `.venv/bin/python`" not in after_failure(sessions.first)


def test_the_stored_query_is_the_users_prompt_without_our_context(sessions: Sessions) -> None:
    # Gemini prepends the session-start context to the prompt its hooks see.
    assert {e["query"] for e in sessions.episodes} == {PROMPT}


def test_block_audit_nothing_masked_internal_or_said_twice(sessions: Sessions) -> None:
    from tests.realcli.audit import dump, problems

    stored = sessions.world.stored_episodes()
    for server, before in ((sessions.first, []), (sessions.second, stored[:1])):
        for request in server.main_requests():
            assert problems(request.body, before) == [], dump(request.body)
