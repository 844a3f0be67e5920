"""What a harness does, as methods with typed results: the verbs of `Client` and `AsyncClient`.

    run = c.start_run("fix the flaky upload test")               # -> Run
    c.record_tool(run.run_id, "Bash", command="pytest -q", ok=False, error="1 failed")  # a tell
    advice = c.on_failure(run.run_id, "Edit", message, args=args)  # -> Advice
    if advice.apply:
        args = advice.new_args                                     # the remembered repair
    c.resolved(advice, fixed_args=args)                            # teach how it was fixed
    prompt = c.memory_block("fix the flaky upload test", run_id=run.run_id)   # -> str
    c.finish_run(run.run_id, success=True)                         # -> Finished

Each verb builds one message (`slmactor.protocol.messages`), asks it with the client's deadline
and retries, and reads the reply into a frozen dataclass; the raw reply stays available as `raw`
for fields a newer daemon adds. `finish_run` without a report lets the daemon build it from the
run's working memory; a report given is merged with what the daemon saw (no double counting).
The reply shapes are documented in clients/PROTOCOL.md §10.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, overload

if TYPE_CHECKING:
    from slmactor.protocol.messages import Message
    from slmactor.results import Advice, Block, Finished, RecallHit, Resolution, Run

__all__ = ["AsyncVerbs", "SyncVerbs"]


def _args_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


# ---------------------------------------------------------------- requests (shared by both)


def _failure_request(run_id: str, tool: str, message: str, args: Any, language: str,
                     model: str) -> dict[str, Any]:
    return {"run_id": run_id, "tool": tool, "message": message, "args": _args_text(args) if args
            else "", "language": language, "model": model}


def _call(tool: str, args: Any, **outcome: Any) -> dict[str, Any]:
    """The call as the room of its tool reads it (`harnesses.tool_call`), as its wire map: the
    daemon parses nothing of it again."""
    from slmactor import harnesses

    return harnesses.tool_call(tool, args if args else {}, **outcome).to_wire()


def _failure_message(request: dict[str, Any]) -> Message:
    from slmactor.protocol.messages import EvolveOnFailure

    return EvolveOnFailure(run_id=request["run_id"], language=request["language"],
                           model=request["model"],
                           call=_call(request["tool"], request["args"], ok=False,
                                      error=request["message"]))


def _resolved_message(advice: Advice, fixed_args: Any, resolution: str) -> Message:
    from slmactor.protocol.messages import EvolveResolved

    fixed = _args_text(fixed_args) if fixed_args else ""
    # The rule fixed it when its advice was applied as given; anything else is the model's fix.
    by_rule = advice.apply and bool(advice.rule_id) and (not fixed or fixed == advice.new_args)
    return EvolveResolved(
        run_id=advice.run_id, fingerprint=advice.fingerprint,
        rule_id=advice.rule_id if by_rule else "",
        # No default text for the model's fix: a resolution text becomes a guidance rule, and
        # "fixed by the model" would only compete with the transform learned from the args.
        resolution=resolution or ("repaired from memory" if by_rule else ""),
        failed=_call(advice.tool, advice.args, ok=False, error=advice.message),
        fixed=_call(advice.tool, fixed) if fixed else {},
        language=advice.language, model=advice.model,
    )


def _finish_message(run_id: str, report: Mapping[str, Any] | None, success: bool | None,
                     summary: str, model: str, language: str, wait: bool, client: str,
                     seq: int) -> Message:
    from slmactor.protocol.messages import RunFinish

    body: dict[str, Any] = dict(report or {})
    body.setdefault("run_id", run_id)
    if model:
        body.setdefault("model", model)
    if language:
        body.setdefault("language", language)
    if success is not None and not any(k in body for k in ("planned_tasks", "completed_tasks",
                                                            "blocked_tasks")):
        body.update(planned_tasks=1, completed_tasks=1 if success else 0)
    return RunFinish(report=body, summary=summary, wait=wait, run_id=run_id, client=client,
                     seq=seq)


def _block_message(task: str, run_id: str, role: str, files: Sequence[str], tags: Sequence[str],
                   budget: int, language: str, model: str) -> Message:
    from slmactor.protocol.messages import MemoryBlock

    return MemoryBlock(query=task, run_id=run_id, role=role, files=list(files), tags=list(tags),
                       budget=budget, language=language, model=model)


# ---------------------------------------------------------------- the mixins


class _Asks(Protocol):
    @property
    def client_id(self) -> str: ...

    @property
    def last_seq(self) -> int: ...

    def ask(self, msg: Message, *, timeout: float | None = None,
            retries: int | None = None) -> Any: ...


class _AsyncAsks(Protocol):
    @property
    def client_id(self) -> str: ...

    @property
    def last_seq(self) -> int: ...

    async def ask(self, msg: Message, *, timeout: float | None = None,  # noqa: ASYNC109
                  retries: int | None = None) -> Any: ...


class SyncVerbs:
    """The verbs of the blocking `Client`. Each raises RequestFailed or DaemonUnavailable."""

    def start_run(self: _Asks, task: str = "", *, run_id: str = "", role: str = "worker",
                  keep: bool = False) -> Run:
        """Start a run (a new id unless `run_id`); a live run id starts over unless `keep`."""
        from slmactor import results
        from slmactor.protocol.messages import RunStart

        run_id = run_id or results.new_run_id()
        reply = self.ask(RunStart(run_id=run_id, task=task, role=role, keep=keep))
        return results.Run.from_reply(reply, task)

    def on_failure(self: _Asks, run_id: str, tool: str, message: str, *, args: Any = "",
                   language: str = "", model: str = "") -> Advice:
        """A tool call failed: the remembered repair, if any (the failure opens in working
        memory). `args` are the failed call's arguments (JSON text or a JSON-able value)."""
        from slmactor import results

        request = _failure_request(run_id, tool, message, args, language, model)
        return results.Advice.from_reply(self.ask(_failure_message(request)), request)

    def resolved(self: _Asks, advice: Advice, *, fixed_args: Any = "",
                 resolution: str = "") -> Resolution:
        """The failure `advice` answered was fixed: by the rule (its `new_args`, or no
        `fixed_args`) or with `fixed_args` (from which the daemon may learn a rule)."""
        from slmactor import results

        reply = self.ask(_resolved_message(advice, fixed_args, resolution))
        return results.Resolution.from_reply(reply)

    @overload
    def memory_block(self: _Asks, task: str = ..., *, run_id: str = ..., role: str = ...,
                     files: Sequence[str] = ..., tags: Sequence[str] = ..., budget: int = ...,
                     language: str = ..., model: str = ...,
                     sections: Literal[False] = ...) -> str: ...

    @overload
    def memory_block(self: _Asks, task: str = ..., *, run_id: str = ..., role: str = ...,
                     files: Sequence[str] = ..., tags: Sequence[str] = ..., budget: int = ...,
                     language: str = ..., model: str = ..., sections: Literal[True]) -> Block: ...

    def memory_block(self: _Asks, task: str = "", *, run_id: str = "", role: str = "worker",
                     files: Sequence[str] = (), tags: Sequence[str] = (), budget: int = 0,
                     language: str = "", model: str = "", sections: bool = False) -> str | Block:
        """The memory block to put in the prompt (text), or with `sections=True` a `Block`.
        Without a task, a live run's own task and focus files choose what is recalled."""
        from slmactor import results

        reply = self.ask(_block_message(task, run_id, role, files, tags, budget, language, model))
        block = results.Block.from_reply(reply)
        return block if sections else block.text

    def recall(self: _Asks, task: str, *, files: Sequence[str] = (), n: int = 3,
               language: str = "", model: str = "", success_only: bool = False,
               explain: bool = False) -> list[RecallHit]:
        """Past episodes most like this task, best first."""
        from slmactor import results
        from slmactor.protocol.messages import MemoryRecall

        return results.RecallHit.from_reply(self.ask(MemoryRecall(
            query=task, files=list(files), n=n, language=language, model=model,
            success_only=success_only, explain=explain)))

    def remember(self: _Asks, subject: str, text: str, *, kind: str = "convention",
                 sources: Sequence[str] = ()) -> dict[str, Any]:
        """Observe a fact about the project (`kind`: command, layout, convention, gotcha, file,
        dependency); repeated observations raise its confidence."""
        from slmactor import results
        from slmactor.protocol.messages import FactObserve

        return results.as_dict(self.ask(FactObserve(kind=kind, subject=subject, text=text,
                                          sources=list(sources))))

    def finish_run(self: _Asks, run_id: str, report: Mapping[str, Any] | None = None, *,
                   success: bool | None = None, summary: str = "", model: str = "",
                   language: str = "", wait: bool = False) -> Finished:
        """The run ended. Without `report` the daemon builds it from what it saw (calls, errors,
        files, failures); a report given is merged with that, nothing counted twice.
        `success` sets the outcome when the report does not (one planned task, done or not)."""
        from slmactor import results

        return results.Finished.from_reply(self.ask(_finish_message(
            run_id, report, success, summary, model, language, wait, self.client_id,
            self.last_seq)))


