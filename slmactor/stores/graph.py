"""The knowledge graph on disk: `graph/edges.jsonl` + `graph/edges.index.json` (S-21.4, S-21.5).

The log is append-only (`JsonlLog`: one `write()` per edge line). Re-adding a known edge id
refreshes it in the index only (S-21.4) — no new log line — so a backfill after every turn never
grows the log. The index document (`{version 1, updated, log_size, entries[edge + offset], out,
in}`) is written atomically by `flush()`; the adjacency is recomputed from the entries on load.

Opening (S-21.5): an index that is not JSON is moved aside (`.corrupt`) with the warning
`edges.index.json unreadable; moved aside and rebuilt from log`; one whose newest entry's offset
does not hold that edge in the log (or whose shape is not an index) is rebuilt with `graph index
stale; rebuilt from log`. Beyond the seed, `log_size` records which log the index describes, so
edges appended after the last flush (a crash) are caught up from the log, not lost. Corrupt log
lines — including parseable lines that are not valid edges — are skipped with `skipped N corrupt
edge record(s)`; blank lines are fine; lines over 32 KiB are corrupt. Read-only stores never
write, create or quarantine. Without a directory the store lives in memory (same API).

Every call first compares the log's (device, inode, size) with what this store last left: a graph
removed while the daemon runs (`rm -rf .slmcode/graph`) empties the index (`removed_externally`
tells the owner, so a backfill can rebuild every edge); a log replaced or grown by someone else
is re-read.

Trust: with the user's signing key every edge line carries its `sig` and the index document its
own. An index without this user's signature is rebuilt from the log, and a log line without a
valid `sig` (a graph a repository brought) is never served: the graph is derived from the
user's own records, so the owner's backfill re-derives the edges of what `slmactor trust`
adopts.

`prune` (S-21.10; 20 000 edges and 180 days by default, 0 → default, negative → unlimited) drops
edges not re-observed within the age limit, keeps the newest, rewrites the log atomically from the
index (so refreshed times become durable) and flushes; a no-op prune writes nothing. Adding past
twice the edge cap prunes to the cap (hard backstop). `forget` removes both files. The store is
safe to call from the owning actor and its worker threads (one lock).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slmactor.logic.graph.core import Edge, GraphIndex, validate_edge
from slmactor.logic.graph.query import (
    Known,
    WalkOptions,
    WalkResult,
    failure_classes_for_files,
    known_about_file,
    walk,
)
from slmactor.logic.text.timefmt import SECONDS_PER_DAY
from slmactor.logic.text.trust import SIG_FIELD, record_sig, signed, verified
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.fsutil import FileState, file_state
from slmactor.stores.base.jsondoc import JsonDoc
from slmactor.stores.base.jsonl import JsonlLog
from slmactor.stores.base.warnings import WarningLog

LOG_NAME = "edges.jsonl"
INDEX_NAME = "edges.index.json"
DEFAULT_MAX_EDGES = 20_000
DEFAULT_MAX_AGE_DAYS = 180.0
INDEX_MAX_BYTES = 1 << 30
UNREADABLE_WARNING = "edges.index.json unreadable; moved aside and rebuilt from log"
UNREADABLE_READ_ONLY = "edges.index.json unreadable; left in place (read-only), rebuilt from log"
STALE_WARNING = "graph index stale; rebuilt from log"


def resolve_limit(value: float, default: float) -> float | None:
    """S-21.10 knob rule: 0 → the default, negative → unlimited (None)."""
    if value == 0:
        return default
    return None if value < 0 else value


@dataclass(slots=True)
class AddResult:
    """What a batch did: new edges (log lines), refreshed ones, and the invalid ones' errors."""

    added: int = 0
    refreshed: int = 0
    unchanged: int = 0
    errors: list[str] = field(default_factory=list)
    pruned: int = 0

    @property
    def error(self) -> str:
        """The joined error of the invalid edges ("" when all were valid)."""
        return "; ".join(self.errors)


