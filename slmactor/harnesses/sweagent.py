"""SWE-agent: its tool names (the classic ACI) and its `.traj` trajectories.

Follows SWE-agent 1.1: `sweagent/agent/agents.py` (`get_trajectory_data`, what
`DefaultAgent.save_trajectory` writes: `{"trajectory": [{"action", "observation", "response",
"thought", ...}], "history", "info"}`), types in `sweagent/types.py`, the ACI tools in
`tools/` (`open`, `goto`, `scroll_up`, `find_file`, `search_dir`, `create`, `edit`,
`str_replace_editor`). `.traj` files carry no exit status: a failure is read off the
observation's first lines (`ERROR_MARKERS`). Fixtures: `tests/fixtures/trajectories/`.
"""

from __future__ import annotations

from slmactor.harnesses.base import EDIT, READ, SEARCH, SHELL, TASK, Harness, text
from slmactor.logic.text.safecut import cut_chars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from slmactor.logic.loop.replay import Trajectory


#: Lower-case markers of a failed SWE-agent action in the first 400 characters of its
#: observation (its tools print these).
ERROR_MARKERS = (
    "traceback (most recent call last)",
    "command not found",
    "no such file or directory",
    "your proposed edit has introduced new syntax error",
    "no replacement was performed",
    "did not appear verbatim",
    "syntaxerror:",
    "error:",
    "usage:",
)
_EDITOR_MODES = {"view": "read", "create": "edit", "str_replace": "edit", "insert": "edit",
                 "undo_edit": "edit"}


class SweAgent(Harness):
    name = "sweagent"
    title = "SWE-agent"
    read_tools = ("open", "goto", "scroll_up", "scroll_down", "find_file", "search_file", "search_dir")
    edit_tools = ("create", "insert", "append")
    mode_tools = {"str_replace_editor": _EDITOR_MODES}
    edit_formats = {"str_replace_editor": "search_replace"}
    #: SWE-agent's ACI commands (`tools/`); any other action is a shell command (its head is
    #: recorded as the tool, `python`, `ls`, ...), so shell is the default below.
    families = {"edit": EDIT, "create": EDIT, "insert": EDIT, "append": EDIT,
                "str_replace_editor": EDIT, "open": READ, "goto": READ, "scroll_up": READ,
                "scroll_down": READ, "find_file": SEARCH, "search_file": SEARCH,
                "search_dir": SEARCH, "bash": SHELL, "python": SHELL, "submit": TASK}
    trajectory_hints = ("SWE-agent .traj (trajectory, info)",)
    trajectory_suffixes = (".traj",)

    def trajectory_format(self, data: Any) -> str:
        if not isinstance(data, dict):
            return ""
        trajectory = data.get("trajectory")
        if isinstance(trajectory, list) and isinstance(data.get("info"), dict) and trajectory and all(
                isinstance(s, dict) and isinstance(s.get("action"), str) and "observation" in s
                for s in trajectory):
            return "swe-agent"
        return ""

    def trajectory(self, data: Any, default_id: str) -> Trajectory:
        return _trajectory(data, default_id)


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def failed(observation: str) -> bool:
    head = observation[:400].lower()
    return any(marker in head for marker in ERROR_MARKERS)


def _trajectory(data: Mapping[str, Any], default_id: str) -> Trajectory:
    import json

    from slmactor.logic.loop.importers import (
        ERROR_CHARS,
        QUERY_CHARS,
        message_text,
        pair_fixes,
        program,
    )
    from slmactor.logic.loop.replay import Step, Trajectory

    info = _dict(data.get("info"))
    stats = _dict(info.get("model_stats"))
    history = data.get("history")
    query = ""
    for item in history if isinstance(history, list) else []:
        if isinstance(item, dict) and item.get("role") == "user":
            query = message_text(item.get("content"))
            break
    model = ""
    replay = data.get("replay_config")
    if isinstance(replay, str):
        try:
            parsed = json.loads(replay)
        except ValueError:
            parsed = None
        model = text(_dict(_dict(_dict(parsed).get("agent")).get("model")).get("name"))
    steps: list[Step] = []
    for index, step in enumerate(data["trajectory"]):
        tokens_in = stats.get("tokens_sent") if index == 0 else 0
        tokens_out = stats.get("tokens_received") if index == 0 else 0
        steps.append(Step(kind="assistant",
                          tokens_in=tokens_in if isinstance(tokens_in, int) else 0,
                          tokens_out=tokens_out if isinstance(tokens_out, int) else 0))
        action = step["action"].strip()
        if not action:
            continue
        observation = message_text(step.get("observation"))
        is_failed = failed(observation)
        tool = program(action)
        steps.append(Step(kind="tool", tool=tool, args=action, ok=not is_failed,
                          error=cut_chars(observation, ERROR_CHARS) if is_failed else "",
                          edit_attempt=tool in ("edit", "str_replace_editor")))
    exit_status = text(info.get("exit_status"))
    passed = exit_status.startswith("submitted") and bool(text(info.get("submission")).strip())
    return Trajectory(id=default_id, query=cut_chars(query, QUERY_CHARS), model=model, task_passed=passed,
                      steps=tuple(pair_fixes(steps)))


HARNESS = SweAgent()
