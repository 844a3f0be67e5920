"""`compare(baseline, current)`: the Markdown delta of S-16.6/S-16.7 and the verdict rule.

Each side is pooled (`metrics.aggregate`); a metric is known only when both sides have data, and
is then better or worse by its good direction (a change under 1e-9 is no change). The verdict is
"improved" exactly when more metrics got better than got worse; a side without runs gives
"not enough runs" instead of a table of NaNs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slmactor.logic.loop.metrics import METRICS, Metric, Run, Summary, aggregate, sort_runs

NOT_ENOUGH = "_Not enough runs on one side to compare._"

_EPSILON = 1e-9


@dataclass(frozen=True, slots=True)
class Row:
    """One compared metric: both sides (None = no data), the change and its judgement."""

    metric: Metric
    baseline: float | None
    current: float | None

    @property
    def known(self) -> bool:
        return self.baseline is not None and self.current is not None

    @property
    def change(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline

    @property
    def judgement(self) -> str:
        """"better", "worse" or "same" (a change under 1e-9 is no change); "" without data."""
        delta = self.change
        if delta is None:
            return ""
        if abs(delta) < _EPSILON:
            return "same"
        return "better" if delta * self.metric.direction > 0 else "worse"

    def render(self) -> str:
        name = self.metric.name
        delta = self.change
        if delta is None:
            return f"| {name} | – | – | no data |"
        marker = {"better": " ✅", "worse": " ⚠️"}.get(self.judgement, "")
        change = self.metric.format_change(0.0 if abs(delta) < _EPSILON else delta)
        return (
            f"| {name} | {self.metric.format(self.baseline)} | "
            f"{self.metric.format(self.current)} | {change}{marker} |"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric.key,
            "name": self.metric.name,
            "unit": self.metric.unit,
            "direction": "up" if self.metric.direction > 0 else "down",
            "baseline": self.baseline,
            "current": self.current,
            "change": self.change,
            "judgement": self.judgement or "no data",
        }


@dataclass(frozen=True, slots=True)
class Comparison:
    """`compare(baseline, current)`: pooled summaries of both sides and one row per metric."""

    baseline: Summary
    current: Summary
    rows: tuple[Row, ...]

    @property
    def enough_runs(self) -> bool:
        return self.baseline.runs > 0 and self.current.runs > 0

    @property
    def better(self) -> int:
        return sum(1 for r in self.rows if r.judgement == "better")

    @property
    def worse(self) -> int:
        return sum(1 for r in self.rows if r.judgement == "worse")

    def improved(self) -> bool:
        """The verdict rule (S-16.6): improved ⇔ more metrics got better than got worse."""
        return self.enough_runs and self.better > self.worse

    def verdict(self) -> str:
        if not self.enough_runs:
            return "not enough runs"
        return "improved" if self.improved() else "no net improvement"

    def render(self) -> str:
        """The Markdown delta exactly as S-16.7."""
        head = (
            f"## Metrics: {self.baseline.runs} baseline run(s) → "
            f"{self.current.runs} current run(s)\n\n"
        )
        if not self.enough_runs:
            return head + NOT_ENOUGH + "\n"
        lines = ["| Metric | Baseline | Current | Change |", "|---|---:|---:|---:|"]
        lines.extend(row.render() for row in self.rows)
        verdict = (
            "**Verdict: improved.**" if self.improved() else "**Verdict: no net improvement.**"
        )
        return head + "\n".join(lines) + "\n\n" + verdict + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline.to_dict(),
            "current": self.current.to_dict(),
            "rows": [r.to_dict() for r in self.rows],
            "better": self.better,
            "worse": self.worse,
            "improved": self.improved(),
            "verdict": self.verdict(),
        }


def compare(baseline: Sequence[Run], current: Sequence[Run]) -> Comparison:
    """Pool each side and compare every metric of S-16.6 (a metric is known iff both sides are)."""
    base, cur = aggregate(baseline), aggregate(current)
    rows = tuple(Row(m, m.value(base), m.value(cur)) for m in METRICS)
    return Comparison(base, cur, rows)


def compare_last(runs: Sequence[Run], n: int) -> Comparison | None:
    """`metrics compare [n]` (S-20.5): last n vs the n before; n shrinks to len/2; None if < 2 runs."""
    ordered = sort_runs(runs)
    if len(ordered) < 2:
        return None
    n = max(1, n)
    if 2 * n > len(ordered):
        n = len(ordered) // 2
    return compare(ordered[len(ordered) - 2 * n : len(ordered) - n], ordered[len(ordered) - n :])


def default_comparison(runs: Sequence[Run], n: int) -> tuple[Comparison | None, str]:
    """What `metrics report` and `metrics compare` (no N, no labels) compare, and which runs
    that is, in words: the newest labelled pass against the pass labelled before it (what
    `slmactor demo` compares: `pass-1` against `pass-2`), else the last n runs against the n
    before them."""
    ordered = sort_runs(runs)
    current = ordered[-1].label if ordered else ""
    previous = next((r.label for r in reversed(ordered) if r.label and r.label != current), "")
    if current and previous:
        base = [r for r in ordered if r.label == previous]
        now = [r for r in ordered if r.label == current]
        return compare(base, now), (f"runs labelled `{previous}` ({len(base)}) against runs "
                                    f"labelled `{current}` ({len(now)})")
    found = compare_last(ordered, n)
    if found is None:
        return None, f"need at least 2 runs to compare ({len(ordered)} recorded)"
    side = min(max(1, n), len(ordered) // 2)
    return found, f"the last {side} run(s) against the {side} before them"
