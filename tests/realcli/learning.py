"""What the two-session learning tests of every real CLI share: the mistake and its fix, and
the checks on what the model of each session received.

Session 1 runs `WRONG` (the project has no `.venv`: the shell says "No such file or directory",
exit 127), then `RIGHT`, which works; session 2 makes the same mistake. The mistake fails once:
in session 2 the command is rewritten to the one that worked right after this very failure
before it runs (pre-flight), and the model is told so in the harness's words; in session 1 no
advice named it (nothing was learned yet).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from slmactor.testing import wait_for
from tests.realcli.audit import dump, problems
from tests.realcli.harness import World
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


def assert_both_ran(first: ModelServer, second: ModelServer, *, rewritten: bool = True) -> None:
    """Session 1 failed, then ran the fix; session 2 ran the fix without failing first
    (`rewritten`), or, in a harness whose hooks cannot rewrite a call, failed and ran it."""
    results = first.results_sent()
    assert any(_missing(r) for r in results), results
    assert any("hello from greet" in r for r in results), results
    results = second.results_sent()
    assert any(_missing(r) for r in results) is not rewritten, results
    assert any("hello from greet" in r for r in results), results


def wait_learned(world: World) -> None:
    """Until what session 1 taught is in the project's pre-flight table: a harness that cancels
    the last call's hook at exit (Claude Code's async PostToolUse) is learned from at the
    session's end, from its transcript, after the episode is stored."""
    keys = world.project / ".slmcode" / "evolve" / "preflight.keys"
    wait_for(lambda: keys.exists() and keys.read_text().strip(), "the pre-flight table",
             timeout=12, pause=0.2)


#: How pre-flight announces the rewrite (`logic/evolve/environment.announce`).
ANNOUNCED = f"slmactor ran `{RIGHT}` instead of `{WRONG}`"


def assert_second_told(first: ModelServer, second: ModelServer) -> None:
    """Session 2's model reads that the command was rewritten, and why; session 1's was told
    no fix after its failure."""
    bodies = [json.dumps(e.body) for e in second.main_requests()[1:]]
    assert any(ANNOUNCED in b for b in bodies), bodies[-1][-3000:]
    assert "instead of `.venv/bin/python`" not in after_failure(first)


def assert_audit(sessions: Sequence[tuple[ModelServer, Sequence[dict[str, Any]]]]) -> None:
    """Each session's requests against the episodes stored before it."""
    for server, before in sessions:
        for request in server.main_requests():
            assert problems(request.body, before) == [], dump(request.body)
