"""What the two-session learning tests of every real CLI share: the mistake and its fix, and
the checks on what the model of each session received.

Session 1 runs `WRONG` (the project has no `.venv`: the shell says "No such file or directory",
exit 127), then `RIGHT`, which works; session 2 makes the same mistake. The request the model
gets right after the failure must name the command that worked in session 2, and not in
session 1 (nothing was learned yet).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.realcli.audit import dump, problems
from tests.realcli.models import ModelServer

WRONG = ".venv/bin/python greet.py"
RIGHT = "python3 greet.py"
GREET = 'print("hello from greet")\n'
#: The fix as typed-repair advice names it.
NAMED_FIX = "`python3` instead of `.venv/bin/python`"


def _missing(result: str) -> bool:
    """bash says "No such file or directory", zsh "no such file or directory" (Claude Code runs
    the user's shell, zsh when SHELL is unset and zsh is installed)."""
    return "no such file or directory" in result.lower()


def after_failure(server: ModelServer) -> str:
    """The whole request the model got right after the failed command (its tool result and
    whatever a hook added to it)."""
    requests = server.main_requests()
    index = next(i for i, r in enumerate(requests) if _missing(r.last_result))
    return json.dumps(requests[index].body)


def assert_both_ran(*servers: ModelServer) -> None:
    for server in servers:
        results = server.results_sent()
        assert any(_missing(r) for r in results), results
        assert any("hello from greet" in r for r in results), results


def assert_second_told(first: ModelServer, second: ModelServer) -> None:
    told = after_failure(second)
    assert NAMED_FIX in told, told[-3000:]
    assert "instead of `.venv/bin/python`" not in after_failure(first)


def assert_audit(sessions: Sequence[tuple[ModelServer, Sequence[dict[str, Any]]]]) -> None:
    """Each session's requests against the episodes stored before it."""
    for server, before in sessions:
        for request in server.main_requests():
            assert problems(request.body, before) == [], dump(request.body)