class GraphStore:
    """The edges of one project (or an in-memory graph when `directory` is None)."""

    def __init__(
        self,
        directory: str | Path | None,
        warnings: WarningLog,
        *,
        now: Callable[[], float] = time.time,
        max_edges: int = DEFAULT_MAX_EDGES,
        max_age_days: float = DEFAULT_MAX_AGE_DAYS,
        read_only: bool = False,
        fsync: bool = False,
        key: bytes | None = None,
    ) -> None:
        self.directory = Path(directory) if directory is not None else None
        #: The user's signing key (None: nothing is signed or checked).
        self._key = key
        #: Log lines not signed by this user, left unserved by the last (re)build.
        self.withheld = 0
        self.warnings = warnings
        self._now = now
        self.max_edges = max_edges
        self.max_age_days = max_age_days
        self.read_only = read_only
        self._index = GraphIndex()
        self._dirty = False
        self._lock = threading.RLock()
        self._disk: FileState | None = None
        #: Set when the log vanished under the store (rm -rf); cleared by `take_removed`.
        self.removed_externally = False
        self._log: JsonlLog | None = None
        self._doc: JsonDoc | None = None
        # The index document reports its own problems here; they are translated into S-21.5 text.
        self._doc_warnings = WarningLog()
        if self.directory is not None:
            self._log = JsonlLog(self.directory / LOG_NAME, warnings, read_only=read_only,
                                 fsync=fsync, now=now, redact=False)
            self._doc = JsonDoc(self.directory / INDEX_NAME, self._doc_warnings, redact=False,
                                read_only=read_only, max_bytes=INDEX_MAX_BYTES, now=now)
            with self._lock:
                self._load()

    # ------------------------------------------------------------------------------ loading
    def __len__(self) -> int:
        return len(self._index)

    @property
    def dirty(self) -> bool:
        return self._dirty

    def _load(self) -> None:
        assert self._log is not None and self._doc is not None
        seen = self._doc_warnings.total
        data = self._doc.load()
        if self._doc_warnings.total != seen:
            self._doc_warnings = WarningLog()  # the S-21.5 text below replaces JsonDoc's own
            self._doc.warnings = self._doc_warnings
            self.warnings.warn(UNREADABLE_READ_ONLY if self.read_only else UNREADABLE_WARNING,
                               self._now(), self.directory)
            self._rebuild_locked()
            return
        if data is not None and not (isinstance(data, dict)
                                     and isinstance(data.get("entries"), list)):
            if not self.read_only:  # not an edge index at all: set aside, named in `status`
                self._doc.set_aside("has the wrong shape (not an edge index)")
                self._forward_doc_warnings()
            data = None
        if data is not None and self._key is not None and data.get(SIG_FIELD) != self._doc_sig(data):
            data = None  # not this user's index: the edges are read again from the log
        if data is None:
            if self._log.size() > 0:
                self._rebuild_locked()
            self._note_disk()
            return
        parsed = GraphIndex.from_document(data)
        if parsed is None:
            self.warnings.warn(STALE_WARNING, self._now(), self.directory)
            self._rebuild_locked()
            return
        index, log_size = parsed
        newest = index.newest()
        size = self._log.size()
        if newest is not None:
            record = self._log.read_at(newest.offset)
            edge = Edge.from_dict(record) if record is not None else None
            if edge is None or edge.id != newest.edge.id or (log_size is not None and log_size > size):
                self.warnings.warn(STALE_WARNING, self._now(), self.directory)
                self._rebuild_locked()
                return
        elif size > 0 and not log_size:
            self._rebuild_locked()
            return
        self._index = index
        if log_size is not None and log_size < size:
            self._catch_up(log_size)  # edges appended after the last flush
        self._note_disk()

    def _doc_sig(self, document: dict[str, Any]) -> str:
        assert self._key is not None
        return record_sig(self._key, document)

    def _line(self, edge: Edge) -> dict[str, Any]:
        """An edge's log line: signed with the user's key."""
        return signed(self._key, edge.to_dict())

    def _ours(self, record: dict[str, Any]) -> bool:
        return self._key is None or verified(self._key, record)

    def _catch_up(self, start: int) -> None:
        assert self._log is not None
        bad = 0
        for offset, record in self._log.scan(start):
            edge = Edge.from_dict(record)
            if edge is None:
                bad += 1
                continue
            if not self._ours(record):
                self.withheld += 1
                continue
            self._index.add(edge, offset)
        self._report_corrupt(bad + self._log.corrupt_lines)
        self._dirty = True

    def _report_corrupt(self, skipped: int) -> None:
        if skipped:
            self.warnings.warn(f"skipped {skipped} corrupt edge record(s) in {LOG_NAME}",
                               self._now(), self.directory)

    def _log_state(self) -> FileState | None:
        return None if self._log is None else file_state(self._log.path)

    def _note_disk(self) -> None:
        self._disk = self._log_state()

    def _sync_with_disk(self) -> None:
        if self._log is None:
            return
        state = self._log_state()
        if state == self._disk:
            return
        if state is None:
            if len(self._index):
                self.warnings.warn("edges.jsonl was removed; the graph starts empty", self._now(), self.directory)
                self.removed_externally = True
            self._index = GraphIndex()
            self._dirty = False
            self._disk = None
            return
        self.warnings.warn(STALE_WARNING, self._now(), self.directory)
        self._rebuild_locked()

    def rebuild(self) -> int:
        """Re-read the whole log into a fresh index; returns the edge count."""
        with self._lock:
            return self._rebuild_locked()

    def _rebuild_locked(self) -> int:
        self._index = GraphIndex()
        if self._log is None:
            return 0
        invalid = 0
        self.withheld = 0
        for offset, record in self._log.scan():
            edge = Edge.from_dict(record)
            if edge is None:
                invalid += 1
                continue
            if not self._ours(record):
                self.withheld += 1
                continue
            self._index.add(edge, offset)
        self._report_corrupt(invalid + self._log.corrupt_lines)
        self._dirty = not self.read_only
        self._note_disk()
        return len(self._index)

    def take_removed(self) -> bool:
        """True once after the graph was deleted under the store (the owner may backfill)."""
        with self._lock:
            self._sync_with_disk()
            removed, self.removed_externally = self.removed_externally, False
            return removed

    # ------------------------------------------------------------------------------ writing
    def add(self, edge: Edge) -> AddResult:
        return self.add_many([edge])

    def add_many(self, edges: Iterable[Edge]) -> AddResult:
        """Store the valid edges (new ids appended, known ids refreshed in the index only)."""
        result = AddResult()
        with self._lock:
            if self.read_only:
                raise StoreError("graph store is open read-only")
            self._sync_with_disk()
            for edge in edges:
                problem = validate_edge(edge)
                if problem:
                    result.errors.append(problem)
                    continue
                known = self._index.get(edge.id)
                if known is None:
                    offset = self._log.append(self._line(edge)) if self._log is not None else 0
                    self._index.add(edge, offset)
                    result.added += 1
                    self._dirty = True
                elif self._index.add(edge, known.offset) == "refreshed":
                    result.refreshed += 1
                    self._dirty = True
                else:
                    result.unchanged += 1
            self._note_disk()
            if self.max_edges > 0 and len(self._index) > 2 * self.max_edges:
                result.pruned = self._prune_locked(self.max_edges, -1)
        return result

    def flush(self) -> bool:
        """Write the index document if anything changed; True when written."""
        with self._lock:
            if not self._dirty or self._doc is None or self._log is None or self.read_only:
                return False
            document = self._index.to_document(self._now(), self._log.size())
            if self._key is not None:
                document[SIG_FIELD] = self._doc_sig(document)
            self._dirty = False
            try:
                self._doc.save(document)
            except BaseException:
                self._dirty = True
                raise
            finally:
                self._forward_doc_warnings()
            return True

    def _forward_doc_warnings(self) -> None:
        for text in self._doc_warnings.texts():
            self.warnings.warn(text, self._now(), self.directory)
        self._doc_warnings = WarningLog()
        if self._doc is not None:
            self._doc.warnings = self._doc_warnings

    def prune(self, max_edges: int | None = None, max_age_days: float | None = None) -> int:
        """Drop edges not re-observed within the age limit, keep the newest `max_edges`;
        returns how many went (None = the store's limits; 0 → default; negative → unlimited)."""
        with self._lock:
            if self.read_only:
                raise StoreError("graph store is open read-only")
            self._sync_with_disk()
            removed = self._prune_locked(max_edges, max_age_days)
            if removed:
                self.flush()
            return removed

    def _prune_locked(self, max_edges: int | None, max_age_days: float | None) -> int:
        keep_n = resolve_limit(self.max_edges if max_edges is None else max_edges,
                               DEFAULT_MAX_EDGES)
        max_age = resolve_limit(self.max_age_days if max_age_days is None else max_age_days,
                                DEFAULT_MAX_AGE_DAYS)
        # Newest observation first; ties keep log order (older line first stays older).
        entries = self._index.entries()
        kept = entries
        if max_age is not None:
            cutoff = self._now() - max_age * SECONDS_PER_DAY
            kept = [e for e in kept if not (0 < e.edge.at < cutoff)]
        if keep_n is not None and len(kept) > keep_n:
            ranked = sorted(range(len(kept)), key=lambda i: (kept[i].edge.at, i))
            chosen = set(ranked[len(kept) - int(keep_n):])
            kept = [e for i, e in enumerate(kept) if i in chosen]
        removed = len(entries) - len(kept)
        if removed == 0:
            return 0
        index = GraphIndex()
        if self._log is None:
            for entry in kept:
                index.add(entry.edge, 0)
        else:
            offsets = self._log.rewrite(self._line(e.edge) for e in kept)
            for entry, offset in zip(kept, offsets, strict=True):
                index.add(entry.edge, offset)
            self._note_disk()
        self._index = index
        self._dirty = True
        return removed

    def forget(self) -> int:
        """Remove both files (the store stays usable, empty); returns how many edges went."""
        with self._lock:
            if self.read_only:
                raise StoreError("graph store is open read-only")
            count = len(self._index)
            if self._log is not None and self._doc is not None:
                self._log.delete()
                self._doc.delete()
                self._forward_doc_warnings()
            self._index = GraphIndex()
            self._dirty = False
            self._note_disk()
            self.removed_externally = False
            return count

    def close(self) -> None:
        """Flush and release the log; never raises (the log is the truth)."""
        if self._log is None:
            return
        try:
            if not self.read_only:
                self.flush()
        except StoreError as exc:
            self.warnings.warn(f"graph index not written at close: {exc}", self._now(), self.directory)
        finally:
            self._log.close()

    # ------------------------------------------------------------------------------ reading
    def index(self) -> GraphIndex:
        """The current index (after noticing changes on disk); callers must not mutate it."""
        with self._lock:
            self._sync_with_disk()
            return self._index

    def edges(self) -> list[Edge]:
        return self.index().edges()

    def out_edges(self, node: str, types: Iterable[str] = ()) -> list[Edge]:
        with self._lock:
            return self.index().out_edges(node, types)

    def in_edges(self, node: str, types: Iterable[str] = ()) -> list[Edge]:
        with self._lock:
            return self.index().in_edges(node, types)

    def neighbors(self, node: str, direction: str = "either", types: Iterable[str] = ()) -> list[str]:
        with self._lock:
            return self.index().neighbors(node, direction, types)

    def walk(self, start: str, options: WalkOptions | None = None) -> WalkResult:
        with self._lock:
            return walk(self.index(), start, options or WalkOptions())

    def known_about_file(self, file: str) -> Known:
        with self._lock:
            return known_about_file(self.index(), file)

    def failure_classes_for_files(self, files: Iterable[str]) -> dict[str, int]:
        with self._lock:
            return failure_classes_for_files(self.index(), files)

    def stats(self) -> dict[str, Any]:
        """`{edges, nodes, by_type, bytes}` (S-21.6); bytes = the log's size on disk."""
        with self._lock:
            counts = self.index().counts()
            counts["bytes"] = self._log.size() if self._log is not None else 0
            return counts
