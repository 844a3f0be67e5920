"""Drive recorded trajectories through a real daemon (used by `metrics replay` and `demo`).

Two drivers, both through the real client and the real protocol:
* `learning_replay` — the loop switched on: for every failed step `evolve.on_failure` is asked;
  a confident repair whose new arguments equal the recorded fix is **fixed from memory**; any
  other fix costs a model round trip and is reported with `evolve.resolved` (so the rules actor
  can learn it); each finished trajectory is sent as `run.finish` (waiting for its pipeline, so
  the next trajectory sees what this one taught). Wrong repairs — confident repairs with other
  arguments — are counted, never hidden.
* `ab_replay` — the seed's offline A/B: every trajectory without repairs and with the project's
  current rules, compared; nothing is learned (working-memory entries go to a throwaway run
  that is reset afterwards).
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slmactor import harnesses
from slmactor.harnesses.base import shared_json
from slmactor.logic.evolve.transforms import infer_between, infer_transform
from slmactor.logic.failures.call import ToolCall
from slmactor.logic.loop.replay import (
    Advice,
    LearningTally,
    Progress,
    RunTally,
    StepResult,
    Trajectory,
    ab_test,
    classify,
)

FINISH_TIMEOUT = 60.0


def bundled_trajectories() -> Path:
    """The bundled trajectories in slmactor's own format (`slmactor/demo_data/trajectories`:
    small-model runs with recurring edit, format, JSON, line-number and whitespace failures)."""
    from importlib import resources

    return Path(str(resources.files("slmactor") / "demo_data" / "trajectories"))


def parse_advice(result: Any) -> Advice:
    """The `evolve.on_failure` reply as an `Advice`, tolerant of missing fields."""
    if not isinstance(result, dict):
        return Advice()
    fp = result.get("fingerprint")
    fingerprint = fp.get("id", "") if isinstance(fp, dict) else fp if isinstance(fp, str) else ""
    rule = result.get("rule")
    rule_id = result.get("rule_id") or (rule.get("id") if isinstance(rule, dict) else "") or ""
    new_args = result.get("new_args")
    if isinstance(new_args, (dict, list)):
        new_args = json.dumps(new_args)
    if not isinstance(new_args, str) or not new_args:
        new_args = None
    hit = bool(rule_id) or bool(result.get("found"))
    return Advice(hit=hit, apply=bool(result.get("apply")) and hit, rule_id=str(rule_id),
                  new_args=new_args, fingerprint=str(fingerprint))


def _transform(failed: ToolCall, fixed: ToolCall) -> str | None:
    """The named transform between a step's arguments and its recorded fix, in the shared
    words (a text that never parsed: by `repair_json` only)."""
    if failed.args and fixed.args:
        return infer_between(failed.shared(), fixed.shared())
    if failed.unparsed and fixed.args:
        return infer_transform(failed.unparsed, json.dumps(dict(fixed.args)))  # both as sent
    return None


def _failure_class(reply: Any) -> str:
    fp = reply.get("fingerprint") if isinstance(reply, dict) else None
    cls = fp.get("class") if isinstance(fp, dict) else None
    return cls if isinstance(cls, str) else ""


@dataclass
class TrajectoryOutcome:
    trajectory: str
    run_id: str
    passed: bool
    memory: int
    llm: int
    unresolved: int
    wrong_repairs: int

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """What one failed step of a learning replay came to (for measures per failure kind)."""

    trajectory: str
    step: int
    fingerprint: str
    outcome: str
    applied: bool
    wrong_repair: bool


@dataclass
class LearningResult:
    label: str
    tally: LearningTally = field(default_factory=LearningTally)
    runs: list[TrajectoryOutcome] = field(default_factory=list)
    #: Every failed step, in replay order (not part of `to_dict`: the totals are the report).
    steps: list[StepOutcome] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, **self.tally.to_dict(),
                "runs": [r.to_dict() for r in self.runs]}

    def render(self) -> str:
        t = self.tally
        share = t.repeat_share
        lines = [
            f"{self.label}: {t.trajectories} trajectories, {t.failures} failed tool calls",
            f"  fixed from memory:          {t.memory}",
            f"  fixed by a model round trip: {t.llm}",
            f"  unresolved:                 {t.unresolved}",
            f"  wrong repairs:              {t.wrong_repairs}",
            f"  repeat failures fixed from memory: {t.repeat_from_memory}/{t.repeat_failures}"
            + (f" ({share * 100:.0f}%)" if share is not None else " (no repeats)"),
            (f"    (repeats of a fingerprint, any fix: {t.fingerprint_repeats_from_memory}/"
            f"{t.fingerprint_repeats})"),
        ]
        return "\n".join(lines) + "\n"


def _ask(client: Any, message: Any, timeout: float | None = None) -> Any:
    return client.ask(message, timeout=timeout) if timeout else client.ask(message)


#: Told after each trajectory of a learning replay: (1-based index, count, its outcome).
LearningProgress = Callable[[int, int, "TrajectoryOutcome"], None]


def learning_replay(client: Any, trajectories: list[Trajectory], label: str,
                    progress: LearningProgress | None = None) -> LearningResult:
    """Replay `trajectories` in order through the daemon with learning on."""
    from slmactor.protocol.messages import EvolveOnFailure, EvolveResolved, RunFinish, RunStart

    out = LearningResult(label)
    batch = uuid.uuid4().hex[:6]
    for index, traj in enumerate(trajectories, start=1):
        run_id = f"{label}-{batch}-{index:02d}-{traj.id}"[:120]
        _ask(client, RunStart(run_id=run_id, task=traj.query, role="worker"))
        tally = RunTally(traj)
        for position, step in enumerate(traj.steps):
            if step.kind == "assistant":
                tally.assistant(step)
                continue
            if step.ok:
                tally.tool(step, StepResult("ok"))
                continue
            # The step as its harness's room reads it: the one record a hook would send.
            failed = harnesses.tool_call(step.tool, step.args, ok=False, error=step.error)
            fixed = harnesses.tool_call(step.tool, step.fixed_args) if step.fixed_args else None
            reply = _ask(client, EvolveOnFailure(
                run_id=run_id, call=failed.to_wire(), language=traj.language, model=traj.model))
            advice = parse_advice(reply)
            result = classify(step, advice)
            out.steps.append(StepOutcome(traj.id, position, advice.fingerprint, result.outcome,
                                         advice.apply and advice.new_args is not None,
                                         result.wrong_repair))
            transform = _transform(failed, fixed) if (
                fixed is not None and step.fixed_args != step.args) else None
            out.tally.add(advice.fingerprint, result, bool(transform),
                          f"{_failure_class(reply)}:{transform}" if transform else "")
            if result.outcome in ("memory", "llm"):
                from_memory = result.outcome == "memory"
                _ask(client, EvolveResolved(
                    run_id=run_id, fingerprint=advice.fingerprint,
                    rule_id=result.rule_id if from_memory else "",
                    resolution="repaired from memory" if from_memory else "model round trip",
                    failed=failed.to_wire(), fixed=fixed.to_wire() if fixed is not None else {},
                    language=traj.language, model=traj.model))
            tally.tool(step, result, advice.fingerprint,
                       (shared_json(failed), shared_json(fixed) if fixed is not None else ""))
        _ask(client, RunFinish(report=tally.report(run_id, label), wait=True),
             timeout=FINISH_TIMEOUT)
        out.tally.trajectories += 1
        out.runs.append(TrajectoryOutcome(traj.id, run_id, tally.passed, tally.memory,
                                          tally.llm, tally.unresolved, tally.wrong_repairs))
        if progress is not None:
            progress(index, len(trajectories), out.runs[-1])
    return out


class DaemonRepairer:
    """The project's current rules, asked through the daemon, as a `Repairer` (no learning)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.run_id = f"ab-{uuid.uuid4().hex[:8]}"

    def suggest(self, tool: str, message: str, language: str, model: str, args: str) -> Advice:
        from slmactor.protocol.messages import EvolveOnFailure

        return parse_advice(self.client.ask(EvolveOnFailure(
            run_id=self.run_id, tool=tool, message=message, language=language, model=model,
            args=args)))

    def close(self) -> None:
        from slmactor.client import DaemonUnavailable, RequestFailed
        from slmactor.protocol.messages import RunReset

        # Best-effort: the throwaway run only holds working-memory entries of this A/B.
        with contextlib.suppress(DaemonUnavailable, RequestFailed):
            self.client.ask(RunReset(run_id=self.run_id))


def ab_replay(client: Any, trajectories: list[Trajectory],
              progress: Progress | None = None) -> dict[str, Any]:
    repairer = DaemonRepairer(client)
    try:
        cmp = ab_test(trajectories, repairer, progress)
    finally:
        repairer.close()
    return {**cmp.to_dict(), "text": cmp.render()}
