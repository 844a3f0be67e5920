"""slmactor: short- and long-term memory and a self-improvement loop for coding-agent harnesses.

`slmactor.session(project, task, model=...)`, `slmactor.Client` and `slmactor.AsyncClient` are
loaded on first use, so `import slmactor` (every CLI call, the daemon) stays free of ZeroMQ.
"""

from __future__ import annotations

__version__ = "0.1.0"

# Not `typing.TYPE_CHECKING`: a hook process with nothing to do should not import `typing`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from slmactor.client import AsyncClient, Client
    from slmactor.sessions import session

__all__ = ["AsyncClient", "Client", "session"]

_LAZY = {"session": "slmactor.sessions", "Client": "slmactor.client",
         "AsyncClient": "slmactor.client"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'slmactor' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
