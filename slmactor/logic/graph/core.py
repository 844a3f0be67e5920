"""The knowledge graph's pure core: node ids, edges, the adjacency index and its queries (S-21).

The graph adds no data of its own: it materialises the string references the other stores keep
(an episode's files and failures, a failure's resolving rule, a fact's and a rule's sources) as
typed edges, so they can be followed.

* Node ids (S-21.1) are `<kind>:<value>`, at most 512 UTF-8 bytes. `file` values are repo-relative
  and canonical (backslash → `/`, Go `path.Clean`, no leading `./`; `.` is no node; absolute and
  relative paths stay different nodes). `node_kind` is the text before the first `:` when that
  index is > 0, else `other`.
* Edges (S-21.2) are `{from, to, type, at, run_id, confidence, note}`: type lowercased, `at` whole
  UTC seconds (RFC 3339 on disk), confidence in [0, 1] with 0 = unset, note ≤ 240 bytes. The id is
  `e_` + 12 hex of SHA-256(`from\\0to\\0type`): content-addressed, so re-adding is idempotent.
  Empty ends or type, a self-edge or an end over 512 bytes make an edge invalid.
* `GraphIndex` holds the edges in log order with their byte offsets and the out/in adjacency.
  Re-adding a known id refreshes it (S-21.4): `at` = max, confidence when the new one is > 0, and
  run_id / note when non-empty — beyond the seed, only from an observation at least as new as the
  stored one, so replaying old records (a backfill runs oldest first) never overwrites newer
  metadata and a second identical batch changes nothing.
* Queries (S-21.6): `out_edges`/`in_edges` sorted by far end, then type, then from; `neighbors`
  sorted unique; `counts` (the store adds the log's bytes for `stats`). Walks and the per-file
  chain (S-21.7, S-21.8) are in `graph_query`, the backfill derivation (S-21.9) in
  `graph_backfill`.
"""

from __future__ import annotations

import functools
import math
import posixpath
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from slmactor.logic.text.strings import clip, hash_id
from slmactor.logic.text.timefmt import parse_rfc3339, to_rfc3339

MAX_NODE_BYTES = 512
NOTE_CAP = 240
#: 9999-12-31T23:59:59Z: later (or non-finite) times are treated as unset.
MAX_EPOCH = 253_402_300_799
NODE_KINDS = (
    "file", "symbol", "episode", "run", "task", "attempt", "rule", "fact", "failure", "commit",
    "artifact",
)
OTHER_KIND = "other"
#: The edge vocabulary, in the seed's order (S-21.3); `add` accepts any non-empty type.
VOCABULARY = (
    "derived_from", "resolved_by", "touched", "produced", "contradicts", "supersedes",
    "parent_of", "evaluated_by", "depends_on", "mentions",
)
DIRECTIONS = ("out", "in", "either")
DEFAULT_DEPTH, MAX_DEPTH = 3, 6
DEFAULT_MAX_NODES, MAX_NODES_CEILING = 200, 2000
DEPTH_CLAMP_WARNING = f"--depth clamped to the package ceiling of {MAX_DEPTH}"
MAX_NODES_CLAMP_WARNING = f"max nodes clamped to the package ceiling of {MAX_NODES_CEILING}"


# ------------------------------------------------------------------------------------ node ids
def canonical_file(path: str) -> str:
    """A repo-relative path as a node value: `/` separators, cleaned, no `./`; "" for `.`."""
    value = path.strip().replace("\\", "/")
    if not value:
        return ""
    cleaned = posixpath.normpath(value)
    if cleaned.startswith("//"):  # POSIX keeps a leading `//`; Go's path.Clean does not
        cleaned = "/" + cleaned.lstrip("/")
    while cleaned.startswith("./"):
        cleaned = cleaned[2:]
    return "" if cleaned in (".", "") else cleaned


