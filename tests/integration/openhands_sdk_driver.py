"""Drives one real OpenHands SDK `Conversation` with `MemoryCallback` (run by
tests/integration/test_openhands_sdk.py in a Python >= 3.12 venv that has openhands-sdk).

    python openhands_sdk_driver.py REPO TASK OUT.json

The LLM is the SDK's own `openhands.sdk.testing.TestLLM` (scripted responses, no network),
subclassed only to keep what each completion was given. The agent's one tool is a terminal
written against the SDK's `ToolDefinition` / `ToolExecutor` API (openhands-sdk 1.58.2,
`openhands/sdk/tool/tool.py`, `openhands/sdk/tool/builtins/think.py` as the pattern), shaped like
openhands-tools' terminal (`TerminalAction.command`, `TerminalObservation.exit_code`), so the
SDK's own action parsing, tool execution and event flow run for real. The daemon is found through
SLMACTOR_RUNTIME_DIR. Writes what the LLM saw and what the callback did to OUT.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from openhands.sdk import Agent
from openhands.sdk.llm import Message, MessageToolCall, TextContent
from openhands.sdk.testing import TestLLM
from openhands.sdk.tool import (
    Action,
    Observation,
    Tool,
    ToolDefinition,
    ToolExecutor,
    register_tool,
)
from pydantic import Field

from slmactor.harnesses.openhands.sdk import MemoryCallback

FIX = "sed -i 's/a - b/a + b/' calc.py"
STEPS = ["python3 check.py", FIX, "python3 check.py"]
#: What each completion was given: one list of (role, text) per call.
SEEN: list[list[tuple[str, str]]] = []


class TerminalAction(Action):
    command: str = Field(description="The shell command to run in the repository.")


class TerminalObservation(Observation):
    exit_code: int = 0


class TerminalExecutor(ToolExecutor[TerminalAction, TerminalObservation]):
    def __init__(self, cwd: str) -> None:
        self.cwd = cwd

    def __call__(self, action: TerminalAction, conversation: Any = None) -> TerminalObservation:
        done = subprocess.run(action.command, shell=True, cwd=self.cwd, capture_output=True,
                              text=True, timeout=60, check=False,
                              env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        return TerminalObservation.from_text(text=done.stdout + done.stderr,
                                             is_error=done.returncode != 0,
                                             exit_code=done.returncode)


class TerminalTool(ToolDefinition[TerminalAction, TerminalObservation]):
    @classmethod
    def create(cls, conv_state: Any = None, **params: Any) -> Sequence[TerminalTool]:
        return [cls(description="Run a shell command in the repository.",
                    action_type=TerminalAction, observation_type=TerminalObservation,
                    executor=TerminalExecutor(str(params["cwd"])))]


class RecordingLLM(TestLLM):
    def completion(self, messages: list[Message], *args: Any, **kwargs: Any) -> Any:
        SEEN.append([(m.role, "\n".join(getattr(part, "text", "") for part in m.content))
                     for m in messages])
        return super().completion(messages, *args, **kwargs)


def _call(i: int, name: str, arguments: dict[str, Any]) -> Message:
    call = MessageToolCall(id=f"call-{i}", name=name, arguments=json.dumps(arguments),
                           origin="completion")
    return Message(role="assistant", content=[TextContent(text=f"step {i}")], tool_calls=[call])


def main(repo: str, task: str, out: str) -> None:
    register_tool("terminal", TerminalTool)
    responses = [_call(i, "terminal", {"command": cmd}) for i, cmd in enumerate(STEPS)]
    responses.append(_call(len(STEPS), "finish", {"message": "check.py passes"}))
    llm = RecordingLLM.from_messages(responses)

    with MemoryCallback(repo, task, model=llm.model, language="python") as memory:
        agent = Agent(llm=llm, tools=[Tool(name="terminal", params={"cwd": repo})],
                      agent_context=memory.agent_context())
        conversation = memory.conversation(agent, workspace=repo, visualizer=None)
        conversation.send_message(task)
        conversation.run()
    finished = memory.finished  # run.finish, sent on leaving the block
    Path(out).write_text(json.dumps({
        "run_id": memory.run_id,
        "status": str(conversation.state.execution_status.value),
        "seen": SEEN,
        "block": memory.block_text,
        "advice": [a.observation() for a in memory.advice],
        "sent": memory.sent,
        "errors": memory.errors,
        "finished": bool(finished and finished.success),
    }), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:4])
