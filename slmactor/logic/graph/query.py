"""Traversals over the knowledge graph: bounded walks (S-21.7) and what is known about a file
(S-21.8). Pure functions over a `GraphIndex`.

`walk` is a BFS with a visited set; the origin is excluded from the results; depth defaults to 3
(≤ 0 → 3) with a hard ceiling of 6 (a larger depth is clamped with the warning `--depth clamped to
the package ceiling of 6`); MaxNodes defaults to 200 with a ceiling of 2000 and the origin counts
toward it (so MaxNodes 1 → no results, 2 → one); the default direction is outgoing. Results are
ordered by depth, then id; each carries its path in the string form `a -type-> b` (an edge walked
against its arrow renders `a <-type- b`).

`known_about_file` follows `file <-touched- episode -produced-> failure -resolved_by-> rule`,
checking the node kind at every hop (decoys of other kinds are ignored), and returns bare ids
sorted unique plus `fixed_by` (failure → rules). `failure_classes_for_files` counts distinct
(episode, failure) pairs per class, the class being the produced edge's note.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from slmactor.logic.graph.core import (
    DEFAULT_DEPTH,
    DEFAULT_MAX_NODES,
    DEPTH_CLAMP_WARNING,
    DIRECTIONS,
    MAX_DEPTH,
    MAX_NODES_CEILING,
    MAX_NODES_CLAMP_WARNING,
    Edge,
    GraphIndex,
    Hop,
    canonical_file,
    file_node,
    node_kind,
    node_value,
)


@dataclass(frozen=True, slots=True)
class WalkOptions:
    depth: int = 0
    max_nodes: int = 0
    direction: str = ""
    types: tuple[str, ...] = ()


def resolve_walk(options: WalkOptions) -> tuple[WalkOptions, list[str]]:
    """Defaults and ceilings of S-21.7, with the warnings a user is shown; ValueError on a bad
    direction."""
    warnings: list[str] = []
    depth = DEFAULT_DEPTH if options.depth <= 0 else options.depth
    if depth > MAX_DEPTH:
        depth = MAX_DEPTH
        warnings.append(DEPTH_CLAMP_WARNING)
    max_nodes = DEFAULT_MAX_NODES if options.max_nodes <= 0 else options.max_nodes
    if max_nodes > MAX_NODES_CEILING:
        max_nodes = MAX_NODES_CEILING
        warnings.append(MAX_NODES_CLAMP_WARNING)
    direction = options.direction.strip().lower() or "out"
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
    types = tuple(sorted({t.strip().lower() for t in options.types if t.strip()}))
    return WalkOptions(depth, max_nodes, direction, types), warnings


@dataclass(frozen=True, slots=True)
class Step:
    """A node reached by a walk, at `depth` hops, through `hops` from the origin."""

    node: str
    depth: int
    hops: tuple[Hop, ...]

    def path(self, start: str) -> str:
        """`a -type-> b <-type2- c` (S-21.7 string form)."""
        return start + "".join(h.render() for h in self.hops)


@dataclass(frozen=True, slots=True)
class WalkResult:
    start: str
    steps: tuple[Step, ...]
    options: WalkOptions
    truncated: bool = False
    warnings: tuple[str, ...] = ()

    def reachable(self) -> list[str]:
        return sorted(s.node for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start, "depth": self.options.depth, "max_nodes": self.options.max_nodes,
            "direction": self.options.direction, "types": list(self.options.types),
            "truncated": self.truncated, "warnings": list(self.warnings),
            "nodes": [{"node": s.node, "kind": node_kind(s.node), "depth": s.depth,
                       "path": s.path(self.start)} for s in self.steps],
        }


def walk(index: GraphIndex, start: str, options: WalkOptions | None = None) -> WalkResult:
    """Bounded BFS from `start` (S-21.7); see `resolve_walk` for the limits."""
    opts, warnings = resolve_walk(options or WalkOptions())
    visited = {start}
    paths: dict[str, tuple[Hop, ...]] = {start: ()}
    steps: list[Step] = []
    frontier = [start]
    truncated = False
    for depth in range(1, opts.depth + 1):
        reached: list[str] = []
        for node in frontier:
            for hop in index.hops(node, opts.direction, opts.types):
                if hop.far in visited:
                    continue
                if len(visited) >= opts.max_nodes:
                    truncated = True
                    break
                visited.add(hop.far)
                paths[hop.far] = (*paths[node], hop)
                reached.append(hop.far)
            if truncated:
                break
        reached.sort()
        steps.extend(Step(n, depth, paths[n]) for n in reached)
        frontier = reached
        if truncated or not frontier:
            break
    return WalkResult(start, tuple(steps), opts, truncated, tuple(warnings))



@dataclass(frozen=True, slots=True)
class Known:
    """What the graph knows about one file: bare ids, and which rules fixed which failure."""

    file: str
    episodes: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    fixed_by: dict[str, list[str]] = field(default_factory=dict)
    classes: dict[str, int] = field(default_factory=dict)
    failure_class: dict[str, str] = field(default_factory=dict)
    fixes: dict[str, dict[str, str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "node": file_node(self.file), "episodes": list(self.episodes),
                "failures": list(self.failures), "rules": list(self.rules),
                "fixed_by": self.fixed_by, "classes": self.classes,
                "failure_class": self.failure_class, "fixes": self.fixes}


def _touching_episodes(index: GraphIndex, file: str) -> list[str]:
    node = file_node(file)
    if not node:
        return []
    return [e.source for e in index.in_edges(node, ("touched",)) if node_kind(e.source) == "episode"]


def _produced(index: GraphIndex, episode: str) -> list[Edge]:
    return [e for e in index.out_edges(episode, ("produced",)) if node_kind(e.target) == "failure"]


def known_about_file(index: GraphIndex, file: str) -> Known:
    """`file <-touched- episode -produced-> failure -resolved_by-> rule` (S-21.8)."""
    episodes = _touching_episodes(index, file)
    failures: set[str] = set()
    failure_class: dict[str, str] = {}
    fixes: dict[str, dict[str, str]] = {}
    for episode in episodes:
        for produced in _produced(index, episode):
            failures.add(produced.target)
            if produced.note:
                failure_class.setdefault(node_value(produced.target), produced.note)
    fixed_by: dict[str, list[str]] = {}
    rules: set[str] = set()
    for failure in sorted(failures):
        for edge in index.out_edges(failure, ("resolved_by",)):
            if node_kind(edge.target) != "rule":
                continue
            rule = node_value(edge.target)
            rules.add(rule)
            fixed_by.setdefault(node_value(failure), []).append(rule)
            fixes.setdefault(node_value(failure), {})[rule] = edge.note
    return Known(
        file=canonical_file(file),
        episodes=tuple(sorted({node_value(e) for e in episodes})),
        failures=tuple(sorted(node_value(f) for f in failures)),
        rules=tuple(sorted(rules)),
        fixed_by={f: sorted(set(r)) for f, r in sorted(fixed_by.items())},
        classes=failure_classes_for_files(index, [file]),
        failure_class=dict(sorted(failure_class.items())),
        fixes=dict(sorted(fixes.items())),
    )


def failure_classes_for_files(index: GraphIndex, files: Iterable[str]) -> dict[str, int]:
    """Distinct (episode, failure) pairs per failure class over `files`; the class is the
    produced edge's note ("unknown" when blank). Sorted by count desc, then class."""
    pairs: dict[tuple[str, str], str] = {}
    for file in files:
        for episode in _touching_episodes(index, file):
            for produced in _produced(index, episode):
                pairs.setdefault((episode, produced.target), produced.note or "unknown")
    counts = Counter(pairs.values())
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
