"""Sessions of the real Claude Code CLI while the daemon is wedged, and right after.

The daemon (our child) is stopped with SIGSTOP for the whole of a first `claude -p` session and
continued with SIGCONT once it has ended; a second session follows at once. Claude Code must
complete both whatever the daemon does (our hooks fail open), and the daemon must end up with
both sessions as episodes, each once.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from slmactor.testing import wait_for
from tests.realcli.harness import World, binary, private_world, write_calc
from tests.realcli.models import Call, Turn, serving

# The module fixture runs the CLI session(s) inside the first test's setup: its timeout.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

MODEL = "claude-sonnet-4-5"
PROMPTS = ("Run the check while the daemon is stopped.", "Run the check once it is back.")


@dataclass
class Sessions:
    world: World
    returncodes: list[int]
    breaker_opened: bool


def run_claude(world: World, prompt: str) -> int:
    steps = [Turn(calls=(Call("Read", {"file_path": str(world.project / "calc.py")}),)),
             Turn(calls=(Call("Bash", {"command": "python3 check.py || true",
                                       "description": "check"}),))]
    config = world.home / ".claude"
    config.mkdir(exist_ok=True)
    with serving("anthropic", steps, MODEL) as server:
        env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-offline",
               "CLAUDE_CONFIG_DIR": str(config), "DISABLE_TELEMETRY": "1",
               "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "IS_SANDBOX": "1"}
        done = world.run([str(binary("claude")), "-p", prompt, "--model", MODEL,
                          "--output-format", "stream-json", "--verbose",
                          "--dangerously-skip-permissions"], extra_env=env, timeout=100,
                         label=f"claude-{len(list(world.base.glob('claude-*.stdout')))}")
        return done.returncode


@pytest.fixture(scope="module")
def sessions() -> Iterator[Sessions]:
    binary("claude")
    with private_world() as world:
        write_calc(world.project)
        world.install_hooks("claude")
        daemon = world.daemon.proc
        daemon.send_signal(signal.SIGSTOP)
        try:
            first = run_claude(world, PROMPTS[0])
            breaker = (world.daemon.runtime_dir / "hook-breaker").exists()
        finally:
            daemon.send_signal(signal.SIGCONT)
        second = run_claude(world, PROMPTS[1])
        yield Sessions(world, [first, second], breaker)


def test_both_sessions_complete_while_the_daemon_is_wedged(sessions: Sessions) -> None:
    assert sessions.returncodes == [0, 0]
    # The first session's hooks timed out against the stopped daemon and opened the breaker.
    assert sessions.breaker_opened
    assert sessions.world.daemon.proc.poll() is None  # the daemon survived


def test_both_sessions_are_episodes_once(sessions: Sessions) -> None:
    def both() -> list[dict[str, Any]] | None:
        episodes = sessions.world.episodes()
        return episodes if len(episodes) >= 2 else None

    try:
        episodes = wait_for(both, "both sessions as episodes", timeout=10, pause=0.5)
    except AssertionError:
        episodes = sessions.world.episodes()
    assert sorted(e["query"] for e in episodes) == sorted(PROMPTS), episodes
