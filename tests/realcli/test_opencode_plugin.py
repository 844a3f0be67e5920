"""The real OpenCode (opencode-ai, pinned in pins.txt) loading the plugin `slmactor hook install
--harness opencode --project` writes, against a scripted OpenAI-compatible Chat Completions
server and a real daemon, offline.

Session 1 reads `calc.py` (OpenCode's gutter is `N: `), sends an `edit` whose oldString carries
that gutter (the tool throws: no `tool.execute.after`, only the tool part's `error` event), the
right `edit`, `WRONG` (exit 127) and `RIGHT`. Session 2 makes the same mistake: the output of the
failed command the model reads must carry the fix session 1 taught (the plugin appends the
hook's advice), and session 1's must not.

OpenCode (1.18.33) installs its plugin package into every config folder before it loads a
plugin; without the registry it retries for about a minute. `install.sh` stages that package and
each folder gets it (`config-deps`), so nothing leaves loopback and the session starts at once.
`opencode run` takes its directory from `$PWD`: the project is given there too.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.realcli.harness import World, binary, pins, private_world, realcli_dir, write_calc
from tests.realcli.learning import GREET, NAMED_FIX, RIGHT, WRONG, assert_both_ran
from tests.realcli.models import Call, ModelServer, Seen, Step, Turn, serving

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

MODEL = "scripted-coder"
PROMPT = "Fix add() in calc.py, then run greet.py."


@dataclass
class Run:
    server: ModelServer
    returncode: int
    stderr: str


@dataclass
class Sessions:
    world: World
    first: Run
    second: Run
    episodes: list[dict[str, Any]]


def _shell(command: str) -> Call:
    return Call("bash", {"command": command, "description": "run it"})


def _first_steps(calc: str) -> list[Step]:
    def edit_with_gutter(seen: Seen) -> Turn:
        line = next(text for text in seen.last_result.splitlines() if "a - b" in text)
        return Turn(calls=(Call("edit", {"filePath": calc, "oldString": line,
                                         "newString": "    return a + b"}),))

    return [
        Turn(text="Reading calc.py.", calls=(Call("read", {"filePath": calc}),)),
        edit_with_gutter,
        Turn(calls=(Call("edit", {"filePath": calc, "oldString": "    return a - b",
                                  "newString": "    return a + b"}),)),
        Turn(calls=(_shell(WRONG),)),
        Turn(calls=(_shell(RIGHT),)),
    ]


SECOND_STEPS: list[Step] = [Turn(calls=(_shell(WRONG),)), Turn(calls=(_shell(RIGHT),))]


def _config(world: World, base_url: str) -> None:
    """The user's OpenCode config: the scripted provider, no updates, no sharing; and the staged
    plugin package in both folders OpenCode installs it into."""
    config = world.home / ".config" / "opencode"
    config.mkdir(parents=True, exist_ok=True)
    (config / "opencode.json").write_text(json.dumps({
        "$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
        "provider": {"scripted": {
            "npm": "@ai-sdk/openai-compatible", "name": "Scripted",
            "options": {"baseURL": f"{base_url}/v1", "apiKey": "offline-scripted"},
            "models": {MODEL: {"name": "Scripted coder", "tool_call": True}}}},
        "model": f"scripted/{MODEL}",
    }))
    staged = realcli_dir() / f"opencode-{pins()['opencode'].version}" / "config-deps"
    if not (staged / ".installed").is_file():
        pytest.skip(f"@opencode-ai/plugin is not staged in {staged} (run tests/realcli/install.sh)")
    for folder in (config, world.project / ".opencode"):
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(staged / name, folder / name)
        if not (folder / "node_modules").exists():
            (folder / "node_modules").symlink_to(staged / "node_modules")


def _run(world: World, steps: list[Step], label: str) -> Run:
    opencode = str(binary("opencode"))
    with serving("chat", steps, model=MODEL) as server:
        _config(world, server.base_url)
        done = world.run([opencode, "run", "--print-logs", "--model", f"scripted/{MODEL}", PROMPT],
                         timeout=300, label=label,
                         extra_env={"PWD": str(world.project), "OPENCODE_DISABLE_AUTOUPDATE": "1",
                                    "OPENCODE_DISABLE_MODELS_FETCH": "1"})
        server.save(world.base / f"{label}-requests.jsonl")
    return Run(server, done.returncode, done.stderr)


@pytest.fixture(scope="module")
def sessions() -> Iterator[Sessions]:
    binary("opencode")
    with private_world() as world:
        write_calc(world.project)
        (world.project / "greet.py").write_text(GREET)
        world.install_hooks("opencode")
        first = _run(world, _first_steps(str(world.project / "calc.py")), "opencode-1")
        world.wait_episodes(1)
        second = _run(world, SECOND_STEPS, "opencode-2")
        episodes = world.wait_episodes(2)
        yield Sessions(world, first, second, episodes)


def test_install_writes_the_plugin_and_uninstall_takes_it_out(sessions: Sessions) -> None:
    plugin = sessions.world.project / ".opencode" / "plugins" / "slmactor.js"
    assert "slmactor hook opencode tool.execute.after" in plugin.read_text()
    dry = sessions.world.slmactor("hook", "uninstall", "--harness", "opencode", "--project",
                                  "--dry-run")
    assert dry.get("changed") is True, dry
    assert plugin.is_file()


def test_both_sessions_ran(sessions: Sessions) -> None:
    assert (sessions.first.returncode, sessions.second.returncode) == (0, 0), sessions.first.stderr[-3000:]
    assert_both_ran(sessions.first.server, sessions.second.server, rewritten=False)
    results = sessions.first.server.results_sent()
    assert any("Could not find oldString" in r for r in results), results


def test_every_call_and_failure_reaches_the_record(sessions: Sessions) -> None:
    first = sessions.world.stored_episodes()[0]
    assert first["tags"] == ["hook", "opencode"], first
    assert set(first["tools_used"]) == {"read", "edit", "bash"}, first
    failed = {(f["tool"], f["message"].splitlines()[-1]) for f in first["failures"]}
    # The thrown edit (seen only as the tool part's error event) and the failed command.
    assert ("edit", ("Could not find oldString in the file. It must match exactly, including "
                    "whitespace, indentation, and line endings.")) in failed, failed
    # OpenCode runs the shell it finds on PATH: /bin/bash here, /usr/bin/bash on another machine.
    assert any(tool == "bash" and re.fullmatch(r"(/usr)?/bin/bash: line 1: \.venv/bin/python: No such file "
                                               r"or directory", line) for tool, line in failed), failed
    assert first["commands"] == [{"cmd": WRONG, "ok": False}, {"cmd": RIGHT, "ok": True}]


def test_the_second_session_is_told_the_fix_in_the_failed_output(sessions: Sessions) -> None:
    def after_wrong(server: ModelServer) -> str:
        return next(r for r in server.results_sent() if "no such file or directory" in r.lower())

    assert NAMED_FIX in after_wrong(sessions.second.server), after_wrong(sessions.second.server)
    assert NAMED_FIX not in after_wrong(sessions.first.server)

