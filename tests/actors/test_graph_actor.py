"""The graph actor in process, with the other actors' answers scripted: lazy freshness, fetching
only new episodes, degraded answers when recall is down, and bad requests. No sockets."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from slmactor.actors.graph import GraphActor
from slmactor.config import Settings
from slmactor.protocol import ErrorCode, Message, RequestError
from slmactor.protocol.messages import (
    EpisodeGet,
    EpisodeRecent,
    EvolveRules,
    FactList,
    GraphBackfill,
    GraphFile,
    GraphForget,
    GraphNeighbors,
    GraphPrune,
    GraphStats,
    GraphWalk,
)
from slmactor.runtime.actor import ActorContext, ActorDead
from slmactor.runtime.router import Router
from slmactor.runtime.stats import ActorStats

pytestmark = pytest.mark.anyio
NOW = 1_790_000_000.0


class ScriptedGraph(GraphActor):
    """The graph actor whose asks to other actors are answered from `self.world`."""

    world: dict[str, Any]
    asked: list[str]

    async def ask(self, msg: Message, timeout: float | None = None) -> Any:  # noqa: ASYNC109
        self.asked.append(str(msg.KIND))
        down = self.world.get("down", set())
        if str(msg.KIND) in down:
            raise ActorDead(f"{msg.KIND} is down")
        episodes: list[dict[str, Any]] = self.world["episodes"]
        if isinstance(msg, EpisodeRecent):
            newest_first = list(reversed(episodes))
            chosen = newest_first if msg.n <= 0 else newest_first[: msg.n]
            return {"episodes": [{"id": e["id"]} for e in chosen], "total": len(episodes)}
        if isinstance(msg, EpisodeGet):
            for episode in episodes:
                if episode["id"] == msg.episode_id:
                    return episode
            raise RequestError(ErrorCode.NOT_FOUND, "gone")
        if isinstance(msg, FactList):
            return {"facts": self.world.get("facts", [])}
        if isinstance(msg, EvolveRules):
            return {"rules": self.world.get("rules", [])}
        raise AssertionError(f"unexpected ask {msg.KIND}")


def _episode(n: int, files: list[str], failures: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": f"ep_{n}", "at": NOW - 1000 + n, "run_id": f"run-{n}", "files_changed": files,
            "failures": failures or []}


FIXED = {"fingerprint": "fp_1", "class": "compile_error", "resolved_by": "rule:rule_a",
         "resolution": "add the import"}


@asynccontextmanager
async def running(tmp: Path, world: dict[str, Any]) -> AsyncIterator[ScriptedGraph]:
    warnings: list[str] = []
    base = Settings(runtime_dir=tmp / "rt", home=tmp / "home", log_dir=tmp / "log")
    ctx = ActorContext(settings=dataclasses.replace(base, max_open_projects=1),
                       router=cast(Router, None), stats=ActorStats("graph"), clock=lambda: NOW,
                       warn=lambda actor, text, project="": warnings.append(text))
    actor = ScriptedGraph(ctx)
    actor.world, actor.asked = world, []
    actor.world["warnings"] = warnings
    async with anyio.create_task_group() as tg:
        actor._attach(tg)
        await actor.on_start()
        yield actor
        await actor.on_stop()


def _project(tmp: Path, name: str = "p") -> str:
    root = tmp / name
    root.mkdir(exist_ok=True)
    return str(root.resolve())


async def test_queries_backfill_lazily_and_fetch_only_new_episodes(tmp_path: Path) -> None:
    world: dict[str, Any] = {"episodes": [_episode(1, ["a.py"], [FIXED])],
                             "facts": [{"id": "f_1", "kind": "command", "sources": ["ep_1"]}],
                             "rules": [{"id": "rule_a", "evidence": ["run-1"], "scope": "project"}]}
    project = _project(tmp_path)
    async with running(tmp_path, world) as actor:
        known = await actor.file(GraphFile(project=project, path="a.py"))
        assert known["fixed_by"] == {"fp_1": ["rule_a"]}
        assert actor.asked.count("episode.get") == 1
        actor.asked.clear()
        await actor.file(GraphFile(project=project, path="a.py"))
        assert actor.asked == ["episode.recent"]  # nothing new: one cheap check, no backfill
        world["episodes"].append(_episode(2, ["a.py"], [FIXED]))
        actor.asked.clear()
        known = await actor.file(GraphFile(project=project, path=f"{project}/a.py"))
        assert known["classes"] == {"compile_error": 2}
        assert actor.asked.count("episode.get") == 1  # only the new episode was fetched
        stats = await actor.stats(GraphStats(project=project))
        assert stats["by_type"]["derived_from"] == 2 and stats["edges"] == 9
        assert actor.ctx.stats.extra["backfills"] == 2


async def test_recall_down_answers_as_is_and_backfill_fails_clearly(tmp_path: Path) -> None:
    world: dict[str, Any] = {"episodes": [_episode(1, ["a.py"])], "down": {"episode.recent"}}
    project = _project(tmp_path)
    async with running(tmp_path, world) as actor:
        known = await actor.file(GraphFile(project=project, path="a.py"))
        assert known["episodes"] == []
        assert any("could not check for new episodes" in w for w in world["warnings"])
        with pytest.raises(RequestError) as err:
            await actor.backfill(GraphBackfill(project=project))
        assert err.value.code == ErrorCode.UNAVAILABLE


async def test_missing_facts_or_rules_still_materialise_episode_edges(tmp_path: Path) -> None:
    world: dict[str, Any] = {"episodes": [_episode(1, ["a.py"], [FIXED])],
                             "down": {"fact.list", "evolve.rules"}}
    project = _project(tmp_path)
    async with running(tmp_path, world) as actor:
        result = await actor.backfill(GraphBackfill(project=project))
        assert result["added"] == 4 and result["facts"] == result["rules"] == 0
        assert sum("its edges were skipped" in w for w in world["warnings"]) == 2
        again = await actor.backfill(GraphBackfill(project=project))
        assert again["added"] == 0 and again["edges"] == 4


async def test_forget_is_honoured_until_episodes_change(tmp_path: Path) -> None:
    world: dict[str, Any] = {"episodes": [_episode(1, ["a.py"])]}
    project = _project(tmp_path)
    async with running(tmp_path, world) as actor:
        await actor.backfill(GraphBackfill(project=project))
        assert (await actor.forget(GraphForget(project=project)))["removed"] == 2
        assert (await actor.file(GraphFile(project=project, path="a.py")))["episodes"] == []
        world["episodes"].append(_episode(2, ["b.py"]))
        assert (await actor.file(GraphFile(project=project, path="a.py")))["episodes"] == ["ep_1"]
        pruned = await actor.prune(GraphPrune(project=project, max_edges=1, max_age_days=-1))
        assert pruned == {"removed": 3, "edges": 1}


async def test_bad_requests(tmp_path: Path) -> None:
    project = _project(tmp_path)
    async with running(tmp_path, {"episodes": []}) as actor:
        for call in (
            actor.neighbors(GraphNeighbors(project=project, node="a.py", types=["bogus"])),
            actor.neighbors(GraphNeighbors(project=project, node="a.py", direction="up")),
            actor.neighbors(GraphNeighbors(project=project, node=".")),
            actor.walk(GraphWalk(project=project, node="a.py", depth=-1)),
            actor.file(GraphFile(project=project, path=" ")),
        ):
            with pytest.raises(RequestError) as err:
                await call
            assert err.value.code == ErrorCode.BAD_FIELD
        walk = await actor.walk(GraphWalk(project=project, node="a.py", depth=9))
        assert walk["depth"] == 6 and walk["warnings"] == ["--depth clamped to the package ceiling of 6"]


async def test_evicted_projects_drop_their_cached_episodes(tmp_path: Path) -> None:
    world: dict[str, Any] = {"episodes": [_episode(1, ["a.py"])]}
    first, second = _project(tmp_path, "one"), _project(tmp_path, "two")
    async with running(tmp_path, world) as actor:
        await actor.backfill(GraphBackfill(project=first))
        assert Path(first) in actor.sources
        await actor.backfill(GraphBackfill(project=second))  # max_open_projects = 1
        assert list(actor.sources) == [Path(second)]


async def test_absolute_paths_find_relative_and_absolute_nodes(tmp_path: Path) -> None:
    project = _project(tmp_path)
    world: dict[str, Any] = {"episodes": [_episode(1, ["a.py"]), _episode(2, [f"{project}/b.py"]),
                                          _episode(3, ["/elsewhere/c.py"])]}
    async with running(tmp_path, world) as actor:
        inside = await actor.file(GraphFile(project=project, path=f"{project}/a.py"))
        assert inside["file"] == "a.py" and inside["episodes"] == ["ep_1"]
        recorded_absolute = await actor.file(GraphFile(project=project, path=f"{project}/b.py"))
        assert recorded_absolute["episodes"] == ["ep_2"]
        outside = await actor.file(GraphFile(project=project, path="/elsewhere/c.py"))
        assert outside["episodes"] == ["ep_3"]
        relative = await actor.file(GraphFile(project=project, path="b.py"))
        assert relative["episodes"] == []  # absolute and relative are different nodes
