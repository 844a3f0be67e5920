"""mini-swe-agent with slmactor memory: `MemoryAgent`, a drop-in for its `DefaultAgent`.

    from minisweagent.environments.local import LocalEnvironment
    from slmactor.harnesses.mini_swe_agent.agent import MemoryAgent

    agent = MemoryAgent(model, LocalEnvironment(cwd=repo), project=repo, **agent_config)
    agent.run("fix the failing date parser test")

What it adds to a run (written against mini-swe-agent 2.4, `minisweagent/agents/default.py`):

* **start** — a run (`run.start`) for the task; the memory block for it goes into the instance
  prompt: the template variable `slmactor_memory`, appended to the instance template unless the
  template already places it;
* **every action** — recorded as a `bash` tool call with its command and outcome (a tell, never
  blocking the agent);
* **a failed action** (non-zero return code, or an exception) — `evolve.on_failure` with the
  command and its output; when memory knows this failure, one `[slmactor]` line is appended to the
  observation the model reads (the remembered fix, or the repaired command);
* **the fix** — the next successful action running the same program as the failed one resolves
  that failure, with the commands run in between as its resolution, so the next run of a similar
  task is told how it was fixed;
* **end** — `run.finish` (success = the agent submitted), built by the daemon from what it saw.

The daemon being down never stops the agent: the run goes on without memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
from typing import TYPE_CHECKING, Any

from minisweagent.agents.default import DefaultAgent
from minisweagent.exceptions import Submitted

from slmactor.client import DaemonUnavailable, RequestFailed
from slmactor.sessions import Session, session

if TYPE_CHECKING:
    from slmactor.results import Advice

#: Where the memory block goes when the instance template does not place `slmactor_memory`.
MEMORY_SUFFIX = "{% if slmactor_memory %}\n\n{{ slmactor_memory }}\n{% endif %}"
#: The tool name actions are recorded under (mini-swe-agent has one tool: a bash command).
TOOL = "bash"
#: Bytes of a failed action's output sent as its error message.
ERROR_BYTES = 4000
#: Commands remembered as the resolution of a failure (the ones run between failure and fix).
RESOLUTION_COMMANDS = 5


def _program(command: str) -> str:
    """The program a command runs (`python3` of `cd x && python3 t.py`), for pairing a failure
    with its fix."""
    last = command.split("&&")[-1].split(";")[-1].strip()
    try:
        words = shlex.split(last)
    except ValueError:
        words = last.split()
    words = [w for w in words if "=" not in w.split("/")[0]]  # env assignments
    return os.path.basename(words[0]) if words else ""


class MemoryAgent(DefaultAgent):
    """`DefaultAgent` that remembers: see the module docstring."""

    def __init__(self, model: Any, env: Any, *, project: str | os.PathLike[str],
                 runtime_dir: str | os.PathLike[str] | None = None, language: str = "",
                 **kwargs: Any) -> None:
        super().__init__(model, env, **kwargs)
        self.slmactor_project = os.fspath(project)
        self.slmactor_runtime_dir = runtime_dir
        self.slmactor_language = language
        self.memory: Session | None = None
        #: Open failures by program: their advice and the commands run since each.
        self._open: dict[str, tuple[Advice, list[str]]] = {}

    # ------------------------------------------------------------------------------ a run
    def run(self, task: str = "", **kwargs: Any) -> dict[str, Any]:
        self.memory = self._start(task)
        block = ""
        if self.memory is not None:
            try:
                block = self.memory.memory_block()
            except (DaemonUnavailable, RequestFailed):
                block = ""
        self.extra_template_vars["slmactor_memory"] = block
        if "slmactor_memory" not in self.config.instance_template:
            self.config = self.config.model_copy(
                update={"instance_template": self.config.instance_template + MEMORY_SUFFIX})
        succeeded = False
        try:
            result: dict[str, Any] = super().run(task, **kwargs)
            succeeded = result.get("exit_status") == "Submitted"
            return result
        finally:
            self._finish(succeeded)

    def _start(self, task: str) -> Session | None:
        model_name = str(getattr(getattr(self.model, "config", None), "model_name", "") or "")
        try:
            return session(self.slmactor_project, task, model=model_name,
                           language=self.slmactor_language, runtime_dir=self.slmactor_runtime_dir)
        except (DaemonUnavailable, RequestFailed):
            return None

    def _finish(self, succeeded: bool) -> None:
        memory, self.memory = self.memory, None
        self._open = {}
        if memory is None:
            return
        try:
            # Fail-open: with the daemon gone the agent's run still ends as it would without us.
            with contextlib.suppress(DaemonUnavailable, RequestFailed):
                memory.finish(success=succeeded)
        finally:
            memory.close()

    # ------------------------------------------------------------------------------ actions
    def execute_actions(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        outputs = []
        for action in message.get("extra", {}).get("actions", []):
            command = str(action.get("command", ""))
            try:
                output = self.env.execute(action)
            except Submitted:
                self._record(command, {"returncode": 0, "output": ""})
                raise
            self._record(command, output)
            outputs.append(output)
        return self.add_messages(
            *self.model.format_observation_messages(message, outputs, self.get_template_vars()))

    def _record(self, command: str, output: dict[str, Any]) -> None:
        memory = self.memory
        if memory is None:
            return
        ok = output.get("returncode") == 0 and not output.get("exception_info")
        text = str(output.get("output") or "")
        error = "" if ok else (str(output.get("exception_info") or "") + "\n" + text).strip()
        error = error.encode("utf-8", "replace")[-ERROR_BYTES:].decode("utf-8", "ignore")
        memory.record_tool(TOOL, command=command, ok=ok, error=error)
        try:
            if ok:
                self._maybe_resolve(memory, command)
            else:
                self._on_failure(memory, command, error or f"exit code {output.get('returncode')}",
                                 output)
        except (DaemonUnavailable, RequestFailed):
            pass  # memory is best effort; the agent's own observation is untouched

    def _on_failure(self, memory: Session, command: str, error: str,
                    output: dict[str, Any]) -> None:
        advice = memory.on_failure(TOOL, error, args=json.dumps({"command": command}))
        line = advice.observation()
        if line:
            output["output"] = f"{output.get('output') or ''}\n{line}\n"
        self._note(command)
        self._open.setdefault(_program(command), (advice, []))

    def _maybe_resolve(self, memory: Session, command: str) -> None:
        program = _program(command)
        opened = self._open.pop(program, None)
        self._note(command)
        if opened is None:
            return
        advice, since = opened
        steps = since[-RESOLUTION_COMMANDS:]
        resolution = ("fixed by running: " + "; ".join(steps)) if steps else f"re-ran: {command}"
        memory.resolved(advice, fixed_args=json.dumps({"command": command}),
                        resolution=resolution)

    def _note(self, command: str) -> None:
        """`command` ran while other failures were open: it may be part of their fix."""
        program = _program(command)
        for other, (_, since) in self._open.items():
            if other != program:
                since.append(command)
