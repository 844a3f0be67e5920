"""`slmactor mcp`: serve the project's memory to an MCP client over stdio.

Agents start it themselves from their MCP settings (`clients/MCP.md` has the snippet for each);
stdout carries the protocol, so nothing else is printed there. The daemon is started first when it
is down (unless `--no-autostart`); if it cannot be reached the server still runs and each tool
call answers an error naming the reason. Without the `[mcp]` extra it says in one line what to
install and exits 1. The daemon's runtime dir is found as every client finds it
(`slmactor.locate`): agents start MCP servers with environments of their own (some drop
`XDG_RUNTIME_DIR`), and the server still reaches the user's one daemon.
"""

from __future__ import annotations

import sys
from typing import Any

from slmactor.cli.context import EXIT_FAILED, EXIT_OK, CliContext, CliError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve memory to an MCP client (Claude Code, Codex, Gemini CLI, Cline, Cursor)",
        description="Run a Model Context Protocol server on stdin/stdout with the tools recall, "
        "memory_block, remember, repair, repair_outcome and report_outcome, and the resource "
        "slmactor://memory-block.",
    )
    p.set_defaults(func=cmd_mcp)


#: The one line `slmactor mcp` says when the MCP SDK is not installed.
MISSING_EXTRA = ("slmactor: `slmactor mcp` needs the MCP SDK, which this installation lacks; "
                 "install it with: pip install 'slmactor[mcp]'")


def mcp_sdk_installed() -> bool:
    """Whether the `mcp` package (the `[mcp]` extra) can be imported, without importing it."""
    import importlib.util

    try:
        return importlib.util.find_spec("mcp") is not None
    except (ImportError, ValueError):
        return False


def cmd_mcp(ctx: CliContext) -> int:
    # Checked before anything starts: the SDK is imported only inside `build_server`, so a
    # missing extra would otherwise surface as a traceback after the daemon was started.
    if not mcp_sdk_installed():
        print(MISSING_EXTRA, file=sys.stderr)
        return EXIT_FAILED
    try:
        from slmactor.adapters.mcp_server import build_server
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        print(MISSING_EXTRA, file=sys.stderr)
        return EXIT_FAILED
    project, runtime_dir = ctx.project, ctx.runtime_dir
    if not ctx.args.no_autostart:
        try:
            ctx.client().close()  # starts the daemon when it is down
        except CliError as exc:  # the tools report the daemon's absence; the server still runs
            print(f"slmactor: daemon not started: {exc}", file=sys.stderr)

    def client() -> Any:
        from slmactor.client import AsyncClient

        return AsyncClient(runtime_dir, project=project, timeout=ctx.args.timeout)

    try:
        server = build_server(client)
    except ModuleNotFoundError as exc:  # a partial SDK: a module of it is missing
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        print(MISSING_EXTRA, file=sys.stderr)
        return EXIT_FAILED
    server.run("stdio")
    return EXIT_OK
