"""The bandit actor in process: seeded replays, the deterministic setting, flush on stop, and a
policy deleted by hand staying deleted. No sockets: handlers are awaited directly."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import cast

import anyio
import pytest

from slmactor.actors.bandit import BanditActor
from slmactor.config import Settings
from slmactor.protocol.messages import CalibrationReport, PolicyChoose, PolicyUpdate, PolicyWhy
from slmactor.runtime.actor import ActorContext
from slmactor.runtime.router import Router
from slmactor.runtime.stats import ActorStats

pytestmark = pytest.mark.anyio
NOW = 1_790_000_000.0
ARMS = ["search_replace", "unified_diff", "whole_file"]


@asynccontextmanager
async def running(home: Path, **settings: object) -> AsyncIterator[BanditActor]:
    base = Settings(runtime_dir=home / "rt", home=home, log_dir=home / "log")
    ctx = ActorContext(
        settings=dataclasses.replace(base, **settings),  # type: ignore[arg-type]
        router=cast(Router, None),
        stats=ActorStats("bandit"),
        clock=lambda: NOW,
        warn=lambda actor, text, project="": None,
    )
    actor = BanditActor(ctx)
    async with anyio.create_task_group() as tg:
        actor._attach(tg)
        await actor.on_start()
        yield actor
        await actor.on_stop()


async def _replay(home: Path) -> list[str]:
    picks = []
    async with running(home) as actor:
        for step in range(40):
            choice = await actor.choose(PolicyChoose(decision="edit_format", arms=ARMS, seed=5))
            picks.append(choice["arm"])
            await actor.update(PolicyUpdate(decision="edit_format", arm=choice["arm"],
                                            outcome={"applied": step % 3 != 0}))
    return picks


async def test_seeded_sequence_replays_identically(tmp_path: Path) -> None:
    first = await _replay(tmp_path / "a")
    assert first == await _replay(tmp_path / "b")
    assert set(first) == set(ARMS)


async def test_deterministic_setting_applies_to_every_choice(tmp_path: Path) -> None:
    async with running(tmp_path, deterministic=True) as actor:
        choice = await actor.choose(PolicyChoose(decision="edit_format", arms=ARMS))
        assert choice["mode"] == "deterministic" and choice["deterministic"]
        why = await actor.explain(PolicyWhy(decision="think_passes"))
        assert why["mode"] == "deterministic"


async def test_stop_flushes_and_hand_deletion_is_respected(tmp_path: Path) -> None:
    policy = tmp_path / "evolve" / "policy.json"
    async with running(tmp_path) as actor:
        await actor.update(PolicyUpdate(decision="edit_format", arm="whole_file",
                                        outcome={"applied": True}))
        await actor.report(CalibrationReport(profile={"model": "m", "p95_ms": 100}))
    assert json.loads(policy.read_text())["keys"]["edit_format|*|*"]["pulls"] == 1
    assert (tmp_path / "memory" / "CALIBRATION.md").exists()
    async with running(tmp_path) as actor:
        assert (await actor.explain(PolicyWhy(decision="edit_format")))["observations"] == 1
        policy.unlink()
        assert not (await actor.explain(PolicyWhy(decision="edit_format")))["found"]
        choice = await actor.choose(PolicyChoose(decision="edit_format", arms=ARMS))
        assert choice["key_pulls"] == 0
    assert not policy.exists()  # the deleted policy was not written back on stop
