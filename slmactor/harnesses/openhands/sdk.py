"""OpenHands SDK adapter: memory for an in-process `Conversation`.

    from openhands.sdk import Agent
    from slmactor.harnesses.openhands.sdk import MemoryCallback

    with MemoryCallback(project=repo, task=task, model=llm.model) as memory:
        agent = Agent(llm=llm, tools=tools, agent_context=memory.agent_context())
        conversation = memory.conversation(agent, workspace=repo)  # callbacks=[memory]
        conversation.send_message(task)
        conversation.run()
    # leaving the block sends run.finish (success: the agent called `finish`) and closes

Written against openhands-sdk 1.58.2 (PyPI), following these files of it:

* `openhands/sdk/context/agent_context.py` — `AgentContext.system_message_suffix` is appended to
  the agent's system prompt: `agent_context()` (or `block()` for a context you build yourself)
  starts the run and puts the memory block for the task there (facts, similar past runs, fixes
  of failures seen before).
* `openhands/sdk/conversation/types.py` — a callback is `Callable[[Event], None]`;
  `conversation/impl/local_conversation.py` runs the callbacks on the run thread while holding
  the state's re-entrant lock, and its `send_message(message, sender=...)` appends a user message
  the agent reads on its next step.
* `openhands/sdk/agent/agent.py` (`_execute_actions`) — the tool calls of one LLM response are
  emitted as `ActionEvent`s, then their `ObservationEvent`s (or `AgentErrorEvent`s) in order on
  the run thread, before the next step; `openhands/sdk/event/llm_convertible/` gives their fields
  (`tool_name`, `action`, `action_id`, `tool_call_id`, `observation.is_error`, `exit_code`).

As a callback it records each tool call when its observation arrives (`record_tool`); a failure
(`is_error`, a non-zero `exit_code`, an `AgentErrorEvent`) is asked about with `evolve.on_failure`
and the advice kept in `advice`; when memory knows the failure, its `[slmactor]` line is sent to
the agent as a user message (sender "slmactor") once every call of that response has its
observation — never between a response's tool results, which the model APIs require together,
and not after the agent called `finish`. The next successful call of the same tool and program is
reported as the fix (`evolve.resolved`, with the calls made in between). `finish()` sends
`run.finish`: the daemon builds the report from what it was told (as a context manager, on
leaving the block, then `close()`).

Events are read through their JSON form (`model_dump(mode="json")`, the `kind`-tagged shape the
SDK persists — the same one `metrics replay` imports). The SDK needs Python ≥ 3.12, so it is
imported only inside `agent_context()` and `conversation()`; the rest works on any event-shaped
object. Memory never breaks the conversation: the callback never raises, and with the daemon down
every step is skipped quietly (reasons in `errors`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Self

from slmactor.client import Client, DaemonUnavailable, RequestFailed
from slmactor.harnesses.openhands import sdk_action_args, sdk_outcome, sdk_text
from slmactor.logic.text.safecut import cut_chars
from slmactor.results import Advice, Finished

__all__ = ["MemoryCallback"]

#: Characters of a failed call's output sent as the failure message.
MESSAGE_CHARS = 2000
#: Reasons kept in `errors`, newest last.
MAX_ERRORS = 32
#: Who the advice messages are from (`send_message(sender=...)`).
SENDER = "slmactor"


def _as_dict(event: Any) -> Mapping[str, Any]:
    if isinstance(event, Mapping):
        return event
    dump = getattr(event, "model_dump", None)
    data = dump(mode="json") if callable(dump) else {}
    if isinstance(data, dict):
        data.setdefault("kind", type(event).__name__)
        return data
    return {}


def _summary(tool: str, action: Mapping[str, Any], args: str) -> str:
    """One short line for a call, as a resolution names it: `terminal <command>`, or
    `file_editor str_replace <path>: <first line of the new text>`."""
    if not args.startswith("{"):
        return f"{tool} {cut_chars(args, 120)}"
    words = [str(action[k]) for k in ("command", "path") if isinstance(action.get(k), str)]
    new = next((action[k] for k in ("new_str", "file_text", "content")
                if isinstance(action.get(k), str) and action[k].strip()), "")
    line = cut_chars(new.strip().split("\n", 1)[0], 100) if new else ""
    return f"{tool} {' '.join(words)}" + (f": {line}" if line else "")


def _program(args: str) -> str:
    words = args.split()
    return words[0] if words else ""


class MemoryCallback:
    """A `Conversation` callback that gives the run memory; see the module docstring."""

    def __init__(self, project: str | os.PathLike[str], task: str = "", *,
                 runtime_dir: str | os.PathLike[str] | None = None, model: str = "",
                 language: str = "", run_id: str = "", timeout: float = 2.5) -> None:
        self.client = Client(runtime_dir, project=project, timeout=timeout)
        self.task = task
        self.model = model
        self.language = language
        self.run_id = run_id
        self._started = False
        #: Tool calls waiting for their observation: action id / tool call id →
        #: (tool, args, summary).
        self._calls: dict[str, tuple[str, str, str]] = {}
        #: The last failure per (tool, program) waiting for a fix: its args, its advice, and
        #: where the successful calls made since it begin in `_done`.
        self._open: dict[tuple[str, str], tuple[str, Advice, int]] = {}
        #: Successful calls of the run, as short lines (what a resolution names).
        self._done: list[str] = []
        #: Advice the daemon gave for this run's failures, oldest first.
        self.advice: list[Advice] = []
        #: Why memory requests failed (daemon down, refused), newest last.
        self.errors: list[str] = []
        self.agent_finished = False
        self.finished: Finished | None = None
        #: The conversation advice is sent to (`attach`, `conversation`); None: advice only kept.
        self.attached: Any = None
        #: `[slmactor]` lines waiting until every call of the current response is observed.
        self._pending: list[str] = []
        #: The lines sent to the agent, oldest first.
        self.sent: list[str] = []
        #: The memory block last answered by `block()`.
        self.block_text = ""

    # ---- the run

    def _note(self, exc: Exception) -> None:
        self.errors = [*self.errors[-(MAX_ERRORS - 1):], str(exc)]

    def start(self) -> str:
        """Start the run (once); its id, "" when the daemon could not be reached."""
        if not self._started:
            self._started = True
            try:
                self.run_id = self.client.start_run(self.task, run_id=self.run_id).run_id
            except (DaemonUnavailable, RequestFailed) as exc:
                self._note(exc)
                self.run_id = ""
        return self.run_id

    def block(self, budget: int = 0) -> str:
        """The memory block for the task, for `AgentContext(system_message_suffix=...)`."""
        if not self.start():
            return ""
        try:
            self.block_text = self.client.memory_block(
                self.task, run_id=self.run_id, budget=budget, model=self.model,
                language=self.language)
        except (DaemonUnavailable, RequestFailed) as exc:
            self._note(exc)
            self.block_text = ""
        return self.block_text

    def agent_context(self, context: Any = None, budget: int = 0) -> object:
        """An SDK `AgentContext` (a copy of `context` when given) whose system message suffix
        ends with the memory block for the task. Imports the SDK (Python ≥ 3.12)."""
        from openhands.sdk import AgentContext

        block = self.block(budget)
        if context is None:
            return AgentContext(system_message_suffix=block or None)
        suffix = "\n\n".join(p for p in (context.system_message_suffix or "", block) if p)
        return context.model_copy(update={"system_message_suffix": suffix or None})

    def attach(self, conversation: Any) -> None:
        """Send advice to `conversation` (anything with `send_message(text, sender=...)`)."""
        self.attached = conversation

    def conversation(self, agent: Any, **kwargs: Any) -> object:
        """`Conversation(agent, callbacks=[self, *callbacks], **kwargs)`, attached. Imports the
        SDK (Python ≥ 3.12)."""
        from openhands.sdk import Conversation

        callbacks = [self, *(kwargs.pop("callbacks", None) or [])]
        conversation = Conversation(agent=agent, callbacks=callbacks, **kwargs)
        self.attach(conversation)
        return conversation

    def finish(self, success: bool | None = None) -> Finished | None:
        """Send `run.finish` once (success: given, else whether the agent used `finish`)."""
        if self.finished is None and self.start():
            try:
                self.finished = self.client.finish_run(
                    self.run_id, success=self.agent_finished if success is None else success,
                    model=self.model, language=self.language)
            except (DaemonUnavailable, RequestFailed) as exc:
                self._note(exc)
        return self.finished

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        """`finish()` (not a success when the conversation raised), then `close()`."""
        try:
            self.finish(success=False if exc_type is not None else None)
        finally:
            self.close()

    # ---- the callback

    def __call__(self, event: Any) -> None:
        try:
            data = _as_dict(event)
            self._on_event(data)
            if data.get("kind") in ("ObservationEvent", "AgentErrorEvent"):
                self._deliver()
        except (DaemonUnavailable, RequestFailed) as exc:
            self._note(exc)
        except Exception as exc:  # noqa: BLE001 - a callback must never break the conversation
            self._note(exc)

    def _deliver(self) -> None:
        """Send the waiting advice once the response's calls all have their results (a user
        message between tool results would break the next request), unless the agent is done
        (a message would reopen a finished conversation)."""
        if self._calls or not self._pending:
            return
        lines, self._pending = self._pending, []
        if self.attached is None or self.agent_finished:
            return
        text = "\n".join(dict.fromkeys(lines))
        self.attached.send_message(text, sender=SENDER)
        self.sent.append(text)

    def _on_event(self, data: Mapping[str, Any]) -> None:
        kind = data.get("kind")
        if kind == "MessageEvent" and data.get("source") == "user" and not self.task:
            message = data.get("llm_message")
            self.task = sdk_text(message.get("content")) if isinstance(message, Mapping) else ""
        elif kind == "ActionEvent":
            tool = str(data.get("tool_name") or "")
            self.agent_finished = self.agent_finished or tool == "finish"
            action = data.get("action")
            fields = action if isinstance(action, Mapping) else {}
            args = sdk_action_args(fields)
            call = (tool, args, _summary(tool, fields, args))
            for key in (data.get("id"), data.get("tool_call_id")):
                if isinstance(key, str) and key:
                    self._calls[key] = call
        elif kind == "ObservationEvent":
            observation = data.get("observation")
            failed, text = sdk_outcome(observation if isinstance(observation, Mapping) else {})
            self._observed(data.get("action_id"), data.get("tool_call_id"), failed, text)
        elif kind == "AgentErrorEvent":
            self._observed(None, data.get("tool_call_id"), True, str(data.get("error") or ""))

    def _observed(self, action_id: Any, call_id: Any, failed: bool, text: str) -> None:
        call = self._calls.get(action_id) if isinstance(action_id, str) else None
        if call is None and isinstance(call_id, str):
            call = self._calls.get(call_id)
        # Kept under its action id and its tool call id: the call is done under both.
        self._calls = {key: pending for key, pending in self._calls.items() if pending is not call}
        if call is None or call[0] == "finish" or not self.start():
            return
        tool, args, summary = call
        command = args if not args.startswith("{") else ""
        self.client.record_tool(self.run_id, tool, args="" if command else args, command=command,
                                ok=not failed, error=cut_chars(text, MESSAGE_CHARS) if failed else "")
        key = (tool, _program(args))
        if failed:
            message = cut_chars(text.strip(), MESSAGE_CHARS) or "the call failed"
            advice = self.client.on_failure(self.run_id, tool, message, args=args,
                                            language=self.language, model=self.model)
            self._open[key] = (args, advice, len(self._done))
            if advice.found:
                self.advice.append(advice)
                line = advice.observation()
                if line:
                    self._pending.append(f"{line} (after: {summary[:160]})")
            return
        if key in self._open:
            failed_args, advice, since = self._open.pop(key)
            between = self._done[since:][:3]
            how = [*between, summary] if failed_args != args else between
            self.client.resolved(advice, fixed_args=args,
                                 resolution=cut_chars("fixed by: " + "; ".join(how), 400) if how else "")
        self._done.append(summary)