def node_id(kind: str, value: str) -> str:
    """`<kind>:<value>` with the value canonicalised for files; "" when no valid node."""
    kind = kind.strip().lower()
    value = canonical_file(value) if kind == "file" else value.strip()
    if not kind or not value or ":" in kind:
        return ""
    nid = f"{kind}:{value}"
    return nid if len(nid.encode("utf-8", "surrogatepass")) <= MAX_NODE_BYTES else ""


def file_node(path: str) -> str:
    return node_id("file", path)


def symbol_node(path: str, name: str) -> str:
    """`symbol:<file>#<name>`."""
    canonical, name = canonical_file(path), name.strip()
    return node_id("symbol", f"{canonical}#{name}") if canonical and name else ""


def task_node(run_id: str, task: str) -> str:
    return node_id("task", f"{run_id.strip()}/{task.strip()}") if run_id.strip() and task.strip() else ""


def attempt_node(run_id: str, task: str, n: int) -> str:
    base = task_node(run_id, task)
    return node_id("attempt", f"{node_value(base)}/{n}") if base else ""


def node_kind(nid: str) -> str:
    """The text before the first `:` when that index is > 0, else `other` (S-21.1)."""
    index = nid.find(":")
    return nid[:index] if index > 0 else OTHER_KIND


def node_value(nid: str) -> str:
    """The bare id after the kind (the whole text for a kindless id)."""
    index = nid.find(":")
    return nid[index + 1 :] if index > 0 else nid


def canonical_node(nid: str) -> str:
    """A node id as stored: trimmed, kind lowercased, file values canonical; "" when invalid."""
    nid = nid.strip()
    kind = node_kind(nid)
    if kind == OTHER_KIND:
        return nid if nid and len(nid.encode("utf-8", "surrogatepass")) <= MAX_NODE_BYTES else ""
    return node_id(kind, node_value(nid))


# ------------------------------------------------------------------------------------ edges
def edge_id(source: str, target: str, edge_type: str) -> str:
    """`e_` + 12 hex of SHA-256 over from, to and type joined by NUL (S-21.2)."""
    return hash_id("e_", source, target, edge_type)


@functools.lru_cache(maxsize=4096)
def _parse_time(text: str) -> float:
    # Edges of one episode, fact or rule share their time: loading an index parses each once.
    return parse_rfc3339(text) or 0.0


