"""A read too large to show whole, with the real CLIs (pinned in pins.txt), two sessions each in
one project, against scripted models and a real daemon, offline.

The project holds `big.log`, 8,000 lines (~390 KB). Session 1 reads it whole, then reads its first
100 lines with the harness's own range; session 2 reads it whole again.

* Codex CLI 0.169 (a local model gets only `exec_command`): `cat big.log` succeeds with its
  unified exec's "Warning: truncated output (original token count: …)"; the fix is `sed -n
  '1,100p' big.log`.
* Gemini CLI 0.61: `read_file` succeeds with "IMPORTANT: The file content has been truncated.
  Status: Showing lines 1-2000 of 8000 total lines." (`packages/core/src/tools/read-file.ts`);
  the fix is the same read with `start_line` / `end_line`.
* Cline CLI 3.0.65: `read_files` succeeds with "[Showing lines 1-N of 8000. Use
  start_line/end_line to read other sections.]"; the fix is the file's entry with
  `start_line` / `end_line`.

Each cut read is recorded as output too large (not as the call's failure), the ranged read after it
is learned as its fix, and in session 2 the model is told that fix, with the range that worked,
in slmactor's words beside the cut read's result.

* Claude Code 2.1.328 refuses a whole-file `Read` over 256 KB; pre-flight bounds it before it
  runs (`offset` 1, `limit`: the lines that fit 64 KB) in session 1 already, decided from the
  file on disk: the model gets the file's first lines, and is told so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.realcli.audit import our_text
from tests.realcli.harness import binary, private_world
from tests.realcli.models import Call, ModelServer, Turn
from tests.realcli.test_environment_scenarios import SCENARIOS, Sessions, _run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

LINES = 8000
BIG = "".join(f"line {n:05d}: the service answered request {n} in {n % 97} ms\n"
              for n in range(1, LINES + 1))
RANGE = 100


def _turns(harness: str, path: Path) -> list[Turn]:
    """The whole read, then the ranged one, as `harness`'s model calls them."""
    if harness == "codex":
        whole = Call("exec_command", {"cmd": "cat big.log", "yield_time_ms": 10000})
        ranged = Call("exec_command", {"cmd": f"sed -n '1,{RANGE}p' big.log",
                                       "yield_time_ms": 10000})
    elif harness == "gemini":
        whole = Call("read_file", {"file_path": str(path)})
        ranged = Call("read_file", {"file_path": str(path), "start_line": 1, "end_line": RANGE})
    elif harness == "cline":
        whole = Call("read_files", {"files": [{"path": str(path)}]})
        ranged = Call("read_files", {"files": [{"path": str(path), "start_line": 1,
                                                "end_line": RANGE}]})
    else:
        whole = Call("Read", {"file_path": str(path)})
        ranged = Call("Read", {"file_path": str(path), "offset": 1, "limit": RANGE})
    return [Turn(calls=(whole,)), Turn(calls=(ranged,))]


#: What each harness's cut read says (its own words), and the fix's distinguishing part as
#: slmactor names it.
CUT = {"codex": "Warning: truncated output", "gemini": "The file content has been truncated",
       "cline": "[Showing lines 1-"}
FIX = {"codex": f"sed -n 1,{RANGE}p", "gemini": f"end_line: {RANGE}",
       "cline": f"end_line: {RANGE}"}


@pytest.fixture(scope="module", params=("codex", "gemini", "cline", "claude"))
def sessions(request: pytest.FixtureRequest) -> Iterator[Sessions]:
    harness = request.param
    binary(harness)  # skip, saying why, when the CLI is not installed
    with private_world() as world:
        path = world.project / "big.log"
        path.write_text(BIG)
        world.install_hooks(harness)
        scenario = SCENARIOS["interpreter"]  # only its name reaches `_run`: no server settings
        first = _run(world, harness, scenario, f"{harness}-read-1", _turns(harness, path))
        world.wait_episodes(1)
        second = _run(world, harness, scenario, f"{harness}-read-2", _turns(harness, path))
        world.wait_episodes(2)
        yield Sessions(world, first[1], second[1], (first[0], second[0]))


def _slmactor_said(server: ModelServer) -> list[str]:
    """Each piece of text slmactor put in the session's requests after the first (however the
    harness carried it: a system or developer message, a tool result's hook context)."""
    return [piece for entry in server.main_requests()[1:] for piece in our_text(entry.body)]


def test_both_sessions_ran(sessions: Sessions) -> None:
    assert sessions.codes == (0, 0)
    assert sessions.first.scenario.consumed == 2 and sessions.second.scenario.consumed == 2


def test_the_cut_read_is_recorded_as_output_too_large(sessions: Sessions,
                                                     request: pytest.FixtureRequest) -> None:
    harness = request.node.callspec.params["sessions"]
    if harness == "claude":
        pytest.skip("Claude Code refuses the whole read; pre-flight bounds it (test below)")
    results = sessions.first.results_sent()
    assert any(CUT[harness] in r for r in results), results
    episode = sessions.world.stored_episodes()[0]
    too_large = [f for f in episode.get("failures", [])
                 if "output too large" in json.dumps(f).lower()]
    assert too_large, episode


def test_session_2_is_told_the_bounded_read_that_worked(sessions: Sessions,
                                                       request: pytest.FixtureRequest) -> None:
    harness = request.node.callspec.params["sessions"]
    if harness == "claude":
        pytest.skip("Claude Code's whole read never ran: bounded before the call")
    said = _slmactor_said(sessions.second)
    # After the cut read of session 2, slmactor's advice names the range that worked in session 1
    # (the harness's own notice names its range words, never this range).
    assert any(FIX[harness] in t and "worked" in t for t in said), said


def test_claude_code_s_whole_read_is_bounded_before_it_runs(sessions: Sessions,
                                                            request: pytest.FixtureRequest) -> None:
    if request.node.callspec.params["sessions"] != "claude":
        pytest.skip("Codex, Gemini and Cline cut a large read themselves")
    for server in (sessions.first, sessions.second):
        results = server.results_sent()
        assert not any("exceeds maximum allowed size" in r for r in results), results
        assert "line 00001:" in results[0] and f"line {LINES:05d}:" not in results[0]
        assert any("big.log is" in t and "lines 1-" in t for t in _slmactor_said(server))
    episode: dict[str, Any] = sessions.world.stored_episodes()[0]
    assert not [f for f in episode.get("failures", [])
                if "before the call" not in str(f.get("resolution", ""))], episode
