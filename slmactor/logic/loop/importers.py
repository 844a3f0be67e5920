"""Trajectories users already have, read as replayable `Trajectory` records (issue 13).

Four formats are recognised from their own shape, never guessed from a file name:

* **slmactor** — `{"id", "query", "steps": [...]}` (SPEC S-17.1, `logic.loop.replay`);
* **mini-swe-agent** — what `DefaultAgent.save` writes (mini-swe-agent 2.x,
  `src/minisweagent/agents/default.py` `serialize`, `trajectory_format: "mini-swe-agent-1.1"`):
  `messages` in which an assistant message lists its `extra.actions` (`{"command"}`) and each
  action's observation follows as a `user`/`tool` message with `extra.returncode`;
* **SWE-agent `.traj`** — what `DefaultAgent.save_trajectory` writes (SWE-agent 1.1,
  `sweagent/agent/agents.py` `get_trajectory_data`, types in `sweagent/types.py`):
  `{"trajectory": [{"action", "observation", "response", "thought", ...}], "history", "info"}`;
* **OpenHands events** — the list `save_trajectory_path` writes (OpenHands 0.62,
  `openhands/core/main.py`, each event from `event_to_trajectory` in
  `openhands/events/serialization/event.py`), or `{"trajectory": [...]}` as its trajectory API
  answers: actions (`"action"`, `"args"`) and observations (`"observation"`, `"cause"`,
  `"content"`, `"extras"`);
* **OpenHands SDK events** — the events of an OpenHands SDK 1.x conversation as a list (or JSON
  lines, one event each, as `EventLog` persists them: `openhands/sdk/conversation/event_store.py`),
  each a `kind`-tagged model (`openhands/sdk/event/llm_convertible/{action,observation,message}.py`):
  `ActionEvent` (`tool_name`, `action`), `ObservationEvent` (`action_id`, `observation` with
  `is_error`, `exit_code`, `content`), `AgentErrorEvent`, `MessageEvent`, and
  `ConversationStateUpdateEvent` (`stats`: the model and token usage).

Anything else raises `UnknownTrajectoryFormat`, so a foreign file is refused instead of being
replayed as an empty run. A failed call whose next call of the same tool and program succeeded
is given that call's arguments as its fix (`fixed_args`); SWE-agent records no exit status, so
its failures are read off the observation's first lines (markers below). Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from slmactor.logic.loop.replay import Step, Trajectory

#: Characters of a task text kept as the trajectory's query.
QUERY_CHARS = 2000
#: Characters of an observation kept as a failed step's error.
ERROR_CHARS = 2000
#: Lower-case markers of a failed SWE-agent action in the first 400 characters of its
#: observation (its tools print these; `.traj` files carry no exit status).
SWE_AGENT_ERROR_MARKERS = (
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
#: OpenHands actions that run a tool (the rest are messages, thoughts, state changes).
OPENHANDS_TOOL_ACTIONS = frozenset({
    "run", "run_ipython", "read", "write", "edit", "browse", "browse_interactive",
    "call_tool_mcp",
})
#: OpenHands action arguments that say what the call did (the rest is bookkeeping).
OPENHANDS_ARG_KEYS = ("command", "code", "path", "old_str", "new_str", "file_text", "content",
                      "insert_line", "url", "browser_actions", "name", "arguments")


class UnknownTrajectoryFormat(ValueError):
    """The data is none of the trajectory formats this module reads."""


def _str(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(content: Any) -> str:
    """A message's content as text (a string, or OpenAI-style content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_str(part, "text") for part in content if isinstance(part, Mapping))
    return ""


def _program(args: str) -> str:
    words = args.split()
    return words[0] if words else ""


def _pair_fixes(steps: list[Step]) -> list[Step]:
    """Give each failed tool step the arguments of the next successful call of the same tool
    and program (the call that got past the failure), when there is one."""
    out = list(steps)
    for i, step in enumerate(out):
        if step.kind != "tool" or step.ok or step.fixed_args:
            continue
        for later in out[i + 1:]:
            if later.kind == "tool" and later.tool == step.tool and \
                    _program(later.args) == _program(step.args):
                if later.ok:
                    out[i] = Step(kind="tool", tool=step.tool, args=step.args, ok=False,
                                  error=step.error, fixed_args=later.args,
                                  edit_attempt=step.edit_attempt)
                break
    return out


