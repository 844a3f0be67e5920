"""The real CLIs (pinned in pins.txt), two sessions each in one project, against scripted models
and a real daemon, offline: what the project's environment needs is learned in session 1 from
the command that failed and the one that got past it, and in session 2 the same command is
rewritten before it runs — the session shows no failure.

Three scenarios, each a project of its own:

* `interpreter` — `python3 app.py` fails (`ModuleNotFoundError`: the module is in the project's
  `.venv`), `.venv/bin/python app.py` works;
* `runtime` — `npm install` fails with npm's own engine check (`EBADENGINE`: `package.json`
  asks for Node >= 99 and `.npmrc` sets `engine-strict`), `. .nodeenv/activate && npm install`
  works: the project's activate script puts its Node first on PATH (offline, that Node is the
  machine's own binary reporting the version the project asks for — what a version manager's
  `use` does);
* `server` — `python3 server.py` serves forever; `python3 server.py > server.log 2>&1 &` returns at
  once. Each harness ends the wait its own way, and each way is read as "did not return": Gemini
  CLI's inactivity timeout (`tools.shell.inactivityTimeout`, set to 3 s as a user may) fails the
  call; Cline's command timeout fails it ("Command timed out after 30000ms"); Claude Code 2.1.328
  moves the command to the background once it outlives its Bash `timeout` ("Command did not
  complete within its 4s timeout and was moved to the background", `timedOutAfterMs` in its
  tool_response); Codex CLI 0.169 keeps it as a session of its unified exec after
  `yield_time_ms` ("Process running with session ID N") and fires no PostToolUse for it: the
  rollout read at the session's end records it.

Pre-flight rewrites the call in Claude Code (`updatedInput`, no permission decision), Codex
(`updatedInput` with `permissionDecision: allow`, the only form it takes), Gemini (`BeforeTool`
`tool_input`) and Cline 3 (`overrideInput`), and says so in the harness's words: Claude Code's
and Codex's `additionalContext`, Cline's `contextModification`, and Gemini's `AfterTool`
`additionalContext` beside its own "[System] Tool input parameters … were modified by a hook".
What each session's model received is read from the scripted server's request log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from slmactor.testing import wait_for
from tests.realcli.harness import (
    World,
    binary,
    claude_env,
    gemini_env,
    gemini_settings,
    private_world,
)
from tests.realcli.models import Call, ModelServer, Turn, serving

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

APP = "import greetlib\nprint(greetlib.hello())\n"
GREETLIB = "def hello():\n    return 'hello from the venv'\n"
PACKAGE = {"name": "app", "version": "1.0.0", "private": True, "engines": {"node": ">=99"},
           "scripts": {"build": "node -e \"console.log('built')\""}}
#: The project's Node (offline): the machine's binary, reporting the version the project asks
#: for, first on PATH once the project's activate script ran.
V99 = ("Object.defineProperty(process, 'version', { value: 'v99.0.0' });\n"
       "Object.defineProperty(process.versions, 'node', { value: '99.0.0' });\n")
ACTIVATE = 'PATH="$(pwd)/.nodeenv/bin:$PATH"; export PATH\n'
#: A server that never returns (a deadline of its own, so nothing outlives the test).
SERVER = ("import http.server, os, threading\n"
          "threading.Timer(60, lambda: os._exit(0)).start()\n"
          "s = http.server.HTTPServer(('127.0.0.1', 0), http.server.SimpleHTTPRequestHandler)\n"
          "print('Serving HTTP on 127.0.0.1 port', s.server_port, flush=True)\n"
          "s.serve_forever()\n")


@dataclass(frozen=True)
class Scenario:
    name: str
    wrong: str
    right: str
    setup: Callable[[Path], None]
    #: What the model sees when the wrong command ran (its failure).
    failed: str
    #: What the model sees when the right one ran ("" = nothing to see: a server in the
    #: background).
    worked: str = ""
    #: Other words a harness says it in (Cline: "Command timed out after 30000ms").
    failed_too: tuple[str, ...] = ()

    def says_failed(self, result: str) -> bool:
        return any(word in result for word in (self.failed, *self.failed_too))


def _venv(project: Path) -> None:
    (project / "app.py").write_text(APP)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project / ".venv")],
                   check=True, timeout=120)
    site = next((project / ".venv" / "lib").glob("python*/site-packages"))
    (site / "greetlib.py").write_text(GREETLIB)


def _node(project: Path) -> None:
    (project / "package.json").write_text(json.dumps(PACKAGE))
    (project / ".npmrc").write_text("engine-strict=true\n")
    bin_dir = project / ".nodeenv" / "bin"
    bin_dir.mkdir(parents=True)
    (project / ".nodeenv" / "v99.js").write_text(V99)
    node = bin_dir / "node"
    real = subprocess.run(["sh", "-c", "command -v node"], capture_output=True, text=True,
                          check=True).stdout.strip()
    node.write_text(f'#!/bin/sh\nexec {real} --require "$(dirname "$0")/../v99.js" "$@"\n')
    node.chmod(0o755)
    (project / ".nodeenv" / "activate").write_text(ACTIVATE)


def _server(project: Path) -> None:
    (project / "server.py").write_text(SERVER)


SCENARIOS = {
    "interpreter": Scenario("interpreter", "python3 app.py", ".venv/bin/python app.py", _venv,
                            "No module named 'greetlib'", "hello from the venv"),
    "runtime": Scenario("runtime", "npm install", ". .nodeenv/activate && npm install", _node,
                        "EBADENGINE", "up to date"),
    "server": Scenario("server", "python3 server.py", "python3 server.py > server.log 2>&1 &",
                       _server, "timeout", failed_too=("timed out", "Process running with session ID")),
}
CASES = [(h, s) for h in ("claude", "codex", "gemini", "cline") for s in SCENARIOS]


@dataclass
class Sessions:
    world: World
    first: ModelServer
    second: ModelServer
    codes: tuple[int, int]


# ------------------------------------------------------------------------ driving each CLI

def _turns(harness: str, scenario: Scenario) -> list[Turn]:
    def call(command: str) -> Call:
        if harness == "claude":
            args: dict[str, Any] = {"command": command, "description": "run it"}
            if scenario.name == "server" and command == scenario.wrong:
                args["timeout"] = 4000  # the Bash tool's own limit, in ms
            return Call("Bash", args)
        if harness == "codex":
            return Call("exec_command", {"cmd": command, "yield_time_ms": 10000})
        if harness == "gemini":
            return Call("run_shell_command", {"command": command, "description": "run it"})
        return Call("run_commands", {"commands": [command]})
    return [Turn(calls=(call(scenario.wrong),)), Turn(calls=(call(scenario.right),))]


def _run(world: World, harness: str, scenario: Scenario, label: str,
         turns: list[Turn] | None = None) -> tuple[int, ModelServer]:
    """One session of `harness` in the world's project, answered by `turns` (the scenario's
    wrong then right command, by default); its exit code and the model server's log."""
    turns = _turns(harness, scenario) if turns is None else turns
    prompt = "Run the project and tell me what happens."
    if harness == "claude":
        config = world.home / ".claude"
        config.mkdir(exist_ok=True)
        with serving("anthropic", turns, "claude-sonnet-4-5") as server:
            done = world.run([str(binary("claude")), "-p", prompt, "--model", "claude-sonnet-4-5",
                              "--output-format", "stream-json", "--verbose",
                              "--dangerously-skip-permissions"],
                             extra_env=claude_env(config, server.base_url), timeout=200,
                             label=label)
    elif harness == "codex":
        from tests.realcli.test_codex_smoke import LOCAL_MODEL

        home = world.home / ".codex"
        home.mkdir(exist_ok=True)
        with serving("responses", turns, LOCAL_MODEL) as server:
            (home / "config.toml").write_text(
                f'model = "{LOCAL_MODEL}"\nmodel_provider = "scripted"\n'
                "check_for_update_on_startup = false\n"
                f'chatgpt_base_url = "{server.base_url}/backend-api/"\n'
                "[features]\nplugins = false\n[analytics]\nenabled = false\n"
                "[model_providers.scripted]\n"
                f'name = "scripted"\nbase_url = "{server.base_url}/v1"\n'
                'wire_api = "responses"\nenv_key = "SCRIPTED_API_KEY"\n')
            done = world.run([str(binary("codex")), "exec", "--skip-git-repo-check",
                              "--dangerously-bypass-approvals-and-sandbox", "--trust",
                              "--dangerously-bypass-hook-trust", prompt],
                             extra_env={"CODEX_HOME": str(home), "SCRIPTED_API_KEY": "sk-offline"},
                             timeout=200, label=label)
    elif harness == "gemini":
        gemini_settings(world.home / ".gemini")
        if scenario.name == "server":
            path = world.home / ".gemini" / "settings.json"
            doc = json.loads(path.read_text())
            doc["tools"] = {"shell": {"inactivityTimeout": 3}}
            path.write_text(json.dumps(doc))
        with serving("gemini", turns, "gemini-2.5-pro") as server:
            done = world.run([str(binary("gemini")), "-p", prompt, "-m", "gemini-2.5-pro",
                              "--yolo"], extra_env=gemini_env(server.base_url), timeout=200,
                             label=label)
    else:
        from tests.realcli.test_cline_smoke import stop_hub

        cline = str(binary("cline"))
        settings = world.home / ".cline" / "data" / "settings"
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "global-settings.json").write_text(
            json.dumps({"telemetryOptOut": True, "autoUpdateEnabled": False}))
        try:
            with serving("chat", turns, "scripted-coder") as server:
                auth = world.run([cline, "auth", "-p", "openai-compatible", "-k", "offline",
                                  "-m", "scripted-coder", "-b", f"{server.base_url}/v1"],
                                 timeout=60, label=f"{label}-auth")
                assert auth.returncode == 0, auth.stderr
                done = world.run([cline, prompt, "--json"], timeout=200, label=label)
        finally:
            stop_hub(world)
    server.save(world.base / f"requests-{label}.jsonl")
    return done.returncode, server