def _epoch(value: Any) -> float:
    if isinstance(value, str):
        value = _parse_time(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0.0
    return float(int(value)) if 0 < value <= MAX_EPOCH else 0.0


def _confidence(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


@dataclass(frozen=True, slots=True)
class Edge:
    """One typed edge; build with `make_edge` (normalised) and check with `validate_edge`."""

    source: str
    target: str
    type: str
    at: float = 0.0
    run_id: str = ""
    confidence: float = 0.0
    note: str = ""
    #: `edge_id(from, to, type)`, computed once (every lookup, merge and index entry needs it).
    id: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", edge_id(self.source, self.target, self.type))

    def to_dict(self) -> dict[str, Any]:
        """The JSON line: empty run_id / note and an unset confidence are left out."""
        out: dict[str, Any] = {"from": self.source, "to": self.target, "type": self.type,
                               "at": to_rfc3339(self.at) if self.at > 0 else ""}
        if self.run_id:
            out["run_id"] = self.run_id
        if self.confidence > 0:
            out["confidence"] = round(self.confidence, 6)
        if self.note:
            out["note"] = self.note
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Edge | None:
        """A normalised edge from JSON, or None when it is not a valid edge."""
        def text(key: str) -> str:
            value = data.get(key)
            return value if isinstance(value, str) else ""

        edge = make_edge(text("from"), text("to"), text("type"), _epoch(data.get("at")),
                         run_id=text("run_id"), confidence=_confidence(data.get("confidence")),
                         note=text("note"))
        return edge if not validate_edge(edge) else None

    @classmethod
    def trusted(cls, data: Mapping[str, Any]) -> Edge | None:
        """An edge from this store's own index document: checked, not re-normalised (the index
        is spot-checked against the log, which is). None when it is not a valid stored edge."""
        source, target, kind = data.get("from"), data.get("to"), data.get("type")
        if not (isinstance(source, str) and isinstance(target, str) and isinstance(kind, str)):
            return None
        run_id, note = data.get("run_id", ""), data.get("note", "")
        edge = cls(source, target, kind, _epoch(data.get("at")),
                   run_id if isinstance(run_id, str) else "",
                   _confidence(data.get("confidence")), note if isinstance(note, str) else "")
        if validate_edge(edge) or kind != kind.strip().lower():
            return None
        return edge


def make_edge(source: str, target: str, edge_type: str, at: float = 0.0, *, run_id: str = "",
              confidence: float = 0.0, note: str = "") -> Edge:
    """Normalise: canonical ends, type trimmed and lowercased, whole seconds, clipped note."""
    return Edge(canonical_node(source), canonical_node(target), edge_type.strip().lower(),
                _epoch(at), clip(run_id, 160), _confidence(confidence), clip(note, NOTE_CAP))


def validate_edge(edge: Edge) -> str:
    """Why `edge` cannot be stored, or "" when it can (S-21.2)."""
    if not edge.source:
        return "edge has no (valid) from node"
    if not edge.target:
        return "edge has no (valid) to node"
    if not edge.type:
        return "edge has no type"
    if edge.source == edge.target:
        return f"self-edge on {edge.source}"
    return ""


def refresh(old: Edge, new: Edge) -> Edge:
    """`old` re-observed as `new` (same id): see the module docstring."""
    newer = new.at >= old.at
    at = max(old.at, new.at)
    run_id = new.run_id if newer and new.run_id else old.run_id
    confidence = new.confidence if new.confidence > 0 else old.confidence
    note = new.note if newer and new.note else old.note
    if (at, run_id, confidence, note) == (old.at, old.run_id, old.confidence, old.note):
        return old  # the common case of a repeated backfill: no new object, no new hash
    return Edge(old.source, old.target, old.type, at, run_id, confidence, note)


# ------------------------------------------------------------------------------------ index
@dataclass(slots=True)
class Entry:
    edge: Edge
    offset: int


@dataclass(frozen=True, slots=True)
class Hop:
    """One edge followed from `near` to `far`; `forward` when it was followed along its arrow."""

    edge: Edge
    near: str
    far: str
    forward: bool

    def render(self) -> str:
        arrow = f" -{self.edge.type}-> " if self.forward else f" <-{self.edge.type}- "
        return arrow + self.far


def _wanted(types: Iterable[str]) -> frozenset[str]:
    return frozenset(t.strip().lower() for t in types if t.strip())


class GraphIndex:
    """Edges in log order with their offsets, plus out/in adjacency (positions into the list)."""

    def __init__(self) -> None:
        self._entries: list[Entry] = []
        self._by_id: dict[str, int] = {}
        self._out: dict[str, list[int]] = {}
        self._in: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, eid: str) -> Entry | None:
        pos = self._by_id.get(eid)
        return None if pos is None else self._entries[pos]

    def add(self, edge: Edge, offset: int) -> str:
        """Store a valid edge at `offset`; `added`, or for a known id `refreshed`/`unchanged`."""
        pos = self._by_id.get(edge.id)
        if pos is not None:
            entry = self._entries[pos]
            merged = refresh(entry.edge, edge)
            if merged == entry.edge:
                return "unchanged"
            entry.edge = merged
            return "refreshed"
        pos = len(self._entries)
        self._entries.append(Entry(edge, offset))
        self._by_id[edge.id] = pos
        self._out.setdefault(edge.source, []).append(pos)
        self._in.setdefault(edge.target, []).append(pos)
        return "added"

    def entries(self) -> list[Entry]:
        return list(self._entries)

    def edges(self) -> list[Edge]:
        return [e.edge for e in self._entries]

    def newest(self) -> Entry | None:
        """The entry appended last (largest offset): the stale-index spot check."""
        return max(self._entries, key=lambda e: e.offset, default=None)

    # -------------------------------------------------------------------------------- queries
    def out_edges(self, node: str, types: Iterable[str] = ()) -> list[Edge]:
        wanted = _wanted(types)
        found = [self._entries[p].edge for p in self._out.get(node, ())]
        found = [e for e in found if not wanted or e.type in wanted]
        return sorted(found, key=lambda e: (e.target, e.type, e.source))

    def in_edges(self, node: str, types: Iterable[str] = ()) -> list[Edge]:
        wanted = _wanted(types)
        found = [self._entries[p].edge for p in self._in.get(node, ())]
        found = [e for e in found if not wanted or e.type in wanted]
        return sorted(found, key=lambda e: (e.source, e.type, e.source))

    def hops(self, node: str, direction: str, types: Iterable[str] = ()) -> list[Hop]:
        """Edges leaving `node` in `direction` (out / in / either), sorted by far end, type."""
        wanted = tuple(types)
        hops: list[Hop] = []
        if direction in ("out", "either"):
            hops.extend(Hop(e, node, e.target, True) for e in self.out_edges(node, wanted))
        if direction in ("in", "either"):
            hops.extend(Hop(e, node, e.source, False) for e in self.in_edges(node, wanted))
        return sorted(hops, key=lambda h: (h.far, h.edge.type, not h.forward))

    def neighbors(self, node: str, direction: str = "either", types: Iterable[str] = ()) -> list[str]:
        return sorted({h.far for h in self.hops(node, direction, types)})

    def has_node(self, node: str) -> bool:
        return node in self._out or node in self._in

    def nodes(self) -> set[str]:
        return set(self._out) | set(self._in)

    def counts(self) -> dict[str, Any]:
        """`{edges, nodes, by_type}` (the store adds `bytes`)."""
        by_type = Counter(e.edge.type for e in self._entries)
        return {"edges": len(self._entries), "nodes": len(self.nodes()),
                "by_type": dict(sorted(by_type.items()))}

    # -------------------------------------------------------------------------------- document
    def to_document(self, updated: float, log_size: int) -> dict[str, Any]:
        """The `edges.index.json` body (S-21.4) plus `log_size` (which log it describes)."""
        return {
            "version": 1,
            "updated": to_rfc3339(updated),
            "log_size": log_size,
            "entries": [{**e.edge.to_dict(), "offset": e.offset} for e in self._entries],
            "out": {node: list(pos) for node, pos in sorted(self._out.items())},
            "in": {node: list(pos) for node, pos in sorted(self._in.items())},
        }

    @classmethod
    def from_document(cls, data: Any) -> tuple[GraphIndex, int | None] | None:
        """An index from its document (adjacency recomputed), or None when it is not usable."""
        if not isinstance(data, dict) or data.get("version") != 1:
            return None
        raw_entries = data.get("entries")
        if not isinstance(raw_entries, list):
            return None
        index = cls()
        for raw in raw_entries:
            if not isinstance(raw, dict):
                return None
            edge = Edge.trusted(raw)
            offset = raw.get("offset")
            if edge is None or isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
                return None
            if index.add(edge, offset) != "added":
                return None
        size = data.get("log_size")
        return index, size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None


#: Bare ids a user may type without their kind (`graph neighbors ep_…`).
_BARE_PREFIXES = (("ep_", "episode"), ("rule_", "rule"), ("fp_", "failure"), ("f_", "fact"))


def parse_node_arg(text: str) -> str:
    """A node id from what a user typed: a full `<kind>:<value>` id of a known kind, a bare
    episode / rule / fingerprint id, or else a repo-relative file path ("" when none)."""
    text = text.strip()
    if node_kind(text).lower() in NODE_KINDS:
        return canonical_node(text)
    for prefix, kind in _BARE_PREFIXES:
        if text.startswith(prefix):
            return node_id(kind, text)
    return file_node(text)
