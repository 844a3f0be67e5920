"""Trajectories and offline replay (SPEC S-17; seed 000 "Offline replay").

A trajectory is a recording of what a model emitted — tool calls, arguments, results — plus, for
each failed step, the arguments that eventually worked (`fixed_args`). Replaying it against a
`Repairer` answers one question with no live model: how many of these failures would this repair
store have fixed deterministically, and how many would still have cost a round trip?

Three ways to replay, all counting through one accumulator (`RunTally`), so the numbers agree:
* `replay` / `replay_all` / `ab_test` — the seed's offline A/B: every trajectory without a
  repairer (`baseline`) and with one (`with-repairs`), compared with `metrics.compare`.
* the **learning replay** (driven by the CLI against a real daemon): trajectories in order with
  the loop on; each failed step asks the daemon, `classify` decides what the answer was worth, and
  `RunTally.report` builds the run report the daemon then reflects on, so later trajectories are
  repaired by what earlier ones taught. `LearningTally` keeps the totals, including **wrong
  repairs** — a repair whose arguments differ from the known fix, which must stay at zero.

Both arms land the same edits: a repair saves cost, it never changes correctness.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from slmactor.logic.loop.metrics import Run, normalize
from slmactor.logic.loop.metrics_compare import Comparison, compare
from slmactor.logic.text.strings import clip

Outcome = Literal["ok", "memory", "llm", "unresolved"]


@dataclass(frozen=True, slots=True)
class Step:
    """One step: an assistant turn, or a tool call (with its error and eventual fix if it failed)."""

    kind: str = "tool"
    tool: str = ""
    args: str = ""
    ok: bool = True
    error: str = ""
    fixed_args: str = ""
    edit_attempt: bool = False
    tokens_in: int = 0
    tokens_out: int = 0

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Step:
        def count(key: str) -> int:
            value = data.get(key, 0)
            return max(0, value) if isinstance(value, int) and not isinstance(value, bool) else 0

        kind = data.get("kind", "tool")
        return cls(
            kind=kind if kind in ("tool", "assistant") else "tool",
            tool=str(data.get("tool", "") or ""),
            args=args_text(data.get("args")),
            ok=bool(data.get("ok", True)),
            error=str(data.get("error", "") or ""),
            fixed_args=args_text(data.get("fixed_args")),
            edit_attempt=bool(data.get("edit_attempt", False)),
            tokens_in=count("tokens_in"),
            tokens_out=count("tokens_out"),
        )


@dataclass(frozen=True, slots=True)
class Trajectory:
    id: str
    query: str = ""
    language: str = ""
    model: str = ""
    edit_format: str = ""
    task_passed: bool = False
    steps: tuple[Step, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], default_id: str = "") -> Trajectory:
        steps = data.get("steps")
        return cls(
            id=str(data.get("id") or default_id),
            query=str(data.get("query", "") or ""),
            language=str(data.get("language", "") or ""),
            model=str(data.get("model", "") or ""),
            edit_format=str(data.get("edit_format", "") or ""),
            task_passed=bool(data.get("task_passed", False)),
            steps=tuple(
                Step.from_dict(s) for s in (steps if isinstance(steps, list) else [])
                if isinstance(s, Mapping)
            ),
        )


def args_text(value: object) -> str:
    """Arguments as the tool received them: a string verbatim, an object as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def same_json(a: str, b: str) -> bool:
    """S-17.2 `sameJSON`: equal as parsed JSON when both parse, else equal after trimming."""
    try:
        return bool(json.loads(a) == json.loads(b))
    except (ValueError, RecursionError):
        return a.strip() == b.strip()


@dataclass(frozen=True, slots=True)
class Advice:
    """What a repair store answered for one failure: whether a rule matched (`hit`), whether it
    is confident enough to apply, and the repaired arguments when a transform changed them."""

    hit: bool = False
    apply: bool = False
    rule_id: str = ""
    new_args: str | None = None
    fingerprint: str = ""


class Repairer(Protocol):
    """Anything that can suggest a repair for a failed call (the rule store, or a daemon client)."""

    def suggest(self, tool: str, message: str, language: str, model: str, args: str) -> Advice: ...


@dataclass(frozen=True, slots=True)
class StepResult:
    outcome: Outcome
    hit: bool = False
    rule_id: str = ""
    wrong_repair: bool = False


def classify(step: Step, advice: Advice | None) -> StepResult:
    """What one failed step cost, given the advice (S-17.2, plus wrong-repair detection).

    A confident repair with new arguments equal to the known fix is fixed from memory. A repair
    with *other* arguments is a wrong repair — the call would have failed again — and the step then
    costs a model round trip (or stays unresolved when no fix is known).
    """
    if step.ok:
        return StepResult("ok")
    hit = advice is not None and advice.hit
    rule_id = advice.rule_id if advice is not None and advice.hit else ""
    wrong = False
    if advice is not None and advice.hit and advice.apply and advice.new_args is not None:
        if step.fixed_args and same_json(advice.new_args, step.fixed_args):
            return StepResult("memory", True, rule_id)
        wrong = True
    if step.fixed_args:
        return StepResult("llm", hit, rule_id, wrong)
    return StepResult("unresolved", hit, rule_id, wrong)