@pytest.fixture(scope="module", params=CASES, ids=[f"{h}-{s}" for h, s in CASES])
def sessions(request: pytest.FixtureRequest) -> Iterator[Sessions]:
    harness, name = request.param
    binary(harness)  # skip, saying why, when the CLI is not installed
    scenario = SCENARIOS[name]
    with private_world() as world:
        scenario.setup(world.project)
        world.install_hooks(harness)
        first = _run(world, harness, scenario, f"{harness}-{name}-1")
        world.wait_episodes(1)
        # What session 1 taught may reach the store after its episode: a harness that cancels
        # the last call's hook at exit (Claude Code's async PostToolUse) is learned from at the
        # session's end, from its transcript. Session 2 starts once the table is written.
        keys = world.project / ".slmcode" / "evolve" / "preflight.keys"
        wait_for(lambda: keys.exists() and keys.read_text().strip(), "the pre-flight table",
                 timeout=12, pause=0.2)
        second = _run(world, harness, scenario, f"{harness}-{name}-2")
        world.wait_episodes(2)
        yield Sessions(world, first[1], second[1], (first[0], second[0]))
        for pid in _stray_servers(world):
            os.kill(pid, 9)


def _stray_servers(world: World) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"server.py" in cmd and str(world.base).encode() in (entry / "cwd").resolve().as_posix().encode():
                out.append(int(entry.name))
    return out


