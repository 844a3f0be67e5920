"""`slmactor mcp`: serve the project's memory to an MCP client over stdio.

Agents start it themselves from their MCP settings (`clients/MCP.md` has the snippet for each);
stdout carries the protocol, so nothing else is printed there. The daemon is started first when it
is down (unless `--no-autostart`); if it cannot be reached the server still runs and each tool
call answers an error naming the reason.
"""

from __future__ import annotations

import sys
from typing import Any

from slmactor.cli.context import EXIT_OK, EXIT_USAGE, CliContext, CliError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve memory to an MCP client (Claude Code, Codex, Gemini CLI, Cline, Cursor)",
        description="Run a Model Context Protocol server on stdin/stdout with the tools recall, "
        "memory_block, remember, repair, repair_outcome and report_outcome, and the resource "
        "slmactor://memory-block.",
    )
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(ctx: CliContext) -> int:
    try:
        from slmactor.adapters.mcp_server import build_server
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        print("slmactor: the MCP server needs the mcp extra: pip install 'slmactor[mcp]'",
              file=sys.stderr)
        return EXIT_USAGE
    project, runtime_dir = ctx.project, ctx.runtime_dir
    if not ctx.args.no_autostart:
        try:
            ctx.client().close()  # starts the daemon when it is down
        except CliError as exc:  # the tools report the daemon's absence; the server still runs
            print(f"slmactor: daemon not started: {exc}", file=sys.stderr)

    def client() -> Any:
        from slmactor.client import AsyncClient

        return AsyncClient(runtime_dir, project=project, timeout=ctx.args.timeout)

    build_server(client).run("stdio")
    return EXIT_OK
