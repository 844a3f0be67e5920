"""The real Codex CLI (pinned in pins.txt) through our installed hooks, against a scripted OpenAI
Responses server and a real daemon, offline.

Two sessions in one project. The first runs as `gpt-5.5` (a model Codex 0.169 has metadata for,
so it offers the freeform `apply_patch` tool): it reads `calc.py`, sends a patch whose context
is not in the file, the right patch, a shell command that exits 4, and a command that passes.
The second runs as a local model name Codex has no metadata for (only `exec_command`), which
patches with `apply_patch <<'EOF'` through the shell: one heredoc patch that fails, one that
applies, and the same failing command again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.realcli.harness import World, binary, private_world, write_calc
from tests.realcli.models import Call, ModelServer, Turn, serving

# The module fixture runs the CLI session(s) inside the first test's setup: its timeout.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

KNOWN_MODEL = "gpt-5.5"
LOCAL_MODEL = "local-coder-7b"
PROMPT = "Fix add() in calc.py so that check.py passes."
FAILING = "sh -c 'echo boom >&2; exit 4'"

BAD_PATCH = ("*** Begin Patch\n*** Update File: calc.py\n@@\n-    return a * b\n+    return a + b\n"
             "*** End Patch\n")
GOOD_PATCH = ("*** Begin Patch\n*** Update File: calc.py\n@@\n-    return a - b\n+    return a + b\n"
              "*** End Patch\n")
# The second session starts from the fixed file and changes it once more.
BAD_HEREDOC = ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: calc.py\n@@\n"
               "-    return a / b\n+    return b + a\n*** End Patch\nEOF\n")
GOOD_HEREDOC = ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: calc.py\n@@\n"
                "-    return a + b\n+    return b + a\n*** End Patch\nEOF\n")


def shell(cmd: str) -> Call:
    return Call("exec_command", {"cmd": cmd, "yield_time_ms": 10000})


FIRST = [
    Turn(text="Reading calc.py.", calls=(shell("cat calc.py"),)),
    Turn(calls=(Call("apply_patch", raw=BAD_PATCH),)),
    Turn(calls=(Call("apply_patch", raw=GOOD_PATCH),)),
    Turn(calls=(shell(FAILING),)),
    Turn(calls=(shell("python3 check.py"),)),
]
SECOND = [
    Turn(calls=(shell(BAD_HEREDOC),)),
    Turn(calls=(shell(GOOD_HEREDOC),)),
    Turn(calls=(shell(FAILING),)),
    Turn(calls=(shell("python3 check.py"),)),
]


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
    stored: list[dict[str, Any]]
    metrics: dict[str, Any]
    memory: str


def run_codex(world: World, codex: Path, model: str, steps: list[Turn]) -> Run:
    home = world.home / ".codex"
    home.mkdir(exist_ok=True)
    with serving("responses", steps, model) as server:
        (home / "config.toml").write_text(
            f'model = "{model}"\nmodel_provider = "scripted"\n'
            # Offline: no analytics, no plugin marketplace sync (it looks up github.com), and
            # the ChatGPT backend on loopback too.
            "check_for_update_on_startup = false\n"
            f'chatgpt_base_url = "{server.base_url}/backend-api/"\n'
            "[features]\nplugins = false\n"
            "[analytics]\nenabled = false\n"
            "[model_providers.scripted]\n"
            f'name = "scripted"\nbase_url = "{server.base_url}/v1"\n'
            'wire_api = "responses"\nenv_key = "SCRIPTED_API_KEY"\n')
        # Project hooks run only in a trusted project with trusted hooks: --trust alone runs none.
        done = world.run([str(codex), "exec", "--skip-git-repo-check",
                          "--dangerously-bypass-approvals-and-sandbox",
                          "--trust", "--dangerously-bypass-hook-trust", PROMPT],
                         extra_env={"CODEX_HOME": str(home), "SCRIPTED_API_KEY": "sk-offline"},
                         timeout=100, label=f"codex-{model}")
        server.save(world.base / f"requests-{model}.jsonl")
    return Run(server, done.returncode, done.stderr)


@pytest.fixture(scope="module")
def sessions() -> Iterator[Sessions]:
    codex = binary("codex")
    with private_world() as world:
        write_calc(world.project)
        world.install_hooks("codex")
        first = run_codex(world, codex, KNOWN_MODEL, FIRST)
        world.wait_episodes(1)
        second = run_codex(world, codex, LOCAL_MODEL, SECOND)
        episodes = world.wait_episodes(2)
        # What the project's semantic memory says of the commands (distilled now, not later).
        world.slmactor("memory", "distill", "--wait")
        memory = world.slmactor("memory", "facts")
        yield Sessions(world, first, second, episodes, world.stored_episodes(),
                       world.slmactor("metrics", "show", "--last", "2"), json.dumps(memory))


def offered_tools(server: ModelServer) -> set[str]:
    return {str(tool.get("name")) for tool in server.main_requests()[0].body["tools"]}


def test_both_sessions_complete_and_are_episodes(sessions: Sessions) -> None:
    for run, steps in ((sessions.first, FIRST), (sessions.second, SECOND)):
        assert run.returncode == 0, run.stderr[-3000:]
        assert run.server.scenario.consumed == len(steps)
        # The hooks ran (Codex prints each hook it runs on stderr).
        assert "hook: PostToolUse" in run.stderr
    assert "apply_patch" in offered_tools(sessions.first.server)
    assert "apply_patch" not in offered_tools(sessions.second.server)
    assert len(sessions.episodes) == 2
    assert {e["model"] for e in sessions.episodes} == {KNOWN_MODEL, LOCAL_MODEL}
    assert (sessions.world.project / "calc.py").read_text().count("b + a") == 1


def test_the_model_is_told_the_exit_code(sessions: Sessions) -> None:
    told = [r for r in sessions.first.server.results_sent() if "boom" in r]
    assert told and "Process exited with code 4" in told[0], told


def test_the_model_is_told_the_patch_failed(sessions: Sessions) -> None:
    first = sessions.first.server.results_sent()
    assert any("Failed to find expected lines" in r for r in first), first
    second = sessions.second.server.results_sent()
    assert any("Failed to find expected lines" in r for r in second), second


def test_failing_shell_command_is_recorded_as_failed(sessions: Sessions) -> None:
    for stored in sessions.stored:
        assert {"cmd": FAILING, "ok": False} in stored["commands"], stored["commands"]
        assert any("boom" in f["message"] for f in stored["failures"]), stored["failures"]


def test_failed_apply_patch_tool_is_recorded(sessions: Sessions) -> None:
    # Codex fires no PostToolUse for it (only PreToolUse runs).
    first = next(s for s in sessions.stored if s["model"] == KNOWN_MODEL)
    failures = [f for f in first["failures"] if f["tool"] == "apply_patch"]
    assert failures and "Failed to find expected lines" in failures[0]["message"]
    assert failures[0]["class"] == "patch_failed"
    assert first["edits_attempted"] == 2 and first["edits_applied"] == 1


def test_what_was_learned_reaches_the_next_session(sessions: Sessions) -> None:
    # Memory arrives as developer messages of the second session's first request.
    request = sessions.second.server.main_requests()[0].body
    developer = [json.dumps(item) for item in request["input"]
                 if isinstance(item, dict) and item.get("role") == "developer"]
    assert any("calc.py" in text for text in developer), developer
    # The patch that applied was the model's own correction, with nothing read between: it is
    # no fix memory can teach ("read calc.py again" would be false), so none is told.
    assert not any("calc.py again" in text or "Read `calc.py`" in text for text in developer)


def test_failed_apply_patch_heredoc_is_recorded(sessions: Sessions) -> None:
    second = next(s for s in sessions.stored if s["model"] == LOCAL_MODEL)
    assert any("Failed to find expected lines" in f["message"] for f in second["failures"])
    assert second["edits_attempted"] == 2 and second["edits_applied"] == 1


def test_memory_never_vouches_for_a_failing_command(sessions: Sessions) -> None:
    facts = json.loads(sessions.memory)
    texts = [json.dumps(f) for f in (facts.get("facts", facts) if isinstance(facts, dict) else facts)]
    assert any("python3 check.py" in t and "works here" in t for t in texts), texts
    assert not [t for t in texts if "echo boom" in t and "works here" in t]


def failure_tools(sessions: Sessions, model: str) -> list[str]:
    stored = next(s for s in sessions.stored if s["model"] == model)
    return sorted(f["tool"].lower() for f in stored["failures"])


def test_each_failed_call_is_one_failure_through_the_shell(sessions: Sessions) -> None:
    assert failure_tools(sessions, LOCAL_MODEL) == ["apply_patch", "bash"]


def test_each_failed_call_is_one_failure_with_the_patch_tool(sessions: Sessions) -> None:
    assert failure_tools(sessions, KNOWN_MODEL) == ["apply_patch", "bash"]


def test_block_audit_what_the_model_received_is_true_and_said_once(sessions: Sessions) -> None:
    from tests.realcli.audit import claims, dump, problems

    before = {KNOWN_MODEL: [], LOCAL_MODEL: [s for s in sessions.stored if s["model"] == KNOWN_MODEL]}
    checked = 0
    for server, model in ((sessions.first.server, KNOWN_MODEL), (sessions.second.server, LOCAL_MODEL)):
        for request in server.main_requests():
            assert problems(request.body, before[model]) == [], dump(request.body)
            checked += claims(request.body)
    # The second session's block states the first session's edit-format rate: recomputed above.
    assert checked >= 1
