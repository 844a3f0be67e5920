"""mini-swe-agent: its trajectory files, and (in `agent`) `MemoryAgent`, its `DefaultAgent`
with memory.

Follows mini-swe-agent 2.x: `src/minisweagent/agents/default.py` (`serialize`, what
`DefaultAgent.save` writes: `trajectory_format: "mini-swe-agent-1.1"`, `messages` in which an
assistant message lists its `extra.actions` (`{"command"}`) and each action's observation
follows as a `user`/`tool` message with `extra.returncode`), `info.config.model.model_name`,
`info.exit_status` ("Submitted" when the task was handed in). Its only tool is the shell.
Fixtures: `tests/fixtures/trajectories/`.

mini-swe-agent 1.x (`trajectory_format: "mini-swe-agent-1"`) keeps no actions in `extra`: the
action is the one ```` ```bash ```` block of the assistant's text (`DefaultAgent.parse_action`)
and its observation the next user message, rendered by `config/default.yaml`'s
`action_observation_template` as `<returncode>N</returncode>` and `<output>…</output>`.
"""

from __future__ import annotations

from slmactor.harnesses.base import SHELL, Harness, text
from slmactor.logic.text.safecut import cut_chars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from slmactor.logic.loop.replay import Trajectory


class MiniSweAgent(Harness):
    name = "mini_swe_agent"
    title = "mini-swe-agent"
    trajectory_hints = ("mini-swe-agent (trajectory_format, messages)",)
    #: Its only tool, the shell (each action is one bash block).
    families = {"bash": SHELL}
    trajectory_suffixes = (".traj.json",)

    def trajectory_format(self, data: Any) -> str:
        if isinstance(data, dict) and text(data.get("trajectory_format")).startswith("mini-swe-agent") \
                and isinstance(data.get("messages"), list):
            return "mini-swe-agent"
        return ""

    def trajectory(self, data: Any, default_id: str) -> Trajectory:
        return _trajectory(data, default_id)


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _trajectory(data: Mapping[str, Any], default_id: str) -> Trajectory:
    from slmactor.logic.loop.importers import ERROR_CHARS, QUERY_CHARS, message_text, pair_fixes
    from slmactor.logic.loop.replay import Step, Trajectory

    info = _dict(data.get("info"))
    config = _dict(info.get("config"))
    model = text(_dict(config.get("model")).get("model_name"))
    messages = [m for m in data["messages"] if isinstance(m, dict)]
    query = next((message_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    steps: list[Step] = []
    pending: list[str] = []  # commands of the last assistant message, awaiting observations
    for message in messages:
        role = message.get("role")
        extra = _dict(message.get("extra"))
        if role == "assistant":
            steps.append(Step(kind="assistant"))
            actions = extra.get("actions")
            pending = [text(a.get("command")) for a in actions if isinstance(a, dict)] \
                if isinstance(actions, list) else []
        elif role in ("user", "tool") and "returncode" in extra and pending:
            command = pending.pop(0)
            code = extra.get("returncode")
            failed = (isinstance(code, int) and code != 0) or bool(extra.get("exception_info"))
            output = text(extra.get("exception_info")) or text(extra.get("raw_output"))
            steps.append(Step(kind="tool", tool="bash", args=command, ok=not failed,
                              error=cut_chars(output, ERROR_CHARS) if failed else ""))
    if not any(s.kind == "tool" for s in steps):
        steps = _v1_steps(messages)
    exit_status = text(info.get("exit_status"))
    return Trajectory(
        id=default_id, query=cut_chars(query, QUERY_CHARS), model=model,
        task_passed=exit_status == "Submitted", steps=tuple(pair_fixes(steps)))


def _v1_steps(messages: list[dict[str, Any]]) -> list[Any]:
    """Steps of a 1.x trajectory: each assistant's one bash block, and the return code of the
    observation that answers it (a format error or a timeout notice is a failed step too)."""
    import re

    from slmactor.logic.loop.importers import ERROR_CHARS, message_text
    from slmactor.logic.loop.replay import Step

    steps: list[Step] = []
    command: str | None = None
    for message in messages:
        said = message_text(message.get("content"))
        if message.get("role") == "assistant":
            steps.append(Step(kind="assistant"))
            blocks = re.findall(r"```bash\s*\n(.*?)\n```", said, re.DOTALL)
            command = blocks[0].strip() if len(blocks) == 1 else None
        elif message.get("role") in ("user", "tool") and command is not None:
            code = re.search(r"<returncode>(-?\d+)</returncode>", said)
            failed = (code is not None and code.group(1) != "0") or (code is None and "timed out" in said)
            output = re.search(r"<output>\n?(.*?)</output>", said, re.DOTALL)
            error = cut_chars(output.group(1) if output else said, ERROR_CHARS) if failed else ""
            steps.append(Step(kind="tool", tool="bash", args=command, ok=not failed, error=error))
            command = None
    return steps


HARNESS = MiniSweAgent()
