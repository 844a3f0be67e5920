"""The real Gemini CLI (pinned in pins.txt) through our installed hooks, against a scripted Gemini
API server and a real daemon, offline.

One headless session (`gemini -p --yolo` in a trusted workspace) reads `calc.py`, sends a
`replace` whose `old_string` is nowhere in the file, the right `replace`, a shell command that
exits 4, and a command that passes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.realcli.harness import (
    World,
    binary,
    gemini_env,
    gemini_settings,
    private_world,
    write_calc,
)
from tests.realcli.models import Call, ModelServer, Turn, serving

# The module fixture runs the CLI session(s) inside the first test's setup: its timeout.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

MODEL = "gemini-2.5-pro"
PROMPT = "Fix add() in calc.py so that check.py passes."
FAILING = "sh -c 'echo boom >&2; exit 4'"
MISSING = "    return subtract_everything(a, b)  # not in the file"


@dataclass
class Session:
    world: World
    server: ModelServer
    returncode: int
    stderr: str
    episodes: list[dict[str, Any]]
    stored: list[dict[str, Any]]
    metrics: dict[str, Any]


def scenario(calc: str) -> list[Turn]:
    def replace(old: str, new: str) -> Call:
        return Call("replace", {"file_path": calc, "old_string": old, "new_string": new,
                                "instruction": "make add() add"})

    def shell(command: str) -> Call:
        return Call("run_shell_command", {"command": command, "description": "run it"})

    return [
        Turn(text="Reading calc.py.", calls=(Call("read_file", {"file_path": calc}),)),
        Turn(calls=(replace(MISSING, "    return a + b"),)),
        Turn(calls=(replace("    return a - b", "    return a + b"),)),
        Turn(calls=(shell(FAILING),)),
        Turn(calls=(shell("python3 check.py"),)),
    ]


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    gemini = binary("gemini")
    with private_world() as world:
        write_calc(world.project)
        world.install_hooks("gemini")
        config = world.home / ".gemini"
        gemini_settings(config)
        with serving("gemini", scenario(str(world.project / "calc.py")), MODEL) as server:
            env = gemini_env(server.base_url)
            done = world.run([str(gemini), "-p", PROMPT, "-m", MODEL, "--yolo"],
                             extra_env=env, timeout=100)
            server.save(world.base / "requests.jsonl")
        episodes = world.wait_episodes(1)
        yield Session(world, server, done.returncode, done.stderr, episodes,
                      world.stored_episodes(), world.slmactor("metrics", "show"))


def test_session_completes_and_is_one_episode(session: Session) -> None:
    assert session.returncode == 0, session.stderr[-3000:]
    assert session.server.scenario.consumed == 5
    assert "slmactor-AfterTool" in session.stderr  # the warning that lists the project's hooks
    assert len(session.episodes) == 1
    assert session.episodes[0]["query"].endswith(PROMPT)
    assert (session.world.project / "calc.py").read_text().count("a + b") == 1


def test_the_model_is_told_each_failure(session: Session) -> None:
    results = session.server.results_sent()
    assert any("Could not find" in r and "old_string" in r for r in results), results
    assert any("boom" in r and "Exit Code: 4" in r for r in results), results


def test_failing_shell_command_is_recorded_as_failed(session: Session) -> None:
    stored = session.stored[0]
    assert {"cmd": FAILING, "ok": False} in stored["commands"], stored["commands"]


def test_failed_edit_is_recorded_as_a_failure(session: Session) -> None:
    stored = session.stored[0]
    failures = [f for f in stored["failures"] if f["tool"] in ("replace", "edit")]
    assert failures and "Could not find" in failures[0]["message"], stored["failures"]
    assert stored["edits_attempted"] == 2 and stored["edits_applied"] == 1


def test_each_failed_call_is_one_failure(session: Session) -> None:
    tools = sorted(f["tool"] for f in session.stored[0]["failures"])
    assert tools == ["replace", "run_shell_command"], session.stored[0]["failures"]


def test_block_audit_nothing_masked_internal_or_said_twice(session: Session) -> None:
    from tests.realcli.audit import dump, problems

    # One session in a fresh project: no episode stands behind any claim yet.
    for request in session.server.main_requests():
        assert problems(request.body, []) == [], dump(request.body)
