"""`slmactor.session(...)`: one run of a script or harness, from start to finish, in a `with`.

    import slmactor

    with slmactor.session(".", "fix the flaky upload test", model="qwen2.5-coder:7b") as run:
        prompt = run.memory_block()                          # the block for the model's prompt
        run.record_tool("Bash", command="pytest -q", ok=False, error="1 failed")
        advice = run.on_failure("Edit", message, args=args)  # the remembered repair, if any
        ...
    # leaving the block sends run.finish: the daemon builds the report from what it saw

A `Session` is a `Client` bound to one project and one run id, with the model and language
filled in: every verb of `slmactor.verbs` without the repeated arguments. Leaving the `with`
block finishes the run (success = no exception, unless `finish` was called) and closes the
client; an exception from the block is never hidden by a failure to reach the daemon.

With `fail_open=True` memory never stops the script: when the daemon is down or refuses a
request, each verb answers as if nothing were remembered (no advice, an empty block, no hits),
the reason is kept in `Session.errors`, and tells are counted as dropped.
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar, overload

from slmactor.client import Client, DaemonUnavailable, RequestFailed

if TYPE_CHECKING:
    from slmactor.results import Advice, Block, Finished, RecallHit, Resolution

__all__ = ["Session", "session"]

T = TypeVar("T")
#: Reasons kept in `Session.errors` (fail-open), newest last.
MAX_ERRORS = 32


class Session:
    """One run: `Client` verbs with the run id, project, model and language filled in."""

    def __init__(self, client: Client, run_id: str, task: str, *, model: str = "",
                 language: str = "", role: str = "worker", fail_open: bool = False) -> None:
        self.client = client
        self.fail_open = fail_open
        #: With `fail_open`: why requests failed (daemon down, refused), newest last.
        self.errors: list[str] = []
        self.run_id = run_id
        self.task = task
        self.model = model
        self.language = language
        self.role = role
        #: `finish`'s answer once the run was finished.
        self.finished: Finished | None = None

    # ---- tells: never block, never raise; False when dropped (counted in `client.dropped`)

    def record_tool(self, tool: str, *, path: str = "", args: Any = "", command: str = "",
                    ok: bool = True, error: str = "", key: str = "") -> bool:
        """Record one tool call and its outcome."""
        return self.client.record_tool(self.run_id, tool, path=path, args=args, command=command,
                                       ok=ok, error=error, key=key)

    def focus(self, paths: Sequence[str]) -> bool:
        return self.client.focus(self.run_id, list(paths))

    def decide(self, text: str) -> bool:
        return self.client.decide(self.run_id, text)

    def summarize(self, text: str) -> bool:
        return self.client.summarize(self.run_id, text)

    # ---- asks

    def _ask(self, call: Callable[[], T], fallback: Callable[[], T]) -> T:
        """`call()`; with `fail_open`, `fallback()` when the daemon cannot answer it."""
        try:
            return call()
        except (DaemonUnavailable, RequestFailed) as exc:
            if not self.fail_open:
                raise
            self.errors = [*self.errors[-(MAX_ERRORS - 1):], str(exc)]
            return fallback()

    def on_failure(self, tool: str, message: str, *, args: Any = "") -> Advice:
        """A tool call failed: the remembered repair, if any (`Advice.apply`, `new_args`)."""
        from slmactor.results import Advice

        return self._ask(
            lambda: self.client.on_failure(self.run_id, tool, message, args=args,
                                           language=self.language, model=self.model),
            lambda: Advice(self.run_id, tool, message, language=self.language, model=self.model))

    def resolved(self, advice: Advice, *, fixed_args: Any = "", resolution: str = "") -> Resolution:
        """The failure `advice` answered was fixed (by its rule, or with `fixed_args`)."""
        from slmactor.results import Resolution

        return self._ask(
            lambda: self.client.resolved(advice, fixed_args=fixed_args, resolution=resolution),
            Resolution)

    @overload
    def memory_block(self, query: str = ..., *, files: Sequence[str] = ..., budget: int = ...,
                     sections: Literal[False] = ...) -> str: ...

    @overload
    def memory_block(self, query: str = ..., *, files: Sequence[str] = ..., budget: int = ...,
                     sections: Literal[True]) -> Block: ...

    def memory_block(self, query: str = "", *, files: Sequence[str] = (), budget: int = 0,
                     sections: bool = False) -> str | Block:
        """The memory block for the prompt; without a query, for the run's own task."""
        from slmactor.results import Block

        block = self._ask(
            lambda: self.client.memory_block(query, run_id=self.run_id, role=self.role,
                                             files=files, budget=budget, language=self.language,
                                             model=self.model, sections=True),
            lambda: Block(""))
        return block if sections else block.text

    def recall(self, query: str = "", *, files: Sequence[str] = (), n: int = 3) -> list[RecallHit]:
        """Past episodes most like `query` (default: the run's task)."""
        return self._ask(
            lambda: self.client.recall(query or self.task, files=files, n=n,
                                       language=self.language, model=self.model),
            list)

    def remember(self, subject: str, text: str, *, kind: str = "convention") -> dict[str, Any]:
        """Observe a fact about the project."""
        return self._ask(lambda: self.client.remember(subject, text, kind=kind), dict)

    def finish(self, report: Mapping[str, Any] | None = None, *, success: bool | None = None,
               summary: str = "", wait: bool = False) -> Finished:
        """Finish the run (once; later calls answer the first result)."""
        from slmactor.results import Finished

        if self.finished is None:
            self.finished = self._ask(
                lambda: self.client.finish_run(
                    self.run_id, report, success=success, summary=summary, model=self.model,
                    language=self.language, wait=wait),
                lambda: Finished(self.run_id))
        return self.finished

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: types.TracebackType | None) -> None:
        try:
            if self.finished is None:
                try:
                    self.finish(success=exc is None)
                except (DaemonUnavailable, RequestFailed):
                    if exc is None:
                        raise
                    # The block's own exception is the one to see.
        finally:
            self.close()


def session(project: str | os.PathLike[str], task: str, *, model: str = "", language: str = "",
            role: str = "worker", run_id: str = "",
            runtime_dir: str | os.PathLike[str] | None = None, timeout: float = 2.5,
            fail_open: bool = False) -> Session:
    """Start a run of `task` in `project` (a directory) and return it as a `Session`.

    Raises DaemonUnavailable when the daemon is not running (start it: `slmactor start`) and
    RequestFailed(BAD_PROJECT) when `project` is not an existing directory — unless
    `fail_open`, which runs the session without memory instead (see the module docstring).
    """
    from slmactor.results import new_run_id

    client = Client(runtime_dir, project=project, timeout=timeout)
    try:
        run_id = client.start_run(task, run_id=run_id, role=role).run_id
        error = ""
    except (DaemonUnavailable, RequestFailed) as exc:
        if not fail_open:
            client.close()
            raise
        run_id, error = run_id or new_run_id(), str(exc)
    except BaseException:
        client.close()
        raise
    opened = Session(client, run_id, task, model=model, language=language, role=role,
                     fail_open=fail_open)
    if error:
        opened.errors.append(error)
    return opened