def format_of(data: Any) -> str:
    """The format's name ("slmactor", "mini-swe-agent", "swe-agent", "openhands",
    "openhands-sdk") or ""."""
    if isinstance(data, Mapping):
        if isinstance(data.get("steps"), list):
            return "slmactor"
        if _str(data, "trajectory_format").startswith("mini-swe-agent") and \
                isinstance(data.get("messages"), list):
            return "mini-swe-agent"
        trajectory = data.get("trajectory")
        if isinstance(trajectory, list):
            if _openhands_events(trajectory):
                return "openhands"
            if isinstance(data.get("info"), Mapping) and trajectory and all(
                    isinstance(s, Mapping) and isinstance(s.get("action"), str) and
                    "observation" in s for s in trajectory):
                return "swe-agent"
    if isinstance(data, list) and _openhands_events(data):
        return "openhands"
    if isinstance(data, list) and _sdk_events(data):
        return "openhands-sdk"
    return ""


#: The SDK event kinds that make a list an OpenHands SDK conversation.
SDK_TOOL_EVENTS = frozenset({"ActionEvent", "ObservationEvent", "AgentErrorEvent"})


def _sdk_events(items: Sequence[Any]) -> bool:
    return bool(items) and all(
        isinstance(e, Mapping) and isinstance(e.get("kind"), str) for e in items
    ) and any(e["kind"] in SDK_TOOL_EVENTS for e in items)


def _openhands_events(items: Sequence[Any]) -> bool:
    return bool(items) and all(
        isinstance(e, Mapping) and isinstance(e.get("source"), str) and
        (isinstance(e.get("action"), str) or isinstance(e.get("observation"), str))
        for e in items)


def to_trajectory(data: Any, default_id: str) -> Trajectory:
    """`data` (parsed JSON) as a trajectory. Raises UnknownTrajectoryFormat."""
    kind = format_of(data)
    if kind == "slmactor":
        return Trajectory.from_dict(data, default_id=default_id)
    if kind == "mini-swe-agent":
        return _mini_swe_agent(data, default_id)
    if kind == "swe-agent":
        return _swe_agent(data, default_id)
    if kind == "openhands":
        events = data if isinstance(data, list) else data["trajectory"]
        return _openhands(events, default_id)
    if kind == "openhands-sdk":
        return _openhands_sdk(data, default_id)
    shape = (f"an object with keys {sorted(data)[:8]}" if isinstance(data, Mapping)
             else f"a JSON {type(data).__name__}")
    raise UnknownTrajectoryFormat(
        f"not a trajectory this tool reads ({shape}); known: slmactor (steps), mini-swe-agent "
        "(trajectory_format, messages), SWE-agent .traj (trajectory, info), OpenHands events "
        "(action/observation), OpenHands SDK events (kind: ActionEvent, ObservationEvent, ...)")


# ---------------------------------------------------------------- mini-swe-agent


def _mini_swe_agent(data: Mapping[str, Any], default_id: str) -> Trajectory:
    info = _dict(data.get("info"))
    config = _dict(info.get("config"))
    model = _str(_dict(config.get("model")), "model_name")
    messages = [m for m in data["messages"] if isinstance(m, Mapping)]
    query = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    steps: list[Step] = []
    pending: list[str] = []  # commands of the last assistant message, awaiting observations
    for message in messages:
        role = message.get("role")
        extra = _dict(message.get("extra"))
        if role == "assistant":
            steps.append(Step(kind="assistant"))
            actions = extra.get("actions")
            pending = [_str(a, "command") for a in actions if isinstance(a, Mapping)] \
                if isinstance(actions, list) else []
        elif role in ("user", "tool") and "returncode" in extra and pending:
            command = pending.pop(0)
            code = extra.get("returncode")
            failed = (isinstance(code, int) and code != 0) or bool(extra.get("exception_info"))
            output = _str(extra, "exception_info") or _str(extra, "raw_output")
            steps.append(Step(kind="tool", tool="bash", args=command, ok=not failed,
                              error=output[:ERROR_CHARS] if failed else ""))
    exit_status = _str(info, "exit_status")
    return Trajectory(
        id=default_id, query=query[:QUERY_CHARS], model=model,
        task_passed=exit_status == "Submitted", steps=tuple(_pair_fixes(steps)))


