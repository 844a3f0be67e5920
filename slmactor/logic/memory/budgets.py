"""Phase-budget history: how many rounds a phase took before, and the budget it gets next (C-18).

A finished phase is recorded as `{ts, phase, rounds, n_files, tags}` (one line of
`.slmcode/memory/phase_budgets.jsonl` — the seed's docstring named another place, H-C-9). The next
task's budget for a phase is

    budget = max(default, int(p90(rounds of matching history) · 1.2))

where *matching* means rows of that phase sharing a stack tag with the task (`infer_task_tags`;
phase words such as `build` do not count — every BUILD row would share them), and only with at
least 3 such rows. History can only raise a budget, never shrink it below the
default. There is **no fallback** to rows of other stacks: the seed once fell back to every row
when no tagged row matched and gave a TypeScript build 78 rounds from pygame history (H-C-4); its
docstring kept describing that fallback (H-C-6). A task without stack tags gets the defaults.

`p90` is the seed's nearest-rank reading: `sorted(rounds)[min(n − 1, int(n · 0.9))]`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from slmactor.logic.memory.lesson_tags import normalize_tags, stack_tags

#: C-18 `DEFAULT_BUDGETS` (rounds per phase).
DEFAULT_BUDGETS: dict[str, int] = {
    "analyze": 0, "plan": 4, "deps": 5, "scaffold": 20, "review": 6, "build": 30,
    "integrate": 0, "validate": 10, "package": 5,
}
MIN_SAMPLES = 3
HEADROOM = 1.2
MAX_ROUNDS = 100_000


def phase_name(raw: str) -> str:
    """Phases compare case-insensitively (`BUILD` ≡ `build`)."""
    return "_".join(raw.strip().lower().split())


@dataclass(frozen=True, slots=True)
class PhaseOutcome:
    """One completed phase of a task."""

    ts: float
    phase: str
    rounds: int
    n_files: int = 0
    tags: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"ts": self.ts, "phase": self.phase, "rounds": self.rounds,
                "n_files": self.n_files, "tags": list(self.tags)}

    @classmethod
    def from_record(cls, raw: object) -> PhaseOutcome | None:
        """A row as read back; None unless it has a phase and a non-negative integer `rounds`."""
        if not isinstance(raw, Mapping):
            return None
        phase, rounds = raw.get("phase"), raw.get("rounds")
        if not isinstance(phase, str) or not phase_name(phase):
            return None
        if isinstance(rounds, bool) or not isinstance(rounds, int) or not 0 <= rounds <= MAX_ROUNDS:
            return None
        ts, files, tags = raw.get("ts"), raw.get("n_files"), raw.get("tags")
        return cls(
            ts=float(ts) if isinstance(ts, int | float) and not isinstance(ts, bool)
            and math.isfinite(ts) else 0.0,
            phase=phase_name(phase),
            rounds=rounds,
            n_files=files if isinstance(files, int) and not isinstance(files, bool)
            and files >= 0 else 0,
            tags=tuple(normalize_tags(tags)) if isinstance(tags, list) else (),
        )


@dataclass(frozen=True, slots=True)
class PhaseStats:
    mean: float
    p90: int
    max: int
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"mean": round(self.mean, 6), "p90": self.p90, "max": self.max, "count": self.count}


def recall_phase_stats(
    history: Iterable[PhaseOutcome], phase: str, tags: Iterable[str] | None = None,
    min_samples: int = MIN_SAMPLES,
) -> PhaseStats | None:
    """Stats of the rows of `phase`; with `tags`, only rows sharing one of them.

    There is no fallback: when fewer than `min_samples` rows match, the answer is None (no
    history), never the rows of other stacks.
    """
    wanted = phase_name(phase)
    tag_set = stack_tags(normalize_tags(tags)) if tags is not None else None
    rounds = sorted(
        row.rounds for row in history
        if phase_name(row.phase) == wanted and (tag_set is None or tag_set & set(row.tags))
    )
    n = len(rounds)
    if n < max(min_samples, 1):
        return None
    return PhaseStats(sum(rounds) / n, rounds[min(n - 1, int(n * 0.9))], rounds[-1], n)


def compute_budgets(
    history: Sequence[PhaseOutcome], task_tags: Iterable[str],
    defaults: Mapping[str, int] | None = None,
) -> tuple[dict[str, int], dict[str, PhaseStats]]:
    """(budget per phase, the stats that raised it) for a task with `task_tags`."""
    base = {phase_name(k): max(0, int(v)) for k, v in (defaults or DEFAULT_BUDGETS).items()}
    tags = stack_tags(normalize_tags(task_tags))
    budgets = dict(base)
    used: dict[str, PhaseStats] = {}
    if not tags:
        return budgets, used
    for phase, default in base.items():
        stats = recall_phase_stats(history, phase, tags)
        if stats is None:
            continue
        used[phase] = stats
        budgets[phase] = max(default, int(round(stats.p90 * HEADROOM, 9)))
    return budgets, used


def trim_history(history: Sequence[PhaseOutcome], cap: int) -> list[PhaseOutcome]:
    """The newest `cap` rows, in file order."""
    return list(history[-cap:]) if cap > 0 else []
