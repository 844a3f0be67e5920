"""`slmactor mcp`: the daemon's memory as a Model Context Protocol server (stdio).

Every agent CLI and IDE agent that speaks MCP (Claude Code, Codex CLI, Gemini CLI, Cline, Cursor)
can then use slmactor without hooks or code. The server is a thin translation, one tool per thing
an agent does with memory, each a single ask to the running daemon:

    recall          past work similar to a task (`memory.recall`)
    memory_block    the memory block for a task: facts, similar work, procedures (`memory.block`)
    remember        a fact or a lesson about this project (`fact.observe` / `lesson.add`)
    repair          advice for a failed tool call, with the repaired arguments when memory has a
                    deterministic repair (`evolve.on_failure`)
    report_outcome  how a task ended, so the loop learns from it (`run.finish`)

and the block for the project as a resource (`slmactor://memory-block`). Texts come back as the
daemon wrote them (already redacted). A tool whose ask fails answers an MCP error naming the reason;
the server itself never exits on a daemon error, so the agent keeps its session. Agents call tools
in parallel: the calls share one `AsyncClient`, which answers each ask with its own reply, and a
call the agent cancels cancels only its own ask.

Built on the official `mcp` SDK (2.x, `MCPServer`), installed with the `mcp` extra.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from slmactor.client import AsyncClient, DaemonUnavailable, RequestFailed
from slmactor.protocol.messages import (
    EvolveOnFailure,
    FactObserve,
    LessonAdd,
    MemoryBlock,
    MemoryRecall,
    Message,
    RunFinish,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

#: Fact kinds the distiller keeps (SPEC S-4.1); a lesson is anything else worth remembering.
FACT_KINDS = ("command", "layout", "convention", "gotcha", "file", "dependency")
#: Hits `recall` returns at most.
MAX_HITS = 10

INSTRUCTIONS = (
    "Long-term memory of this project from slmactor. Call memory_block at the start of a task, "
    "recall to find similar past work, repair when a tool call fails (it may return corrected "
    "arguments learned from earlier failures), remember for facts worth keeping, and "
    "report_outcome when the task ends."
)


class MemoryUnavailable(RuntimeError):
    """An ask the daemon could not answer, or a request it refused; the message says which."""


class MemoryTools:
    """The tools' logic over one daemon client: plain async methods, testable without MCP."""

    def __init__(self, client: AsyncClient, *, session_id: str = "") -> None:
        self.client = client
        self.run_id = session_id or f"mcp-{uuid.uuid4().hex[:12]}"

    async def _ask(self, msg: Message) -> Any:
        try:
            return await self.client.ask(msg)
        except DaemonUnavailable as exc:
            raise MemoryUnavailable(f"the slmactor daemon is not reachable: {exc}") from exc
        except RequestFailed as exc:
            raise MemoryUnavailable(f"slmactor refused the request: {exc}") from exc

    async def recall(self, query: str, files: list[str] | None = None, n: int = 5) -> str:
        reply = await self._ask(MemoryRecall(query=query, files=list(files or []),
                                             n=max(1, min(int(n), MAX_HITS))))
        hits = reply.get("hits", []) if isinstance(reply, dict) else []
        if not hits:
            return "No similar past work in this project's memory."
        lines = []
        for hit in hits:
            episode = hit.get("episode") or hit.get("entry") or {}
            mark = "succeeded" if episode.get("success") else "failed"
            line = f"- [{mark}] {episode.get('query', '').strip()}"
            files_touched = episode.get("files_changed") or episode.get("files") or []
            if files_touched:
                line += " (files: " + ", ".join(str(f) for f in files_touched[:5]) + ")"
            if episode.get("summary"):
                line += f"\n  {str(episode['summary']).strip()}"
            for failure in (episode.get("failures") or [])[:3]:
                if isinstance(failure, dict) and failure.get("message"):
                    fix = failure.get("resolution") or "unresolved"
                    line += f"\n  failure: {failure['message']} → {fix}"
            lines.append(line)
        return "\n".join(lines)

    async def memory_block(self, task: str, role: str = "worker",
                           files: list[str] | None = None) -> str:
        reply = await self._ask(MemoryBlock(role=role, query=task, files=list(files or [])))
        text = reply.get("text", "") if isinstance(reply, dict) else ""
        return text or "Nothing in memory for this task yet."

    async def remember(self, text: str, kind: str = "lesson", subject: str = "") -> str:
        text = text.strip()
        if not text:
            raise MemoryUnavailable("text is empty: nothing to remember")
        kind = kind.strip().lower() or "lesson"
        if kind in FACT_KINDS:
            await self._ask(FactObserve(kind=kind, subject=subject.strip() or text[:80], text=text,
                                        sources=[self.run_id]))
            return f"Remembered as a {kind} fact."
        await self._ask(LessonAdd(lessons=[{"kind": kind, "text": text, "task_id": self.run_id}],
                                  run_id=self.run_id))
        return "Remembered as a lesson."

    async def repair(self, tool: str, error: str, arguments: str = "",
                     language: str = "") -> dict[str, Any]:
        reply = await self._ask(EvolveOnFailure(run_id=self.run_id, tool=tool, message=error,
                                                args=arguments, language=language))
        advice = reply if isinstance(reply, dict) else {}
        out: dict[str, Any] = {
            "apply": bool(advice.get("apply")),
            "reason": advice.get("reason", ""),
            "guidance": advice.get("guidance", ""),
        }
        if advice.get("apply") and advice.get("new_args"):
            out["new_arguments"] = advice["new_args"]
        if advice.get("rule_id"):
            out["rule_id"] = advice["rule_id"]
        return out

    async def report_outcome(self, task: str, success: bool, summary: str = "",
                             files_changed: list[str] | None = None) -> str:
        report = {
            "run_id": self.run_id,
            "query": task,
            "planned_tasks": 1,
            "completed_tasks": 1 if success else 0,
            "blocked_tasks": 0 if success else 1,
            "files_changed": list(files_changed or []),
        }
        await self._ask(RunFinish(report=report, summary=summary))
        # The next task of this session is a new run.
        finished, self.run_id = self.run_id, f"mcp-{uuid.uuid4().hex[:12]}"
        return f"Recorded the outcome of run {finished}."