# ---------------------------------------------------------------- SWE-agent


def _swe_agent_failed(observation: str) -> bool:
    head = observation[:400].lower()
    return any(marker in head for marker in SWE_AGENT_ERROR_MARKERS)


def _swe_agent(data: Mapping[str, Any], default_id: str) -> Trajectory:
    info = _dict(data.get("info"))
    stats = _dict(info.get("model_stats"))
    history = data.get("history")
    query = ""
    for item in history if isinstance(history, list) else []:
        if isinstance(item, Mapping) and item.get("role") == "user":
            query = _text(item.get("content"))
            break
    model = ""
    replay = data.get("replay_config")
    if isinstance(replay, str):
        try:
            parsed = json.loads(replay)
        except ValueError:
            parsed = None
        model = _str(_dict(_dict(_dict(parsed).get("agent")).get("model")), "name")
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
        observation = _text(step.get("observation"))
        failed = _swe_agent_failed(observation)
        tool = _program(action)
        steps.append(Step(kind="tool", tool=tool, args=action, ok=not failed,
                          error=observation[:ERROR_CHARS] if failed else "",
                          edit_attempt=tool in ("edit", "str_replace_editor")))
    exit_status = _str(info, "exit_status")
    passed = exit_status.startswith("submitted") and bool(_str(info, "submission").strip())
    return Trajectory(id=default_id, query=query[:QUERY_CHARS], model=model, task_passed=passed,
                      steps=tuple(_pair_fixes(steps)))


# ---------------------------------------------------------------- OpenHands


def _openhands_args(action: Mapping[str, Any]) -> str:
    args = _dict(action.get("args"))
    kept = {k: args[k] for k in OPENHANDS_ARG_KEYS if args.get(k) not in (None, "", [], {})}
    if set(kept) == {"command"} and isinstance(kept["command"], str):
        return kept["command"]
    return json.dumps(kept, ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                      default=str)


def _openhands(events: Sequence[Any], default_id: str) -> Trajectory:
    observations: dict[Any, Mapping[str, Any]] = {}
    for event in events:
        if isinstance(event, Mapping) and isinstance(event.get("observation"), str) and \
                event.get("cause") is not None:
            observations.setdefault(event["cause"], event)
    query = ""
    steps: list[Step] = []
    tokens: Mapping[str, Any] = {}
    passed = False
    for event in events:
        if not isinstance(event, Mapping):
            continue
        usage = _dict(_dict(event.get("llm_metrics")).get("accumulated_token_usage"))
        if usage:
            tokens = usage
        action = event.get("action")
        if not isinstance(action, str):
            continue
        source = event.get("source")
        if action == "message" and source == "user" and not query:
            query = _str(_dict(event.get("args")), "content")
        if source != "agent":
            continue
        if action == "finish":
            completed = _dict(event.get("args")).get("task_completed")
            passed = completed in (None, "true", True)
            continue
        if action not in OPENHANDS_TOOL_ACTIONS:
            continue
        steps.append(Step(kind="assistant"))
        tool = _str(_dict(event.get("tool_call_metadata")), "function_name") or action
        seen = observations.get(event.get("id"), {})
        kind = seen.get("observation")
        exit_code = _dict(_dict(seen.get("extras")).get("metadata")).get("exit_code")
        failed = kind == "error" or seen.get("success") is False or (
            kind in ("run", "run_ipython") and isinstance(exit_code, int) and exit_code > 0)
        error = _text(seen.get("content"))[:ERROR_CHARS] if failed else ""
        steps.append(Step(kind="tool", tool=tool, args=_openhands_args(event), ok=not failed,
                          error=error, edit_attempt=action in ("edit", "write")))
    if steps and tokens:
        first = steps[0]
        tokens_in, tokens_out = tokens.get("prompt_tokens"), tokens.get("completion_tokens")
        steps[0] = Step(kind=first.kind,
                        tokens_in=tokens_in if isinstance(tokens_in, int) else 0,
                        tokens_out=tokens_out if isinstance(tokens_out, int) else 0)
    model = _str(tokens, "model")
    return Trajectory(id=default_id, query=query[:QUERY_CHARS], model=model, task_passed=passed,
                      steps=tuple(_pair_fixes(steps)))


