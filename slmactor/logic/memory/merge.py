"""Three-way merge of shared learning: records united by identity, evidence never double-counted.

What one branch (or one machine) learned and what another learned meet here: the common
ancestor `o`, ours `a` and theirs `b` are lists of JSON records of one kind (rules, facts,
regression checks, polar lessons), and a `Shape` says how that kind's fields combine:

* `counters` (Beta evidence: successes/failures, support/contradict, runs/fails, used) merge as
  `o + (a - o) + (b - o)`: the ancestor once plus what each side added since. A record new on
  both sides has no ancestor, so both sides' counts are new and add up — unless it is the same
  record on both (one commit merged into both branches, one bundle imported twice): then it is
  one piece of learning, kept once;
* `scores` (a bounded float such as a lesson's confidence) merge their deltas the same way,
  clamped; new on both sides, the higher one;
* `flags` (`retired`, `pinned`): a change made on either side is kept (booleans cannot change two
  ways); new on both sides, set if either set it — a retired rule is not revived by a merge;
* `sets` (evidence trails, sources, tags): what the ancestor had and neither side removed, in its
  order, then what either side added, sorted; capped to the last `n`;
* `newest` / `oldest` stamps take the later / earlier value;
* every other field is a three-way scalar: the side that changed it wins; when both changed it
  differently, the side whose `stamp` is later (ties: the larger JSON text), so the result never
  depends on which side is "ours".

Records deleted on one side stay deleted unless the other side changed them (learning beats a
prune). The result is sorted by `order` then identity, so the merge is symmetric in `a` and `b`
and merging a store with itself changes nothing. `merge_lines` does the same for a Markdown file
of bullets (MEMORY.md). Pure: no I/O; parsing, normalising and writing are the store's.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Record = dict[str, Any]
_MISSING: Any = object()


@dataclass(frozen=True, slots=True)
class Shape:
    """How records of one kind are identified and how each of their fields merges."""

    key: Callable[[Mapping[str, Any]], str]
    counters: tuple[str, ...] = ()
    scores: tuple[tuple[str, float, float], ...] = ()
    flags: tuple[str, ...] = ()
    sets: tuple[tuple[str, int], ...] = ()
    newest: tuple[str, ...] = ()
    oldest: tuple[str, ...] = ()
    stamp: str = ""
    order: tuple[str, ...] = ()


def field_key(name: str) -> Callable[[Mapping[str, Any]], str]:
    """Identity by one field (`id`)."""

    def key(record: Mapping[str, Any]) -> str:
        return str(record.get(name, ""))

    return key


def canonical(value: Any) -> str:
    """One text per value (sorted keys): what "the same record" means here."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _sortable(value: Any) -> tuple[int, float, str]:
    """Numbers before texts, so a stamp that is an epoch and one that is RFC 3339 still compare."""
    number = _number(value)
    return (0, number, "") if number is not None else (1, 0.0, str(value))


def _merge_set(o: Any, a: Any, b: Any, cap: int) -> list[Any]:
    def items(value: Any) -> list[Any]:
        return list(value) if isinstance(value, list) else []

    base, ours, theirs = items(o), items(a), items(b)
    ours_keys = {canonical(v) for v in ours}
    theirs_keys = {canonical(v) for v in theirs}
    base_keys = {canonical(v) for v in base}
    kept: list[Any] = []
    seen: set[str] = set()
    for value in base:
        text = canonical(value)
        if text in ours_keys and text in theirs_keys and text not in seen:
            seen.add(text)
            kept.append(value)
    added = {canonical(v): v for v in (*ours, *theirs) if canonical(v) not in base_keys}
    for text in sorted(added):
        if text not in seen:
            seen.add(text)
            kept.append(added[text])
    return kept[-cap:] if cap > 0 else kept


def _same(x: Any, y: Any) -> bool:
    if x is _MISSING or y is _MISSING:
        return x is y
    # The type check keeps `True` and `1`, `1` and `1.0` apart (as JSON does) for a field;
    # inside a nested value `==` is taken as it is (a JSON list holding both is not a store's).
    return type(x) is type(y) and x == y


def _winner(a: Record, b: Record, stamp: str) -> Record:
    """The side whose edit stands when both changed a field differently (symmetric)."""
    rank_a = (_sortable(a.get(stamp, "")) if stamp else (0, 0.0, ""), canonical(a))
    rank_b = (_sortable(b.get(stamp, "")) if stamp else (0, 0.0, ""), canonical(b))
    return a if rank_a >= rank_b else b


