"""Reflection: a deterministic comparison of what a run meant to do with what it did (SPEC S-14).

`reflect(report, now)` is a pure function of the run report. Its outputs feed the rest of the
loop: an episode (recall actor), rule outcomes and **candidate repair rules** (rules actor), bandit
rewards (bandit actor), regression checks, lessons (distiller), a procedural observation, the
metrics record and `REFLECTION.md`.

Candidates are synthesized only from failures that were resolved *without* a rule fixing them —
the ones we do not yet know. A failure the model fixed by changing the call's arguments is tried
against every named transform (`transforms.infer_transform`); when one reproduces the fix exactly,
the candidate carries that deterministic transform, so the next occurrence is repaired without a
model round trip. Otherwise it carries the harness's explicit repair, or its resolution text as
guidance.

Known seed bugs fixed here (see also `run_report`):
* H-S-20 — a plain `retry` is not "fixed from memory"; only `rule:<id>` is.
* H-S-22 — the Markdown and the tallies come from one classification (`FailureEvent.source`); a
  rule id alone does not mark a failure resolved, so they cannot disagree.
* H-S-23 — tallies, repair hits and metrics count every failure of the report; only the number of
  failures *listed* in the Markdown is capped (12).
* H-S-29 — the Markdown no longer claims learned rules are "suggested, not applied, until they
  prove themselves" (one success makes a learned rule applicable); it states the real rule.
Also: a candidate is synthesized when an applied rule failed and something else then fixed the
failure (the seed skipped any failure carrying a rule id, so a wrong shipped rule could never be
out-learned by an exact-fingerprint one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from slmactor.logic.evolve.transforms import infer_transform
from slmactor.logic.failures.call import COMMAND, PATH, ToolCall
from slmactor.logic.failures.fingerprint import describe, fingerprint, salient_line
from slmactor.logic.failures.fingerprint import normalize as normalize_message
from slmactor.logic.loop.metrics import Gate, Run, normalize
from slmactor.logic.loop.reflect_md import render_markdown
from slmactor.logic.loop.reflection import Candidate, FailureNote, Reflection, Rewarded
from slmactor.logic.loop.regressions import Check, new_check
from slmactor.logic.loop.run_report import FailureEvent, RunReport, Source, count_sources
from slmactor.logic.memory.lessons import Lesson
from slmactor.logic.policy.reward import Outcome, reward
from slmactor.logic.text.models import model_family
from slmactor.logic.text.redact import redact
from slmactor.logic.text.strings import clip, clip_words, first_line
from slmactor.logic.text.timefmt import to_rfc3339

#: Tool name → its family (edit, read, shell, search, web, task; "" when unknown).
FamilyOf = Callable[[str], str]


def _no_family(tool: str) -> str:
    return ""


MAX_NOTES = 12
#: Longest fix a note keeps (a longer one is not kept: never told clipped).
MAX_RESOLUTION = 600
#: Longest fix a rule's guidance holds (a longer one teaches no guidance: never told clipped).
MAX_GUIDANCE = 300
#: Fixes a rule can be learned from: the fixing call's difference, or a step before the same
#: call. "It passed after editing `x`" is the model's work: remembered, never a rule.
LEARNABLE_FIXES = frozenset({"typed", "transform", "reread", "switch", "after_command",
                             "read_first", "prepared"})
MAX_EPISODE_FAILURES = 16
MAX_LESSONS = 5
NOTE_MESSAGE = 240
NOTE_SALIENT = 160

REPAIR_KINDS = ("guidance", "transform_args", "switch_tool", "edit_format", "config", "shell",
                "action")
_REQUIRED = {
    "transform_args": "transform",
    "switch_tool": "tool",
    "edit_format": "edit_format",
    "config": "config_key",
    "shell": "command",
    "action": "action",
}




def valid_repair(repair: Mapping[str, Any]) -> bool:
    """S-10.2 `Validate`: a known kind, guidance text always, and the field its kind needs."""
    kind = repair.get("kind")
    if kind not in REPAIR_KINDS:
        return False
    guidance = repair.get("guidance")
    if not isinstance(guidance, str) or not guidance.strip():
        return False
    needed = _REQUIRED.get(str(kind))
    if needed is None:
        return True
    value = repair.get(needed)
    return isinstance(value, str) and bool(value.strip())


def derive_repair(event: FailureEvent, cls: str) -> dict[str, Any] | None:
    """What a resolved failure teaches: an inferred transform beats the harness's stated repair,
    which beats the resolution text as guidance; None when nothing reusable is known."""
    if event.failed_args and event.fixed_args and event.failed_args != event.fixed_args:
        name = infer_transform(event.failed_args, event.fixed_args)
        if name:
            return {
                "kind": "transform_args",
                "transform": name,
                "guidance": f"{describe(cls)}; the arguments were repaired with {name}",
            }
    if event.repair is not None and valid_repair(event.repair):
        return dict(event.repair)
    resolution = event.resolution.strip()
    if event.source in ("llm", "human", "other") and resolution and len(resolution) <= MAX_GUIDANCE:
        # Told whole or not at all: a fix clipped mid-command is not runnable as shown.
        return {"kind": "guidance", "guidance": resolution}
    return None


def _learnable(event: FailureEvent) -> bool:
    """Whether a resolved failure teaches a rule: a report that names its fix's kind teaches
    only the kinds a rule can hold; one that names none (a harness's own report) teaches what
    it states."""
    return event.fix_kind in LEARNABLE_FIXES if event.fix_kind else not (
        event.call_id or event.fix_call_id)


def failed_call(event: FailureEvent, family_of: FamilyOf = _no_family) -> ToolCall:
    """The failed call a report's failure describes, as its harness's room built it: its tool,
    family, shell command and error (the family from `family_of` where the report names none;
    a shell call's command from its arguments where the report keeps it only there)."""
    family = event.family or family_of(event.tool)
    command = event.command
    if not command and family == "shell" and '"command"' in event.failed_args:
        import json

        try:
            args = json.loads(event.failed_args)
        except ValueError:
            args = None
        value = args.get(COMMAND) if isinstance(args, dict) else None
        command = value if isinstance(value, str) else ""
    return ToolCall(event.tool, family, command=command, ok=False, error=event.message,
                    exit_code=event.exit_code)


def _note(event: FailureEvent, family_of: FamilyOf = _no_family) -> tuple[FailureNote, str]:
    # The id the failure was given when it happened, where the report carries it; else the one
    # its call gets (the same function, the same record: the same id).
    fp = fingerprint(failed_call(event, family_of), event.language,
                     event.model or event.model_family)
    message = clip(event.message, NOTE_MESSAGE)
    if len(event.message.strip().encode()) > NOTE_MESSAGE:
        message = clip(message, NOTE_MESSAGE - 3) + "…"
    rule = event.resolving_rule if event.source == "memory" else event.rule_id
    # A fix is kept whole or not at all: a clipped fix is not runnable as shown.
    resolution = event.resolution.strip()
    resolution = resolution if len(resolution) <= MAX_RESOLUTION else ""
    note = FailureNote(event.fingerprint or fp.id, fp.cls, event.tool.strip().lower(), message,
                       event.source, event.resolved_by, rule, resolution,
                       event.attempts,
                       clip_words(normalize_message(salient_line(event.message)), NOTE_SALIENT),
                       clip_words(redact(salient_line(event.message)), NOTE_SALIENT),
                       kind=event.kind, fix_kind=event.fix_kind if resolution else "",
                       held=event.held, call_id=event.call_id, fix_call_id=event.fix_call_id,
                       files=tuple(redact(f) for f in event.fix_files),
                       commands=tuple(redact(c) for c in event.fix_commands),
                       what=_what_failed(event))
    return note, fp.cls


def _check_for(event: FailureEvent, note: FailureNote, now: float) -> Check | None:
    if event.recheck is None or note.source == "unresolved":
        return None
    spec = event.recheck

    def text(key: str) -> str:
        value = spec.get(key, "")
        return value if isinstance(value, str) else ""

    description = text("description").strip() or (
        f"{describe(note.cls)}: {clip(event.message, 160)}"
    )
    return new_check(
        description=description,
        now=now,
        kind=text("kind"),
        command=text("command"),
        path=text("path"),
        substring=text("substring"),
        fingerprint=note.fingerprint,
        cls=note.cls,
        rule_id=note.rule_id,
    )


def _what_failed(event: FailureEvent) -> str:
    """The failed call in its own words: its command, else its tool and file, else its tool."""
    import json

    try:
        args = json.loads(event.failed_args) if event.failed_args else None
    except ValueError:
        args = None
    if not isinstance(args, dict):
        args = {}
    if event.command.strip() and not isinstance(args.get(COMMAND), str):
        args[COMMAND] = event.command
    if args:  # in the shared words (the ledger keeps them so)
        command, path = args.get(COMMAND), args.get(PATH)
        if isinstance(command, str) and command.strip():
            return f"`{clip_words(redact(' '.join(command.split())), 120)}`"
        if isinstance(path, str) and path.strip():
            return f"{event.tool.strip()} on `{clip(path, 200)}`"
    return event.tool.strip() or "a tool call"


def _names_what_failed(event: FailureEvent) -> bool:
    """Whether a failure can be told by what failed: its command or file, or a tool that works
    on neither (an MCP tool), never a shell tool without its command."""
    what = _what_failed(event)
    if what.startswith("`") or " on `" in what:
        return True
    return event.family not in ("shell", "edit", "read", "search") and bool(event.tool.strip())


def _lessons(report: RunReport, notes: list[FailureNote], candidates: list[Candidate],
             at: str) -> list[Lesson]:
    out: list[Lesson] = []
    seen: set[str] = set()
    fixes: set[tuple[str, str]] = set()
    for cand in candidates:
        if not cand.held:
            continue  # a fix that did not hold is no lesson
        how = str(cand.repair.get("transform") or cand.repair.get("guidance", ""))
        how = how.strip().removeprefix("fixed by ")  # a harness's resolution often says it already
        # One fingerprint may hold several fixes (a gutter in one call, trailing blanks in the
        # next): one lesson per fix of it, not per fingerprint.
        if (cand.fingerprint, how) in fixes:
            continue
        fixes.add((cand.fingerprint, how))
        seen.add(cand.fingerprint)
        where = f" ({cand.language})" if cand.language else ""
        # The class in words, or (for a failure no class names) the error itself: "an
        # unrecognised failure" tells nothing of what failed.
        what = describe(cand.cls) if cand.cls != "unknown" else clip_words(
            redact(" ".join(salient_line(cand.message).split())), 120)
        if not what:
            continue
        out.append(Lesson(report.run_id, "convention",
                          f"{cand.tool}: {what}{where} — fixed by {how}", at))
    for note, event in zip(notes, report.failures, strict=False):
        if note.source != "unresolved" or note.fingerprint in seen or not event.to_repair:
            continue
        if not _names_what_failed(event):
            continue  # "Bash failed here" says nothing of what ran
        seen.add(note.fingerprint)
        said = clip_words(note.said or note.salient or first_line(note.message, 400), 160)
        out.append(Lesson(report.run_id, "failure",
                          f"{_what_failed(event)} failed here and stayed unresolved: {said}", at))
    out.extend(
        Lesson(report.run_id, "failure", f"Gate {gate.name} failed: {clip(gate.detail, 160)}"
               if gate.detail else f"Gate {gate.name} failed", at)
        for gate in report.gates if not gate.passed
    )
    return out[:MAX_LESSONS]


def _episode(report: RunReport, notes: list[FailureNote], at: float) -> dict[str, Any]:
    verdict = "success" if report.success() else ("partial" if report.files_changed
                                                   else "failure")
    if report.verdict == "unknown":
        verdict = "unknown"  # the record states none: no mark is shown of it
    return {
        "at": to_rfc3339(at),
        "run_id": report.run_id,
        "query": report.query,
        "summary": report.summary,
        "plan": [(f"{report.planned_tasks} task(s) planned, {report.completed_tasks} completed, "
                 f"{report.blocked_tasks} blocked")],
        "language": report.language,
        "model": report.model,
        "provider": report.provider,
        "role": report.role,
        "files_changed": list(report.files_changed),
        "tools_used": list(report.tools_used),
        "commands": [{"cmd": cmd, "ok": ok} for cmd, ok in report.commands],
        "command_counts": [{"key": k, "runs": n, "ok": ok, **({"shown": shown} if shown else {})}
                           for k, n, ok, shown in report.command_counts],
        "deleted": list(report.deleted),
        "edit_formats": [{"format": f, "attempted": n, "applied": ok}
                         for f, n, ok in report.edit_formats],
        "told": [{"text": text, "channel": channel, "evidence": list(evidence)}
                 for text, channel, evidence in report.told],
        # Failures to repair first: what is kept of a long session is what can teach.
        "failures": [n.to_dict() for n in sorted(notes, key=lambda n: bool(n.kind))[
            :MAX_EPISODE_FAILURES]],
        "gates": [{"name": g.name, "passed": g.passed, "detail": g.detail}
                  for g in report.gates],
        "tags": list(report.tags),
        "edit_format": report.edit_format,
        "edits_attempted": report.edits_attempted,
        "edits_applied": report.edits_applied,
        "llm_calls": report.llm_calls,
        "tokens_in": report.tokens_in,
        "tokens_out": report.tokens_out,
        "wall_ms": report.wall_ms,
        "retries": report.retries,
        "success": report.success(),
        "verdict": verdict,
    }


def metrics_for(report: RunReport, tally: Mapping[Source, int], at: float) -> Run:
    """S-16.5: the metrics record of a reflected run; every count over the same failure list."""
    return normalize(Run(
        run_id=report.run_id, at=at, model=report.model, provider=report.provider,
        language=report.language, label=report.label, tasks=report.planned_tasks,
        tasks_passed=report.completed_tasks, edit_format=report.edit_format,
        edits_attempted=report.edits_attempted, edits_applied=report.edits_applied,
        edits_first_attempt=report.edits_first_attempt, tool_calls=report.tool_calls,
        tool_errors=report.tool_errors, redundant_calls=report.redundant_calls,
        llm_calls=report.llm_calls, tokens_in=report.tokens_in, tokens_out=report.tokens_out,
        wall_ms=report.wall_ms, gates=tuple(Gate(g.name, g.passed) for g in report.gates),
        failures=len(report.failures),
        repair_hits=sum(1 for f in report.failures if f.rule_id or f.source == "memory"),
        resolved_from_memory=tally["memory"], resolved_from_llm=tally["llm"],
        unresolved=tally["unresolved"],
        failures_avoided=sum(1 for f in report.failures if f.avoided and f.source != "unresolved"),
    ))


def reflect(report: RunReport, now: float, family_of: FamilyOf = _no_family) -> Reflection:
    """Reflect on one finished run. Deterministic: the same report and `now` give the same output.
    `family_of` names a tool's family where a failure of the report does not (the daemon passes
    `harnesses.tool_family`), so its fingerprint is the one its call got when it happened."""
    at = report.ended_at if report.ended_at > 0 else now
    at_text = to_rfc3339(at)
    notes: list[FailureNote] = []
    candidates: list[Candidate] = []
    checks: list[Check] = []
    rule_outcomes: dict[str, bool] = {}
    for event in report.failures:
        note, cls = _note(event, family_of)
        notes.append(note)
        if event.rule_id:
            ok = event.source == "memory" and note.rule_id == event.rule_id
            rule_outcomes[event.rule_id] = rule_outcomes.get(event.rule_id, True) and ok
        if note.source == "memory" and note.rule_id and note.rule_id != event.rule_id:
            rule_outcomes[note.rule_id] = rule_outcomes.get(note.rule_id, True)
        if event.source == "memory" and event.held is False:
            rule_outcomes[note.rule_id] = False  # the repair from memory did not hold
        if (note.source not in ("unresolved", "memory") and note.fingerprint and event.to_repair
                and _learnable(event)):
            repair = derive_repair(event, cls)
            if repair is not None:
                # A fix that did not hold teaches no rule; a rule that holds it counts a failure.
                candidates.append(Candidate(note.fingerprint, cls, note.tool, event.language,
                                            event.model, clip(event.message, 300), repair,
                                            report.run_id, failed_args=event.failed_args,
                                            fixed_args=event.fixed_args,
                                            held=event.held is not False))
        check = _check_for(event, note, at)
        if check is not None and all(c.id != check.id for c in checks):
            checks.append(check)
    tally = count_sources(report.failures)
    rewards = tuple(
        Rewarded(d.decision, d.arm, reward(Outcome.from_dict(d.outcome)),
                 Outcome.from_dict(d.outcome).to_dict())
        for d in report.decisions
    )
    procedure = None
    if report.edit_format and report.edits_attempted > 0:
        procedure = {
            "topic": "edit_format",
            "option": report.edit_format,
            "family": model_family(report.model) if report.model else "",
            "language": report.language,
            "ok": report.edits_applied == report.edits_attempted,
            "note": f"{report.edits_applied}/{report.edits_attempted} hunks applied",
        }
    reflection = Reflection(
        run_id=report.run_id, at=at, report=report, notes=tuple(notes), tally=tally,
        rule_outcomes=dict(sorted(rule_outcomes.items())), candidates=tuple(candidates),
        checks=tuple(checks), rewards=rewards,
        lessons=tuple(_lessons(report, notes, candidates, at_text)),
        episode=_episode(report, notes, at), procedure=procedure,
        metrics=metrics_for(report, tally, at),
    )
    return replace(reflection, markdown=render_markdown(reflection))
