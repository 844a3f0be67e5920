"""The rules actor reads records, not text (acceptance): a failed call arrives as a map — one
`evolve.on_failure` parses its arguments 0 times — and a learned rule's spec is a record —
reading it, 0 JSON reads. Counted by wrapping the JSON decoder while the actor answers, in
process, a request decoded from the wire frames a hook sends."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from slmactor import harnesses
from slmactor.actors.rules import RulesActor
from slmactor.config import Settings
from slmactor.protocol import codec
from slmactor.protocol.messages import EvolveOnFailure, EvolveResolved
from slmactor.runtime.actor import ActorContext
from slmactor.runtime.router import Router
from slmactor.runtime.stats import ActorStats

pytestmark = pytest.mark.anyio
NOW = 1_790_000_000.0


class _Router:
    """Takes the actor's tells (the `fail` it opens in working memory) and keeps them."""

    owners = {"fail": "working", "resolve": "working"}

    def __init__(self) -> None:
        self.told: list[bytes] = []

    def deliver(self, owner: str, client: bytes, kind: bytes, body: bytes) -> bool:
        self.told.append(kind)
        return True


@asynccontextmanager
async def running(home: Path) -> AsyncIterator[tuple[RulesActor, _Router]]:
    router = _Router()
    base = Settings(runtime_dir=home / "rt", home=home / "home", log_dir=home / "log")
    ctx = ActorContext(settings=base, router=cast(Router, router), stats=ActorStats("rules"),
                       clock=lambda: NOW, warn=lambda actor, text, project="": None)
    actor = RulesActor(ctx)
    async with anyio.create_task_group() as tg:
        actor._attach(tg)
        await actor.on_start()
        yield actor, router
        await actor.on_stop()


@contextmanager
def json_reads() -> Iterator[list[str]]:
    """Every text the JSON decoder reads meanwhile (json.loads and every JSONDecoder)."""
    seen: list[str] = []
    original = json.JSONDecoder.decode

    def counting(self: json.JSONDecoder, s: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(s)
        return original(self, s, *args, **kwargs)

    json.JSONDecoder.decode = counting  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        json.JSONDecoder.decode = original  # type: ignore[method-assign]


def _wire(msg: Any) -> Any:
    """The request as the daemon has it: msgpack frames, decoded by the codec."""
    return codec.load(codec.dump(msg))


async def test_one_on_failure_parses_no_arguments_and_reads_no_spec_as_json(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    claude = harnesses.get("claude")
    failed = claude.tool_call("Bash", {"command": "pytest -q", "description": "tests"}, ok=False,
                              error="Exit code 127\n/bin/bash: line 1: pytest: command not found")
    fixed = claude.tool_call("Bash", {"command": "uv run pytest -q", "description": "tests"})
    gutter = claude.tool_call("Edit", {"file_path": "a.py", "old_string": "  7| x = 1",
                                       "new_string": "  7| x = 2"}, ok=False,
                              error="String to replace not found in file.\nString:   7| x = 1")
    clean = claude.tool_call("Edit", {"file_path": "a.py", "old_string": "x = 1",
                                      "new_string": "x = 2"})
    async with running(tmp_path) as (actor, router):
        # Memory holds a typed repair (a command substitution) and a transform, both learned
        # from calls that got past a failure, and confirmed until a rewrite is offered.
        for pair in ((failed, fixed), (gutter, clean)):
            for run in ("r1", "r2", "r3"):
                await actor.resolved(_wire(EvolveResolved(
                    project=str(project), run_id=run, failed=pair[0].to_wire(),
                    fixed=pair[1].to_wire())))
        for call, expect in ((failed, fixed), (gutter, clean)):
            request = _wire(EvolveOnFailure(project=str(project), run_id="r4", call=call.to_wire(),
                                            model="claude-sonnet-4-5"))
            with json_reads() as reads:
                advice = await actor.on_failure(request)
            assert reads == [], reads  # not the arguments, not a rule's spec
            assert advice["found"] and advice["apply"], advice
            assert advice["new_input"] == dict(expect.args)  # in the harness's own keys
        # A rule's spec is a record in the book; the answer carries it as a map.
        typed = [r for r in actor.stores.get(project.resolve()).book.all() if r.repair.spec]
        assert typed and all(dataclasses.is_dataclass(r.repair.spec) for r in typed)
        assert router.told.count(b"fail") == 2  # each failure opened in working memory


async def test_the_counter_sees_a_parse_when_there_is_one(tmp_path: Path) -> None:
    # The same answer for a client that sends its arguments as JSON text: parsed once, here.
    project = tmp_path / "repo"
    project.mkdir()
    async with running(tmp_path) as (actor, _):
        request = _wire(EvolveOnFailure(project=str(project), run_id="r", tool="Bash",
                                        message="Exit code 127\npytest: command not found",
                                        args=json.dumps({"command": "pytest -q"})))
        with json_reads() as reads:
            await actor.on_failure(request)
    assert reads == ['{"command": "pytest -q"}']


async def test_advice_is_a_claim_checked_before_it_is_told(tmp_path: Path) -> None:
    # A learned fix that names a file of the project is told while the file is there, with
    # the records it rests on; once the file is gone it is not told, and the answer says why.
    project = tmp_path / "repo"
    (project / "tests" / "unit").mkdir(parents=True)
    (project / "tests" / "unit" / "test_a.py").write_text("def test_a(): pass\n")
    claude = harnesses.get("claude")
    failed = claude.tool_call("Bash", {"command": "pytest -q"}, ok=False,
                              error="Exit code 4\nERROR: file or directory not found: tests")
    fixed = claude.tool_call("Bash", {"command": "pytest -q tests/unit/test_a.py"})
    async with running(tmp_path) as (actor, _):
        await actor.resolved(_wire(EvolveResolved(project=str(project), run_id="r1",
                                                  failed=failed.to_wire(), fixed=fixed.to_wire())))
        ask = _wire(EvolveOnFailure(project=str(project), run_id="r2", call=failed.to_wire()))
        told = await actor.on_failure(ask)
        assert told["found"] and "tests/unit/test_a.py" in told["guidance"], told
        assert told["claim"]["verdict"] == "true" and "r1" in " ".join(told["claim"]["evidence"])
        (project / "tests" / "unit" / "test_a.py").unlink()
        gone = await actor.on_failure(_wire(EvolveOnFailure(project=str(project), run_id="r3",
                                                            call=failed.to_wire())))
    assert not gone["found"] and gone["guidance"] == "" and not gone["apply"]
    assert gone["claim"]["verdict"] == "stale" and "tests/unit/test_a.py" in gone["claim"]["why"]
    assert gone["reason"].startswith("not told: stale")
