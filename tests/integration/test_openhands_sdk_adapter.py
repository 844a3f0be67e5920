"""The OpenHands SDK adapter against a real daemon (issue 13).

The callback is fed the events of an OpenHands SDK conversation in the SDK's own JSON shape
(tests/fixtures/trajectories/openhands-sdk-events.jsonl, SDK 1.43.1), as dicts and as objects
with `model_dump` like the SDK's pydantic events — twice, as two runs of one task: the second
run's block remembers the first, and its repeated failure gets the remembered advice. The SDK
itself (Python ≥ 3.12) is driven in-process by `test_with_the_real_sdk` where such an interpreter
is on the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from slmactor.adapters.openhands_sdk import MemoryCallback
from slmactor.protocol.messages import MetricsShow
from slmactor.testing import DaemonProcess
from tests.integration.test_runtime import wait_for

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "trajectories" / \
    "openhands-sdk-events.jsonl"
REPO = Path(__file__).resolve().parents[2]


class _Pydantic:
    """What the SDK hands a callback: a model whose `model_dump(mode="json")` is the event."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        assert mode == "json"
        return {k: v for k, v in self._data.items() if k != "kind"}  # the class name says it


def _events(as_objects: bool) -> list[Any]:
    events = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    if not as_objects:
        return events
    return [type(e["kind"], (_Pydantic,), {})(e) for e in events]


def _conversation(daemon: DaemonProcess, as_objects: bool) -> MemoryCallback:
    memory = MemoryCallback(daemon.project, "Make tests/test_dates.py pass: parse_date() must "
                            "accept ISO dates with a trailing Z", runtime_dir=daemon.runtime_dir,
                            model="litellm_proxy/claude-sonnet-4-5", language="python")
    memory.block_text = memory.block()  # type: ignore[attr-defined]
    for event in _events(as_objects):
        memory(event)
    memory.finish()
    return memory


def test_two_conversations_the_second_remembers_the_first(daemon: DaemonProcess) -> None:
    first = _conversation(daemon, as_objects=False)
    assert first.errors == [] and first.agent_finished
    assert first.finished is not None and first.finished.success
    assert first.advice == []  # nothing known yet
    with daemon.client() as c:  # run.finish learns in the background: wait until it has
        runs = wait_for(lambda: c.ask(MetricsShow(last=0))["runs"], "the first run recorded")
    assert [(r["tool_calls"], r["tool_errors"], r["failures"], r["resolved_from_llm"])
            for r in runs] == [(3, 1, 1, 1)]

    second = _conversation(daemon, as_objects=True)
    assert second.errors == []
    assert "parse_date" in second.block_text  # type: ignore[attr-defined]
    assert [a.tool for a in second.advice] == ["terminal"]
    # How the first run fixed it: the edit it made before the test passed.
    assert "str_replace /workspace/project/dates.py" in second.advice[0].guidance
    first.close()
    second.close()


def test_the_callback_never_raises_and_runs_without_a_daemon(tmp_path: Path) -> None:
    nowhere = tmp_path / "rt"
    nowhere.mkdir()
    memory = MemoryCallback(tmp_path, "task", runtime_dir=nowhere)
    assert memory.block() == ""
    for event in [*_events(as_objects=False), object(), {"kind": 3}, None]:
        memory(event)
    assert memory.finish() is None and memory.errors
    memory.close()


def _python312() -> str | None:
    """A Python >= 3.12 that runs (a pyenv shim without that version selected does not)."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [str(p) for p in sorted(pyenv.glob("3.1[2-9]*/bin/python3"))]
    candidates += [c for c in (shutil.which(f"python3.{minor}") for minor in (12, 13)) if c]
    for candidate in candidates:
        probe = subprocess.run([candidate, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                               capture_output=True, text=True, timeout=30, check=False)
        if probe.returncode == 0 and probe.stdout.strip() == "True":
            return candidate
    return None


SDK_SCRIPT = r'''
import json, sys
from openhands.sdk import Agent, AgentContext, Conversation
from openhands.sdk.llm import Message, MessageToolCall, TextContent
from openhands.sdk.testing import TestLLM
from slmactor.adapters.openhands_sdk import MemoryCallback

project, task = sys.argv[1], "say hello and finish"
memory = MemoryCallback(project, task)
call = MessageToolCall(id="call-1", name="finish", arguments=json.dumps({"message": "hello"}),
                       origin="completion")
llm = TestLLM.from_messages([Message(role="assistant", content=[TextContent(text="done")],
                                     tool_calls=[call])])
block = memory.block()
agent = Agent(llm=llm, tools=[], agent_context=AgentContext(system_message_suffix=block))
conversation = Conversation(agent=agent, workspace=project, callbacks=[memory])
conversation.send_message(task)
conversation.run()
finished = memory.finish()
print(json.dumps({"run_id": memory.run_id, "finished": bool(finished and finished.success),
                  "agent_finished": memory.agent_finished, "errors": memory.errors,
                  "block": "Current task: say hello and finish" in block}))
'''


@pytest.mark.slow
def test_with_the_real_sdk(daemon: DaemonProcess, tmp_path: Path) -> None:
    python = _python312()
    if python is None:
        pytest.skip("openhands-sdk needs Python >= 3.12 and none is installed on this machine")
    venv = tmp_path / "sdk-venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=120)
    install = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet",
                              "--disable-pip-version-check", "openhands-sdk", str(REPO)],
                             capture_output=True, text=True, timeout=900, check=False)
    assert install.returncode == 0, install.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(SLMACTOR_RUNTIME_DIR=str(daemon.runtime_dir), OPENHANDS_SUPPRESS_BANNER="1")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", SDK_SCRIPT, str(daemon.project)],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"run_id": seen["run_id"], "finished": True, "agent_finished": True,
                    "errors": [], "block": True}
    with daemon.client() as c:
        runs = wait_for(lambda: c.ask(MetricsShow(last=0))["runs"], "the run recorded")
    assert [(r["run_id"], r["tasks_passed"]) for r in runs] == [(seen["run_id"], 1)]