class AsyncVerbs:
    """The verbs of `AsyncClient`, awaited; see `SyncVerbs` for each one."""

    async def start_run(self: _AsyncAsks, task: str = "", *, run_id: str = "",
                        role: str = "worker", keep: bool = False) -> Run:
        from slmactor import results
        from slmactor.protocol.messages import RunStart

        run_id = run_id or results.new_run_id()
        reply = await self.ask(RunStart(run_id=run_id, task=task, role=role, keep=keep))
        return results.Run.from_reply(reply, task)

    async def on_failure(self: _AsyncAsks, run_id: str, tool: str, message: str, *,
                         args: Any = "", language: str = "", model: str = "") -> Advice:
        from slmactor import results

        request = _failure_request(run_id, tool, message, args, language, model)
        return results.Advice.from_reply(await self.ask(_failure_message(request)), request)

    async def resolved(self: _AsyncAsks, advice: Advice, *, fixed_args: Any = "",
                       resolution: str = "") -> Resolution:
        from slmactor import results

        reply = await self.ask(_resolved_message(advice, fixed_args, resolution))
        return results.Resolution.from_reply(reply)

    @overload
    async def memory_block(self: _AsyncAsks, task: str = ..., *, run_id: str = ...,
                           role: str = ..., files: Sequence[str] = ..., tags: Sequence[str] = ...,
                           budget: int = ..., language: str = ..., model: str = ...,
                           sections: Literal[False] = ...) -> str: ...

    @overload
    async def memory_block(self: _AsyncAsks, task: str = ..., *, run_id: str = ...,
                           role: str = ..., files: Sequence[str] = ..., tags: Sequence[str] = ...,
                           budget: int = ..., language: str = ..., model: str = ...,
                           sections: Literal[True]) -> Block: ...

    async def memory_block(self: _AsyncAsks, task: str = "", *, run_id: str = "",
                           role: str = "worker", files: Sequence[str] = (),
                           tags: Sequence[str] = (), budget: int = 0, language: str = "",
                           model: str = "", sections: bool = False) -> str | Block:
        from slmactor import results

        reply = await self.ask(_block_message(task, run_id, role, files, tags, budget, language,
                                              model))
        block = results.Block.from_reply(reply)
        return block if sections else block.text

    async def recall(self: _AsyncAsks, task: str, *, files: Sequence[str] = (), n: int = 3,
                     language: str = "", model: str = "", success_only: bool = False,
                     explain: bool = False) -> list[RecallHit]:
        from slmactor import results
        from slmactor.protocol.messages import MemoryRecall

        return results.RecallHit.from_reply(await self.ask(MemoryRecall(
            query=task, files=list(files), n=n, language=language, model=model,
            success_only=success_only, explain=explain)))

    async def remember(self: _AsyncAsks, subject: str, text: str, *, kind: str = "convention",
                       sources: Sequence[str] = ()) -> dict[str, Any]:
        from slmactor import results
        from slmactor.protocol.messages import FactObserve

        return results.as_dict(await self.ask(FactObserve(kind=kind, subject=subject, text=text,
                                                sources=list(sources))))

    async def finish_run(self: _AsyncAsks, run_id: str, report: Mapping[str, Any] | None = None,
                         *, success: bool | None = None, summary: str = "", model: str = "",
                         language: str = "", wait: bool = False) -> Finished:
        from slmactor import results

        return results.Finished.from_reply(await self.ask(_finish_message(
            run_id, report, success, summary, model, language, wait, self.client_id,
            self.last_seq)))
