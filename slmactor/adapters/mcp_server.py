"""`slmactor mcp`: the daemon's memory as a Model Context Protocol server (stdio).

Every agent CLI and IDE agent that speaks MCP (Claude Code, Codex CLI, Gemini CLI, Cline, Cursor)
can then use slmactor without hooks or code. The server is a thin translation, one tool per thing
an agent does with memory (the work itself is `mcp_tools.MemoryTools`):

    recall          past work similar to a task, one entry per task (`memory.recall`)
    memory_block    the memory block for a task (none: the project's): facts, similar work,
                    procedures (`memory.block`)
    list            what a model is told now, one line each with its id (`memory.lines`)
    forget          take lines back by id: no later block says them (`memory.retire`)
    remember        a fact or a lesson about this project (`fact.observe` / `lesson.add`),
                    answering the id of the line it becomes
    repair          advice for a failed tool call, with the repaired arguments when memory has a
                    deterministic repair (`evolve.on_failure`)
    repair_outcome  whether a later call got past that failure, so the loop learns the fix
                    (`evolve.resolved`, `evolve.observe`)
    report_outcome  how a task ended, so the loop learns from it (`run.finish`)

and the block for the project as a resource (`slmactor://memory-block`). Parameters, their allowed
values, result shapes and behaviour hints are published as `mcp_shapes` declares them. Each result
carries `structuredContent` following the tool's `outputSchema`, and a text block for clients that
read only text: the Markdown for recall and memory_block (what a model reads best), a sentence
for remember and report_outcome, and the serialized JSON of the structured result for repair and
repair_outcome, whose fields the agent acts on (the specification's advice for backwards
compatibility). Texts come back as the daemon wrote them (already redacted).

A tool whose ask fails, or that is given a value outside its schema or an argument it does not
declare (every input schema says `additionalProperties: false`), answers an MCP tool error in
one line naming the reason; the server itself never exits on a daemon error, so the agent keeps its
session. Agents call tools in parallel: the calls share one `AsyncClient`, which answers each ask
with its own reply, and a call the agent cancels cancels only its own ask.

Built on the official `mcp` SDK (2.x, `MCPServer`), installed with the `mcp` extra.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

# At module level: the SDK evaluates the tools' annotations against this module's names.
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from slmactor.adapters import mcp_shapes as shapes
from slmactor.adapters.mcp_tools import MemoryTools, MemoryUnavailable
from slmactor.client import AsyncClient
from slmactor.logic.recall.repeats import render

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

INSTRUCTIONS = (
    "Long-term memory of this project from slmactor. Call memory_block at the start of a task, "
    "recall to find similar past work, repair when a tool call fails (it may return corrected "
    "arguments learned from earlier failures) and repair_outcome once you know whether the "
    "failure was fixed, remember for facts worth keeping, list and forget to see and take back "
    "what memory says, and report_outcome when the task ends."
)

T = TypeVar("T")


def one_line(error: Exception) -> str:
    """A pydantic validation error as one plain line: each bad argument and what is wrong with
    it, without the library's input dump and documentation links."""
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return " ".join(str(error).split())
    parts = []
    for err in errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        parts.append(f"{where}: {' '.join(str(err.get('msg', 'invalid')).split())}")
    return "; ".join(parts)


