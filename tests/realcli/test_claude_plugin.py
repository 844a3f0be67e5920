"""The real Claude Code CLI (pinned in pins.txt) with slmactor installed as a plugin from this
repository — `claude plugin marketplace add <repo>`, `claude plugin install slmactor@slmactor` —
and no hook in any settings file, against a scripted model and a real daemon, offline.

User one has slmactor (its entry point written by `slmactor hook entry-point`): in a `-p`
session the model calls the plugin's MCP tool `remember`, then a shell command that fails; the
daemon then holds the fact and the session's episode with the failure (the plugin's hooks ran).
User two has the same plugin and no slmactor: the session ends normally, every hook exits 0,
and the model is offered no slmactor tool (the server exited at once).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.realcli.harness import REPO, World, binary, private_world, write_calc
from tests.realcli.models import Call, ModelServer, Seen, Turn, serving

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

MODEL = "claude-sonnet-4-5"
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
    setup: list[str]

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.startswith("{")]

    def offered_tools(self) -> set[str]:
        names: set[str] = set()
        for logged in self.server.log:
            names.update(t.get("name", "") for t in logged.body.get("tools") or ())
        return names


def _remember(seen: Seen) -> Turn:
    # The plugin's server is named by Claude Code (`mcp__plugin_<plugin>_<server>__<tool>`):
    # take the name the CLI offered rather than spell its scheme here.
    names = [t["name"] for t in seen.body.get("tools", ()) if t["name"].endswith("__remember")]
    if not names:
        return Turn(text="No memory tool here.", calls=(Call("Bash", {
            "command": FAILING, "description": "a failing command"}),))
    return Turn(calls=(Call(names[0], {"text": FACT, "kind": "command"}),))


SCENARIO = [
    _remember,
    Turn(calls=(Call("Bash", {"command": FAILING, "description": "a failing command"}),)),
]


def _session(with_slmactor: bool) -> Iterator[Run]:
    claude = binary("claude")
    with private_world() as world:
        write_calc(world.project)
        config = world.home / ".claude"
        config.mkdir()
        setup = []
        if with_slmactor:
            setup.append(world.slmactor("hook", "entry-point")["entry_point"])
        env = {
            "CLAUDE_CONFIG_DIR": str(config),
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "IS_SANDBOX": "1",
            # 2.1.328 defers MCP tools behind its ToolSearch tool by default; `false` offers
            # them with the first request (its `ENABLE_TOOL_SEARCH` parsing: false = standard).
            "ENABLE_TOOL_SEARCH": "false",
        }
        for argv in (["plugin", "marketplace", "add", str(REPO)],
                     ["plugin", "install", "slmactor@slmactor"]):
            done = world.run([str(claude), *argv], extra_env=env, timeout=60, label="claude-setup")
            assert done.returncode == 0, done.stdout + done.stderr
            setup.append(done.stdout)
        with serving("anthropic", SCENARIO, MODEL) as server:
            done = world.run([str(claude), "-p", PROMPT, "--model", MODEL,
                              "--output-format", "stream-json", "--verbose",
                              "--include-hook-events", "--dangerously-skip-permissions"],
                             extra_env={**env, "ANTHROPIC_BASE_URL": server.base_url,
                                        "ANTHROPIC_API_KEY": "sk-ant-scripted-offline",
                                        # Claude Code 2.1's own wait for MCP servers at start-up
                                        # (its bundle's `host_wait` mode): the session starts
                                        # once the plugin's server is up, however slow the
                                        # machine, as a user's settings can ask.
                                        "CLAUDE_CODE_MCP_STARTUP_WAIT_MS": "20000"},
                             timeout=100)
            server.save(world.base / "requests.jsonl")
        yield Run(world, server, done.returncode, done.stdout, done.stderr, setup)


@pytest.fixture(scope="module")
def installed() -> Iterator[Run]:
    yield from _session(with_slmactor=True)


@pytest.fixture(scope="module")
def without() -> Iterator[Run]:
    yield from _session(with_slmactor=False)


def _hook_responses(run: Run) -> list[dict[str, Any]]:
    return [e for e in run.events() if e.get("type") == "system" and e.get("subtype") == "hook_response"]


def test_the_plugin_installs_from_the_repository(installed: Run) -> None:
    listed = installed.world.run([str(binary("claude")), "plugin", "list"],
                                 extra_env={"CLAUDE_CONFIG_DIR": str(installed.world.home / ".claude")},
                                 label="claude-list")
    assert "slmactor@slmactor" in listed.stdout and "enabled" in listed.stdout, listed.stdout
    # Nothing was written into the project: the hooks are the plugin's.
    assert not (installed.world.project / ".claude").exists()


def test_its_mcp_tools_work_in_print_mode(installed: Run) -> None:
    assert installed.returncode == 0, installed.stderr[-2000:]
    init = next(e for e in installed.events() if e.get("subtype") == "init")
    assert [s["status"] for s in init["mcp_servers"] if s.get("source") == "plugin"] == ["connected"]
    assert any(name.endswith("__remember") and "slmactor" in name
               for name in installed.offered_tools()), installed.offered_tools()
    first = installed.server.results_sent()[0]
    assert "error" not in first.lower()[:40], first
    facts = installed.world.slmactor("memory", "facts")
    assert FACT in json.dumps(facts), facts


def test_its_hooks_record_the_session(installed: Run) -> None:
    episodes = installed.world.wait_episodes(1)
    assert len(episodes) == 1 and episodes[0]["query"] == PROMPT
    stored = installed.world.stored_episodes()[0]
    assert {"cmd": FAILING, "ok": False} in stored["commands"]


def test_without_slmactor_the_plugin_does_nothing_and_fails_nothing(without: Run) -> None:
    assert without.returncode == 0, without.stderr[-2000:]
    result = [e for e in without.events() if e.get("type") == "result"]
    assert result and result[-1]["subtype"] == "success"
    responses = _hook_responses(without)
    assert responses, "no hook ran: the plugin's hooks were not loaded"
    assert all(r.get("exit_code") == 0 for r in responses), responses
    assert not any(name.endswith("__remember") for name in without.offered_tools())
    assert without.stderr == ""  # the server's quiet exit is no error of the session
    assert not Path(without.world.home, ".local/share/slmactor").exists()
