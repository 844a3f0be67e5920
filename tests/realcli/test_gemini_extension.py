"""The real Gemini CLI (pinned in pins.txt) with slmactor linked as an extension from this
repository (`gemini extensions link <repo>/plugins/gemini`) and no hook in any settings file,
against a scripted Gemini API server and a real daemon, offline.

A user with slmactor (its entry point written by `slmactor hook entry-point`): in a headless
session the model calls the extension's MCP tool `remember`, then a shell command that fails;
the daemon then holds the fact and the session's episode with the failure (the extension's
hooks ran). A user with the same extension and no slmactor: the session ends normally, no hook
reports an error, and no slmactor tool is declared (the server exited at once).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.realcli.harness import (
    REPO,
    World,
    binary,
    gemini_env,
    gemini_settings,
    private_world,
    write_calc,
)
from tests.realcli.models import Call, ModelServer, Seen, Turn, serving

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

MODEL = "gemini-2.5-pro"
PROMPT = "Note how to run the checks, then try the failing command."
FACT = "Run the checks with python3 check.py"
FAILING = "sh -c 'echo boom >&2; exit 4'"


@dataclass
class Run:
    world: World
    server: ModelServer
    returncode: int
    stdout: str
    stderr: str
    listed: str


def _declared(body: dict[str, Any]) -> list[str]:
    return [d.get("name", "") for tool in body.get("tools") or ()
            for d in tool.get("functionDeclarations") or ()]


def _remember(seen: Seen) -> Turn:
    # Take the name the CLI declared for the extension's tool rather than spell its scheme.
    names = [n for n in _declared(seen.body) if n.endswith("remember")]
    if not names:  # no slmactor here: a tool call all the same, so its hooks run
        return Turn(text="No memory tool here.", calls=(Call(
            "run_shell_command", {"command": FAILING, "description": "run it"}),))
    return Turn(calls=(Call(names[0], {"text": FACT, "kind": "command"}),))


SCENARIO = [
    _remember,
    Turn(calls=(Call("run_shell_command", {"command": FAILING, "description": "run it"}),)),
]


def _session(with_slmactor: bool) -> Iterator[Run]:
    gemini = binary("gemini")
    with private_world() as world:
        write_calc(world.project)
        if with_slmactor:
            world.slmactor("hook", "entry-point")
        config = world.home / ".gemini"
        gemini_settings(config)
        linked = world.run([str(gemini), "extensions", "link", str(REPO / "plugins" / "gemini"),
                            "--consent"], timeout=60, label="gemini-link")
        assert linked.returncode == 0, linked.stdout + linked.stderr
        listed = world.run([str(gemini), "extensions", "list"], timeout=60, label="gemini-list")
        with serving("gemini", SCENARIO, MODEL) as server:
            env = gemini_env(server.base_url)
            done = world.run([str(gemini), "-p", PROMPT, "-m", MODEL, "--yolo"],
                             extra_env=env, timeout=100)
            server.save(world.base / "requests.jsonl")
        yield Run(world, server, done.returncode, done.stdout, done.stderr,
                  listed.stdout + listed.stderr)


@pytest.fixture(scope="module")
def run() -> Iterator[Run]:
    yield from _session(with_slmactor=True)


@pytest.fixture(scope="module")
def without() -> Iterator[Run]:
    yield from _session(with_slmactor=False)


def test_the_extension_loads_from_the_repository(run: Run) -> None:
    assert "slmactor" in run.listed and "Enabled (User): true" in run.listed, run.listed
    assert not (run.world.project / ".gemini").exists()  # nothing written into the project


def test_its_mcp_tool_works_headless(run: Run) -> None:
    assert run.returncode == 0, run.stderr[-3000:]
    declared = {n for logged in run.server.log for n in _declared(logged.body)}
    assert any(n.endswith("remember") for n in declared), declared
    facts = run.world.slmactor("memory", "facts")
    assert FACT in json.dumps(facts), facts


def test_its_hooks_record_the_session(run: Run) -> None:
    episodes = run.world.wait_episodes(1)
    assert len(episodes) == 1 and episodes[0]["query"].endswith(PROMPT)
    stored = run.world.stored_episodes()[0]
    assert {"cmd": FAILING, "ok": False} in stored["commands"], stored["commands"]


def test_without_slmactor_the_extension_does_nothing_and_fails_nothing(without: Run) -> None:
    assert without.returncode == 0, without.stderr[-3000:]
    assert without.server.scenario.consumed == 2  # the session ran to its end
    assert "hook" not in without.stderr.lower(), without.stderr[-3000:]
    # What 0.61.0 says of a server that exited at once: one notice, not an error of the run.
    assert "MCP issues detected" in without.stderr
    declared = {n for logged in without.server.log for n in _declared(logged.body)}
    assert not any(n.endswith("remember") for n in declared), declared
