"""The run report a harness sends with `run.finish` (SPEC S-14.1), read tolerantly from a dict.

A harness is another program, possibly in another language, so every field is optional and a
wrong type falls back to its zero value instead of failing the whole report. Failures may carry
their signal flat (`tool`, `message`, …) or nested under `signal`, like the seed's Go struct.

Resolution is decided in one place, `FailureEvent.source`, and every consumer (the reflection's
tally, its Markdown, the episode, the metrics record) uses it — so they can no longer disagree
(H-S-22: the seed printed "fixed from memory" for a failure its tally counted as unresolved), and a
plain `retry` is not "fixed from memory" (H-S-20).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from slmactor.logic.text.safecut import cut_chars
from slmactor.logic.text.strings import clip
from slmactor.logic.text.timefmt import parse_rfc3339

#: Failures read from one report. Every consumer (tally, notes, metrics) works on this same list,
#: so the denominators of the repair-hit and resolution rates always agree (H-S-23).
MAX_FAILURES = 500
MAX_DECISIONS = 64
MAX_LIST = 64
MAX_COMMAND_KEYS = 64

Source = Literal["memory", "llm", "retry", "human", "other", "unresolved"]
#: What a failed call was when it was no failure to repair (`FailureEvent.kind`).
NOT_TO_REPAIR = frozenset({"refusal", "policy", "not_run", "benign"})


def _text(data: Mapping[str, Any], key: str, limit: int = 4000) -> str:
    value = data.get(key, "")
    return clip(value, limit) if isinstance(value, str) else ""


def _raw_text(data: Mapping[str, Any], key: str, limit: int = 64 * 1024) -> str:
    """Arguments are compared byte for byte later, so they are never trimmed."""
    value = data.get(key, "")
    if isinstance(value, str):
        return cut_chars(value, limit)
    return ""


def _int(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key, 0)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return max(0, value)
    if isinstance(value, float) and math.isfinite(value) and 0 <= value < 2**62:
        return int(value)
    return 0


def _time(data: Mapping[str, Any], key: str) -> float:
    value = data.get(key)
    if isinstance(value, str):
        return parse_rfc3339(value) or 0.0
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return max(0.0, float(value))
    return 0.0


def _strings(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list):
        return ()
    return tuple(clip(v, 400) for v in value[:MAX_LIST] if isinstance(v, str) and v.strip())


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _maps(data: Mapping[str, Any], key: str, limit: int) -> list[Mapping[str, Any]]:
    value = data.get(key)
    if not isinstance(value, list):
        return []
    return [v for v in value[:limit] if isinstance(v, Mapping)]


@dataclass(frozen=True, slots=True)
class GateResult:
    name: str
    passed: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class FailureEvent:
    """One failed tool call of the run and how (or whether) it was resolved."""

    tool: str
    message: str
    language: str = ""
    model: str = ""
    model_family: str = ""
    rule_id: str = ""
    resolved_by: str = ""
    resolution: str = ""
    repair: Mapping[str, Any] | None = None
    attempts: int = 1
    recheck: Mapping[str, Any] | None = None
    failed_args: str = ""
    fixed_args: str = ""
    #: The call was repaired *before* it ran (a harness's pre-flight hook), so the failure never
    #: happened; with a resolution it counts as a failure avoided.
    avoided: bool = False
    #: The fingerprint `evolve.on_failure` gave this failure, when the report knows it (a report
    #: built from working memory or from a hook session's ledger does): reflection keys what it
    #: learns to it, because the message a report carries may be shorter than the one that was
    #: fingerprinted.
    fingerprint: str = ""
    #: The failed call's tool family and shell command, as its harness's room read them: what
    #: reflection fingerprints a failure by when the report carries no id (`fingerprint(call)`).
    family: str = ""
    command: str = ""
    exit_code: int | None = None
    #: What the failed call was when it was no failure to repair: `refusal` (the user said
    #: no), `policy` (the harness's policy), `not_run` (a parallel call failed), `benign`
    #: (no failure at all). "" for a failure.
    kind: str = ""
    #: What the fix was (`logic.evolve.fixes.Fix.kind`: after_edit, after_command, read_first,
    #: reread, typed, transform, switch); "" when nothing was learned from its resolution.
    fix_kind: str = ""
    #: False when evidence after the fix says it did not hold (the next test run failed, the
    #: edit was undone); None when nothing says.
    held: bool | None = None
    #: The evidence, by call id: the failed call (its last attempt), the call that got past
    #: it, the calls between, the other attempts, the call that says the fix did not hold.
    call_id: str = ""
    fix_call_id: str = ""
    between_ids: tuple[str, ...] = ()
    attempt_ids: tuple[str, ...] = ()
    backfire_id: str = ""
    #: The files and commands the fix names (what a stale check looks for).
    fix_files: tuple[str, ...] = ()
    fix_commands: tuple[str, ...] = ()

    @property
    def to_repair(self) -> bool:
        """A failure to repair (not a refusal, a policy, a call that never ran, no failure)."""
        return self.kind == ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], language: str, model: str) -> FailureEvent:
        signal = data.get("signal")
        sig: Mapping[str, Any] = signal if isinstance(signal, Mapping) else data
        repair, recheck = data.get("repair"), data.get("recheck")
        return cls(
            tool=_text(sig, "tool", 200),
            message=_text(sig, "message"),
            language=_text(sig, "language", 100) or language,
            model=_text(sig, "model", 200) or model,
            model_family=_text(sig, "model_family", 100),
            rule_id=_text(data, "rule_id", 200),
            resolved_by=_text(data, "resolved_by", 300),
            resolution=_text(data, "resolution", 1000),
            repair=repair if isinstance(repair, Mapping) else None,
            attempts=max(1, _int(data, "attempts")),
            recheck=recheck if isinstance(recheck, Mapping) else None,
            failed_args=_raw_text(data, "failed_args") or _raw_text(data, "args"),
            fixed_args=_raw_text(data, "fixed_args"),
            avoided=data.get("avoided") is True,
            fingerprint=fingerprint_id(data.get("fingerprint")),
            family=_text(data, "family", 32),
            command=_raw_text(data, "command"),
            exit_code=code if isinstance(code := data.get("exit_code"), int)
            and not isinstance(code, bool) else None,
            kind=_text(data, "kind", 32) if _text(data, "kind", 32) in NOT_TO_REPAIR else "",
            fix_kind=_text(data, "fix_kind", 32),
            held=False if data.get("held") is False else (True if data.get("held") is True
                                                          else None),
            call_id=_text(data, "call_id", 200),
            fix_call_id=_text(data, "fix_call_id", 200),
            between_ids=_strings(data, "between_ids"),
            attempt_ids=_strings(data, "attempt_ids"),
            backfire_id=_text(data, "backfire_id", 200),
            fix_files=_strings(data, "fix_files"),
            fix_commands=_strings(data, "fix_commands"),
        )

    @property
    def source(self) -> Source:
        """Who resolved it. Only an explicit `resolved_by` marks a failure resolved; `rule:<id>`
        (or `rule` with a rule id) is memory, `llm`/`model` a fresh round trip; `retry`, `human`
        and anything else are their own sources — never counted as memory."""
        by = self.resolved_by.strip().lower()
        if not by:
            return "unresolved"
        if by.startswith("rule:") or (by == "rule" and self.rule_id):
            return "memory"
        if by in ("llm", "model"):
            return "llm"
        if by in ("retry", "human"):
            return "retry" if by == "retry" else "human"
        return "other"

    @property
    def resolving_rule(self) -> str:
        """The rule that fixed it, when it was fixed from memory."""
        if self.source != "memory":
            return ""
        by = self.resolved_by.strip()
        return by[5:].strip() if by.lower().startswith("rule:") and by[5:].strip() else self.rule_id


@dataclass(frozen=True, slots=True)
class Decision:
    """A choice the run made (`edit_format = search_replace`) and the outcome it produced."""

    decision: str
    arm: str
    outcome: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class RunReport:
    run_id: str = ""
    started_at: float = 0.0
    ended_at: float = 0.0
    query: str = ""
    language: str = ""
    model: str = ""
    provider: str = ""
    role: str = ""
    label: str = ""
    planned_tasks: int = 0
    completed_tasks: int = 0
    blocked_tasks: int = 0
    gates: tuple[GateResult, ...] = ()
    failures: tuple[FailureEvent, ...] = ()
    decisions: tuple[Decision, ...] = ()
    retries: int = 0
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    redundant_calls: int = 0
    files_changed: tuple[str, ...] = ()
    tools_used: tuple[str, ...] = ()
    commands: tuple[tuple[str, bool], ...] = ()
    edit_format: str = ""
    edits_attempted: int = 0
    edits_applied: int = 0
    edits_first_attempt: int = 0
    summary: str = ""
    tags: tuple[str, ...] = ()
    #: "unknown" when the run's record states no verdict of its task (an imported transcript):
    #: nothing is claimed of how it ended. "" otherwise (the counts decide).
    verdict: str = ""
    #: Every command the run ran, by key: (key, runs, ok, shown) — see `episode.CommandCount`.
    command_counts: tuple[tuple[str, int, int, str], ...] = ()
    #: Paths the run deleted and did not create again.
    deleted: tuple[str, ...] = ()
    #: Edit calls by edit format: (format, attempted, applied).
    edit_formats: tuple[tuple[str, int, int], ...] = ()
    #: What the run's model was told by memory, line by line: (text, channel, evidence ids).
    told: tuple[tuple[str, str, tuple[str, ...]], ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunReport:
        language, model = _text(data, "language", 100), _text(data, "model", 200)
        failures = _maps(data, "failures", MAX_FAILURES)
        gates = tuple(
            GateResult(_text(g, "name", 80), bool(g.get("passed")), _text(g, "detail", 200))
            for g in _maps(data, "gates", MAX_LIST)
            if _text(g, "name", 80)
        )
        decisions = tuple(
            Decision(
                _text(d, "decision", 100) or _text(d, "key", 100),
                _text(d, "arm", 100),
                d["outcome"] if isinstance(d.get("outcome"), Mapping) else {},
            )
            for d in _maps(data, "decisions", MAX_DECISIONS)
        )
        commands = tuple(
            (_text(c, "cmd", 400), bool(c.get("ok")))
            for c in _maps(data, "commands", MAX_LIST)
            if _text(c, "cmd", 400)
        )
        return cls(
            run_id=_text(data, "run_id", 200),
            started_at=_time(data, "started_at"),
            ended_at=_time(data, "ended_at"),
            query=_text(data, "query"),
            language=language,
            model=model,
            provider=_text(data, "provider", 200),
            role=_text(data, "role", 100),
            label=_text(data, "label", 200),
            planned_tasks=_int(data, "planned_tasks"),
            completed_tasks=_int(data, "completed_tasks"),
            blocked_tasks=_int(data, "blocked_tasks"),
            gates=gates,
            failures=tuple(FailureEvent.from_dict(f, language, model) for f in failures),
            decisions=tuple(d for d in decisions if d.decision and d.arm),
            retries=_int(data, "retries"),
            llm_calls=_int(data, "llm_calls"),
            tokens_in=_int(data, "tokens_in"),
            tokens_out=_int(data, "tokens_out"),
            tool_calls=_int(data, "tool_calls"),
            tool_errors=_int(data, "tool_errors"),
            redundant_calls=_int(data, "redundant_calls"),
            files_changed=_strings(data, "files_changed"),
            tools_used=_strings(data, "tools_used"),
            commands=commands,
            edit_format=_text(data, "edit_format", 100),
            edits_attempted=_int(data, "edits_attempted"),
            edits_applied=_int(data, "edits_applied"),
            edits_first_attempt=_int(data, "edits_first_attempt"),
            summary=_text(data, "summary"),
            tags=_strings(data, "tags"),
            verdict="unknown" if data.get("verdict") == "unknown" else "",
            command_counts=tuple(
                (_text(c, "key", 400), _int(c, "runs"), _int(c, "ok"), _text(c, "shown", 400))
                for c in _maps(data, "command_counts", MAX_COMMAND_KEYS) if _text(c, "key", 400)),
            edit_formats=tuple(
                (_text(f, "format", 100), _int(f, "attempted"), _int(f, "applied"))
                for f in _maps(data, "edit_formats", 8) if _text(f, "format", 100)),
            told=tuple((_text(t, "text", 600), _text(t, "channel", 32) or "block",
                        _strings(t, "evidence")) for t in _maps(data, "told", MAX_LIST)
                       if _text(t, "text", 600)),
            deleted=tuple(clip(v, 512) for v in _list(data.get("deleted"))[:MAX_LIST]
                          if isinstance(v, str) and v.strip()),
        )

    @property
    def wall_ms(self) -> int:
        """S-14.2: end − start when both are set and the end is later, else 0."""
        if self.started_at > 0 and self.ended_at > self.started_at:
            return int((self.ended_at - self.started_at) * 1000)
        return 0

    def success(self) -> bool:
        """S-14.2 (False when the record states no verdict): nothing blocked, every planned task done, no failed gate, and something done."""
        if self.blocked_tasks > 0 or self.verdict == "unknown":
            return False
        if self.planned_tasks > 0 and self.completed_tasks < self.planned_tasks:
            return False
        if any(not g.passed for g in self.gates):
            return False
        return self.planned_tasks > 0 or self.completed_tasks > 0 or bool(self.files_changed)


def count_sources(failures: Sequence[FailureEvent]) -> dict[Source, int]:
    """Tally every failure by resolution source (over all of them — H-S-23)."""
    tally: dict[Source, int] = {
        "memory": 0, "llm": 0, "retry": 0, "human": 0, "other": 0, "unresolved": 0
    }
    for failure in failures:
        tally[failure.source] += 1
    return tally


_FINGERPRINT_ID = re.compile(r"fp_[0-9a-f]{12}")


def fingerprint_id(value: object) -> str:
    """A fingerprint id as `analyze` makes them (`fp_` + 12 hex digits), else ""."""
    return value if isinstance(value, str) and _FINGERPRINT_ID.fullmatch(value) else ""
