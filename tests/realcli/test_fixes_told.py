"""What a fix is, with the real CLIs (pinned in pins.txt), two sessions each in one project,
against scripted models and a real daemon, offline: what each session's model is told of a
failure and its fix is true of the calls that happened, and `slmactor memory audit --json`
checks every line that reached it.

Two scenarios, each a project of its own, in each of the four CLIs:

* `edit` — `python3 test_calc.py` fails (an `AssertionError`: `calc.py` subtracts), the model
  reads `calc.py`, edits `a - b` to `a + b` (Claude Code's `Edit`, Gemini's `replace`, Cline's
  `editor`; Codex CLI with a local model has only `exec_command`: `sed -i`), and the same test
  passes. The fix is "it passed after editing `calc.py`": never "`X` instead of `X`", never
  "the same call", never a command to run first. Before session 2 the user puts the bug back
  and the session does the same;
* `path` — `python3 tests_calc.py` fails (CPython: "can't open file … No such file or
  directory"), `python3 test_calc.py` passes: resolved, and the fix names the path that is there;
* `broke` (Claude Code and Gemini, whose edit tools replace every match when asked) — the tests
  pass, an edit of `b` to `y` is refused as ambiguous (Claude Code: "Found N matches …
  replace_all is false"; Gemini 0.61's `replace`: "Expected 1 occurrence but found N"), the same
  edit replacing every match succeeds and renames `sub` to `suy`, and the tests fail: the fix
  did not hold, so session 2 is neither offered it nor gets its edit rewritten to it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.realcli.audit import our_text
from tests.realcli.harness import World, binary, private_world
from tests.realcli.models import Call, ModelServer, Turn
from tests.realcli.test_environment_scenarios import SCENARIOS as ENV_SCENARIOS
from tests.realcli.test_environment_scenarios import _run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\nassert add(2, 3) == 5, 'add(2, 3) should be 5'\nprint('ok')\n"
HARNESSES = ("claude", "codex", "gemini", "cline")


def _shell(harness: str, command: str) -> Call:
    if harness == "claude":
        return Call("Bash", {"command": command, "description": "run it"})
    if harness == "codex":
        return Call("exec_command", {"cmd": command, "yield_time_ms": 10000})
    if harness == "gemini":
        return Call("run_shell_command", {"command": command, "description": "run it"})
    return Call("run_commands", {"commands": [command]})


def _read(harness: str, path: Path) -> Call:
    if harness == "claude":
        return Call("Read", {"file_path": str(path)})
    if harness == "codex":
        return Call("exec_command", {"cmd": "cat calc.py", "yield_time_ms": 10000})
    if harness == "gemini":
        return Call("read_file", {"file_path": str(path)})
    return Call("read_files", {"files": [{"path": str(path)}]})


def _edit(harness: str, path: Path) -> Call:
    old, new = "    return a - b", "    return a + b"
    if harness == "claude":
        return Call("Edit", {"file_path": str(path), "old_string": old, "new_string": new})
    if harness == "codex":
        return Call("exec_command", {"cmd": "sed -i 's/return a - b/return a + b/' calc.py",
                                     "yield_time_ms": 10000})
    if harness == "gemini":
        return Call("replace", {"file_path": str(path), "old_string": old, "new_string": new,
                                "instruction": "add, not subtract"})
    return Call("editor", {"path": str(path), "old_text": old, "new_text": new})


@dataclass(frozen=True)
class Scenario:
    name: str
    calc: str
    turns: Callable[[str, Path], list[Turn]]


def _edit_turns(harness: str, project: Path) -> list[Turn]:
    calc = project / "calc.py"
    return [Turn(calls=(_shell(harness, "python3 test_calc.py"),)),
            Turn(calls=(_read(harness, calc),)),
            Turn(calls=(_edit(harness, calc),)),
            Turn(calls=(_shell(harness, "python3 test_calc.py"),))]


def _path_turns(harness: str, project: Path) -> list[Turn]:
    return [Turn(calls=(_shell(harness, "python3 tests_calc.py"),)),
            Turn(calls=(_shell(harness, "python3 test_calc.py"),))]


TWO = FIXED + "\n\ndef sub(a, b):\n    return a - b\n"
TEST_TWO = "from calc import add, sub\n\nassert add(2, 3) == 5 and sub(5, 3) == 2\nprint('ok')\n"


def _broke_turns(harness: str, project: Path) -> list[Turn]:
    calc = project / "calc.py"
    if harness == "claude":
        def edit(**more: Any) -> Call:
            return Call("Edit", {"file_path": str(calc), "old_string": "b", "new_string": "y",
                                 **more})
        edits = [Turn(calls=(_read(harness, calc),)), Turn(calls=(edit(),)),
                 Turn(calls=(edit(replace_all=True),))]
    else:
        def edit(**more: Any) -> Call:
            return Call("replace", {"file_path": str(calc), "old_string": "b",
                                    "new_string": "y", "instruction": "rename b", **more})
        edits = [Turn(calls=(edit(),)), Turn(calls=(edit(allow_multiple=True),))]
    test = _shell(harness, "python3 test_calc.py")
    return [Turn(calls=(test,)), *edits, Turn(calls=(test,))]


SCENARIOS = {"edit": Scenario("edit", BROKEN, _edit_turns),
             "path": Scenario("path", FIXED, _path_turns),
             "broke": Scenario("broke", TWO, _broke_turns)}
CASES = [(h, s) for h in HARNESSES for s in SCENARIOS
         if s != "broke" or h in ("claude", "gemini")]


@dataclass
class Sessions:
    world: World
    servers: tuple[ModelServer, ModelServer]
    codes: tuple[int, int]
    turns: int
    audit: dict[str, Any]


def _audit(world: World) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(world.daemon.runtime_dir),
         "--project", str(world.project), "--no-autostart", "memory", "audit", "--json"],
        check=False, env=world.daemon.env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


@pytest.fixture(scope="module", params=CASES, ids=[f"{h}-{s}" for h, s in CASES])
def sessions(request: pytest.FixtureRequest) -> Iterator[Sessions]:
    harness, name = request.param
    binary(harness)  # skip, saying why, when the CLI is not installed
    scenario = SCENARIOS[name]
    with private_world() as world:
        (world.project / "test_calc.py").write_text(TEST_TWO if name == "broke" else TEST)
        world.install_hooks(harness)
        runs = []
        for n in (1, 2):
            # Session 2 starts from the same code: the user put the bug back.
            (world.project / "calc.py").write_text(scenario.calc)
            turns = scenario.turns(harness, world.project)
            runs.append(_run(world, harness, ENV_SCENARIOS["interpreter"],
                             f"{harness}-{name}-{n}", turns))
            world.wait_episodes(n)
        yield Sessions(world, (runs[0][1], runs[1][1]), (runs[0][0], runs[1][0]),
                       len(scenario.turns(harness, world.project)), _audit(world))


def _said(server: ModelServer) -> list[str]:
    """Each piece of text slmactor put in the session's requests."""
    return [piece for entry in server.main_requests() for piece in our_text(entry.body)]


