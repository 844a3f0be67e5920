"""Hooks a team commits, with the real Claude Code CLI (pinned in pins.txt), offline: one user
installs our hooks into the repository's `.claude/settings.json` (`hook install --project`); a
teammate with slmactor of their own, and a third user without slmactor, then run sessions in that
repository under their own homes. The committed command runs each user's own entry point
(`$HOME/.local/share/slmactor/bin/slmactor`), so the file names no machine's path: the teammate's
session is recorded, the third user's hooks answer neutrally and the session ends cleanly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.realcli.harness import World, binary, private_world, write_calc
from tests.realcli.models import Call, Turn, serving

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

MODEL = "claude-sonnet-4-5"
FAILING = "sh -c 'echo boom >&2; exit 4'"


@dataclass
class Team:
    world: World
    settings: str
    runs: dict[str, tuple[int, str, str]]  # user → (returncode, stdout, stderr)
    episodes: list[dict[str, Any]]


def _home(world: World, user: str, entry_point: bool) -> Path:
    home = world.base / f"home-{user}"
    (home / ".claude").mkdir(parents=True)
    if entry_point:
        # This user's own installation writes their own entry point (here: this checkout's).
        world.run([*_slmactor(world), "hook", "entry-point", "--json"], extra_env={"HOME": str(home)},
                  label=f"entry-{user}")
        assert (home / ".local" / "share" / "slmactor" / "bin" / "slmactor").exists()
    return home


def _slmactor(world: World) -> list[str]:
    import sys

    return [sys.executable, "-m", "slmactor"]


@pytest.fixture(scope="module")
def team() -> Iterator[Team]:
    claude = binary("claude")
    with private_world() as world:
        write_calc(world.project)
        world.install_hooks("claude")  # the installer, into the project's shared settings
        settings = (world.project / ".claude" / "settings.json").read_text()
        runs: dict[str, tuple[int, str, str]] = {}
        for user, has_slmactor in (("teammate", True), ("outsider", False)):
            home = _home(world, user, has_slmactor)
            steps = [Turn(calls=(Call("Bash", {"command": FAILING, "description": "fail"}),)),
                     Turn(calls=(Call("Bash", {"command": "python3 check.py || true",
                                               "description": "check"}),))]
            with serving("anthropic", steps, MODEL) as server:
                env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
                       "ANTHROPIC_BASE_URL": server.base_url,
                       "ANTHROPIC_API_KEY": "sk-ant-scripted-offline", "DISABLE_TELEMETRY": "1",
                       "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                       "IS_SANDBOX": "1"}
                done = world.run([str(claude), "-p", f"session of the {user}", "--model", MODEL,
                                  "--output-format", "stream-json", "--verbose",
                                  "--include-hook-events", "--dangerously-skip-permissions"],
                                 extra_env=env, timeout=100, label=f"claude-{user}")
            runs[user] = (done.returncode, done.stdout, done.stderr)
            if has_slmactor:
                world.wait_episodes(1)
        yield Team(world, settings, runs, world.episodes())


def _events(stdout: str) -> list[dict[str, Any]]:
    out = []
    for line in stdout.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def test_the_committed_settings_name_no_machines_path(team: Team) -> None:
    assert "$HOME/.local/share/slmactor/bin/slmactor" in team.settings
    assert str(team.world.base) not in team.settings and ".venv" not in team.settings


def test_every_session_ends_cleanly_and_no_hook_fails(team: Team) -> None:
    for user, (code, stdout, _stderr) in team.runs.items():
        events = _events(stdout)
        assert code == 0, (user, stdout[-2000:])
        assert [e for e in events if e.get("type") == "result"][-1]["subtype"] == "success"
        responses = [e for e in events if e.get("subtype") == "hook_response"]
        assert responses, user
        # `claude -p` cancels an async PostToolUse still running when it exits (its known race:
        # the transcript has that call); every hook that ran to its end succeeded, with no error.
        finished = [e for e in responses if e.get("outcome") != "cancelled"]
        assert finished and all(e.get("exit_code") == 0 and e.get("outcome") == "success"
                                and not e.get("stderr") for e in finished), (user, responses)


def test_the_teammates_session_is_recorded_and_the_outsiders_is_not(team: Team) -> None:
    queries = [e["query"] for e in team.episodes]
    assert queries == ["session of the teammate"], queries