def build_server(client_factory: Callable[[], AsyncClient]) -> MCPServer:
    """The MCP server (an `mcp.server.mcpserver.MCPServer`) over a lazily made daemon client.

    A failure the tools anticipate (daemon down, request refused) reaches the agent as a tool
    error carrying its reason; anything else is the SDK's generic error, logged with its trace.
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    from slmactor import __version__

    tools: list[MemoryTools] = []

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        try:
            yield None
        finally:  # the session ended: close the daemon client (its sockets and any waiting ask)
            if tools:
                await tools[0].client.aclose()

    server: MCPServer = MCPServer("slmactor", instructions=INSTRUCTIONS, version=__version__,
                                  lifespan=lifespan)

    def memory() -> MemoryTools:
        if not tools:
            tools.append(MemoryTools(client_factory()))
        return tools[0]

    @server.tool(description="Find past work in this project similar to a task: what was done, "
                             "which files it touched, how it ended and which failures it met.")
    async def recall(query: str, files: list[str] | None = None, n: int = 5) -> str:
        try:
            return await memory().recall(query, files, n)
        except MemoryUnavailable as exc:
            raise ToolError(str(exc)) from exc

    @server.tool(description="The memory block for a task: the project's facts, similar past "
                             "work and learned procedures, sized for a prompt.")
    async def memory_block(task: str, role: str = "worker",
                           files: list[str] | None = None) -> str:
        try:
            return await memory().memory_block(task, role, files)
        except MemoryUnavailable as exc:
            raise ToolError(str(exc)) from exc

    @server.tool(description="Remember something about this project. kind: one of command, "
                             "layout, convention, gotcha, file, dependency (a fact), or lesson.")
    async def remember(text: str, kind: str = "lesson", subject: str = "") -> str:
        try:
            return await memory().remember(text, kind, subject)
        except MemoryUnavailable as exc:
            raise ToolError(str(exc)) from exc

    @server.tool(description="Ask memory how to repair a failed tool call. Give the tool name, its "
                             "error text and its arguments as JSON. When apply is true, "
                             "new_arguments is a repair that fixed this failure before.")
    async def repair(tool: str, error: str, arguments: str = "", language: str = "") -> str:
        try:
            return json.dumps(await memory().repair(tool, error, arguments, language))
        except MemoryUnavailable as exc:
            raise ToolError(str(exc)) from exc

    @server.tool(description="Report how the current task ended, so later tasks learn from it.")
    async def report_outcome(task: str, success: bool, summary: str = "",
                             files_changed: list[str] | None = None) -> str:
        try:
            return await memory().report_outcome(task, success, summary, files_changed)
        except MemoryUnavailable as exc:
            raise ToolError(str(exc)) from exc

    @server.resource("slmactor://memory-block", name="memory-block", mime_type="text/markdown",
                     description="The project's memory block (facts and procedures).")
    async def memory_block_resource() -> str:
        try:
            return await memory().memory_block("")
        except MemoryUnavailable as exc:
            raise ResourceError(str(exc)) from exc

    return server