def _failures(world: World, n: int) -> list[dict[str, Any]]:
    failures: list[dict[str, Any]] = world.stored_episodes()[n].get("failures", [])
    return failures


_INSTEAD = re.compile(r"`([^`]+)` instead of `([^`]+)`")


def test_both_sessions_ran(sessions: Sessions) -> None:
    assert sessions.codes == (0, 0)
    assert [s.scenario.consumed for s in sessions.servers] == [sessions.turns] * 2


def test_no_fix_told_is_the_failed_call_itself(sessions: Sessions) -> None:
    for server in sessions.servers:
        for piece in _said(server):
            for a, b in _INSTEAD.findall(piece):
                assert " ".join(a.split()) != " ".join(b.split()), piece
            lowered = piece.lower()
            assert "same bash call" not in lowered and "succeeded when run again" not in lowered
            assert not re.search(r"the same \S+ call (on|succeeded)", lowered), piece


def test_the_test_fixed_by_an_edit_is_told_by_the_edit(sessions: Sessions,
                                                      request: pytest.FixtureRequest) -> None:
    _, name = request.node.callspec.params["sessions"]
    if name != "edit":
        pytest.skip("the edit scenario")
    for n in (0, 1):
        [failure] = [f for f in _failures(sessions.world, n)
                     if "test_calc.py" in str(f.get("what", ""))]
        assert failure["resolution"] == "it passed after editing `calc.py`", failure
        assert failure.get("fix_kind") == "after_edit"
    # The model's edit is no rule: nothing would rewrite or precede the test run.
    rules = sessions.world.project / ".slmcode" / "evolve" / "rules.json"
    held = json.loads(rules.read_text())["rules"] if rules.exists() else []
    assert not [r for r in held if "calc.py" in json.dumps(r)], held


