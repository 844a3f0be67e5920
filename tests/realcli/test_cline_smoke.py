"""The real Cline CLI (pinned in pins.txt) through our installed hooks, against a scripted OpenAI
Chat Completions server and a real daemon, offline.

One session (`cline PROMPT --json`, provider `openai-compatible` set with `cline auth`) reads
`calc.py` with `read_files` (gutter `N | `), sends an `editor` call whose `old_text` carries that
gutter, the right `editor` call, a `run_commands` command that exits 4, and one that passes.

Cline 3 runs hooks in a background hub (`cline --cline-hub-daemon`) that leaves our process group
and outlives the command. It is ours because it lives under our private HOME: its pidfile
(`~/.cline/data/locks/hub/production.json`) names it, and its command line must carry our
project; only that PID is stopped.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from slmactor.testing import wait_for
from tests.realcli.harness import World, binary, private_world, write_calc
from tests.realcli.models import Call, ModelServer, Seen, Turn, serving

# The module fixture runs the CLI session(s) inside the first test's setup: its timeout.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

MODEL = "scripted-coder"
PROMPT = "Fix add() in calc.py so that check.py passes."
FAILING = "sh -c 'echo boom >&2; exit 4'"


@dataclass
class Session:
    world: World
    server: ModelServer
    returncode: int
    stdout: str
    stderr: str
    episodes: list[dict[str, Any]]
    stored: list[dict[str, Any]]
    metrics: dict[str, Any]


def scenario(calc: str) -> list[Any]:
    def editor(old: str) -> Call:
        return Call("editor", {"path": calc, "old_text": old, "new_text": "    return a + b"})

    def edit_with_gutter(seen: Seen) -> Turn:
        line = next(text for text in seen.last_result.splitlines() if "a - b" in text)
        return Turn(calls=(editor(line),))

    def commands(*cmds: str) -> Call:
        return Call("run_commands", {"commands": list(cmds)})

    return [
        Turn(text="Reading calc.py.", calls=(Call("read_files", {"files": [{"path": calc}]}),)),
        edit_with_gutter,
        Turn(calls=(editor("    return a - b"),)),
        Turn(calls=(commands(FAILING),)),
        Turn(calls=(commands("python3 check.py"),)),
    ]


def _is_our_hub(pid: int, world: World) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"--cline-hub-daemon" in cmdline and str(world.project).encode() in cmdline


def hub_pid(world: World) -> int | None:
    """The hub started for this world (its command line names our project), if it runs: the
    one its pidfile under this world's HOME names, else one found among the processes (a hub
    whose pidfile is gone still serves the next `cline` of anybody, with our environment)."""
    lock = world.home / ".cline" / "data" / "locks" / "hub" / "production.json"
    try:
        pid = int(json.loads(lock.read_text())["pid"])
    except (OSError, ValueError, KeyError):
        pid = 0
    if pid and _is_our_hub(pid, world):
        return pid
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _is_our_hub(int(entry.name), world):
            return int(entry.name)
    return None


def stop_hub(world: World) -> None:
    pid = hub_pid(world)
    if pid is None:
        return
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    try:
        wait_for(lambda: not Path(f"/proc/{pid}").exists(), "the Cline hub to exit", timeout=10,
                 pause=0.1)
    except AssertionError:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    cline = str(binary("cline"))
    with private_world() as world:
        write_calc(world.project)
        world.install_hooks("cline")
        settings = world.home / ".cline" / "data" / "settings"
        settings.mkdir(parents=True)
        # Cline's global settings (its CLI's schema: telemetryOptOut, autoUpdateEnabled).
        (settings / "global-settings.json").write_text(
            json.dumps({"telemetryOptOut": True, "autoUpdateEnabled": False}))
        try:
            with serving("chat", scenario(str(world.project / "calc.py")), MODEL) as server:
                auth = world.run([cline, "auth", "-p", "openai-compatible", "-k", "offline",
                                  "-m", MODEL, "-b", f"{server.base_url}/v1"],
                                 timeout=60, label="cline-auth")
                assert auth.returncode == 0, auth.stderr
                done = world.run([cline, PROMPT, "--json"], timeout=100, label="cline")
                server.save(world.base / "requests.jsonl")
                episodes = world.wait_episodes(1)
        finally:
            stop_hub(world)
        yield Session(world, server, done.returncode, done.stdout, done.stderr, episodes,
                      world.stored_episodes(), world.slmactor("metrics", "show"))


def events(session: Session) -> list[dict[str, Any]]:
    return [json.loads(line) for line in session.stdout.splitlines() if line.startswith("{")]


def test_session_completes_and_is_one_episode(session: Session) -> None:
    assert session.returncode == 0, session.stderr[-3000:]
    assert [e for e in events(session) if e.get("type") == "run_result"][-1]["finishReason"] \
        == "completed"
    assert session.server.scenario.consumed == 5
    assert len(session.episodes) == 1
    assert (session.world.project / "calc.py").read_text().count("a + b") == 1


def test_the_model_is_told_each_failure(session: Session) -> None:
    results = session.server.results_sent()
    assert any("1 | def add(a, b):" in r for r in results), results  # the read gutter
    told = [json.loads(r) for r in results]
    flat = [item for entry in told for item in (entry if isinstance(entry, list) else [entry])]
    failed = [item for item in flat if item.get("success") is False]
    assert [item["query"].split(":")[0] for item in failed] == ["edit", FAILING], flat
    assert "text not found" in failed[0]["error"]
    assert failed[1]["error"] == "Command exited with code 4" and "boom" in failed[1]["result"]


def test_failing_shell_command_is_recorded_as_failed(session: Session) -> None:
    stored = session.stored[0]
    assert {"cmd": FAILING, "ok": False} in stored["commands"], stored["commands"]


def test_failed_edit_is_recorded_as_a_failure(session: Session) -> None:
    stored = session.stored[0]
    failures = [f for f in stored["failures"] if f["tool"] == "editor"]
    assert failures, stored["failures"]
    assert stored["edits_attempted"] == 2 and stored["edits_applied"] == 1


def test_each_failed_call_is_one_failure(session: Session) -> None:
    tools = sorted(f["tool"] for f in session.stored[0]["failures"])
    assert tools == ["editor", "run_commands"], session.stored[0]["failures"]


def test_block_audit_nothing_masked_internal_or_said_twice(session: Session) -> None:
    from tests.realcli.audit import dump, problems

    # One session in a fresh project: no episode stands behind any claim yet.
    for request in session.server.main_requests():
        assert problems(request.body, []) == [], dump(request.body)


def test_advice_after_a_failed_editor_call_reaches_the_model_in_clines_words(session: Session) -> None:
    # Cline 3 adds a PostToolUse hook's contextModification to the conversation (TaskStart's is
    # never seen in a request, and UserPromptSubmit never fires): advice after a failure arrives.
    from tests.realcli.audit import our_text

    told = [p for r in session.server.main_requests() for p in our_text(r.body)]
    advice = [p for p in told if p.startswith("slmactor") and "editor failure" in p]
    assert advice, told
    assert "read_files" in advice[0] and "old_text" in advice[0]
    assert "replace_in_file" not in advice[0] and "old_str" not in advice[0]
