"""Episodic memory on disk: `episodes.jsonl` + `episodes.index.json` (SPEC S-2.1–S-2.6, S-7.8).

The log holds one normalised, redacted episode per line, appended with one `write()` on an
O_APPEND descriptor (`JsonlLog`). The index file is the searchable projection with byte offsets
(`{version: 1, updated, entries: [...]}`, entries sorted by time), replaced atomically by
`flush()` when something changed. In memory the projection lives in an `EpisodeIndex` (inverted
index + filter columns), built when the store opens and updated on every append.

Opening (S-2.5): a parseable index with entries is trusted after a spot-check of its newest entry
(the log must hold that id at that offset); a mismatch rebuilds from the log with the warning
`episode index stale; rebuilt from log`; a missing or unreadable index rebuilds silently. The
rebuild skips unparseable, id-less and over-32-KiB lines (neighbours kept) and warns `skipped N
corrupt episode record(s)`. Beyond the seed: the index also records the log size it describes
(`log_size`, ignored by readers that do not know it), so appends that reached the log but not the
index before a crash are caught up from the log instead of silently missing from recall.

Trust (`slmactor.logic.text.trust`): with the user's signing key, every line this store writes
carries the `sig` of its record, and the index file the `sig` of its entries. An index without
this user's signature (one a repository brought) is rebuilt from the log; a log line without a
valid `sig` (episodes a repository brought, or written before episodes were signed) is indexed
with `verified: false` — recalled only labelled, its texts quoted with commands withheld — until
`trust` adopts it (the log rewritten with those lines signed).

`get` hydrates through the offset and falls back to a scan by id (a hand-edited log moves
offsets). Every call first compares the log's (device, inode, size) with what this store last
left there: a log removed while the daemon runs (`rm -rf .slmcode`) empties memory without
re-creating anything; a log replaced or extended by another writer is re-read. `prune` (S-7.8: 300 episodes and 180 days by default; 0 → default, negative →
unlimited; an episode tagged `KEEP_TAG` is exempt from the age limit) rewrites the log atomically, so the file shrinks, and rebuilds the offsets. Appending
past twice the cap prunes to the cap as a hard backstop (S-2.6). Without a directory the store is
in-memory: same API, nothing written. Read-only stores never write, create or quarantine.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from slmactor.logic.recall.episode import Episode, IndexEntry, normalize_episode
from slmactor.logic.recall.index import EpisodeHit, EpisodeIndex, RecallQuery
from slmactor.logic.recall.rank import RankOptions
from slmactor.logic.text.redact import redact_obj, redacted_map
from slmactor.logic.text.safecut import cut_chars
from slmactor.logic.text.timefmt import SECONDS_PER_DAY, to_rfc3339
from slmactor.logic.text.trust import SIG_FIELD, record_sig, signed, unsigned, verified
from slmactor.stores.base.errors import RecordTooLarge, StoreError
from slmactor.stores.base.fsutil import FileState, file_state
from slmactor.stores.base.jsondoc import JsonDoc, Shape, encode_row
from slmactor.stores.base.jsonl import JsonlLog
from slmactor.stores.base.warnings import WarningLog

LOG_NAME = "episodes.jsonl"
INDEX_NAME = "episodes.index.json"
INDEX_VERSION = 1
DEFAULT_CAP = 300
DEFAULT_MAX_AGE_DAYS = 180.0
#: An episode tagged so is kept past the age limit (still within the count cap): what `import
#: sessions --keep-old` tags the episodes of sessions older than the limit with, so importing a
#: year of history keeps its similar-work memory when the user asks for it.
KEEP_TAG = "keep-old"
#: The index of a 100k-episode team store is ~100 MB of JSON; the JsonDoc default is lower.
INDEX_MAX_BYTES = 1 << 30
STALE_WARNING = "episode index stale; rebuilt from log"
#: Episodes kept as reply-ready dicts by `get_dict` (~1-3 KB each).
HYDRATED_CACHE = 1024


def resolve_limit(value: float, default: float) -> float | None:
    """S-7.8 knob rule: 0 → the default, negative → unlimited (None)."""
    if value == 0:
        return default
    return None if value < 0 else value


def _shrunk(episode: Episode) -> Episode:
    """A smaller form of an episode whose line would exceed the log's line limit."""
    return replace(
        episode,
        plan=episode.plan[:4],
        files_changed=tuple(f[-160:] for f in episode.files_changed),
        commands=episode.commands[-3:],
        failures=tuple(
            replace(f, message=cut_chars(f.message, 120), resolution=cut_chars(f.resolution, 120))
            for f in episode.failures[:4]
        ),
        gates=tuple(replace(g, detail=cut_chars(g.detail, 80)) for g in episode.gates[:4]),
        summary=cut_chars(episode.summary, 200),
    )