@dataclass
class RunTally:
    """Counts one replayed trajectory exactly as S-17.2, step by step."""

    trajectory: Trajectory
    tool_calls: int = 0
    tool_errors: int = 0
    redundant: int = 0
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    edits_attempted: int = 0
    edits_applied: int = 0
    first_attempt: int = 0
    repair_hits: int = 0
    memory: int = 0
    llm: int = 0
    unresolved: int = 0
    wrong_repairs: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)

    def assistant(self, step: Step) -> None:
        self.llm_calls += 1
        self.tokens_in += step.tokens_in
        self.tokens_out += step.tokens_out

    def tool(self, step: Step, result: StepResult, fingerprint: str = "",
             shared: tuple[str, str] | None = None) -> None:
        """Count one tool step. For a failure: `fingerprint` is the id the daemon gave it (the
        report carries it, so reflection never computes another), `shared` the failed and fixed
        arguments in the shared words (its room's record), else the step's own."""
        self.tool_calls += 1
        signature = f"{step.tool}\x00{step.args}"
        if signature in self._seen:
            self.redundant += 1
        self._seen.add(signature)
        if step.edit_attempt:
            self.edits_attempted += 1
        if result.outcome == "ok":
            if step.edit_attempt:
                self.edits_applied += 1
                self.first_attempt += 1
            return
        self.tool_errors += 1
        self.repair_hits += int(result.hit)
        self.wrong_repairs += int(result.wrong_repair)
        if result.outcome == "memory":
            self.memory += 1
        elif result.outcome == "llm":
            self.llm += 1
            self.llm_calls += 1
        else:
            self.unresolved += 1
        if result.outcome != "unresolved" and step.edit_attempt:
            self.edits_applied += 1
        by = {"memory": f"rule:{result.rule_id}", "llm": "llm"}.get(result.outcome, "")
        self.failures.append({
            "tool": step.tool,
            "message": step.error,
            "language": self.trajectory.language,
            "model": self.trajectory.model,
            # A rule id marks "a rule was applied": only then does its outcome teach the rule.
            "rule_id": result.rule_id if result.outcome == "memory" or result.wrong_repair else "",
            "resolved_by": by,
            # No resolution text: a replay knows the fixed arguments, not the model's reasoning,
            # so nothing but a transform reproducing them may be learned from it.
            "resolution": "",
            "failed_args": shared[0] if shared else step.args,
            "fixed_args": shared[1] if shared else step.fixed_args,
            "attempts": 2 if result.wrong_repair else 1,
            **({"fingerprint": fingerprint} if fingerprint else {}),
        })

    @property
    def passed(self) -> bool:
        return self.trajectory.task_passed and self.unresolved == 0

    def run(self, label: str, at: float) -> Run:
        t = self.trajectory
        return normalize(Run(
            run_id=t.id, at=at, model=t.model, language=t.language, label=label, tasks=1,
            tasks_passed=int(self.passed), edit_format=t.edit_format,
            edits_attempted=self.edits_attempted, edits_applied=self.edits_applied,
            edits_first_attempt=self.first_attempt, tool_calls=self.tool_calls,
            tool_errors=self.tool_errors, redundant_calls=self.redundant,
            llm_calls=self.llm_calls, tokens_in=self.tokens_in, tokens_out=self.tokens_out,
            failures=self.tool_errors, repair_hits=self.repair_hits,
            resolved_from_memory=self.memory, resolved_from_llm=self.llm,
            unresolved=self.unresolved,
        ))

    def report(self, run_id: str, label: str) -> dict[str, Any]:
        """The `run.finish` report of this trajectory, for the daemon to reflect on."""
        t = self.trajectory
        return {
            "run_id": run_id,
            "query": t.query,
            "language": t.language,
            "model": t.model,
            "label": label,
            "planned_tasks": 1,
            "completed_tasks": int(self.passed),
            "failures": list(self.failures),
            "llm_calls": self.llm_calls,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "tool_calls": self.tool_calls,
            "tool_errors": self.tool_errors,
            "redundant_calls": self.redundant,
            "tools_used": sorted({s.tool for s in t.steps if s.kind == "tool" and s.tool}),
            "edit_format": t.edit_format,
            "edits_attempted": self.edits_attempted,
            "edits_applied": self.edits_applied,
            "edits_first_attempt": self.first_attempt,
            "summary": clip(t.query, 200),
            "tags": ["replay"],
            "decisions": self.decisions(),
        }

    def decisions(self) -> list[dict[str, Any]]:
        """The edit-format choice of the run and its outcome (S-13.8): applied when every edit
        landed, one retry per edit that did not land at the first attempt — so the format is
        rewarded for first-attempt application without counting a recovered edit as a failure."""
        t = self.trajectory
        if not t.edit_format or self.edits_attempted == 0:
            return []
        return [{
            "decision": "edit_format",
            "arm": t.edit_format,
            "outcome": {
                "applied": self.edits_applied == self.edits_attempted,
                "retries": self.edits_attempted - self.first_attempt,
                "failed": not self.passed,
            },
        }]