def merge_record(o: Mapping[str, Any] | None, a: Record, b: Record, shape: Shape) -> Record:
    """One record present on both sides, with its ancestor (None when it is new on both)."""
    base: Mapping[str, Any] = o if o is not None else {}
    special = {*shape.counters, *(s[0] for s in shape.scores), *shape.flags,
               *(s[0] for s in shape.sets), *shape.newest, *shape.oldest}
    out: Record = {}
    winner: Record | None = None
    for name in sorted({*a, *b} - special):
        va, vb, vo = a.get(name, _MISSING), b.get(name, _MISSING), base.get(name, _MISSING)
        if _same(va, vb) or _same(vb, vo):
            value = va
        elif _same(va, vo):
            value = vb
        elif va is _MISSING or vb is _MISSING:
            value = va if vb is _MISSING else vb  # one side dropped it, the other changed it
        else:
            winner = winner or _winner(a, b, shape.stamp)
            value = winner.get(name, _MISSING)
        if value is not _MISSING:
            out[name] = value
    for name in shape.counters:
        if name in a or name in b:
            ancestor = _count(base.get(name))
            out[name] = max(0, _count(a.get(name)) + _count(b.get(name)) - ancestor)
    for name, low, high in shape.scores:
        sa, sb = _number(a.get(name)), _number(b.get(name))
        if sa is None and sb is None:
            continue
        so = _number(base.get(name)) if o is not None else None
        if so is None or sa is None or sb is None:
            merged = max(v for v in (sa, sb) if v is not None)
        else:
            merged = sa + sb - so
        out[name] = round(min(high, max(low, merged)), 6)
    for name in shape.flags:
        if name not in a and name not in b:
            continue
        fa, fb = a.get(name) is True, b.get(name) is True
        if o is None:
            out[name] = fa or fb
        else:
            fo = base.get(name) is True
            out[name] = fa if fa != fo else fb
    for name, cap in shape.sets:
        if name in a or name in b:
            out[name] = _merge_set(base.get(name), a.get(name), b.get(name), cap)
    for names, pick in ((shape.newest, max), (shape.oldest, min)):
        for name in names:
            present = [v for v in (a.get(name), b.get(name)) if v not in (None, "", 0)]
            if present:
                out[name] = pick(present, key=_sortable)
            elif name in a or name in b:
                out[name] = a.get(name, b.get(name))
    return out


def _index(records: Sequence[Mapping[str, Any]], shape: Shape) -> dict[str, Record]:
    """Records by identity; a repeated identity keeps its first record (as the stores load)."""
    out: dict[str, Record] = {}
    for record in records:
        key = shape.key(record)
        if key and key not in out:
            out[key] = record  # type: ignore[assignment]  # read only: never changed in place
    return out


def sort_records(records: Sequence[Record], shape: Shape) -> list[Record]:
    """The deterministic order of a merged store: `order` fields, then identity."""
    return sorted(records, key=lambda r: (*(_sortable(r.get(f, "")) for f in shape.order),
                                          shape.key(r)))


def merge_records(
    o: Sequence[Mapping[str, Any]],
    a: Sequence[Mapping[str, Any]],
    b: Sequence[Mapping[str, Any]],
    shape: Shape,
) -> list[Record]:
    """The three-way merge of two record lists against their ancestor (see the module doc)."""
    base, ours, theirs = _index(o, shape), _index(a, shape), _index(b, shape)
    merged: list[Record] = []
    for key in sorted({*ours, *theirs}):
        ra, rb, ro = ours.get(key), theirs.get(key), base.get(key)
        if ra is not None and rb is not None:
            if _same(ra, rb) and (ro is None or _same(ra, ro)):
                merged.append(ra)  # the common case: untouched on both sides (same object out)
            elif ro is not None and _same(rb, ro):
                merged.append(ra)  # changed on our side only
            elif ro is not None and _same(ra, ro):
                merged.append(rb)  # changed on their side only
            else:
                merged.append(merge_record(ro, ra, rb, shape))
            continue
        only = ra if ra is not None else rb
        assert only is not None
        if ro is not None and _same(only, ro):
            continue  # unchanged here, removed there: the removal stands
        merged.append(only)
    return sort_records(merged, shape)


def merge_scalars(o: Mapping[str, Any], a: Mapping[str, Any], b: Mapping[str, Any],
                  newest: tuple[str, ...] = ()) -> Record:
    """The top of a document (`version`, `updated`, ...): three-way, `newest` fields the later."""
    shape = Shape(key=field_key(""), newest=newest)
    return merge_record(o, dict(a), dict(b), shape)


def merge_lines(o: str, a: str, b: str) -> str:
    """Three-way merge of a Markdown file of bullets, symmetric in `a` and `b`.

    The ancestor's lines that both sides kept stay in their order; then the lines each side
    added, as two blocks in their own order (the block whose text sorts first goes first).
    A line removed on either side is gone.
    """
    if a == b or b == o:
        return a
    if a == o:
        return b
    base, ours, theirs = o.splitlines(), a.splitlines(), b.splitlines()
    left, right = Counter(ours), Counter(theirs)
    kept: list[str] = []
    for line in base:
        if left[line] > 0 and right[line] > 0:
            left[line] -= 1
            right[line] -= 1
            kept.append(line)

    def added(lines: list[str], budget: Counter[str]) -> list[str]:
        block: list[str] = []
        for line in lines:
            if budget[line] > 0:
                block.append(line)
                budget[line] -= 1
        return block

    # What is left in each budget once the ancestor's kept lines are taken out is that side's
    # own addition (its count of a line beyond the ancestor's).
    base_count = Counter(base)
    new_a = added(ours, Counter({k: v - min(v, base_count[k]) for k, v in Counter(ours).items()}))
    new_b = added(theirs, Counter({k: v - min(v, base_count[k])
                                   for k, v in Counter(theirs).items()}))
    blocks = sorted((new_a, new_b), key=lambda block: "\n".join(block))
    lines = [*kept, *blocks[0], *blocks[1]]
    return "\n".join(lines) + ("\n" if lines else "")