def _redacted(episode: Episode) -> dict[str, Any]:
    """The episode's record with secrets replaced (the form both the log and the index hold)."""
    record = redact_obj(episode.to_dict())
    assert isinstance(record, dict)
    return record


class EpisodeStore:
    """The episodes of one project (or an in-memory store when `directory` is None)."""

    def __init__(
        self,
        directory: str | Path | None,
        warnings: WarningLog,
        *,
        now: Callable[[], float] = time.time,
        cap: int = DEFAULT_CAP,
        max_age_days: float = DEFAULT_MAX_AGE_DAYS,
        options: RankOptions | None = None,
        read_only: bool = False,
        fsync: bool = False,
        key: bytes | None = None,
    ) -> None:
        self.directory = Path(directory) if directory is not None else None
        #: The user's signing key (None: nothing is signed or checked, every episode is ours).
        self._key = key
        self.warnings = warnings
        self._now = now
        self.cap = cap
        self.max_age_days = max_age_days
        self.options = options or RankOptions()
        self.read_only = read_only
        self._index = EpisodeIndex(self.options)
        self._memory: dict[str, Episode] = {}
        # Reply-ready dicts of recently read episodes (see `get_dict`), valid for one index.
        self._hydrated: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._hydrated_for: EpisodeIndex | None = None
        self._dirty = False
        # The owning actor runs slow calls (open, flush, prune) in a worker thread while it keeps
        # answering; one lock keeps the index consistent between the two.
        self._lock = threading.RLock()
        self._flush_lock = threading.Lock()
        #: `unverified_count`'s answer and the index it counted.
        self._unverified_for: EpisodeIndex | None = None
        self._unverified_n = 0
        #: The index file's line of each entry at the last flush, by entry identity (`_rows_of`).
        self._rows: dict[int, tuple[IndexEntry, str]] = {}
        # (st_dev, st_ino, st_size) of the log as this store last left it; None = no file.
        self._disk: FileState | None = None
        self._log: JsonlLog | None = None
        self._doc: JsonDoc | None = None
        if self.directory is not None:
            self._log = JsonlLog(
                self.directory / LOG_NAME, warnings, read_only=read_only, fsync=fsync, now=now
            )
            self._doc = JsonDoc(
                self.directory / INDEX_NAME, warnings, redact=False, read_only=read_only,
                max_bytes=INDEX_MAX_BYTES, now=now, shape=Shape("entries", list),
                records_key="entries",
            )
            self._load()

    # ---------------------------------------------------------------------------- loading
    @property
    def in_memory(self) -> bool:
        return self._log is None

    def keep_in_memory(self) -> None:
        """From now on hold episodes in memory only: the store's directory cannot be created
        (`.slmcode` is a regular file, say). Recall keeps working on what this process sees."""
        with self._lock:
            self._log = None
            self._doc = None
            self._dirty = False
            self._disk = None

    def __len__(self) -> int:
        return len(self._index)

    def _load(self) -> None:
        assert self._log is not None and self._doc is not None
        data = self._doc.load()
        if data is not None and not self._signed_by_us(data):
            data = None  # not this user's index: every entry is read again from the log
        entries, log_size = self._parse_index(data)
        if entries:
            newest = max(range(len(entries)), key=lambda i: (entries[i].at, i))
            record = self._log.read_at(entries[newest].offset)
            if record is None or str(record.get("id", "")).strip() != entries[newest].id:
                self.warnings.warn(STALE_WARNING, self._now(), self.directory)
                self.rebuild()
                return
            if log_size is not None and log_size != self._log.size():
                self.rebuild()  # appends after the last flush (or a shorter log): catch up
                return
            self._index.add_many(entries)
            self._note_disk()
            return
        if self._log.size() > 0:
            self.rebuild()
        self._note_disk()

    def _signed_by_us(self, data: Any) -> bool:
        """Whether an index document carries this user's signature over its entries."""
        if self._key is None:
            return True
        if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
            return False
        try:
            rows = [encode_row(raw) for raw in data["entries"]]
        except (TypeError, ValueError):
            return False
        return data.get(SIG_FIELD) == self._rows_sig(rows)

    def _rows_sig(self, rows: list[str]) -> str:
        assert self._key is not None
        return record_sig(self._key, {"rows": "\n".join(rows)})

    def _ours(self, record: dict[str, Any]) -> bool:
        """Whether a log line was signed by this user (always, without a key)."""
        return self._key is None or verified(self._key, record)

    @staticmethod
    def _parse_index(data: Any) -> tuple[list[IndexEntry], int | None]:
        if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
            return [], None
        entries = [
            entry
            for raw in data["entries"]
            if isinstance(raw, dict) and (entry := IndexEntry.from_dict(raw)) is not None
        ]
        log_size = data.get("log_size")
        return entries, log_size if isinstance(log_size, int) and log_size >= 0 else None

    def _log_state(self) -> FileState | None:
        return None if self._log is None else file_state(self._log.path)

    def _note_disk(self) -> None:
        self._disk = self._log_state()

    def _sync_with_disk(self) -> None:
        """Notice a log deleted, replaced or written by someone else since we last touched it.

        Deleted (`rm -rf .slmcode` while the daemon runs): memory starts empty, nothing is
        re-created until the next append. Replaced or grown: the index is rebuilt from the log.
        """
        if self._log is None:
            return
        state = self._log_state()
        if state == self._disk:
            return
        if state is None:
            if len(self._index):
                self.warnings.warn(
                    "episodes.jsonl was removed; episodic memory starts empty", self._now()
                )
            self._index = EpisodeIndex(self.options)
            self._dirty = False
            self._disk = None
            return
        self.warnings.warn(STALE_WARNING, self._now(), self.directory)
        self._rebuild_locked()

    def rebuild(self) -> int:
        """Re-read the whole log into a fresh index (then write it); returns the count."""
        with self._lock:
            count = self._rebuild_locked()
        self.flush()  # outside the lock: flush takes the flush lock first, then this one
        return count

    def _rebuild_locked(self) -> int:
        index = EpisodeIndex(self.options)
        if self._log is None:
            return len(self._index)
        idless = 0
        entries: list[IndexEntry] = []
        seen: set[str] = set()
        for offset, record in self._log.scan():
            episode = Episode.from_dict(record)
            if not episode.id:
                idless += 1
                continue
            if episode.id in seen:
                continue
            seen.add(episode.id)
            entries.append(IndexEntry.of(episode, offset, self._ours(record)))
        skipped = idless + self._log.corrupt_lines
        if skipped:
            self.warnings.warn(f"skipped {skipped} corrupt episode record(s) in {LOG_NAME}",
                               self._now(), self.directory)
        index.add_many(entries)
        self._index = index
        self._dirty = True
        self._note_disk()
        return len(index)

    # ---------------------------------------------------------------------------- writing
    def append(self, episode: Episode) -> tuple[Episode, bool]:
        """Normalise, redact and store `episode`; (stored episode, False) for a known id."""
        with self._lock:
            if self.read_only:
                raise StoreError("episode store is open read-only")
            self._sync_with_disk()
            normal = normalize_episode(episode, self._now())
            known = self._index.get(normal.id)
            if known is not None:
                return self.get(normal.id) or normal, False
            record = _redacted(normal)
            stored = Episode.from_dict(record)
            if self._log is None:
                self._memory[stored.id] = stored
                offset = 0
            else:
                try:
                    offset = self._log.append(signed(self._key, record), redacted=True)
                except RecordTooLarge:
                    record = _redacted(_shrunk(stored))
                    stored = Episode.from_dict(record)
                    offset = self._log.append(signed(self._key, record), redacted=True)
            self._index.add(IndexEntry.of(stored, offset))
            self._dirty = True
            self._note_disk()
            if self.cap > 0 and len(self._index) > 2 * self.cap:
                self._prune_locked(self.cap, -1)
            return stored, True

    def flush(self) -> bool:
        """Write the index file atomically if anything changed; True when written.

        The document is built under the store lock and written outside it, so a recall or an
        append waits for the snapshot, not for the disk.
        """
        with self._flush_lock:
            with self._lock:
                # A log removed since (`rm -rf .slmcode`) leaves nothing to describe: the index is
                # not written back into a store the user deleted.
                self._sync_with_disk()
                if not self._dirty or self._doc is None or self._log is None or self.read_only:
                    return False
                head = {"version": INDEX_VERSION, "updated": to_rfc3339(self._now()),
                        "log_size": self._log.size()}
                entries = self._index.entries()  # a list of its own; entries never change
                self._dirty = False
            # Converted and encoded outside the store lock, each entry once: the owner answers
            # recalls from the event loop while this runs in a worker thread, sharing the GIL
            # with it. 600 entries took 11-20 ms to write, 1-2 ms of it under the lock every
            # recall takes; now ~3 ms, most of it the fsync.
            try:
                rows = self._rows_of(entries)
                if self._key is not None:
                    head[SIG_FIELD] = self._rows_sig(rows)
                self._doc.save_rows(head, rows)
            except BaseException:
                self._dirty = True
                raise
            return True

    def _rows_of(self, entries: list[IndexEntry]) -> list[str]:
        """Each entry's line of the index file, from the last flush's when the entry is the
        same object (the cache holds this flush's entries only). The caller holds the flush lock."""
        known, fresh = self._rows, {}
        rows: list[str] = []
        for entry in entries:
            cached = known.get(id(entry))
            row = cached[1] if cached is not None and cached[0] is entry else encode_row(entry.to_dict())
            fresh[id(entry)] = (entry, row)  # holding `entry` keeps its id from being reused
            rows.append(row)
        self._rows = fresh
        return rows

    @property
    def dirty(self) -> bool:
        return self._dirty

    def prune(self, cap: int | None = None, max_age_days: float | None = None) -> int:
        """Drop episodes older than the age limit, keep the newest `cap`; returns how many went.

        `None` or 0 uses the store's configured limit (`memory.prune` asks with 0 and
        used to get the default 300 whatever `episodes_cap` said); negative → unlimited (S-7.8).
        """
        with self._lock:
            self._sync_with_disk()
            removed = self._prune_locked(cap, max_age_days)
        if removed:
            self.flush()
        return removed

    def _prune_locked(self, cap: int | None, max_age_days: float | None) -> int:
        if self.read_only:
            return 0
        # None or 0 asks for the store's configured limits (`episodes_cap`,
        # `episodes_max_age_days`); those follow S-7.8 (0 → default, negative → unlimited).
        keep_n = resolve_limit(cap or self.cap, DEFAULT_CAP)
        max_age = resolve_limit(max_age_days or self.max_age_days, DEFAULT_MAX_AGE_DAYS)
        ordered = self._index.entries()  # oldest first
        kept = ordered
        if max_age is not None:
            cutoff = self._now() - max_age * SECONDS_PER_DAY
            kept = [e for e in kept if not (0 < e.at < cutoff) or KEEP_TAG in e.tags]
        if keep_n is not None and len(kept) > keep_n:
            kept = kept[len(kept) - int(keep_n) :]
        removed = len(ordered) - len(kept)
        if removed == 0:
            return 0
        return len(ordered) - self._keep_locked(kept)

    def _keep_locked(self, kept: list[IndexEntry]) -> int:
        """Keep only the episodes of `kept` (index entries, oldest first); returns how many are
        left. The log keeps their lines in place when it can, else it is rewritten."""
        keep_ids = {e.id for e in kept}
        index = EpisodeIndex(self.options)
        if self._log is None:
            self._memory = {i: ep for i, ep in self._memory.items() if i in keep_ids}
            index.add_many(kept)
        else:
            offsets = self._log.keep_lines((e.offset, e.id) for e in kept)
            if offsets is not None:
                self._note_disk()
                index.add_many(replace(e, offset=off) for e, off in zip(kept, offsets, strict=True))
                self._index = index
                self._dirty = True
                return len(index)
            records: dict[str, dict[str, Any]] = {}
            for _offset, record in self._log.scan():
                rid = str(record.get("id", "")).strip()
                if rid in keep_ids and rid not in records:
                    records[rid] = record
            ordered_ids = [e.id for e in kept if e.id in records]
            offsets = self._log.rewrite(records[i] for i in ordered_ids)
            self._note_disk()
            by_id = {e.id: e for e in kept}
            index.add_many(
                replace(by_id[i], offset=off) for i, off in zip(ordered_ids, offsets, strict=True)
            )
        self._index = index
        self._dirty = True
        return len(index)

    def drop(self, wanted: set[str]) -> list[str]:
        """Remove the episodes whose id or run id is in `wanted` (a session a user takes back);
        returns the ids removed. The log is rewritten without them, the rest kept as it was."""
        with self._lock:
            self._sync_with_disk()
            if self.read_only:
                raise StoreError("episode store is open read-only")
            ordered = self._index.entries()
            gone = [e.id for e in ordered if e.id in wanted or self._run_of(e.id) in wanted]
            if not gone:
                return []
            self._keep_locked([e for e in ordered if e.id not in set(gone)])
        self.flush()
        return gone

    def _run_of(self, episode_id: str) -> str:
        episode = self.get_dict(episode_id)
        return str(episode.get("run_id", "")) if episode else ""

    def forget(self) -> int:
        """Remove every episode (log and index files); the store stays usable. Returns count."""
        with self._lock:
            if self.read_only:
                raise StoreError("episode store is open read-only")
            count = len(self._index)
            if self._log is not None and self._doc is not None:
                self._log.delete()
                self._note_disk()
                self._doc.delete()
            self._memory.clear()
            self._index = EpisodeIndex(self.options)
            self._dirty = False
            return count

    def close(self) -> None:
        """Write the index if it changed and release the log. Never raises: the log is the
        source of truth, so an index that could not be written is rebuilt on the next open."""
        if self._log is None:
            return
        try:
            if not self.read_only:
                self.flush()
        except StoreError as exc:
            self.warnings.warn(f"episode index not written at close: {exc}", self._now(), self.directory)
        finally:
            self._log.close()

    # ---------------------------------------------------------------------------- trust
    def unverified(self) -> list[IndexEntry]:
        """The episodes this user did not sign (a repository brought them), newest first."""
        with self._lock:
            self._sync_with_disk()
            return [e for e in self._index.recent(0) if not e.verified]

    def unverified_count(self) -> int:
        """How many episodes this user did not sign (counted once per index)."""
        with self._lock:
            self._sync_with_disk()
            if self._unverified_for is not self._index:
                self._unverified_for = self._index
                self._unverified_n = sum(1 for e in self._index.entries() if not e.verified)
            return self._unverified_n

    def trust(self, ids: set[str] | None) -> list[str]:
        """Adopt unverified episodes (`ids`, or every one for None): the log is rewritten with
        their lines signed (redacted first). Returns the adopted ids."""
        with self._lock:
            if self.read_only:
                raise StoreError("episode store is open read-only")
            self._sync_with_disk()
            wanted = {e.id for e in self._index.entries()
                      if not e.verified and (ids is None or e.id in ids)}
            if not wanted or self._log is None or self._key is None:
                return []
            records: dict[str, dict[str, Any]] = {}
            for _offset, record in self._log.scan():
                rid = str(record.get("id", "")).strip()
                if rid and rid not in records:
                    records[rid] = record
            kept = [e for e in self._index.entries() if e.id in records]
            lines = [signed(self._key, _redacted(Episode.from_dict(unsigned(records[e.id]))))
                     if e.id in wanted else records[e.id] for e in kept]
            offsets = self._log.rewrite(lines)
            index = EpisodeIndex(self.options)
            index.add_many(replace(e, offset=off, verified=e.verified or e.id in wanted)
                           for e, off in zip(kept, offsets, strict=True))
            self._index = index
            self._dirty = True
            self._note_disk()
            return sorted(wanted & set(records))

    # ---------------------------------------------------------------------------- reading
    def get(self, episode_id: str) -> Episode | None:
        """The full episode: via its offset, else a scan by id (hand-edited log), else None.

        When the scan finds the episode somewhere the index does not say, the log was edited
        under the store: the index is rebuilt (with the stale warning) so later reads are direct.
        """
        with self._lock:
            self._sync_with_disk()
            entry = self._index.get(episode_id)
            if self._log is None:
                return self._memory.get(episode_id)
            if entry is not None:
                record = self._log.read_at(entry.offset)
                if record is not None and str(record.get("id", "")).strip() == episode_id:
                    return Episode.from_dict(record)
            for offset, record in self._log.scan():
                if str(record.get("id", "")).strip() == episode_id:
                    if entry is None or entry.offset != offset:
                        self.warnings.warn(STALE_WARNING, self._now(), self.directory)
                        self._rebuild_locked()
                    return Episode.from_dict(record)
            return None

    def get_dict(self, episode_id: str) -> dict[str, Any] | None:
        """`get(episode_id).to_dict()` as a reply carries it (redacted: a `Redacted` map, which
        the reply's redaction passes through), from a bounded cache when it was read recently.

        A stored episode never changes, so recall's best hits need not be re-read from the log,
        re-normalised and scanned for secrets on every ask (a block asked on every prompt hits
        the same few). The cache belongs to the current index: any rebuild, prune, forget or
        change on disk that replaces the index empties it. Callers must not mutate the dict.
        """
        with self._lock:
            self._sync_with_disk()
            if self._hydrated_for is not self._index:
                self._hydrated.clear()
                self._hydrated_for = self._index
            cached = self._hydrated.get(episode_id)
            if cached is not None:
                self._hydrated.move_to_end(episode_id)
                return cached
            episode = self.get(episode_id)
            if episode is None or self._hydrated_for is not self._index:
                return None if episode is None else _reply_ready(episode)
            record = _reply_ready(episode)
            self._hydrated[episode_id] = record
            if len(self._hydrated) > HYDRATED_CACHE:
                self._hydrated.popitem(last=False)
            return record

    def entry(self, episode_id: str) -> IndexEntry | None:
        return self._index.get(episode_id)

    def recent(self, n: int) -> list[IndexEntry]:
        """Newest first (n ≤ 0 = all)."""
        with self._lock:
            self._sync_with_disk()
            return self._index.recent(n)

    def all(self) -> list[Episode]:
        """Every episode, oldest first (hydrated from the log in one pass)."""
        with self._lock:
            self._sync_with_disk()
            order = [e.id for e in self._index.entries()]
            if self._log is None:
                return [self._memory[i] for i in order if i in self._memory]
            found: dict[str, Episode] = {}
            for _offset, record in self._log.scan():
                episode = Episode.from_dict(record)
                if episode.id and episode.id not in found:
                    found[episode.id] = episode
            return [found[i] for i in order if i in found]

    def recall(self, query: RecallQuery, now: float | None = None) -> list[EpisodeHit]:
        with self._lock:
            self._sync_with_disk()
            return self._index.recall(query, self._now() if now is None else now)

    @property
    def vocabulary_size(self) -> int:
        return self._index.vocabulary_size


def _reply_ready(episode: Episode) -> dict[str, Any]:
    record = episode.to_dict()
    ready = redacted_map(record)
    return ready if isinstance(ready, dict) else record