def test_a_wrong_path_fixed_by_the_right_one_is_resolved_and_named(
        sessions: Sessions, request: pytest.FixtureRequest) -> None:
    _, name = request.node.callspec.params["sessions"]
    if name != "path":
        pytest.skip("the path scenario")
    for n in (0, 1):
        [failure] = [f for f in _failures(sessions.world, n)
                     if "tests_calc.py" in str(f.get("what", ""))]
        assert failure["resolved_by"] == "llm", failure
        assert "`test_calc.py`, not `tests_calc.py`" in failure["resolution"], failure
    # Told nowhere as unresolved.
    for server in sessions.servers:
        assert not [p for p in _said(server) if "unresolved" in p], _said(server)


def test_the_audit_checks_every_line_that_reached_the_model(sessions: Sessions) -> None:
    told = sessions.audit["told"]
    said = [p for server in sessions.servers for p in _said(server)]
    # Each line the audit lists passes its check now, and says what it rests on.
    assert not [t for t in told if t["verdict"] != "true"], told
    # Every piece of ours the model received is one the sessions recorded as told.
    recorded = " ".join(" ".join(t["says"].split()) for t in told)
    for piece in said:
        first = " ".join(piece.strip().splitlines()[0].split())
        assert first[:60] in recorded, (first, told)


def test_a_replace_that_broke_the_tests_is_not_offered_again(
        sessions: Sessions, request: pytest.FixtureRequest) -> None:
    harness, name = request.node.callspec.params["sessions"]
    if name != "broke":
        pytest.skip("the broke scenario")
    first, second = (s.results_sent() for s in sessions.servers)
    # Session 1: the ambiguous edit was refused, then every match replaced, and the tests failed.
    assert first[-1] != "ok" and "Error" in first[-1] or "Traceback" in first[-1], first
    # Session 2: the refused edit is refused again (not rewritten to replace every match), and
    # nothing we say offers replacing every match.
    refused = second[2] if harness == "claude" else second[1]
    assert "replace_all" in refused or "occurrence" in refused, second
    for piece in _said(sessions.servers[1]):
        # (The seeded advice for an ambiguous edit may name the option, "only if every
        # occurrence must change": what must not be offered is this project's broken fix.)
        offered = ("set_replace_all", '"allow_multiple":true', '"replace_all":true',
                   "replace_all: true", "allow_multiple: true")
        assert not any(o in piece for o in offered), piece
    rules = sessions.world.project / ".slmcode" / "evolve" / "rules.json"
    held = json.loads(rules.read_text())["rules"] if rules.exists() else []
    assert not [r for r in held if not r.get("retired") and r["repair"]["kind"] in (
        "set_replace_all", "edit_ambiguous")], held
