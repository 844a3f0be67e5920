"""OpenHands: its hooks file, its SDK's hook payloads, its trajectories, and (in `sdk`) the
in-process adapter for an SDK `Conversation`.

Follows openhands-sdk 1.4x–1.5x (`openhands/sdk/hooks/`: `.openhands/hooks.json`, events
`PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `SessionStart`, `SessionEnd`, `Stop` with
`event_type`, `session_id`, `working_dir`, `tool_response` = the observation's `model_dump()`;
`OPENHANDS_PROJECT_DIR`, `OPENHANDS_SESSION_ID`; the hooks file as `HookConfig` reads it in
`openhands-sdk/openhands/sdk/hooks/config.py` of 1.43: events at the top level, snake_case as
`HookConfig.save` writes them or PascalCase, no other keys (`extra: forbid`), the same event in
both spellings an error; a `{"hooks": {...}}` wrapper replaces everything else in the file;
the user's file in `$OH_PERSISTENCE_DIR`, else `~/.openhands`, since 1.5x's
`openhands/sdk/utils/path.py` `get_user_persistence_dir`),
OpenHands 0.62 trajectories
(`openhands/core/main.py` `save_trajectory_path`, each event from `event_to_trajectory` in
`openhands/events/serialization/event.py`) and the SDK's persisted events
(`openhands/sdk/conversation/event_store.py`, `openhands/sdk/event/llm_convertible/`).
Fixtures: `tests/fixtures/hooks/openhands/`, `tests/fixtures/trajectories/`.

* A hook's tool response: `is_error`, `content` (`[{type: text, text}]`), and for the terminal
  `exit_code` / `timeout` / `metadata.exit_code` (-1 = unknown).
* `file_editor` / `str_replace_editor` edit unless their `command` is `view`.
* Trajectories: OpenHands events (actions `"action"`, `"args"`; observations `"observation"`,
  `"cause"`, `"content"`, `"extras"`), as a list or `{"trajectory": [...]}`; SDK events, each a
  `kind`-tagged model: `ActionEvent` (`tool_name`, `action`), `ObservationEvent` (`action_id`,
  `observation` with `is_error`, `exit_code`, `content`), `AgentErrorEvent`, `MessageEvent`,
  `ConversationStateUpdateEvent` (`stats`: the model and token usage).
"""

from __future__ import annotations

from slmactor.harnesses.base import (
    CONTEXT,
    EDIT,
    END,
    PREFLIGHT,
    READ,
    RECORD,
    SEARCH,
    SHARED_ARG_WORDS,
    SHELL,
    STOP,
    TASK,
    WEB,
    Harness,
    JsonSettings,
    content_text,
    text,
)
from slmactor.logic.text.safecut import cut_chars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from typing import Any

    from slmactor.logic.loop.replay import Trajectory


def _snake(event: str) -> str:
    """The SDK's field name for an event (`PreToolUse` → `pre_tool_use`)."""
    import re

    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


#: The SDK's hook event fields (`HOOK_EVENT_FIELDS`).
_FIELDS = frozenset({"pre_tool_use", "post_tool_use", "user_prompt_submit", "session_start",
                     "session_end", "stop"})


def _field(key: str) -> bool:
    return _snake(key) in _FIELDS


_EDITOR_MODES = {"view": READ, "create": EDIT, "str_replace": EDIT, "insert": EDIT, "undo_edit": EDIT}
#: OpenHands actions that run a tool (the rest are messages, thoughts, state changes).
TOOL_ACTIONS = frozenset({
    "run", "run_ipython", "read", "write", "edit", "browse", "browse_interactive",
    "call_tool_mcp",
})
#: OpenHands action arguments that say what the call did (the rest is bookkeeping).
ARG_KEYS = ("command", "code", "path", "old_str", "new_str", "file_text", "content",
            "insert_line", "url", "browser_actions", "name", "arguments")
#: The SDK event kinds that make a list an OpenHands SDK conversation.
SDK_TOOL_EVENTS = frozenset({"ActionEvent", "ObservationEvent", "AgentErrorEvent"})
#: The SDK's editor tools (an edit attempt when called).
SDK_EDITORS = ("file_editor", "str_replace_editor")


