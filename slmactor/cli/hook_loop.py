"""`slmactor hook`'s bridge to the self-improvement loop (`slmactor.hooks.loop`): the project root
from `--project` or the harness's project directory, and a fail-open `ask` over one client that
is opened on the first ask and closed when the event is done.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slmactor.cli.context import CliContext, find_project_root


def handle(ctx: CliContext, hook: Any, payload: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """The JSON to print for this event, or None when `cli/hook.py`'s usual path applies.
    `timeout`: seconds to wait for the daemon per ask."""
    from slmactor.hooks import loop

    project = Path(ctx.args.project).resolve() if ctx.args.project else find_project_root(Path(hook.project_dir))
    clients: list[Any] = []

    def ask(kind: str, fields: dict[str, Any]) -> Any:
        from slmactor.client import Client, DaemonUnavailable, RequestFailed

        try:
            if not clients:
                clients.append(Client(ctx.runtime_dir, project=project, timeout=timeout, retries=1))
            return clients[0].ask_raw(kind, fields)
        except (DaemonUnavailable, RequestFailed) as exc:
            loop.warn(str(exc))
            return None

    try:
        return loop.handle(hook, payload, project, ctx.runtime_dir, ask)
    finally:
        for client in clients:
            client.close()