def test_both_sessions_ran(sessions: Sessions) -> None:
    assert sessions.codes == (0, 0)
    assert sessions.first.scenario.consumed == 2 and sessions.second.scenario.consumed == 2


def test_the_first_session_failed_and_learned(sessions: Sessions, request: pytest.FixtureRequest) -> None:
    _, name = request.node.callspec.params["sessions"]
    scenario = SCENARIOS[name]
    assert any(scenario.says_failed(r) for r in sessions.first.results_sent()), \
        sessions.first.results_sent()
    facts = json.loads((sessions.world.project / ".slmcode" / "evolve"
                        / "environment.json").read_text())["facts"]
    assert any(scenario.right.replace(scenario.wrong, "").strip(" &") in json.dumps(f)
               for f in facts), facts


def test_the_second_session_ran_the_fix_before_it_could_fail(sessions: Sessions,
                                                             request: pytest.FixtureRequest) -> None:
    _, name = request.node.callspec.params["sessions"]
    scenario = SCENARIOS[name]
    results = sessions.second.results_sent()
    assert not any(scenario.says_failed(r) for r in results), results
    episode = sessions.world.stored_episodes()[1]
    # The episode keeps the failure the rewrite avoided, resolved by the fact before the call ran.
    happened = [f for f in episode.get("failures", [])
                if not (str(f.get("resolved_by", "")).startswith("rule:env_")
                        and "before the call" in str(f.get("resolution", "")))]
    assert not happened, episode


def test_the_second_session_ran_the_fix_and_said_so(sessions: Sessions,
                                                    request: pytest.FixtureRequest) -> None:
    _, name = request.node.callspec.params["sessions"]
    scenario = SCENARIOS[name]
    results = sessions.second.results_sent()
    if scenario.worked:
        assert any(scenario.worked in r for r in results), results
    # The model reads the rewrite in the harness's words (Claude Code's additionalContext,
    # Codex's additionalContext, Gemini's systemMessage, Cline's contextModification);
    # its first request is before any call.
    bodies = [json.dumps(e.body) for e in sessions.second.main_requests()[1:]]
    assert any("slmactor ran" in b or "slmactor: rewrote" in b for b in bodies), \
        bodies[-1][-3000:]
