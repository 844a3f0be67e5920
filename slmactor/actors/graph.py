"""The graph actor: the knowledge graph over the other stores (SPEC S-21, S-20.6).

Owns: `<project>/.slmcode/graph/edges.jsonl` + `edges.index.json` (one `GraphStore` per project,
opened lazily, bounded LRU). Consumes: `graph.stats`, `graph.file`, `graph.neighbors`,
`graph.walk`, `graph.backfill`, `graph.prune`, `graph.forget`. Asks: `episode.recent` +
`episode.get` (recall), `fact.list` (distiller), `evolve.rules` with `include_all` (rules) — it
never reads their files. Emits: nothing.

Backfill (S-21.9) is the only writer: it asks for every episode, fact and rule of the project,
derives the edges (`logic.graph.backfill`, pure) and adds them; edges are content-addressed, so
a second backfill adds nothing and leaves the log byte-identical. The reflector owns the
run-finish pipeline, so instead of a step there the graph stays fresh lazily: before answering
`graph.file`, `graph.neighbors` and `graph.walk` it compares the episode count and the newest
episode id with what the last backfill saw, and backfills when they differ or when the graph was
deleted under it (`rm -rf .slmcode/graph`). Whole episodes are fetched once (`episode.get`) and
cached per project, so a later backfill only fetches the new ones. A `graph.forget` is honoured:
no lazy rebuild until new episodes arrive (an explicit `graph.backfill` rebuilds at once).

Trust: only the user's own records make edges — an episode, fact or rule the other actors answer
`verified: false` (a repository brought it) is left out until `slmactor trust` adopts it — and
the store serves only edges signed with the user's key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slmactor.protocol import ErrorCode, RequestError
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
    Message,
)
from slmactor.runtime.actor import Actor, ActorDead, handles, store_failure
from slmactor.runtime.projects import ProjectCache
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.layout import ProjectLayout
from slmactor.stores.base.signing import signing_key

if TYPE_CHECKING:  # the graph logic and store load with the first graph ask
    from slmactor.logic.graph.core import Edge
    from slmactor.stores.graph import AddResult, GraphStore

#: (episode count, newest episode id) as the recall actor reported it.
#: (episode count, newest episode id, episodes not yet adopted) as the recall actor reported it.
Signature = tuple[int, str, int]


@dataclass(slots=True)
class _Sources:
    """What the last backfill of one project saw."""

    episodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    signature: Signature | None = None


def _edge_view(edge: Edge) -> dict[str, Any]:
    return {"id": edge.id, **edge.to_dict()}


def _types(raw: list[str]) -> list[str]:
    from slmactor.logic.graph.core import VOCABULARY

    types = sorted({t.strip().lower() for t in raw if t.strip()})
    unknown = [t for t in types if t not in VOCABULARY]
    if unknown:
        raise RequestError(ErrorCode.BAD_FIELD, f"unknown edge type(s) {', '.join(unknown)}; "
                           f"known: {', '.join(VOCABULARY)}")
    return types


def _node(raw: str) -> str:
    from slmactor.logic.graph.core import parse_node_arg

    node = parse_node_arg(raw)
    if not node:
        raise RequestError(ErrorCode.BAD_FIELD, f"not a node id or file path: {raw!r}")
    return node


class GraphActor(Actor):
    """The knowledge graph of every project the daemon serves."""

    name = "graph"

    async def on_start(self) -> None:
        self.warnings = self.store_warnings()
        self.key, fault = await self.run_sync(signing_key, self.ctx.settings.home)
        if fault:
            self.warn(fault)
        self.stores: ProjectCache[GraphStore] = ProjectCache(
            self._open, self._close, self.ctx.settings.max_open_projects
        )
        self.sources: dict[Path, _Sources] = {}
        extra = self.ctx.stats.extra
        extra["backfills"] = 0
        extra["edges_added"] = 0

    async def on_stop(self) -> None:
        self.stores.close_all()  # close() flushes every dirty index

    def _open(self, root: Path) -> GraphStore:
        from slmactor.stores.graph import GraphStore

        return GraphStore(ProjectLayout(root).graph_dir, self.warnings, now=self.now,
                          fsync=self.ctx.settings.fsync_logs, key=self.key)

    def _close(self, store: GraphStore) -> None:
        if store.directory is not None:  # <root>/.slmcode/graph: the cached episodes go too
            self.sources.pop(store.directory.parent.parent, None)
        store.close()

    async def _store(self, msg: Message) -> tuple[Path, GraphStore]:
        root = self.project_root(msg)
        store = self.stores.peek(root)
        if store is None:
            store = await self.run_sync(self.stores.get, root)
        else:
            self.stores.get(root)  # mark as recently used
        self.ctx.stats.extra["open_projects"] = len(self.stores)
        return root, store

    # ------------------------------------------------------------------------------ backfill
    async def _signature(self, root: Path) -> Signature:
        reply = await self.ask(EpisodeRecent(project=str(root), n=1))
        entries = reply.get("episodes") or []
        newest = entries[0].get("id", "") if entries and isinstance(entries[0], dict) else ""
        return int(reply.get("total") or 0), str(newest), int(reply.get("unverified") or 0)

    async def _episodes(self, root: Path, state: _Sources) -> tuple[list[dict[str, Any]], Signature]:
        """Every episode of the project (oldest first), fetching only the ones not cached."""
        project = str(root)
        reply = await self.ask(EpisodeRecent(project=project, n=0))
        entries = [e for e in reply.get("episodes") or [] if isinstance(e, dict)]
        ids = [str(e.get("id") or "") for e in entries]
        ids = [i for i in ids if i]
        for episode_id in ids:
            cached = state.episodes.get(episode_id)
            if cached is not None and cached.get("verified") is not False:
                continue  # (one cached before `slmactor trust` adopted it is read again)
            try:
                full = await self.ask(EpisodeGet(project=project, episode_id=episode_id))
            except RequestError:
                continue  # pruned or forgotten meanwhile
            if isinstance(full, dict):
                state.episodes[episode_id] = full
        wanted = set(ids)
        state.episodes = {i: e for i, e in state.episodes.items() if i in wanted}
        signature = (int(reply.get("total") or len(ids)), ids[0] if ids else "",
                     int(reply.get("unverified") or 0))
        return [state.episodes[i] for i in reversed(ids) if i in state.episodes], signature

    async def _optional(self, msg: Message, key: str) -> list[Any]:
        """Facts / rules: a backfill still materialises the episode edges if one is missing."""
        try:
            reply = await self.ask(msg)
        except (RequestError, ActorDead) as exc:
            self.warn(f"graph backfill: {msg.KIND} failed ({exc}); its edges were skipped")
            return []
        value = reply.get(key) if isinstance(reply, dict) else None
        return value if isinstance(value, list) else []

    async def _backfill(self, root: Path, store: GraphStore) -> dict[str, Any]:
        from slmactor.logic.graph.backfill import backfill_edges

        state = self.sources.setdefault(root, _Sources())
        try:
            episodes, signature = await self._episodes(root, state)
        except (RequestError, ActorDead) as exc:
            raise RequestError(ErrorCode.UNAVAILABLE,
                               f"graph backfill: episodes could not be read: {exc}") from exc
        facts = await self._optional(FactList(project=str(root)), "facts")
        rules = await self._optional(EvolveRules(project=str(root), include_all=True), "rules")
        # Only the user's own records: one a repository brought is not evidence of anything.
        episodes, facts, rules = _own(episodes), _own(facts), _own(rules)
        edges = await self.run_sync(backfill_edges, episodes, facts, rules)
        store.take_removed()
        result = await self.run_sync(self._apply, root, store, edges)
        state.signature = signature
        extra = self.ctx.stats.extra
        extra["backfills"] += 1
        extra["edges_added"] += result.added
        return {"added": result.added, "refreshed": result.refreshed, "edges": len(store),
                "derived": len(edges), "episodes": len(episodes), "facts": len(facts),
                "rules": len(rules)}

    def _apply(self, root: Path, store: GraphStore, edges: list[Edge]) -> AddResult:
        if edges and not store.read_only:
            try:
                ProjectLayout(root).ensure()  # directories + .gitignore (H-S-12) on first write
            except OSError as exc:
                raise StoreError(f"could not create the graph directory: {exc}") from exc
        result = store.add_many(edges)
        store.flush()
        return result

    async def _fresh(self, root: Path, store: GraphStore) -> None:
        """Backfill first when episodes changed since the last backfill, or the graph was
        deleted under the store; if recall cannot answer, the graph answers as it is."""
        state = self.sources.setdefault(root, _Sources())
        try:
            signature = await self._signature(root)
        except (RequestError, ActorDead) as exc:
            self.warn(f"graph: could not check for new episodes ({exc}); answering as is")
            return
        removed = store.take_removed()
        if removed or signature != state.signature:
            if signature[0] == 0 and not removed and not len(store):
                state.signature = signature  # nothing to materialise
                return
            try:
                await self._backfill(root, store)
            except (RequestError, StoreError) as exc:
                self.warn(f"graph: backfill before answering failed ({exc}); answering as is")

    async def _call_store(self, fn: Any, *args: Any) -> Any:
        try:
            return await self.run_sync(fn, *args)
        except StoreError as exc:
            raise store_failure(exc) from exc

    # ------------------------------------------------------------------------------ asks
    @handles(GraphStats)
    async def stats(self, msg: GraphStats) -> dict[str, Any]:
        _root, store = await self._store(msg)
        return store.stats()

    @handles(GraphBackfill)
    async def backfill(self, msg: GraphBackfill) -> dict[str, Any]:
        root, store = await self._store(msg)
        try:
            return await self._backfill(root, store)
        except StoreError as exc:
            raise store_failure(exc) from exc

    @handles(GraphFile)
    async def file(self, msg: GraphFile) -> dict[str, Any]:
        from slmactor.logic.graph.core import canonical_file

        root, store = await self._store(msg)
        given = msg.path.strip()
        if not canonical_file(given):
            raise RequestError(ErrorCode.BAD_FIELD, f"graph.file needs a file path, not {msg.path!r}")
        # Episodes record repo-relative paths, so an absolute path inside the project is asked
        # as its relative form first; absolute paths stay their own nodes (S-21.1), so the
        # absolute node is the fallback (a harness may have recorded absolute paths).
        candidates = [given]
        if Path(given).is_absolute():
            try:
                candidates.insert(0, Path(given).relative_to(root).as_posix())
            except ValueError:
                pass
        await self._fresh(root, store)
        known = [store.known_about_file(c) for c in candidates]  # microseconds: inline
        return next((k for k in known if k.episodes), known[0]).to_dict()

    @handles(GraphNeighbors)
    async def neighbors(self, msg: GraphNeighbors) -> dict[str, Any]:
        from slmactor.logic.graph.core import DIRECTIONS

        node, types = _node(msg.node), _types(msg.types)
        direction = msg.direction.strip().lower() or "either"
        if direction not in DIRECTIONS:
            raise RequestError(ErrorCode.BAD_FIELD, f"direction must be in, out or either, not "
                               f"{msg.direction!r}")
        root, store = await self._store(msg)
        await self._fresh(root, store)
        edges: list[Edge] = []
        if direction in ("out", "either"):
            edges.extend(store.out_edges(node, types))
        if direction in ("in", "either"):
            edges.extend(store.in_edges(node, types))
        return {"node": node, "direction": direction, "types": types,
                "neighbors": store.neighbors(node, direction, types),
                "edges": [_edge_view(e) for e in edges]}

    @handles(GraphWalk)
    async def walk(self, msg: GraphWalk) -> dict[str, Any]:
        from slmactor.logic.graph.core import DIRECTIONS
        from slmactor.logic.graph.query import WalkOptions

        node, types = _node(msg.node), _types(msg.types)
        if msg.depth < 0:
            raise RequestError(ErrorCode.BAD_FIELD, "depth must not be negative")
        direction = msg.direction.strip().lower()
        if direction and direction not in DIRECTIONS:
            raise RequestError(ErrorCode.BAD_FIELD, f"direction must be in, out or either, not "
                               f"{msg.direction!r}")
        root, store = await self._store(msg)
        await self._fresh(root, store)
        options = WalkOptions(msg.depth, msg.max_nodes, direction, tuple(types))
        result = store.walk(node, options)  # bounded (≤ 2000 nodes): inline
        return result.to_dict()

    @handles(GraphPrune)
    async def prune(self, msg: GraphPrune) -> dict[str, Any]:
        _root, store = await self._store(msg)
        removed = await self._call_store(store.prune, msg.max_edges, msg.max_age_days)
        return {"removed": removed, "edges": len(store)}

    @handles(GraphForget)
    async def forget(self, msg: GraphForget) -> dict[str, Any]:
        root, store = await self._store(msg)
        removed = await self._call_store(store.forget)
        state = self.sources.setdefault(root, _Sources())
        try:  # honour the forget: no lazy rebuild until new episodes arrive
            state.signature = await self._signature(root)
        except (RequestError, ActorDead):
            pass
        return {"removed": removed}


def _own(records: list[Any]) -> list[Any]:
    """The records the user wrote (those another actor answered `verified: false` left out)."""
    return [r for r in records if not (isinstance(r, dict) and r.get("verified") is False)]
