"""The typed results of the harness verbs (`slmactor.verbs`): one frozen dataclass per reply.

Each `from_reply` reads a reply tolerantly (a missing or wrong-typed field takes its zero value)
and keeps the whole reply as `raw`, so fields a newer daemon adds stay reachable. Kept apart
from the verbs so that importing the client does not load `dataclasses` (a hook process that
never calls a verb should not pay for it). Reply shapes: clients/PROTOCOL.md §10.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Advice", "Block", "Finished", "RecallHit", "Resolution", "Run", "new_run_id"]


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is a dict, else {} (a reply read tolerantly)."""
    return value if isinstance(value, dict) else {}


def _str(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def new_run_id() -> str:
    """A run id unique enough for one user's machine: time, then random hex."""
    return f"run-{time.strftime('%Y%m%d-%H%M%S')}-{os.urandom(3).hex()}"


@dataclass(frozen=True, slots=True)
class Run:
    """`run.start`'s answer: the run id to pass to the other verbs."""

    run_id: str
    task: str = ""
    #: The run id was live and was started over (its counters, files and failures cleared).
    restarted: bool = False
    counters: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_reply(cls, reply: Any, task: str) -> Run:
        data = as_dict(reply)
        counters = {k: v for k, v in as_dict(data.get("counters")).items() if isinstance(v, int)}
        return cls(_str(data, "run_id"), task, bool(data.get("restarted")), counters)


@dataclass(frozen=True, slots=True)
class Advice:
    """`evolve.on_failure`'s answer, with the failure it answers (so `resolved` can teach)."""

    run_id: str
    tool: str
    message: str
    args: str = ""
    language: str = ""
    model: str = ""
    #: A repair rule matched this failure.
    found: bool = False
    #: The rule is confident enough to apply without asking the model.
    apply: bool = False
    rule_id: str = ""
    #: The repaired arguments when the rule transforms them ("" otherwise).
    new_args: str = ""
    #: Advice for the model when there is no mechanical repair (put it in the observation).
    guidance: str = ""
    reason: str = ""
    confidence: float = 0.0
    fingerprint: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_reply(cls, reply: Any, request: Mapping[str, str]) -> Advice:
        data = as_dict(reply)
        fp = data.get("fingerprint")
        fingerprint = _str(fp, "id") if isinstance(fp, dict) else fp if isinstance(fp, str) else ""
        confidence = data.get("confidence")
        return cls(
            run_id=request["run_id"], tool=request["tool"], message=request["message"],
            args=request["args"], language=request["language"], model=request["model"],
            found=bool(data.get("found")), apply=bool(data.get("apply")),
            rule_id=_str(data, "rule_id"), new_args=_str(data, "new_args"),
            guidance=_str(data, "guidance"), reason=_str(data, "reason"),
            confidence=float(confidence) if isinstance(confidence, int | float) else 0.0,
            fingerprint=fingerprint, raw=data,
        )

    @property
    def repaired_args(self) -> str:
        """The arguments to retry with when a confident rule repaired them mechanically, else ""."""
        return self.new_args if self.apply else ""

    def observation(self) -> str:
        """One line to append to the failed call's observation for the model ("" when none)."""
        if not self.found:
            return ""
        hint = self.guidance or self.reason
        if self.apply and self.new_args:
            return f"[slmactor] a remembered repair applies: retry with {self.new_args}"
        return f"[slmactor] {hint}" if hint else ""


@dataclass(frozen=True, slots=True)
class Resolution:
    """`evolve.resolved`'s answer: what the daemon learned from how a failure was fixed."""

    fingerprint: str = ""
    #: A repair rule was learned from the failed and fixed arguments.
    learned: dict[str, Any] | None = None
    #: The transform that maps the failed arguments onto the fixed ones ("" or None: none found).
    transform: str | None = None
    #: The applied rule was credited with this fix.
    bound: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_reply(cls, reply: Any) -> Resolution:
        data = as_dict(reply)
        learned = data.get("learned")
        transform = data.get("transform")
        return cls(_str(data, "fingerprint"), learned if isinstance(learned, dict) else None,
                   transform if isinstance(transform, str) else None, bool(data.get("bound")), data)


@dataclass(frozen=True, slots=True)
class Block:
    """`memory.block`'s answer: the prompt text and how many tokens each section took."""

    text: str
    tokens: int = 0
    budget: int = 0
    #: Tokens per section (`working`, `semantic`, `episodic`, `procedural`, ...).
    sections: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.text

    @classmethod
    def from_reply(cls, reply: Any) -> Block:
        data = as_dict(reply)
        sections = {k: v for k, v in as_dict(data.get("sections")).items() if isinstance(v, int)}
        tokens, budget = data.get("tokens"), data.get("budget")
        return cls(_str(data, "text"), tokens if isinstance(tokens, int) else 0,
                   budget if isinstance(budget, int) else 0, sections)


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One past episode recalled for a task, best first."""

    id: str
    score: float
    query: str = ""
    summary: str = ""
    success: bool = False
    #: Why it was recalled (with `explain=True`).
    why: str = ""
    episode: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_reply(cls, reply: Any) -> list[RecallHit]:
        hits = as_dict(reply).get("hits")
        out: list[RecallHit] = []
        for hit in hits if isinstance(hits, list) else []:
            if not isinstance(hit, dict):
                continue
            episode = as_dict(hit.get("episode")) or as_dict(hit.get("entry"))
            score = hit.get("score")
            out.append(cls(_str(hit, "id"), float(score) if isinstance(score, int | float) else 0.0,
                           _str(episode, "query"), _str(episode, "summary"),
                           bool(episode.get("success")), _str(hit, "why"), episode))
        return out


@dataclass(frozen=True, slots=True)
class Finished:
    """`run.finish`'s answer: the run was reflected on; learning runs in the background."""

    run_id: str
    accepted: bool = False
    success: bool = False
    #: Failures by who resolved them: memory, llm, retry, human, other, unresolved.
    tally: dict[str, int] = field(default_factory=dict)
    #: The run id had already been finished (a retry): the first answer, nothing learned twice.
    duplicate: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_reply(cls, reply: Any) -> Finished:
        data = as_dict(reply)
        tally = {k: v for k, v in as_dict(data.get("tally")).items() if isinstance(v, int)}
        return cls(_str(data, "run_id"), bool(data.get("accepted")), bool(data.get("success")),
                   tally, bool(data.get("duplicate")), data)
