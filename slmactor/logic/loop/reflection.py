"""The records reflection produces: a failure note, a candidate repair rule, a rewarded decision,
and the whole `Reflection` of one run (SPEC S-14). `reflect` builds them; `reflect_md` renders
them; neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from slmactor.logic.loop.metrics import Run
from slmactor.logic.loop.regressions import Check
from slmactor.logic.loop.run_report import RunReport, Source
from slmactor.logic.memory.lessons import Lesson
from slmactor.logic.text.timefmt import to_rfc3339


@dataclass(frozen=True, slots=True)
class FailureNote:
    """One failure as reflected: its fingerprint, class, message and who resolved it."""

    fingerprint: str
    cls: str
    tool: str
    message: str
    source: Source
    resolved_by: str
    rule_id: str
    resolution: str
    attempts: int
    #: The line of the message that says what went wrong (`fingerprint.salient_line`),
    #: normalised like the fingerprint's salient text (numbers, paths, payloads masked).
    salient: str = ""
    #: The same line as the program wrote it (case and values kept, secrets redacted): what a
    #: model reads in a gotcha or lesson, where the masked `salient` is only a key.
    said: str = ""
    #: What the failed call was when no failure to repair (refusal, policy, not_run, benign).
    kind: str = ""
    #: What the fix was (`fixes.Fix.kind`), "" when nothing was learned from its resolution.
    fix_kind: str = ""
    #: False when the fix did not hold (the next test run failed, the edit was undone).
    held: bool | None = None
    #: The evidence by call id: the failed call, the call that got past it.
    call_id: str = ""
    fix_call_id: str = ""
    #: The files and commands the fix names.
    files: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    #: The failed call in its own words: its command, else its file ("" when neither).
    what: str = ""

    def handled(self) -> str:
        if self.source == "memory":
            return f"fixed from memory ({self.rule_id})"
        if self.source == "unresolved":
            return "**unresolved**"
        return f"fixed by {self.resolved_by.strip()}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "class": self.cls,
            "tool": self.tool,
            "message": self.message,
            "resolution": self.resolution,
            "resolved_by": f"rule:{self.rule_id}" if self.source == "memory" else self.resolved_by,
            "attempts": self.attempts,
            **({"salient": self.salient} if self.salient else {}),
            **({"said": self.said} if self.said else {}),
            **{key: value for key, value in (
                ("kind", self.kind), ("fix_kind", self.fix_kind), ("call_id", self.call_id),
                ("fix_call_id", self.fix_call_id), ("files", list(self.files)),
                ("commands", list(self.commands)), ("what", self.what)) if value},
            **({"held": False} if self.held is False else {}),
        }


@dataclass(frozen=True, slots=True)
class Candidate:
    """A repair rule to learn from a failure fixed without one (sent to `evolve.learn`)."""

    fingerprint: str
    cls: str
    tool: str
    language: str
    model: str
    message: str
    repair: dict[str, Any]
    evidence: str
    scope: str = "project"
    #: The failed call's arguments and the fixing call's (JSON text; "" when unknown): the
    #: rules actor learns a typed repair from the pair where one fits (a corrected command).
    failed_args: str = ""
    fixed_args: str = ""
    #: False when the fix was followed by evidence against it: no rule is made of it, and a
    #: rule that holds it counts a failure (the second seed's backfire).
    held: bool = True

    def to_dict(self) -> dict[str, Any]:
        pair = ({"failed_args": self.failed_args, "fixed_args": self.fixed_args}
                if self.failed_args and self.fixed_args else {})
        return {**pair, **({} if self.held else {"held": False}),
            "fingerprint": self.fingerprint,
            "class": self.cls,
            "tool": self.tool,
            "language": self.language,
            "model": self.model,
            "message": self.message,
            "repair": dict(self.repair),
            "evidence": self.evidence,
            "scope": self.scope,
            # Every candidate comes from a failure its repair actually resolved: the rule's
            # first success, so one sighting is enough to apply it next time (S-10.7).
            "proven": True,
        }


@dataclass(frozen=True, slots=True)
class Rewarded:
    decision: str
    arm: str
    reward: float
    outcome: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"decision": self.decision, "arm": self.arm, "reward": self.reward,
                "outcome": dict(self.outcome)}


@dataclass(frozen=True, slots=True)
class Reflection:
    run_id: str
    at: float
    report: RunReport
    notes: tuple[FailureNote, ...]
    tally: dict[Source, int]
    rule_outcomes: dict[str, bool]
    candidates: tuple[Candidate, ...]
    checks: tuple[Check, ...]
    rewards: tuple[Rewarded, ...]
    lessons: tuple[Lesson, ...]
    episode: dict[str, Any]
    procedure: dict[str, Any] | None
    metrics: Run
    markdown: str = field(default="")

    @property
    def success(self) -> bool:
        return self.report.success()

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "at": to_rfc3339(self.at),
            "success": self.success,
            "tally": dict(self.tally),
            "failures": [n.to_dict() for n in self.notes],
            "rule_outcomes": dict(self.rule_outcomes),
            "candidates": [c.to_dict() for c in self.candidates],
            "checks": [c.to_dict() for c in self.checks],
            "rewards": [r.to_dict() for r in self.rewards],
            "lessons": [lesson.to_dict() for lesson in self.lessons],
            "episode": self.episode,
            "procedure": self.procedure,
            "metrics": self.metrics.to_dict(),
            "markdown": self.markdown,
        }