def _strict_server_class() -> type[MCPServer]:
    """`MCPServer` that refuses arguments a tool does not declare (its published schema says
    `additionalProperties: false`) and reports bad arguments in one line."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import ValidationError

    class StrictServer(MCPServer):
        async def list_tools(self) -> Any:
            tools = await super().list_tools()
            for tool in tools:
                tool.input_schema = {**tool.input_schema, "additionalProperties": False}
            return tools

        async def call_tool(self, name: str, arguments: dict[str, Any],
                            context: Any = None) -> Any:
            schema = self._tool_input_schema(name)
            if schema is not None:
                known = set(schema.get("properties", {}))
                unknown = sorted(set(arguments) - known)
                if unknown:
                    raise ToolError(f"{name}: unknown argument(s) {', '.join(unknown)}; it takes "
                                    f"{', '.join(sorted(known)) or 'none'}")
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if isinstance(exc.__cause__, ValidationError):
                    raise ToolError(f"{name}: {one_line(exc.__cause__)}") from exc.__cause__
                raise

    return StrictServer


def build_server(client_factory: Callable[[], AsyncClient]) -> MCPServer:
    """The MCP server (an `mcp.server.mcpserver.MCPServer`) over a lazily made daemon client.

    A failure the tools anticipate (daemon down, request refused, an unknown fingerprint) reaches
    the agent as a tool error carrying its reason; arguments outside the schema are refused by
    the SDK's validation with the allowed values named; anything else is the SDK's generic
    error, logged with its trace.
    """
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

    server: MCPServer = _strict_server_class()(
        "slmactor", instructions=INSTRUCTIONS, version=__version__, lifespan=lifespan)

    def memory() -> MemoryTools:
        if not tools:
            tools.append(MemoryTools(client_factory()))
        return tools[0]

    async def answer(work: Awaitable[T]) -> T:
        try:
            return await work
        except MemoryUnavailable as exc:
            raise ToolError(" ".join(str(exc).split())) from exc

    def result(structured: dict[str, Any], text: str | None = None) -> CallToolResult:
        body = json.dumps(structured, ensure_ascii=False) if text is None else text
        return CallToolResult(content=[TextContent(type="text", text=body)],
                              structured_content=structured)

    def hints(name: str) -> ToolAnnotations:
        read_only, destructive, idempotent, open_world, title = shapes.HINTS[name]
        return ToolAnnotations(title=title, read_only_hint=read_only,
                               destructive_hint=destructive, idempotent_hint=idempotent,
                               open_world_hint=open_world)

    @server.tool(annotations=hints("recall"), description=(
        "Find past work in this project similar to a task: what was done, which files it "
        "touched, how it ended and which failures it met. Each task appears once; a task run "
        "several times says how many runs succeeded."))
    async def recall(task: shapes.Query, files: shapes.Files = None,
                     n: shapes.HitCount = 5) -> Annotated[CallToolResult, shapes.RecallOut]:
        tasks = await answer(memory().recall(task, files, n))
        text = render(tasks) or "No similar past work in this project's memory."
        return result({"tasks": [t.to_dict() for t in tasks]}, text)

    @server.tool(annotations=hints("memory_block"), description=(
        "The memory block for a task: the project's facts, similar past work and learned "
        "procedures, sized for a prompt. Call it when a task starts."))
    async def memory_block(task: shapes.Task = "", role: shapes.RoleParam = "worker",
                           files: shapes.Files = None) -> Annotated[CallToolResult, shapes.BlockOut]:
        block = await answer(memory().memory_block(task, role, files))
        return result({"block": block}, block or "Nothing in memory for this task yet.")

    @server.tool(name="list", annotations=hints("list"), description=(
        "List what memory tells a model now, one line each with its id: the project's block "
        "(or the block for `task`). Pass ids to forget to take lines back."))
    async def list_memory(task: shapes.Task = "") -> Annotated[CallToolResult, shapes.ListOut]:
        listed = await answer(memory().list_lines(task))
        text = "\n".join(f"{line['id']}  {line['text']}" for line in listed["lines"])
        return result(listed, text or "Memory tells nothing yet.")

    @server.tool(annotations=hints("forget"), description=(
        "Forget lines of memory by id (from list or remember): no later block says them "
        "again. Use it for what you remembered by mistake or what turned out wrong."))
    async def forget(ids: shapes.LineIds) -> Annotated[CallToolResult, shapes.ForgetOut]:
        gone = await answer(memory().forget(ids))
        return result(gone, f"Forgot {len(gone['forgotten'])} line(s)"
                            + (f"; {len(gone['already'])} already forgotten." if gone["already"]
                               else "."))

    @server.tool(annotations=hints("remember"), description=(
        "Remember something about this project for later sessions: a fact (command, layout, "
        "convention, gotcha, file, dependency) or a lesson. Returns the id `forget` takes."))
    async def remember(text: shapes.Text, kind: shapes.KindParam = "lesson",
                       subject: shapes.Subject = "") -> Annotated[CallToolResult, shapes.RememberOut]:
        stored = await answer(memory().remember(text, kind, subject))
        what = f"a {stored['kind']} fact" if stored["stored_as"] == "fact" else "a lesson"
        return result(stored, f"Remembered as {what}.")  # a sentence says it as well as JSON

    @server.tool(annotations=hints("repair"), description=(
        "Ask memory how to repair a failed tool call: give the tool name, its error text and "
        "its arguments. When apply is true, new_arguments is a repair that fixed this failure "
        "before. Once a later call works (or you give up), call repair_outcome with the "
        "fingerprint."))
    async def repair(tool: shapes.ToolName, error: shapes.ErrorText,
                     arguments: shapes.Arguments = None,
                     language: shapes.Language = "") -> Annotated[CallToolResult, shapes.RepairOut]:
        return result(await answer(memory().repair(tool, error, arguments, language)))

    @server.tool(annotations=hints("repair_outcome"), description=(
        "Report whether a failure you asked repair about was fixed: memory records it as fixed "
        "(not as an open failure), learns the repair from the call that worked, and credits or "
        "blames the repair it advised."))
    async def repair_outcome(
        fingerprint: shapes.Fingerprint, worked: shapes.Worked,
        fixed_arguments: shapes.FixedArguments = None, fixed_tool: shapes.FixedTool = "",
        used_repair: shapes.UsedRepair = False, how: shapes.How = "",
    ) -> Annotated[CallToolResult, shapes.RepairOutcomeOut]:
        return result(await answer(memory().repair_outcome(
            fingerprint, worked, fixed_arguments, fixed_tool, used_repair, how)))

    @server.tool(annotations=hints("report_outcome"), description=(
        "Report how the current task ended, so later tasks learn from it; the session's next "
        "task is a new run."))
    async def report_outcome(
        task: shapes.TaskDone, success: shapes.Success, summary: shapes.Summary = "",
        files_changed: shapes.FilesChanged = None,
    ) -> Annotated[CallToolResult, shapes.OutcomeOut]:
        outcome = await answer(memory().report_outcome(task, success, summary, files_changed))
        again = " (the same report again: not recorded twice)" if outcome["duplicate"] else ""
        return result(outcome, f"Recorded the outcome of run {outcome['run_id']}{again}.")

    @server.resource("slmactor://memory-block", name="memory-block", mime_type="text/markdown",
                     description="The project's memory block (facts and procedures).")
    async def memory_block_resource() -> str:
        try:
            return await memory().memory_block("") or "Nothing in memory yet."
        except MemoryUnavailable as exc:
            raise ResourceError(str(exc)) from exc

    return server
