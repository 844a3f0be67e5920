"""Latency memory: how long a role takes on a model family (SPEC S-6.7), sibling of procedures.

Keyed by `(role, model_family)`, lowercased. Lookups **never widen**: another family, or a blank
one, knows nothing about this one (dense and MoE Qwen ids once shared a key — H-S-15). Each key
keeps its last 32 positive samples (sub-millisecond values count as 1 ms) and a count of every
observation; quantiles are nearest-rank, `idx = ceil(q·n) − 1`. Callers act only on ≥ 3 samples.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from slmactor.logic.text.timefmt import age_days, parse_rfc3339, to_rfc3339

KEEP_SAMPLES = 32
MAX_KEYS = 200
MIN_SAMPLES = 3
#: Samples a calibration seed is stored as: just enough for callers to use it.
SEED_SAMPLES = MIN_SAMPLES
PRUNE_MAX_AGE_DAYS = 90.0


@dataclass(frozen=True, slots=True)
class LatencyKey:
    role: str
    model_family: str

    @classmethod
    def of(cls, role: str, model_family: str) -> LatencyKey:
        return cls(role.strip().lower(), model_family.strip().lower())


@dataclass(frozen=True, slots=True)
class LatencyRecord:
    key: LatencyKey
    samples_ms: tuple[int, ...] = ()
    count: int = 0
    first_seen: float = 0.0
    last_seen: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": {"role": self.key.role, "model_family": self.key.model_family},
            "samples_ms": list(self.samples_ms),
            "count": self.count,
            "first_seen": to_rfc3339(self.first_seen) if self.first_seen > 0 else "",
            "last_seen": to_rfc3339(self.last_seen) if self.last_seen > 0 else "",
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> LatencyRecord | None:
        """Load rule: non-positive samples dropped, retention (32) re-applied."""
        key = raw.get("key")
        if not isinstance(key, Mapping):
            return None
        role, family = key.get("role"), key.get("model_family")
        lkey = LatencyKey.of(
            role if isinstance(role, str) else "", family if isinstance(family, str) else ""
        )
        if not lkey.role:
            return None
        raw_samples = raw.get("samples_ms")
        samples = [
            _ms(s)
            for s in (raw_samples if isinstance(raw_samples, list) else [])
            if isinstance(s, int | float) and not isinstance(s, bool) and s > 0
        ][-KEEP_SAMPLES:]
        count = raw.get("count")
        counted = int(count) if isinstance(count, int) and not isinstance(count, bool) else 0
        first, last = raw.get("first_seen"), raw.get("last_seen")
        return cls(
            key=lkey,
            samples_ms=tuple(samples),
            count=max(counted, len(samples)),
            first_seen=parse_rfc3339(first if isinstance(first, str) else "") or 0.0,
            last_seen=parse_rfc3339(last if isinstance(last, str) else "") or 0.0,
        )


def _ms(value: float) -> int:
    """Positive milliseconds, rounded; anything under a millisecond counts as 1."""
    return max(1, round(value))


def nearest_rank(samples: Iterable[int], q: float) -> int:
    """Nearest-rank quantile; `q` clamped to [0, 1]; 0 for no samples."""
    ordered = sorted(samples)
    if not ordered:
        return 0
    q = min(max(q, 0.0), 1.0)
    idx = min(max(math.ceil(q * len(ordered)) - 1, 0), len(ordered) - 1)
    return ordered[idx]


@dataclass(slots=True)
class LatencyBook:
    cap: int = MAX_KEYS
    _records: dict[LatencyKey, LatencyRecord] = field(default_factory=dict)

    @classmethod
    def from_records(cls, records: Iterable[object], cap: int = MAX_KEYS) -> LatencyBook:
        book = cls(cap=cap)
        for raw in records:
            rec = LatencyRecord.from_dict(raw) if isinstance(raw, Mapping) else None
            if rec is not None and rec.key not in book._records:
                book._records[rec.key] = rec
        return book

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Any:
        return iter(self._records.values())

    def clear(self) -> None:
        self._records.clear()

    def to_records(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self._records.values()]

    def observe(self, role: str, model_family: str, ms: float, now: float) -> LatencyRecord | None:
        """Add one duration; non-positive durations and blank roles are ignored."""
        key = LatencyKey.of(role, model_family)
        if not key.role or not ms > 0 or math.isinf(ms):
            return None
        old = self._records.get(key) or LatencyRecord(key, first_seen=now)
        new = replace(
            old,
            samples_ms=(*old.samples_ms, _ms(ms))[-KEEP_SAMPLES:],
            count=old.count + 1,
            last_seen=now,
        )
        self._records[key] = new
        if self.cap > 0 and len(self._records) > 2 * self.cap:
            self.prune(now, max_keys=self.cap, max_age_days=-1)
        return new

    def seed(self, role: str, model_family: str, ms: float, now: float) -> bool:
        """Store a calibration estimate for a key that has no observations (S-12.4).

        It is stored as `SEED_SAMPLES` samples — enough for callers, who need three — and real
        observations push it out of the retained window; a key with any observation is left
        alone. Returns whether the seed was stored.
        """
        if self.quantile(role, model_family, 1.0)[1] > 0 or ms <= 0:
            return False
        return all(self.observe(role, model_family, ms, now) for _ in range(SEED_SAMPLES))

    def quantile(self, role: str, model_family: str, q: float) -> tuple[int, int]:
        """(milliseconds, samples) for exactly this key; (0, 0) when unknown — never widens."""
        rec = self._records.get(LatencyKey.of(role, model_family))
        if rec is None or not rec.key.model_family:
            return (0, 0)
        return (nearest_rank(rec.samples_ms, q), len(rec.samples_ms))

    def p95(self, role: str, model_family: str) -> tuple[int, int]:
        return self.quantile(role, model_family, 0.95)

    def max(self, role: str, model_family: str) -> tuple[int, int]:
        return self.quantile(role, model_family, 1.0)

    def prune(self, now: float, *, max_keys: int = 0, max_age_days: float = 0.0) -> int:
        """Keys unseen for 90 days go, then the most-sampled 200 stay (S-7.8)."""
        cap = MAX_KEYS if max_keys == 0 else max_keys
        max_age = PRUNE_MAX_AGE_DAYS if max_age_days == 0 else max_age_days
        before = len(self._records)
        keep = [
            r
            for r in self._records.values()
            if max_age < 0 or r.last_seen <= 0 or age_days(r.last_seen, now) <= max_age
        ]
        if cap >= 0 and len(keep) > cap:
            keep = sorted(
                keep, key=lambda r: (-r.count, -r.last_seen, r.key.role, r.key.model_family)
            )
            keep = keep[:cap]
        self._records = {r.key: r for r in keep}
        return before - len(self._records)


def latency_markdown(book: LatencyBook) -> str:
    """`LATENCY.md`: per key P50 / P95 / max over the retained samples."""
    out = [
        "# Latency memory",
        "",
        "_Per role and model family; the last 32 samples are kept. Safe to delete._",
        "",
        "| Role | Model family | Samples | Observed | P50 ms | P95 ms | Max ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for rec in sorted(book, key=lambda r: (r.key.role, r.key.model_family)):
        s = rec.samples_ms
        out.append(
            f"| {rec.key.role} | {rec.key.model_family or '*'} | {len(s)} | {rec.count} "
            f"| {nearest_rank(s, 0.5)} | {nearest_rank(s, 0.95)} | {nearest_rank(s, 1.0)} |"
        )
    return "\n".join(out) + "\n"
