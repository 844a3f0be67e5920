"""The MCP tools' work over one daemon client: each call becomes the daemon asks it stands for.

Plain async methods returning plain data (the shapes of `mcp_shapes`), so they are usable and
testable without MCP. One `MemoryTools` serves one MCP session; what it keeps between calls is
the session's run (its id, rotated when an outcome is reported) and the failures it was asked to
repair, so `repair_outcome` can close the loop from a fingerprint alone — as the hooks do when a
later call gets past a failure (`slmactor.hooks.loop`): the failure is resolved in working memory,
the repair between the failed and the working call is learned (`evolve.resolved`), and the run's
report carries the failure with both calls and who fixed it (as the hooks' session report does),
so the reflection derives the same repair and credits — or blames, when it did not work — the
rule whose advice was followed. A failure that was fixed is therefore recorded as fixed, and the
run's lessons say how, instead of calling it unresolved.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from slmactor.client import AsyncClient, DaemonUnavailable, RequestFailed
from slmactor.logic.memory.block import episodes_of
from slmactor.logic.memory.block_lines import line_id
from slmactor.logic.memory.facts import KINDS as FACT_KINDS
from slmactor.logic.recall.repeats import PastTask, past_tasks
from slmactor.protocol.messages import (
    EvolveOnFailure,
    EvolveResolved,
    FactObserve,
    LessonAdd,
    MemoryBlock,
    MemoryLines,
    MemoryRecall,
    MemoryRetire,
    Message,
    RunFinish,
)

#: Episodes asked of recall per task shown: repeated runs of one task fold into one entry, so
#: more are read than shown (as the memory block's "similar work" section does).
CANDIDATES_PER_TASK = 3
#: Failures remembered per session for `repair_outcome` (the oldest are forgotten first).
MAX_REPAIRS = 64


class MemoryUnavailable(RuntimeError):
    """An ask the daemon could not answer, or a request it refused; the message says which."""


@dataclass(frozen=True, slots=True)
class _Repaired:
    """A failure `repair` was asked about: what `repair_outcome` needs to close its loop."""

    tool: str
    error: str
    args: str
    language: str
    rule_id: str


def _new_run() -> str:
    return f"mcp-{uuid.uuid4().hex[:12]}"


def _json(arguments: dict[str, Any] | None) -> str:
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True) if arguments else ""


def _object(text: Any) -> dict[str, Any] | None:
    """The daemon's JSON text of a call's arguments as an object (None when it is not one)."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class MemoryTools:
    """The tools' logic over one daemon client."""

    def __init__(self, client: AsyncClient, *, session_id: str = "") -> None:
        self.client = client
        self.run_id = session_id or _new_run()
        self._repairs: dict[str, _Repaired] = {}
        #: The run's failures whose outcome was reported, by fingerprint: run-report failures.
        self._outcomes: dict[str, dict[str, Any]] = {}
        #: The last outcome reported and its answer, while nothing happened since.
        self._last_outcome: tuple[tuple[Any, ...], dict[str, Any]] | None = None

    async def _ask(self, msg: Message) -> Any:
        try:
            return await self.client.ask(msg)
        except DaemonUnavailable as exc:
            raise MemoryUnavailable(f"the slmactor daemon is not reachable: {exc}") from exc
        except RequestFailed as exc:
            raise MemoryUnavailable(f"slmactor refused the request: {exc}") from exc

    # ------------------------------------------------------------------ reading

    async def recall(self, query: str, files: list[str] | None = None,
                     n: int = 5) -> list[PastTask]:
        reply = await self._ask(MemoryRecall(query=query, files=list(files or []),
                                             n=CANDIDATES_PER_TASK * n))
        hits = reply.get("hits") if isinstance(reply, dict) else None
        episodes = episodes_of(reply)
        if isinstance(hits, list) and len(hits) == len(episodes):
            # The log offset orders runs ended in the same second (`at` has whole seconds).
            episodes = [{**ep, "offset": hit["entry"].get("offset", 0)}
                        if isinstance(hit, dict) and isinstance(hit.get("entry"), dict) else ep
                        for ep, hit in zip(episodes, hits, strict=True)]
        return past_tasks(episodes, n)

    async def memory_block(self, task: str, role: str = "worker",
                           files: list[str] | None = None) -> str:
        reply = await self._ask(MemoryBlock(role=role, query=task, files=list(files or [])))
        text = reply.get("text", "") if isinstance(reply, dict) else ""
        return text if isinstance(text, str) else ""

    async def list_lines(self, task: str = "") -> dict[str, Any]:
        """What a model is told now (the block for `task`, or the project's), line by line with
        the id `forget` takes, and how many lines were retired."""
        reply = await self._ask(MemoryLines(query=task))
        lines = [{"id": line["id"], "section": line["section"], "heading": line["heading"],
                  "text": line["text"],
                  "evidence": [str(e.get("kind", "")) + ":" + str(e.get("id", ""))
                               for e in line["evidence"]]}
                 for line in reply["lines"]]
        return {"lines": lines, "retired": len(reply.get("retired", []))}

    async def forget(self, ids: list[str]) -> dict[str, Any]:
        """Retire lines by id: no block of the project says them again."""
        wanted = [i.strip() for i in ids if i.strip()]
        if not wanted:
            raise MemoryUnavailable("ids is empty: name the lines to forget (ids from list)")
        reply = await self._ask(MemoryRetire(ids=wanted))
        return {"forgotten": list(reply["retired"]), "already": list(reply["unchanged"])}

    # ------------------------------------------------------------------ writing

    async def remember(self, text: str, kind: str = "lesson", subject: str = "") -> dict[str, Any]:
        text = text.strip()
        if not text:
            raise MemoryUnavailable("text is empty: nothing to remember")
        if kind in FACT_KINDS:
            about = subject.strip() or text[:80]
            await self._ask(FactObserve(kind=kind, subject=about, text=text,
                                        sources=[self.run_id]))
            return {"stored_as": "fact", "kind": kind, "subject": about, "id": line_id(text)}
        await self._ask(LessonAdd(lessons=[{"kind": kind, "text": text, "task_id": self.run_id}],
                                  run_id=self.run_id))
        return {"stored_as": "lesson", "kind": kind, "subject": "", "id": line_id(text)}

    async def repair(self, tool: str, error: str, arguments: dict[str, Any] | None = None,
                     language: str = "") -> dict[str, Any]:
        args = _json(arguments)
        reply = await self._ask(EvolveOnFailure(run_id=self.run_id, tool=tool, message=error,
                                                args=args, language=language))
        advice = reply if isinstance(reply, dict) else {}
        self._last_outcome = None  # the run moved on: a later outcome is a new report
        fp = advice.get("fingerprint")
        fingerprint = str(fp.get("id", "")) if isinstance(fp, dict) else ""
        rule_id = str(advice.get("rule_id") or "")
        if fingerprint and advice.get("benign") is not True:
            self._repairs.pop(fingerprint, None)
            self._repairs[fingerprint] = _Repaired(tool, error, args, language, rule_id)
            while len(self._repairs) > MAX_REPAIRS:
                self._repairs.pop(next(iter(self._repairs)))
        new_arguments = _object(advice.get("new_args")) if advice.get("apply") else None
        out: dict[str, Any] = {
            "apply": new_arguments is not None,
            "reason": str(advice.get("reason") or ""),
            "guidance": str(advice.get("guidance") or ""),
            "fingerprint": fingerprint,
            "rule_id": rule_id,
        }
        if new_arguments is not None:  # only a repair to apply has arguments to apply
            out["new_arguments"] = new_arguments
            if advice.get("new_tool") and advice["new_tool"] != tool:
                out["new_tool"] = str(advice["new_tool"])
        return out

    async def repair_outcome(self, fingerprint: str, worked: bool,
                             fixed_arguments: dict[str, Any] | None = None, fixed_tool: str = "",
                             used_repair: bool = False, how: str = "") -> dict[str, Any]:
        failure = self._repairs.get(fingerprint.strip())
        if failure is None:
            known = ", ".join(self._repairs) or "none yet"
            raise MemoryUnavailable(
                f"no failure with fingerprint {fingerprint!r} was given to repair in this "
                f"session (known: {known}); call repair with the failed call first")
        self._last_outcome = None
        rule_id = failure.rule_id if used_repair else ""
        event: dict[str, Any] = {"tool": failure.tool, "message": failure.error,
                                 "fingerprint": fingerprint, "failed_args": failure.args,
                                 "language": failure.language}
        if rule_id:
            event["rule_id"] = rule_id  # credited if it worked, blamed if not, at the run's end
        if not worked:
            self._outcomes[fingerprint] = event
            return {"fingerprint": fingerprint, "resolved": False, "learned": ""}
        resolution = how.strip() or (
            f"followed the repair ({rule_id})" if rule_id else
            f"the next {fixed_tool or failure.tool} call got past it")
        fixed_args = _json(fixed_arguments)
        reply = await self._ask(EvolveResolved(
            run_id=self.run_id, fingerprint=fingerprint, rule_id=rule_id, resolution=resolution,
            tool=failure.tool, message=failure.error, language=failure.language,
            failed_args=failure.args, fixed_args=fixed_args, fixed_tool=fixed_tool.strip()))
        self._outcomes[fingerprint] = {
            **event, "resolved_by": f"rule:{rule_id}" if rule_id else "llm",
            "resolution": resolution,
            # Another tool's arguments are no repair of this one's (the rules actor agrees).
            **({"fixed_args": fixed_args} if fixed_args and fixed_tool.strip() in ("", failure.tool)
               else {})}
        learned = reply.get("learned") if isinstance(reply, dict) else None
        what = ""
        if isinstance(learned, dict):
            repair = learned.get("repair")
            guidance = repair.get("guidance") if isinstance(repair, dict) else ""
            what = str(guidance or learned.get("id") or "")
        return {"fingerprint": fingerprint, "resolved": True, "learned": what}

    async def report_outcome(self, task: str, success: bool, summary: str = "",
                             files_changed: list[str] | None = None) -> dict[str, Any]:
        files = list(files_changed or [])
        signature = (task.strip(), success, summary.strip(), tuple(files))
        if self._last_outcome is not None and self._last_outcome[0] == signature:
            # The same report again with nothing done since (a client retrying a call it timed
            # out on, a model repeating itself): the same run, not a second episode of it.
            return {**self._last_outcome[1], "duplicate": True}
        report = {
            "run_id": self.run_id,
            "query": task,
            "summary": summary,
            "planned_tasks": 1,
            "completed_tasks": 1 if success else 0,
            "blocked_tasks": 0 if success else 1,
            "files_changed": files,
            "failures": list(self._outcomes.values()),
        }
        await self._ask(RunFinish(report=report, summary=summary))
        result = {"run_id": self.run_id, "success": success, "duplicate": False}
        self._last_outcome = (signature, result)
        # The next task of this session is a new run; failures of the finished one are closed.
        self.run_id = _new_run()
        self._repairs.clear()
        self._outcomes.clear()
        return result