class OpenHands(Harness):
    name = "openhands"
    title = "OpenHands"
    events = {
        "SessionStart": CONTEXT, "UserPromptSubmit": CONTEXT, "PreToolUse": PREFLIGHT,
        "PostToolUse": RECORD, "Stop": STOP, "SessionEnd": END,
    }
    context_events = frozenset({"SessionStart", "UserPromptSubmit"})
    end_events = frozenset({"SessionEnd"})
    start_events = frozenset({"SessionStart"})
    event_key = "event_type"
    project_env = "OPENHANDS_PROJECT_DIR"
    project_key = "working_dir"
    tool_kinds = {"file_editor": EDIT, "str_replace_editor": EDIT, "terminal": SHELL,
                  "execute_bash": SHELL}
    mode_editors = frozenset(SDK_EDITORS)
    edit_keys = {"file_editor": ("old_str", "new_str", ""), "str_replace_editor": ("old_str", "new_str", "")}
    #: The editors' `create` takes the whole file as `file_text`.
    arg_words = {**SHARED_ARG_WORDS, "file_text": "content"}
    payload_keys = Harness.payload_keys | {"event_type", "working_dir"}
    read_tools = ("view",)
    edit_tools = ("edit_file",)
    shell_tools = ("execute_bash", "terminal", "cmd_run")
    mode_tools = {"str_replace_editor": _EDITOR_MODES, "file_editor": _EDITOR_MODES}
    edit_formats = {"str_replace_editor": "search_replace", "file_editor": "search_replace"}
    #: The SDK's tools (`openhands/tools/`) and the older agent's actions (`CmdRunAction`, ...).
    families = {"file_editor": EDIT, "str_replace_editor": EDIT, "edit_file": EDIT,
                "terminal": SHELL, "execute_bash": SHELL, "cmd_run": SHELL, "view": READ,
                "glob": SEARCH, "grep": SEARCH, "browser": WEB, "fetch": WEB,
                "task_tracker": TASK, "think": TASK, "finish": TASK}
    vocabulary = {
        "ws_read": "str_replace_editor view", "ws_edit": "str_replace_editor str_replace",
        "ws_write": "str_replace_editor create", "ws_patch": "str_replace_editor str_replace",
        "ws_glob": "find", "ws_list": "ls", "ws_grep": "grep", "ws_shell": "execute_bash",
    }
    settings = JsonSettings(".openhands", "hooks.json", user_env="OH_PERSISTENCE_DIR")
    async_events = frozenset({"PostToolUse"})
    next_step = ("Start the agent from this directory: the SDK loads .openhands/hooks.json from "
                 "the working directory, else ~/.openhands/hooks.json.")

    def run_id(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> str:
        return text(payload.get("session_id")) or env.get("OPENHANDS_SESSION_ID", "")

    def prompt(self, payload: Mapping[str, Any]) -> str:
        return text(payload.get("message"))

    def outcome(self, tool: str, event: str, payload: Mapping[str, Any]) -> tuple[bool, str]:
        response = payload.get("tool_response")
        if not isinstance(response, dict):
            return True, ""
        found = content_text(response.get("content")).strip()
        if response.get("is_error") is True:
            return False, found or "the tool reported an error"
        if response.get("timeout") is True:
            return False, found or "timeout"
        meta = response.get("metadata")
        codes = [response.get("exit_code"), meta.get("exit_code") if isinstance(meta, dict) else None]
        for code in codes:
            # -1 is the SDK's "no exit code" (still running, or unknown)
            if isinstance(code, int) and not isinstance(code, bool) and code not in (0, -1):
                return False, found or f"exit status {code}"
        return True, ""

    def output(self, event: str, context: str, new_input: Mapping[str, Any] | None) -> dict[str, Any]:
        return {"additionalContext": context} if context else {}

    def hooks_container(self, doc: dict[str, Any], create: bool) -> dict[str, Any] | None:
        # The SDK's own format has the events at the top of the file (a new file gets it too);
        # a file with the `hooks` wrapper keeps it (the SDK then reads only what is inside).
        if "hooks" not in doc and (not doc or any(_field(k) for k in doc)):
            return doc
        return super().hooks_container(doc, create)

    def settings_key(self, doc: Mapping[str, Any], container: Mapping[str, Any], event: str) -> str:
        snake = _snake(event)
        if event in container or snake in container:
            return event if event in container else snake  # both spellings is an error to the SDK
        top = container is doc
        pascal = any(_field(k) and k != _snake(k) for k in container)
        return snake if top and not pascal else event

    # --------------------------------------------------------------------- trajectories

    def trajectory_format(self, data: Any) -> str:
        if isinstance(data, dict):
            trajectory = data.get("trajectory")
            return "openhands" if isinstance(trajectory, list) and _events(trajectory) else ""
        if isinstance(data, list) and _events(data):
            return "openhands"
        if isinstance(data, list) and _sdk_events(data):
            return "openhands-sdk"
        return ""

    def sniff_session(self, name: str, head: str) -> str:
        # A saved trajectory (a list of events), or an evaluation output (a list of instances,
        # each with its `history` of events).
        from slmactor.harnesses.base import SESSION

        opening = head.lstrip()[:4000]
        if not name.endswith(".json") or not opening.startswith("["):
            return ""
        events = '"source"' in opening and ('"action"' in opening or '"observation"' in opening)
        return SESSION if events or ('"instance_id"' in opening and '"history"' in head) else ""

    def read_sessions(self, path: str, lines: Callable[[], Iterable[str]]) -> Iterator[Any]:
        import json
        import os

        from slmactor.harnesses.base import trajectory_record, trajectory_sessions

        text_ = "".join(lines())
        try:
            data = json.loads(text_)
        except ValueError:
            return
        del text_
        if self.trajectory_format(data):
            yield from trajectory_sessions(self, path, lambda: [json.dumps(data)])
            return
        stem = os.path.basename(path).removesuffix(".json")
        for index, instance in enumerate(data if isinstance(data, list) else ()):
            history = instance.get("history") if isinstance(instance, dict) else None
            if isinstance(history, list) and _events(history):
                name = text(instance.get("instance_id")) or f"{stem}-{index}"
                yield trajectory_record(self, _trajectory(history, name), "")

    trajectory_hints = ("OpenHands events (action/observation)",
                        "OpenHands SDK events (kind: ActionEvent, ObservationEvent, ...)")

    def trajectory(self, data: Any, default_id: str) -> Trajectory:
        if self.trajectory_format(data) == "openhands-sdk":
            return _sdk_trajectory(data, default_id)
        return _trajectory(data if isinstance(data, list) else data["trajectory"], default_id)


def _events(items: Sequence[Any]) -> bool:
    return bool(items) and all(
        isinstance(e, dict) and isinstance(e.get("source"), str) and
        (isinstance(e.get("action"), str) or isinstance(e.get("observation"), str))
        for e in items)


def _sdk_events(items: Sequence[Any]) -> bool:
    return bool(items) and all(
        isinstance(e, dict) and isinstance(e.get("kind"), str) for e in items
    ) and any(e["kind"] in SDK_TOOL_EVENTS for e in items)


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _args(action: Mapping[str, Any]) -> str:
    import json

    args = _dict(action.get("args"))
    kept = {k: args[k] for k in ARG_KEYS if args.get(k) not in (None, "", [], {})}
    if set(kept) == {"command"} and isinstance(kept["command"], str):
        return str(kept["command"])
    return json.dumps(kept, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)


def _trajectory(events: Sequence[Any], default_id: str) -> Trajectory:
    from slmactor.logic.loop.importers import ERROR_CHARS, QUERY_CHARS, message_text, pair_fixes
    from slmactor.logic.loop.replay import Step, Trajectory

    observations: dict[Any, Mapping[str, Any]] = {}
    for event in events:
        if isinstance(event, dict) and isinstance(event.get("observation"), str) and \
                event.get("cause") is not None:
            observations.setdefault(event["cause"], event)
    query = ""
    steps: list[Step] = []
    tokens: Mapping[str, Any] = {}
    passed = False
    for event in events:
        if not isinstance(event, dict):
            continue
        usage = _dict(_dict(event.get("llm_metrics")).get("accumulated_token_usage"))
        if usage:
            tokens = usage
        action = event.get("action")
        if not isinstance(action, str):
            continue
        source = event.get("source")
        if action == "message" and source == "user" and not query:
            query = text(_dict(event.get("args")).get("content"))
        if source != "agent":
            continue
        if action == "finish":
            completed = _dict(event.get("args")).get("task_completed")
            passed = completed in (None, "true", True)
            continue
        if action not in TOOL_ACTIONS:
            continue
        steps.append(Step(kind="assistant"))
        tool = text(_dict(event.get("tool_call_metadata")).get("function_name")) or action
        seen = observations.get(event.get("id"), {})
        kind = seen.get("observation")
        exit_code = _dict(_dict(seen.get("extras")).get("metadata")).get("exit_code")
        failed = kind == "error" or seen.get("success") is False or (
            kind in ("run", "run_ipython") and isinstance(exit_code, int) and exit_code > 0)
        error = cut_chars(message_text(seen.get("content")), ERROR_CHARS) if failed else ""
        steps.append(Step(kind="tool", tool=tool, args=_args(event), ok=not failed,
                          error=error, edit_attempt=action in ("edit", "write")))
    if steps and tokens:
        first = steps[0]
        tokens_in, tokens_out = tokens.get("prompt_tokens"), tokens.get("completion_tokens")
        steps[0] = Step(kind=first.kind,
                        tokens_in=tokens_in if isinstance(tokens_in, int) else 0,
                        tokens_out=tokens_out if isinstance(tokens_out, int) else 0)
    model = text(tokens.get("model"))
    return Trajectory(id=default_id, query=cut_chars(query, QUERY_CHARS), model=model, task_passed=passed,
                      steps=tuple(pair_fixes(steps)))


def sdk_text(content: Any) -> str:
    """An SDK message or observation `content` (text parts) as text."""
    from slmactor.logic.loop.importers import message_text

    return "\n".join(text(part.get("text")) for part in content if isinstance(part, dict)) \
        if isinstance(content, list) else message_text(content)


def sdk_action_args(action: Mapping[str, Any]) -> str:
    """An SDK action's arguments: a terminal command as is, anything else as compact JSON."""
    import json

    if isinstance(action.get("command"), str) and action.get("kind") == "TerminalAction":
        return str(action["command"])
    kept = {k: v for k, v in action.items() if k != "kind" and v not in (None, "", [], {})}
    return json.dumps(kept, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)


def sdk_outcome(observation: Mapping[str, Any]) -> tuple[bool, str]:
    """(failed, text) of an SDK observation: an error, or a command's non-zero exit code."""
    code = observation.get("exit_code")
    failed = observation.get("is_error") is True or (isinstance(code, int) and code != 0)
    return failed, sdk_text(observation.get("content"))


def _sdk_trajectory(events: Sequence[Any], default_id: str) -> Trajectory:
    from slmactor.logic.loop.importers import ERROR_CHARS, QUERY_CHARS, pair_fixes
    from slmactor.logic.loop.replay import Step, Trajectory

    results: dict[Any, tuple[bool, str]] = {}  # action id or tool call id → (failed, text)
    for event in events:
        kind = event.get("kind")
        if kind == "ObservationEvent":
            results[event.get("action_id")] = sdk_outcome(_dict(event.get("observation")))
        elif kind == "AgentErrorEvent":
            results[event.get("tool_call_id")] = (True, text(event.get("error")))
    query, model, passed = "", "", False
    tokens: Mapping[str, Any] = {}
    steps: list[Step] = []
    for event in events:
        kind = event.get("kind")
        if kind == "MessageEvent" and event.get("source") == "user" and not query:
            query = sdk_text(_dict(event.get("llm_message")).get("content"))
        elif kind == "ConversationStateUpdateEvent" and event.get("key") == "stats":
            usage = _dict(_dict(_dict(event.get("value")).get("usage_to_metrics")).get("default"))
            model = text(usage.get("model_name")) or model
            tokens = _dict(usage.get("accumulated_token_usage")) or tokens
        elif kind == "ActionEvent":
            tool = text(event.get("tool_name"))
            if tool == "finish":
                passed = True
                continue
            steps.append(Step(kind="assistant"))
            failed, output = results.get(event.get("id")) or results.get(
                event.get("tool_call_id")) or (False, "")
            args = sdk_action_args(_dict(event.get("action")))
            steps.append(Step(kind="tool", tool=tool, args=args, ok=not failed,
                              error=cut_chars(output, ERROR_CHARS) if failed else "",
                              edit_attempt=tool in SDK_EDITORS))
    if steps and tokens:
        tokens_in, tokens_out = tokens.get("prompt_tokens"), tokens.get("completion_tokens")
        steps[0] = Step(kind="assistant",
                        tokens_in=tokens_in if isinstance(tokens_in, int) else 0,
                        tokens_out=tokens_out if isinstance(tokens_out, int) else 0)
    return Trajectory(id=default_id, query=cut_chars(query, QUERY_CHARS), model=model, task_passed=passed,
                      steps=tuple(pair_fixes(steps)))


HARNESS = OpenHands()