# ---------------------------------------------------------------- OpenHands SDK


def sdk_text(content: Any) -> str:
    """An SDK message or observation `content` (text parts) as text."""
    return "\n".join(_str(part, "text") for part in content if isinstance(part, Mapping)) \
        if isinstance(content, list) else _text(content)


def sdk_action_args(action: Mapping[str, Any]) -> str:
    """An SDK action's arguments: a terminal command as is, anything else as compact JSON."""
    if isinstance(action.get("command"), str) and action.get("kind") == "TerminalAction":
        return str(action["command"])
    kept = {k: v for k, v in action.items() if k != "kind" and v not in (None, "", [], {})}
    return json.dumps(kept, ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                      default=str)


def sdk_outcome(observation: Mapping[str, Any]) -> tuple[bool, str]:
    """(failed, text) of an SDK observation: an error, or a command's non-zero exit code."""
    code = observation.get("exit_code")
    failed = observation.get("is_error") is True or (isinstance(code, int) and code != 0)
    return failed, sdk_text(observation.get("content"))


def _openhands_sdk(events: Sequence[Any], default_id: str) -> Trajectory:
    results: dict[Any, tuple[bool, str]] = {}  # action id or tool call id → (failed, text)
    for event in events:
        kind = event.get("kind")
        if kind == "ObservationEvent":
            results[event.get("action_id")] = sdk_outcome(_dict(event.get("observation")))
        elif kind == "AgentErrorEvent":
            results[event.get("tool_call_id")] = (True, _str(event, "error"))
    query, model, passed = "", "", False
    tokens: Mapping[str, Any] = {}
    steps: list[Step] = []
    for event in events:
        kind = event.get("kind")
        if kind == "MessageEvent" and event.get("source") == "user" and not query:
            query = sdk_text(_dict(event.get("llm_message")).get("content"))
        elif kind == "ConversationStateUpdateEvent" and event.get("key") == "stats":
            usage = _dict(_dict(_dict(event.get("value")).get("usage_to_metrics")).get("default"))
            model = _str(usage, "model_name") or model
            tokens = _dict(usage.get("accumulated_token_usage")) or tokens
        elif kind == "ActionEvent":
            tool = _str(event, "tool_name")
            if tool == "finish":
                passed = True
                continue
            steps.append(Step(kind="assistant"))
            failed, text = results.get(event.get("id")) or results.get(
                event.get("tool_call_id")) or (False, "")
            args = sdk_action_args(_dict(event.get("action")))
            steps.append(Step(kind="tool", tool=tool, args=args, ok=not failed,
                              error=text[:ERROR_CHARS] if failed else "",
                              edit_attempt=tool in ("file_editor", "str_replace_editor")))
    if steps and tokens:
        tokens_in, tokens_out = tokens.get("prompt_tokens"), tokens.get("completion_tokens")
        steps[0] = Step(kind="assistant",
                        tokens_in=tokens_in if isinstance(tokens_in, int) else 0,
                        tokens_out=tokens_out if isinstance(tokens_out, int) else 0)
    return Trajectory(id=default_id, query=query[:QUERY_CHARS], model=model, task_passed=passed,
                      steps=tuple(_pair_fixes(steps)))