def replay(traj: Trajectory, repairer: Repairer | None = None, label: str = "",
           at: float = 0.0) -> Run:
    """S-17.2: one trajectory → one metrics run (tasks = 1)."""
    tally = RunTally(traj)
    for step in traj.steps:
        if step.kind == "assistant":
            tally.assistant(step)
            continue
        advice = None
        if not step.ok and repairer is not None:
            advice = repairer.suggest(step.tool, step.error, traj.language, traj.model, step.args)
        tally.tool(step, classify(step, advice))
    return tally.run(label, at)


#: Called after each replayed trajectory with (its 1-based index, the count, the trajectory).
Progress = Callable[[int, int, Trajectory], None]


def replay_all(trajs: Sequence[Trajectory], repairer: Repairer | None = None,
               label: str = "", progress: Progress | None = None) -> list[Run]:
    """S-17.3: replay each in order, stamping `at` = i seconds after the epoch."""
    runs: list[Run] = []
    for i, traj in enumerate(trajs):
        runs.append(replay(traj, repairer, label, float(i)))
        if progress is not None:
            progress(i + 1, len(trajs), traj)
    return runs


def ab_test(trajs: Sequence[Trajectory], repairer: Repairer,
            progress: Progress | None = None) -> Comparison:
    """Every trajectory without repairs (`baseline`) and with them (`with-repairs`), compared.

    `progress` follows the pass with repairs (the one that asks the daemon)."""
    return compare(replay_all(trajs, None, "baseline"),
                   replay_all(trajs, repairer, "with-repairs", progress))


@dataclass
class LearningTally:
    """Totals of a learning replay, including the share of *repeat* failures fixed from memory.

    A repeat is a failure whose fix a named transform reproduces, when the same fix (failure
    class and transform: `repair`) already fixed an earlier failure, in any language or tool
   . One fingerprint may hold several fixes — "string to replace not found" is a
    line-number prefix once and a stale read the next time — so a later failure of the same
    fingerprint whose fix no transform reproduces is not a repeat memory could have fixed. The
    older measure (2nd+ occurrence of a fingerprint whose first fix was a transform) is kept as
    `fingerprint_repeats` for comparison.
    """

    trajectories: int = 0
    failures: int = 0
    memory: int = 0
    llm: int = 0
    unresolved: int = 0
    wrong_repairs: int = 0
    repeat_failures: int = 0
    repeat_from_memory: int = 0
    fingerprint_repeats: int = 0
    fingerprint_repeats_from_memory: int = 0
    _first_fix: dict[str, bool] = field(default_factory=dict)
    _fixes_seen: set[str] = field(default_factory=set)

    def add(self, fingerprint: str, result: StepResult, reproducible: bool,
            repair: str = "") -> None:
        """Count one failed step. `reproducible`: a named transform turns its args into the fix;
        `repair`: which fix that is (class and transform; "" = the fingerprint stands for it)."""
        self.failures += 1
        self.wrong_repairs += int(result.wrong_repair)
        from_memory = result.outcome == "memory"
        if from_memory:
            self.memory += 1
        elif result.outcome == "llm":
            self.llm += 1
        elif result.outcome == "unresolved":
            self.unresolved += 1
        key = (repair or fingerprint) if reproducible else ""
        if key:
            if key in self._fixes_seen:
                self.repeat_failures += 1
                self.repeat_from_memory += int(from_memory)
            self._fixes_seen.add(key)
        if not fingerprint:
            return
        if fingerprint in self._first_fix:
            if self._first_fix[fingerprint]:
                self.fingerprint_repeats += 1
                self.fingerprint_repeats_from_memory += int(from_memory)
        else:
            self._first_fix[fingerprint] = reproducible

    @property
    def repeat_share(self) -> float | None:
        if self.repeat_failures == 0:
            return None
        return self.repeat_from_memory / self.repeat_failures

    def to_dict(self) -> dict[str, Any]:
        return {
            "trajectories": self.trajectories,
            "failures": self.failures,
            "fixed_from_memory": self.memory,
            "fixed_by_model": self.llm,
            "unresolved": self.unresolved,
            "wrong_repairs": self.wrong_repairs,
            "repeat_failures": self.repeat_failures,
            "repeat_fixed_from_memory": self.repeat_from_memory,
            "repeat_share_from_memory": self.repeat_share,
            "fingerprint_repeats": self.fingerprint_repeats,
            "fingerprint_repeats_fixed_from_memory": self.fingerprint_repeats_from_memory,
        }
