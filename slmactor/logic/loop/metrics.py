"""Per-run metrics: the record, its normalisation, pooled rates and the measures compared.

Owns SPEC S-16 (seed 000 "Measurement"). One `Run` per finished harness run is appended to
`.slmcode/metrics/runs.jsonl` by the metrics store; everything here is pure arithmetic over them.

Rates are **pooled** (sum of numerators over sum of denominators), never the mean of per-run
rates: averaging rates over runs of different sizes silently overweights the small ones.

A rate whose denominator is zero is "no data" (`None` here, `null` in JSON, `–` / `no data` in
text) — never a fabricated zero and never the seed's `-1` leaking out as "−100 %" (H-S-10).
Two measures the seed reports as plain zeros are also "no data" when nothing was recorded at all:
tokens per task (no run reported a token count) and wall seconds per task (no run reported a wall
time) — an offline replay has neither, and "0 tokens per task" would claim a cost that was never
measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from slmactor.logic.text.strings import clip
from slmactor.logic.text.timefmt import parse_rfc3339, to_rfc3339

MAX_RUNS = 2000
MAX_LINE_BYTES = 64 * 1024
MAX_GATES = 12
MAX_GATE_NAME = 80
MAX_TEXT = 200
MINUS = "\u2212"

_INT_FIELDS = (
    "tasks",
    "tasks_passed",
    "edits_attempted",
    "edits_applied",
    "edits_first_attempt",
    "tool_calls",
    "tool_errors",
    "redundant_calls",
    "llm_calls",
    "tokens_in",
    "tokens_out",
    "wall_ms",
    "failures",
    "repair_hits",
    "resolved_from_memory",
    "resolved_from_llm",
    "unresolved",
    "failures_avoided",
)
_TEXT_FIELDS = ("run_id", "model", "provider", "language", "label", "edit_format")


@dataclass(frozen=True, slots=True)
class Gate:
    """One quality gate of a run (tests, lint, review …) and whether it passed."""

    name: str
    passed: bool

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed}


@dataclass(frozen=True, slots=True)
class Run:
    """One metrics record (S-16.1). `at` is epoch seconds; on disk it is an RFC 3339 string."""

    run_id: str = ""
    at: float = 0.0
    model: str = ""
    provider: str = ""
    language: str = ""
    label: str = ""
    tasks: int = 0
    tasks_passed: int = 0
    edit_format: str = ""
    edits_attempted: int = 0
    edits_applied: int = 0
    edits_first_attempt: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    redundant_calls: int = 0
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    wall_ms: int = 0
    gates: tuple[Gate, ...] = ()
    failures: int = 0
    repair_hits: int = 0
    resolved_from_memory: int = 0
    resolved_from_llm: int = 0
    unresolved: int = 0
    #: Failures a pre-flight hook repaired before the call ran.
    failures_avoided: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"run_id": self.run_id, "at": to_rfc3339(self.at)}
        for name in _TEXT_FIELDS[1:]:
            out[name] = getattr(self, name)
        for name in _INT_FIELDS:
            out[name] = getattr(self, name)
        out["gates"] = [g.to_dict() for g in self.gates]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Run:
        """Build a run from JSON; unknown keys are ignored, wrong types fall back to zero values."""
        values: dict[str, Any] = {}
        for name in _TEXT_FIELDS:
            raw = data.get(name, "")
            values[name] = raw if isinstance(raw, str) else ""
        for name in _INT_FIELDS:
            values[name] = _as_int(data.get(name, 0))
        values["at"] = _as_epoch(data.get("at"))
        gates: list[Gate] = []
        raw_gates = data.get("gates")
        if isinstance(raw_gates, list):
            gates.extend(
                Gate(g["name"], bool(g.get("passed")))
                for g in raw_gates
                if isinstance(g, dict) and isinstance(g.get("name"), str)
            )
        values["gates"] = tuple(gates)
        return cls(**values)


def _as_int(value: object) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and abs(value) < 2**62:
        return int(value)
    return 0


def _as_epoch(value: object) -> float:
    if isinstance(value, str):
        return parse_rfc3339(value) or 0.0
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return 0.0


def normalize(run: Run) -> Run:
    """S-16.2: whole UTC seconds, lowercase language, no negatives, counts kept consistent.

    tasks ≥ tasks_passed and attempted ≥ applied (by raising the total), first_attempt ≤ applied
    (clamped down); gates capped at 12 with names ≤ 80 bytes; text fields clipped.
    """
    ints = {name: max(0, getattr(run, name)) for name in _INT_FIELDS}
    ints["tasks"] = max(ints["tasks"], ints["tasks_passed"])
    ints["edits_attempted"] = max(ints["edits_attempted"], ints["edits_applied"])
    ints["edits_first_attempt"] = min(ints["edits_first_attempt"], ints["edits_applied"])
    gates = tuple(
        Gate(clip(g.name, MAX_GATE_NAME), g.passed) for g in run.gates if g.name.strip()
    )[:MAX_GATES]
    return replace(
        run,
        run_id=clip(run.run_id, MAX_TEXT),
        at=float(int(max(run.at, 0.0))),
        model=clip(run.model, MAX_TEXT),
        provider=clip(run.provider, MAX_TEXT),
        language=clip(run.language, MAX_TEXT).lower(),
        label=clip(run.label, MAX_TEXT),
        edit_format=clip(run.edit_format, MAX_TEXT),
        gates=gates,
        **ints,
    )


def _ratio(num: int, den: int) -> float | None:
    return num / den if den > 0 else None


@dataclass(frozen=True, slots=True)
class Summary:
    """Pooled sums over a set of runs (S-16.4 `Aggregate`); every rate is a pooled ratio."""

    runs: int = 0
    totals: dict[str, int] = field(default_factory=dict)
    gates_total: int = 0
    gates_passed: int = 0

    def total(self, name: str) -> int:
        return self.totals.get(name, 0)

    def task_pass_rate(self) -> float | None:
        return _ratio(self.total("tasks_passed"), self.total("tasks"))

    def edit_apply_rate(self) -> float | None:
        return _ratio(self.total("edits_applied"), self.total("edits_attempted"))

    def first_attempt_rate(self) -> float | None:
        return _ratio(self.total("edits_first_attempt"), self.total("edits_attempted"))

    def repair_rate(self) -> float | None:
        recovered = self.total("edits_applied") - self.total("edits_first_attempt")
        return _ratio(recovered, self.total("edits_attempted"))

    def tool_error_rate(self) -> float | None:
        return _ratio(self.total("tool_errors"), self.total("tool_calls"))

    def redundant_rate(self) -> float | None:
        return _ratio(self.total("redundant_calls"), self.total("tool_calls"))

    def repair_hit_rate(self) -> float | None:
        return _ratio(self.total("repair_hits"), self.total("failures"))

    def memory_resolution_rate(self) -> float | None:
        memory = self.total("resolved_from_memory")
        return _ratio(memory, memory + self.total("resolved_from_llm"))

    def gate_pass_rate(self) -> float | None:
        return _ratio(self.gates_passed, self.gates_total)

    def unresolved_per_run(self) -> float | None:
        return _ratio(self.total("unresolved"), self.runs)

    def llm_calls_per_task(self) -> float | None:
        return _ratio(self.total("llm_calls"), self.total("tasks"))

    def tokens_in_per_task(self) -> float | None:
        if self.total("tokens_in") == 0:
            return None
        return _ratio(self.total("tokens_in"), self.total("tasks"))

    def tokens_out_per_task(self) -> float | None:
        if self.total("tokens_out") == 0:
            return None
        return _ratio(self.total("tokens_out"), self.total("tasks"))

    def wall_seconds_per_task(self) -> float | None:
        if self.total("wall_ms") == 0:
            return None
        tasks = self.total("tasks")
        return self.total("wall_ms") / 1000.0 / tasks if tasks > 0 else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"runs": self.runs, "totals": dict(self.totals)}
        out["gates"] = {"total": self.gates_total, "passed": self.gates_passed}
        out["rates"] = {m.key: m.value(self) for m in METRICS}
        return out

    def render(self) -> str:
        """`N run(s), M task(s)` then one `- name  value` row per metric (`–` = no data)."""
        lines = [f"{self.runs} run(s), {self.total('tasks')} task(s)"]
        lines.extend(f"- {m.name:<24} {m.format(m.value(self))}" for m in METRICS)
        avoided = self.total("failures_avoided")
        if avoided:
            # Not one of the compared measures of S-16.3: a count, shown when a harness's
            # pre-flight hook repaired calls before they ran (of them, the ones fixed from
            # memory are also in "failures fixed from memory").
            lines.append(f"- {'failures avoided':<24} {avoided} (repaired before the call ran)")
        return "\n".join(lines) + "\n"


def aggregate(runs: Iterable[Run]) -> Summary:
    """Pool the sums of every count over `runs` (rates are computed from the pooled sums)."""
    totals = dict.fromkeys(_INT_FIELDS, 0)
    count = gates_total = gates_passed = 0
    for run in runs:
        count += 1
        for name in _INT_FIELDS:
            totals[name] += getattr(run, name)
        gates_total += len(run.gates)
        gates_passed += sum(1 for g in run.gates if g.passed)
    return Summary(count, totals, gates_total, gates_passed)


@dataclass(frozen=True, slots=True)
class Metric:
    """One compared measure: its key, display name, good direction (+1 up, −1 down) and unit."""

    key: str
    name: str
    direction: int
    unit: str  # "percent" | "seconds" | "number"
    value: Callable[[Summary], float | None]

    def format(self, value: float | None) -> str:
        if value is None:
            return "–"
        if self.unit == "percent":
            return f"{value * 100:.1f}%"
        if self.unit == "seconds":
            return f"{value:.1f}s"
        return f"{value:.2f}"

    def format_change(self, delta: float) -> str:
        if self.unit == "percent":
            text, suffix = f"{abs(delta) * 100:.1f}", " pp"
        elif self.unit == "seconds":
            text, suffix = f"{abs(delta):.1f}", "s"
        else:
            text, suffix = f"{abs(delta):.2f}", ""
        if float(text) == 0.0:
            return text + suffix
        return ("+" if delta > 0 else MINUS) + text + suffix


METRICS: tuple[Metric, ...] = (
    Metric("task_pass_rate", "task pass rate", 1, "percent", Summary.task_pass_rate),
    Metric("edit_apply_rate", "edit-format apply rate", 1, "percent", Summary.edit_apply_rate),
    Metric(
        "first_attempt_rate",
        "first-attempt edit-format rate",
        1,
        "percent",
        Summary.first_attempt_rate,
    ),
    Metric("gate_pass_rate", "gate pass rate", 1, "percent", Summary.gate_pass_rate),
    Metric("repair_hit_rate", "repair-rule hit rate", 1, "percent", Summary.repair_hit_rate),
    Metric(
        "memory_resolution_rate",
        "failures fixed from memory",
        1,
        "percent",
        Summary.memory_resolution_rate,
    ),
    Metric(
        "unresolved_per_run", "unresolved failures per run", -1, "number", Summary.unresolved_per_run
    ),
    Metric("tool_error_rate", "tool error rate", -1, "percent", Summary.tool_error_rate),
    Metric("redundant_rate", "redundant-call rate", -1, "percent", Summary.redundant_rate),
    Metric("llm_calls_per_task", "LLM calls per task", -1, "number", Summary.llm_calls_per_task),
    Metric("tokens_in_per_task", "tokens in per task", -1, "number", Summary.tokens_in_per_task),
    Metric("tokens_out_per_task", "tokens out per task", -1, "number", Summary.tokens_out_per_task),
    Metric(
        "wall_seconds_per_task", "wall seconds per task", -1, "seconds", Summary.wall_seconds_per_task
    ),
)

def sort_runs(runs: Iterable[Run]) -> list[Run]:
    """Oldest first by `at`; equal times keep their recorded order (stable sort)."""
    return sorted(runs, key=lambda r: r.at)


def select(
    runs: Iterable[Run],
    *,
    label: str = "",
    model: str = "",
    language: str = "",
    since: float | None = None,
    until: float | None = None,
    last: int = 0,
) -> list[Run]:
    """S-16.4 `Select`: exact label and model, language case-insensitive, `since ≤ at ≤ until`,
    then the newest `last` (0 = all), oldest first."""
    lang = language.strip().lower()
    picked = [
        r
        for r in sort_runs(runs)
        if (not label or r.label == label)
        and (not model or r.model == model)
        and (not lang or r.language.lower() == lang)
        and (since is None or r.at >= since)
        and (until is None or r.at <= until)
    ]
    return picked[-last:] if last > 0 else picked


def prune(runs: Sequence[Run], max_runs: int = MAX_RUNS) -> list[Run]:
    """Keep the newest `max_runs` (oldest first); a non-positive cap keeps everything."""
    ordered = sort_runs(runs)
    if max_runs <= 0 or len(ordered) <= max_runs:
        return ordered
    return ordered[len(ordered) - max_runs :]


def per_run_series(runs: Sequence[Run], key: str) -> list[float | None]:
    """The metric `key` of each run on its own (None where that run has no data), oldest first."""
    metric = next(m for m in METRICS if m.key == key)
    return [metric.value(aggregate([r])) for r in sort_runs(runs)]
