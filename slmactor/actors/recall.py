"""The recall actor: episodic memory and BM25F recall (SPEC S-2, S-3, S-7.8).

Owns: `<project>/.slmcode/memory/episodes.jsonl` + `episodes.index.json`, one `EpisodeStore` per
project in a bounded LRU (`max_open_projects`), each opened lazily on first use (in a worker
thread: a 100k-episode team store takes seconds to load).
Consumes: `episode.append` (from the reflector's finish pipeline, or a harness), `episode.get`,
`episode.recent`, `episode.prune`, `episode.forget`, `memory.recall`. Emits: nothing.

The index file is written by a timer (`FLUSH_SECONDS`, longer for big stores) and at shutdown,
never on the request path; a crash between an append and the next flush loses nothing, because
the store catches the index up from the log on the next open. Small stores answer inline on the
actor's loop (a recall over 300 episodes is well under a millisecond); big ones in a worker thread
so the loop never waits on a long store lock.

Trust: episodes this user did not sign (a committed store a repository brought) are answered
marked `verified: false` with every text quoted and its commands withheld — in `memory.recall`,
`episode.get` and `episode.recent` alike — until `episode.trust` adopts them (`slmactor trust`).

Ranking mode: `default` (coverage over known terms, plural folding, whole-path terms) or `seed`
(SPEC S-3 to the letter), from the setting `recall_mode` / env `SLMACTOR_RECALL_MODE`; the episode
cap and age limit from `episodes_cap` / `episodes_max_age_days` (env `SLMACTOR_EPISODES_CAP`,
`SLMACTOR_EPISODES_MAX_AGE_DAYS`). See `logic/recall/rank.py` for why the default differs from the seed.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from slmactor.logic.text.redact import marked_redacted, redacted_map
from slmactor.logic.text.trust import untrusted_record
from slmactor.protocol import ErrorCode, RequestError
from slmactor.protocol.messages import (
    EpisodeAppend,
    EpisodeDrop,
    EpisodeForget,
    EpisodeGet,
    EpisodePrune,
    EpisodeRecent,
    EpisodeTrust,
    MemoryRecall,
    Message,
)
from slmactor.runtime.actor import Actor, handles, store_failure
from slmactor.runtime.projects import ProjectCache
from slmactor.stores.base import health
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.layout import ProjectLayout
from slmactor.stores.base.signing import signing_key

if TYPE_CHECKING:
    from slmactor.logic.recall.episode import IndexEntry
    from slmactor.logic.recall.rank import RankOptions
    from slmactor.stores.episodes import EpisodeStore

#: Values of the `recall_mode` setting (see `slmactor.logic.recall.rank.RankOptions.named`).
RECALL_MODES = ("default", "known", "seed")

T = TypeVar("T")

#: Seconds between index flushes of a dirty store.
FLUSH_SECONDS = 2.0
#: Stores larger than this answer from a worker thread.
BIG_STORE = 20_000
#: Queries longer than this (characters of text, files and tags) rank in a worker thread too:
#: tokenizing a 256 KiB query on the loop held every other ask (`status` p99 0.65 s in the
#: flood bench) for the length of its ranking.
LONG_QUERY = 8_192
BIG_FLUSH_SECONDS = 60.0
#: Stores up to this size rewrite their index every `FLUSH_SECONDS`; larger ones every
#: `BIG_FLUSH_SECONDS`: encoding a 10k-entry index takes tens of ms of the GIL, which showed up
#: as the p99 of unrelated asks, and the index is a cache — appends after the last write are
#: recovered from the log on open.
EAGER_FLUSH_MAX = 1_000
#: Hits whose full episode is read back from the log (the rest carry the index projection).
HYDRATE_HITS = 20
#: Index entries of recent hits kept as their redacted reply maps (`_entry_part`).
ENTRY_PARTS = 2048


class RecallActor(Actor):
    """Episodic memory of every project the daemon serves."""

    name = "recall"

    async def on_start(self) -> None:
        settings = self.ctx.settings
        self.mode = settings.recall_mode
        if self.mode not in RECALL_MODES:
            self.warn(f"unknown recall_mode {self.mode!r} ignored; using 'default'")
            self.mode = "default"
        self.cap = settings.episodes_cap
        self.max_age_days = settings.episodes_max_age_days
        # The ranker (and numpy under it) is imported by the first store opened, in a worker
        # thread — not here, where it would delay the daemon's READY by ~50 ms.
        self._options: RankOptions | None = None
        self.warnings = self.store_warnings()
        self.key, fault = await self.run_sync(signing_key, settings.home)
        if fault:
            self.warn(fault)
        self.stores: ProjectCache[EpisodeStore] = ProjectCache(
            self._open, lambda store: store.close(), settings.max_open_projects
        )
        self._last_flush: dict[Path, float] = {}
        self._entry_parts: OrderedDict[int, tuple[IndexEntry, object]] = OrderedDict()
        extra = self.ctx.stats.extra
        extra["recall_mode"] = self.mode
        extra["episodes_appended"] = 0
        extra["recalls"] = 0
        extra["flush_ticks"] = 0

    async def on_stop(self) -> None:
        self.stores.close_all()  # close() flushes every dirty index

    def loops(self) -> list[Callable[[], Coroutine[Any, Any, None]]]:
        return [self._flusher]

    @property
    def options(self) -> RankOptions:
        if self._options is None:
            from slmactor.logic.recall.rank import RankOptions

            self._options = RankOptions.named(self.mode)
        return self._options

    def _open(self, root: Path) -> EpisodeStore:
        from slmactor.stores.episodes import EpisodeStore

        return EpisodeStore(
            ProjectLayout(root).memory_dir, self.warnings, now=self.now, cap=self.cap,
            max_age_days=self.max_age_days, options=self.options,
            fsync=self.ctx.settings.fsync_logs, key=self.key,
        )

    async def _flusher(self) -> None:
        while True:
            await anyio.sleep(FLUSH_SECONDS)
            self.ctx.stats.extra["flush_ticks"] += 1  # (tests wait for a tick to have passed)
            now = self.now()
            for root, store in self.stores.items():
                if not store.dirty:
                    continue
                wait = BIG_FLUSH_SECONDS if len(store) > EAGER_FLUSH_MAX else 0.0
                if now - self._last_flush.get(root, 0.0) < wait:
                    continue
                self._last_flush[root] = now
                try:
                    await self.run_sync(store.flush)
                except StoreError as exc:
                    self.warn(f"episode index of {root} not written: {exc}")

    async def _store(self, msg: Message) -> EpisodeStore:
        root = self.project_root(msg)
        store = self.stores.peek(root)
        if store is None:
            store = await self.run_sync(self.stores.get, root)
        else:
            self.stores.get(root)  # mark as recently used
        self.ctx.stats.extra["open_projects"] = len(self.stores)
        return store

    async def _call(self, store: EpisodeStore, fn: Callable[..., T], *args: Any,
                    heavy: bool = False) -> T:
        """Run a store call inline for small stores, in a worker thread for big ones (or when
        the caller knows this call is `heavy`)."""
        try:
            if heavy or len(store) > BIG_STORE:
                return await self.run_sync(fn, *args)
            return fn(*args)
        except StoreError as exc:
            raise store_failure(exc) from exc

    def _entry_part(self, entry: IndexEntry) -> object:
        """`entry.to_dict()` as the reply's redaction leaves it, made once per entry: an index
        entry never changes, and a replaced index has new entry objects, so the identity check
        is the invalidation. The reply is what it was; only the secret scan is not repeated."""
        key = id(entry)
        cached = self._entry_parts.get(key)
        if cached is not None and cached[0] is entry:
            self._entry_parts.move_to_end(key)
            return cached[1]
        part = redacted_map(entry.to_dict())
        if not entry.verified:
            part = untrusted_record(entry.to_dict())
        self._entry_parts[key] = (entry, part)  # holding `entry` keeps its id from being reused
        if len(self._entry_parts) > ENTRY_PARTS:
            self._entry_parts.popitem(last=False)
        return part

    # ------------------------------------------------------------------------------ asks
    @handles(EpisodeAppend)
    async def append(self, msg: EpisodeAppend) -> dict[str, Any]:
        from slmactor.logic.recall.episode import Episode

        if not isinstance(msg.episode, dict) or not msg.episode:
            raise RequestError(ErrorCode.BAD_FIELD, "episode must be a non-empty map")
        store = await self._store(msg)
        root = self.project_root(msg)
        episode = Episode.from_dict(msg.episode)
        if store.in_memory is False and len(store) == 0:
            try:
                await self.run_sync(ProjectLayout(root).ensure)
            except (OSError, StoreError) as exc:
                raise self._unwritable(root, exc) from None
        try:
            stored, added = await self._call(store, store.append, episode)
        except RequestError:
            if store.in_memory or ProjectLayout(root).memory_dir.is_dir():
                raise  # a write error of a usable directory (disk full): nothing acknowledged
            raise self._unwritable(root, "the memory directory is gone and cannot be made") \
                from None
        if not added:  # a known id: what the store has (or, unreadable, what was sent)
            return {"added": False, "id": stored.id, "episode": stored.to_dict()}
        self.ctx.stats.extra["episodes_appended"] += 1
        if len(store) <= EAGER_FLUSH_MAX:
            # Acknowledged means done: the index is written before the reply, so nothing is
            # written for this episode after it (a big store's index stays on the timer: it is
            # a cache the log rebuilds, and never written once the log is gone).
            try:
                await self.run_sync(store.flush)
            except StoreError as exc:
                self.warn(f"episode index of {root} not written: {exc}")
        # Read back from its redacted record: the reply's redaction need not scan it again.
        return {"added": True, "id": stored.id, "episode": marked_redacted(stored.to_dict())}

    def _unwritable(self, root: Path, why: object) -> RequestError:
        """The one rule of every store whose directory cannot be made (`.slmcode` is a file,
        the project is read-only): the write is refused with the path and the reason — never
        acknowledged from memory — and `status` is degraded with the project named."""
        reason = why.strerror if isinstance(why, OSError) and why.strerror else str(why)
        directory = ProjectLayout(root).memory_dir
        text = f"episode not saved: cannot create {directory}: {reason}"
        health.dir_failed(directory, text)
        self.warn(text)
        return RequestError(ErrorCode.STORE_ERROR, text)

    @handles(EpisodeGet)
    async def get(self, msg: EpisodeGet) -> dict[str, Any]:
        if not msg.episode_id.strip():
            raise RequestError(ErrorCode.BAD_FIELD, "episode_id is required")
        store = await self._store(msg)
        episode = await self._call(store, store.get, msg.episode_id.strip())
        if episode is None:
            raise RequestError(ErrorCode.NOT_FOUND, f"no episode {msg.episode_id!r}")
        entry = store.entry(episode.id)
        return episode.to_dict() if entry is None or entry.verified else untrusted_record(
            episode.to_dict())

    @handles(EpisodeRecent)
    async def recent(self, msg: EpisodeRecent) -> dict[str, Any]:
        store = await self._store(msg)
        entries = await self._call(store, store.recent, msg.n)
        if msg.ids_only:
            # What a distill pass needs: 120 index entries as dicts cost the loop ~2 ms.
            return {"ids": [e.id for e in entries], "total": len(store)}
        return {"episodes": [self._entry_part(e) for e in entries], "total": len(store),
                "unverified": store.unverified_count()}

    @handles(EpisodePrune)
    async def prune(self, msg: EpisodePrune) -> dict[str, Any]:
        store = await self._store(msg)
        try:
            removed = await self.run_sync(store.prune, msg.cap, msg.max_age_days)
        except StoreError as exc:
            raise store_failure(exc) from exc
        return {"episodes_removed": removed, "episodes": len(store)}

    @handles(EpisodeForget)
    async def forget(self, msg: EpisodeForget) -> dict[str, Any]:
        store = await self._store(msg)
        try:
            removed = await self.run_sync(store.forget)
        except StoreError as exc:
            raise store_failure(exc) from exc
        return {"episodes_removed": removed}

    @handles(EpisodeDrop)
    async def drop(self, msg: EpisodeDrop) -> dict[str, Any]:
        store = await self._store(msg)
        wanted = {i.strip() for i in msg.ids if i.strip()}
        try:
            dropped = await self.run_sync(store.drop, wanted)
        except StoreError as exc:
            raise store_failure(exc) from exc
        return {"episodes_removed": len(dropped), "dropped": dropped, "episodes": len(store)}

    @handles(EpisodeTrust)
    async def trust(self, msg: EpisodeTrust) -> dict[str, Any]:
        """The episodes a repository brought unsigned (whole, for the user to review), or,
        with `adopt`, adopt them (`ids`, or every one with `every`)."""
        store = await self._store(msg)
        adopted: list[str] = []
        if msg.adopt:
            wanted = None if msg.every else set(msg.ids)
            try:
                adopted = await self.run_sync(store.trust, wanted)
            except StoreError as exc:
                raise store_failure(exc) from exc
        pending = await self._call(store, store.unverified)
        return {"unverified": [{**e.to_dict(), "verified": False} for e in pending],
                "adopted": adopted}

    @handles(MemoryRecall)
    async def recall(self, msg: MemoryRecall) -> dict[str, Any]:
        from slmactor.logic.recall.index import RecallQuery
        from slmactor.logic.text.timefmt import parse_rfc3339

        since: float | None = None
        if msg.since.strip():
            since = parse_rfc3339(msg.since)
            if since is None:
                raise RequestError(ErrorCode.BAD_FIELD, f"since is not an RFC 3339 time: {msg.since!r}")
        if msg.min_coverage > 1:
            raise RequestError(ErrorCode.BAD_FIELD, "min_coverage must be at most 1")
        query = RecallQuery(
            text=msg.query, files=tuple(msg.files), tools=tuple(msg.tools), tags=tuple(msg.tags),
            language=msg.language, model=msg.model, success_only=msg.success_only,
            failures_only=msg.failures_only, since=since, n=msg.n,
            min_coverage=msg.min_coverage, min_score=msg.min_score, explain=msg.explain,
        )
        store = await self._store(msg)
        now = self.now()
        size = len(msg.query) + sum(map(len, msg.files)) + sum(map(len, msg.tags))
        hits = await self._call(store, store.recall, query, now, heavy=size > LONG_QUERY)
        self.ctx.stats.extra["recalls"] += 1
        # One store call for every hydrated hit: a big store answers from a worker thread, and a
        # thread hop per hit cost more than the reads.
        ids = [hit.entry.id for hit in hits[:HYDRATE_HITS]]
        episodes = await self._call(store, lambda: [store.get_dict(i) for i in ids])
        out: list[dict[str, Any]] = []
        for rank, hit in enumerate(hits):
            entry = hit.entry
            item: dict[str, Any] = {"id": entry.id, "score": hit.score,
                                    "entry": self._entry_part(entry)}
            full = episodes[rank] if rank < len(episodes) else None
            if full is not None:
                # Redacted already (`EpisodeStore.get_dict`); one a repository brought, marked.
                item["episode"] = full if entry.verified else untrusted_record(full)
            if not entry.verified:
                item["verified"] = False
            if hit.explanation is not None:
                item["explanation"] = hit.explanation.to_dict()
                item["why"] = hit.explanation.render()
            out.append(item)
        return {"hits": out, "mode": self.options.mode, "episodes": len(store)}
