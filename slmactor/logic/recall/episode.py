"""The episode record (SPEC S-2.1), its normalisation (S-2.2) and its index projection (S-2.4).

An episode is one completed task or turn. `normalize_episode` is applied before anything is
persisted: the timestamp becomes whole UTC seconds, every text and list gets the seed's caps, the
verdict and id get their defaults. `Episode.from_dict` accepts what a person or an older program
may have written into the log by hand: unknown keys are ignored, wrong types become zero values,
and only a missing id makes a record unusable.

Fixed from the seed: `FailureNote.from_memory()` is false for `resolved_by = "retry"` (H-S-20:
the seed counted a plain retry as "fixed from memory").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from slmactor.logic.text.strings import clip, dedupe, first_line, hash_id
from slmactor.logic.text.timefmt import parse_rfc3339, to_rfc3339

# Caps of S-2.2.
TEXT_CAP = 600
PLAN_CAP, PLAN_ITEM_CAP = 12, 160
FILES_CAP, TOOLS_CAP, TAGS_CAP = 24, 16, 8
FAILURES_CAP, FAILURE_TEXT_CAP = 16, 240
#: A fix is kept whole or not at all (a clipped fix is not runnable as shown).
RESOLUTION_CAP = 600
#: Command keys (`distill.normalize_command`) counted per episode, paths it deleted, evidence
#: ids and paths a failure's fix names.
COMMAND_KEYS_CAP, DELETED_CAP, IDS_CAP, FORMATS_CAP = 64, 64, 8, 8
#: Lines of what a run was told kept with its episode, and their length.
TOLD_LINES_CAP, TOLD_CAP = 32, 600
GATES_CAP, GATE_DETAIL_CAP = 8, 200
COMMANDS_CAP, COMMAND_CAP = 8, 160
# Not in the seed: bounds on the short fields, so a normalised episode always fits one 32 KiB line.
PATH_CAP, NAME_CAP = 512, 160

VERDICTS = ("success", "partial", "failure", "unknown")
#: The verdict of a run whose record states none (an imported transcript): no mark is shown.
UNKNOWN = "unknown"
#: 9999-12-31T23:59:59Z: later (or non-finite) times in a hand-written record are ignored.
MAX_EPOCH = 253_402_300_799.0


def _str(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _int(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and abs(value) < 2**63:
        return int(value)
    return 0


def _strs(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        return ()
    return tuple(v for v in (_str(x) for x in value) if v)


def _maps(value: Any) -> list[Mapping[str, Any]]:
    if not isinstance(value, list | tuple):
        return []
    return [v for v in value if isinstance(v, Mapping)]


@dataclass(frozen=True, slots=True)
class CommandRun:
    """A shell command the task ran and whether it exited 0."""

    cmd: str
    ok: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"cmd": self.cmd, "ok": self.ok}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CommandRun:
        return cls(_str(data.get("cmd")), bool(data.get("ok")))


@dataclass(frozen=True, slots=True)
class FailureNote:
    """A failure seen during the task and, when it was fixed, how."""

    fingerprint: str = ""
    failure_class: str = ""
    tool: str = ""
    message: str = ""
    resolution: str = ""
    resolved_by: str = ""
    attempts: int = 0
    #: The line of the message that says what went wrong, normalised ("" in older
    #: episodes: readers fall back to the message's first line).
    salient: str = ""
    #: That line as the program wrote it (secrets redacted; "" in older episodes).
    said: str = ""
    #: What the failed call was when it was no failure to repair (`refusal`, `policy`,
    #: `not_run`, `benign`); "" for a failure.
    kind: str = ""
    #: What its fix was (`after_edit`, `typed`, …; "" when nothing was learned).
    fix_kind: str = ""
    #: False when the fix did not hold (the next test run failed, the edit was undone).
    held: bool | None = None
    #: The evidence: the failed call's id and the id of the call that got past it.
    call_id: str = ""
    fix_call_id: str = ""
    #: The files and commands its fix names (what a stale check looks for).
    files: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    #: The failed call in its own words (its command, else its tool and file).
    what: str = ""

    def resolved(self) -> bool:
        """S-2.3: resolved when something is named as the resolver."""
        return bool(self.resolved_by.strip())

    def from_memory(self) -> bool:
        """Fixed by remembered knowledge (a rule, a lesson) — not by the model, a human or a retry."""
        by = self.resolved_by.strip().lower()
        return bool(by) and by not in ("llm", "human", "retry")

    def to_dict(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "class": self.failure_class,
            "tool": self.tool,
            "message": self.message,
            "resolution": self.resolution,
            "resolved_by": self.resolved_by,
            "attempts": self.attempts,
            **({"salient": self.salient} if self.salient else {}),
            **({"said": self.said} if self.said else {}),
            **{key: value for key, value in (
                ("kind", self.kind), ("fix_kind", self.fix_kind), ("call_id", self.call_id),
                ("fix_call_id", self.fix_call_id), ("files", list(self.files)),
                ("commands", list(self.commands)), ("what", self.what)) if value},
            **({"held": False} if self.held is False else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FailureNote:
        return cls(
            _str(data.get("fingerprint")),
            _str(data.get("class")),
            _str(data.get("tool")),
            _str(data.get("message")),
            _str(data.get("resolution")),
            _str(data.get("resolved_by")),
            _int(data.get("attempts")),
            _str(data.get("salient")),
            _str(data.get("said")),
            kind=_str(data.get("kind")),
            fix_kind=_str(data.get("fix_kind")),
            held=False if data.get("held") is False else None,
            call_id=_str(data.get("call_id")),
            fix_call_id=_str(data.get("fix_call_id")),
            files=_strs(data.get("files")),
            commands=_strs(data.get("commands")),
            what=_str(data.get("what")),
        )


@dataclass(frozen=True, slots=True)
class Told:
    """One line memory told a run's model: the text, where (`block`, `advice`), and the ids of
    the records it rested on."""

    text: str
    channel: str = "block"
    evidence: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "channel": self.channel, "evidence": list(self.evidence)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Told:
        return cls(_str(data.get("text")), _str(data.get("channel")) or "block",
                   _strs(data.get("evidence")))


@dataclass(frozen=True, slots=True)
class CommandCount:
    """How often a session ran one command (keyed as the seed's S-5.2 names commands) and how
    often it exited 0; `shown`: the command as one of its runs ran it (what memory may say of
    it: the key drops flags that may be what made it run), "" when no run can be shown."""

    key: str
    runs: int = 0
    ok: int = 0
    shown: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "runs": self.runs, "ok": self.ok,
                **({"shown": self.shown} if self.shown else {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CommandCount:
        return cls(_str(data.get("key")), max(0, _int(data.get("runs"))),
                   max(0, _int(data.get("ok"))), _str(data.get("shown")))


@dataclass(frozen=True, slots=True)
class EditCount:
    """How many edit calls of one edit format a session made, and how many applied."""

    format: str
    attempted: int = 0
    applied: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"format": self.format, "attempted": self.attempted, "applied": self.applied}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EditCount:
        attempted = max(0, _int(data.get("attempted")))
        return cls(_str(data.get("format")), attempted,
                   min(attempted, max(0, _int(data.get("applied")))))


@dataclass(frozen=True, slots=True)
class GateResult:
    """One verification gate (tests, lint, build) and its outcome."""

    name: str
    passed: bool = False
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GateResult:
        return cls(_str(data.get("name")), bool(data.get("passed")), _str(data.get("detail")))


@dataclass(frozen=True, slots=True)
class Episode:
    """One completed task or turn (S-2.1). `at` is epoch seconds (0 = not set yet)."""

    id: str = ""
    at: float = 0.0
    run_id: str = ""
    query: str = ""
    summary: str = ""
    plan: tuple[str, ...] = ()
    language: str = ""
    model: str = ""
    provider: str = ""
    role: str = ""
    files_changed: tuple[str, ...] = ()
    tools_used: tuple[str, ...] = ()
    commands: tuple[CommandRun, ...] = ()
    failures: tuple[FailureNote, ...] = ()
    gates: tuple[GateResult, ...] = ()
    tags: tuple[str, ...] = ()
    #: Every command the run ran, counted by key (`CommandCount`; empty in older episodes).
    command_counts: tuple[CommandCount, ...] = ()
    #: Paths the run deleted and did not create again (what makes a claim naming them stale).
    deleted: tuple[str, ...] = ()
    #: What memory told the run's model, line by line (`Told`; what `memory audit` checks).
    told: tuple[Told, ...] = ()
    edit_format: str = ""
    edits_attempted: int = 0
    edits_applied: int = 0
    #: Edit calls by edit format (`EditCount`; empty in older episodes).
    edit_formats: tuple[EditCount, ...] = ()
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    wall_ms: int = 0
    retries: int = 0
    success: bool = False
    verdict: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of one `episodes.jsonl` line, keys in the order of S-2.1."""
        return {
            "id": self.id,
            "at": to_rfc3339(self.at) if self.at > 0 else "",
            "run_id": self.run_id,
            "query": self.query,
            "summary": self.summary,
            "plan": list(self.plan),
            "language": self.language,
            "model": self.model,
            "provider": self.provider,
            "role": self.role,
            "files_changed": list(self.files_changed),
            "tools_used": list(self.tools_used),
            "commands": [c.to_dict() for c in self.commands],
            "failures": [f.to_dict() for f in self.failures],
            "gates": [g.to_dict() for g in self.gates],
            "tags": list(self.tags),
            **({"command_counts": [c.to_dict() for c in self.command_counts]}
               if self.command_counts else {}),
            **({"deleted": list(self.deleted)} if self.deleted else {}),
            **({"told": [t.to_dict() for t in self.told]} if self.told else {}),
            "edit_format": self.edit_format,
            "edits_attempted": self.edits_attempted,
            "edits_applied": self.edits_applied,
            **({"edit_formats": [f.to_dict() for f in self.edit_formats]}
               if self.edit_formats else {}),
            "llm_calls": self.llm_calls,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "wall_ms": self.wall_ms,
            "retries": self.retries,
            "success": self.success,
            "verdict": self.verdict,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Episode:
        """Lenient parse: unknown keys ignored, wrong types → zero values, `at` RFC 3339 or epoch."""
        raw_at = data.get("at")
        at = 0.0
        if isinstance(raw_at, str):
            at = parse_rfc3339(raw_at) or 0.0
        elif isinstance(raw_at, int | float) and not isinstance(raw_at, bool):
            at = float(raw_at) if math.isfinite(raw_at) and 0 < raw_at < MAX_EPOCH else 0.0
        return cls(
            id=_str(data.get("id")).strip(),
            at=at,
            run_id=_str(data.get("run_id")),
            query=_str(data.get("query")),
            summary=_str(data.get("summary")),
            plan=_strs(data.get("plan")),
            language=_str(data.get("language")),
            model=_str(data.get("model")),
            provider=_str(data.get("provider")),
            role=_str(data.get("role")),
            files_changed=_strs(data.get("files_changed")),
            tools_used=_strs(data.get("tools_used")),
            commands=tuple(CommandRun.from_dict(m) for m in _maps(data.get("commands"))),
            failures=tuple(FailureNote.from_dict(m) for m in _maps(data.get("failures"))),
            gates=tuple(GateResult.from_dict(m) for m in _maps(data.get("gates"))),
            tags=_strs(data.get("tags")),
            command_counts=tuple(CommandCount.from_dict(m)
                                 for m in _maps(data.get("command_counts"))),
            deleted=_strs(data.get("deleted")),
            told=tuple(Told.from_dict(m) for m in _maps(data.get("told"))),
            edit_format=_str(data.get("edit_format")),
            edits_attempted=_int(data.get("edits_attempted")),
            edits_applied=_int(data.get("edits_applied")),
            edit_formats=tuple(EditCount.from_dict(m) for m in _maps(data.get("edit_formats"))),
            llm_calls=_int(data.get("llm_calls")),
            tokens_in=_int(data.get("tokens_in")),
            tokens_out=_int(data.get("tokens_out")),
            wall_ms=_int(data.get("wall_ms")),
            retries=_int(data.get("retries")),
            success=bool(data.get("success")),
            verdict=_str(data.get("verdict")),
        )


def default_verdict(success: bool, files_changed: Iterable[str]) -> str:
    """`success` if it succeeded, else `partial` if it changed files, else `failure` (S-2.2)."""
    if success:
        return "success"
    return "partial" if any(f.strip() for f in files_changed) else "failure"


def episode_id(at: float, query: str, files: Iterable[str], run_id: str = "") -> str:
    """The id of an episode that came without one.

    A run's episode is named by its run id: a `run.finish` retried or replayed after a
    crash lands on the same id (stored once), and two runs of one task in one second get two.
    Only an episode without a run id falls back to S-2.2's `hashID("ep_", at RFC 3339, query,
    join(files, ","))`.
    """
    if run_id.strip():
        return run_episode_id(run_id)
    return hash_id("ep_", to_rfc3339(at), query, ",".join(files))


def run_episode_id(run_id: str) -> str:
    """The episode id of run `run_id` (the same for every retry of its `run.finish`)."""
    return hash_id("ep_", "run", run_id.strip())


def request_episode_id(request_id: str) -> str:
    """The episode id of a `run.finish` without a run id: named by the client's request id,
    which a client keeps across its retries of one request."""
    return hash_id("ep_", "request", request_id.strip())


def normalize_episode(episode: Episode, now: float) -> Episode:
    """Apply S-2.2 (always before persisting): caps, defaults, whole-second UTC time, id."""
    at = float(int(episode.at)) if 0 < episode.at < MAX_EPOCH else float(int(now))
    files = tuple(dedupe((clip(f, PATH_CAP) for f in episode.files_changed), FILES_CAP))
    query = clip(episode.query, TEXT_CAP)
    failures = tuple(
        replace(
            f,
            fingerprint=clip(f.fingerprint, NAME_CAP),
            failure_class=clip(f.failure_class, NAME_CAP),
            tool=clip(f.tool, NAME_CAP),
            resolved_by=clip(f.resolved_by, NAME_CAP),
            message=clip(f.message, FAILURE_TEXT_CAP),
            # A fix too long to keep whole is not kept (never told clipped).
            resolution=f.resolution if len(f.resolution.encode()) <= RESOLUTION_CAP else "",
            fix_kind=f.fix_kind if len(f.resolution.encode()) <= RESOLUTION_CAP else "",
            attempts=max(0, f.attempts),
            call_id=clip(f.call_id, NAME_CAP),
            fix_call_id=clip(f.fix_call_id, NAME_CAP),
            files=tuple(p for p in f.files if len(p) <= PATH_CAP)[:IDS_CAP],
            commands=tuple(c for c in f.commands if len(c) <= RESOLUTION_CAP)[:IDS_CAP],
            what=clip(f.what, FAILURE_TEXT_CAP),
        )
        for f in episode.failures[:FAILURES_CAP]
    )
    gates = tuple(
        replace(g, name=clip(g.name, NAME_CAP), detail=clip(g.detail, GATE_DETAIL_CAP))
        for g in episode.gates[:GATES_CAP]
    )
    commands = tuple(
        CommandRun(first_line(c.cmd, COMMAND_CAP), c.ok)
        for c in episode.commands[-COMMANDS_CAP:]
    )
    verdict = episode.verdict.strip() or default_verdict(episode.success, files)
    counts = tuple(replace(c, key=clip(c.key, COMMAND_CAP), shown=c.shown if len(
        c.shown.encode()) <= COMMAND_CAP else "") for c in episode.command_counts
                   if c.key.strip())[:COMMAND_KEYS_CAP]
    deleted = tuple(dedupe((p for p in episode.deleted if len(p) <= PATH_CAP), DELETED_CAP))
    return replace(
        episode,
        id=episode.id.strip() or episode_id(at, query, files, clip(episode.run_id, NAME_CAP)),
        at=at,
        query=query,
        summary=clip(episode.summary, TEXT_CAP),
        plan=tuple(dedupe((clip(p, PLAN_ITEM_CAP) for p in episode.plan), PLAN_CAP)),
        language=clip(episode.language, NAME_CAP).lower(),
        model=clip(episode.model, NAME_CAP),
        provider=clip(episode.provider, NAME_CAP),
        role=clip(episode.role, NAME_CAP),
        run_id=clip(episode.run_id, NAME_CAP),
        files_changed=files,
        tools_used=tuple(dedupe((clip(t, NAME_CAP) for t in episode.tools_used), TOOLS_CAP)),
        commands=commands,
        failures=failures,
        gates=gates,
        command_counts=counts,
        deleted=deleted,
        told=tuple(Told(clip(t.text, TOLD_CAP), clip(t.channel, NAME_CAP),
                        tuple(clip(e, NAME_CAP) for e in t.evidence[:IDS_CAP]))
                   for t in episode.told if t.text.strip())[:TOLD_LINES_CAP],
        tags=tuple(dedupe((clip(t, NAME_CAP) for t in episode.tags), TAGS_CAP)),
        edit_format=clip(episode.edit_format, NAME_CAP),
        edit_formats=tuple(replace(f, format=clip(f.format, NAME_CAP))
                           for f in episode.edit_formats if f.format.strip())[:FORMATS_CAP],
        verdict=clip(verdict, NAME_CAP),
    )


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """The searchable projection of an episode kept in `episodes.index.json` (S-2.4)."""

    id: str
    at: float
    offset: int
    query: str = ""
    summary: str = ""
    files: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    language: str = ""
    model: str = ""
    success: bool = False
    failures: int = 0
    #: False for an episode whose log line this user did not sign (a committed store a
    #: repository brought): recalled labelled, its texts quoted with commands withheld.
    verified: bool = True

    @classmethod
    def of(cls, episode: Episode, offset: int, verified: bool = True) -> IndexEntry:
        return cls(
            id=episode.id,
            at=episode.at,
            offset=offset,
            query=episode.query,
            summary=episode.summary,
            files=episode.files_changed,
            tools=episode.tools_used,
            tags=episode.tags,
            language=episode.language,
            model=episode.model,
            success=episode.success,
            failures=len(episode.failures),
            verified=verified,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "at": to_rfc3339(self.at) if self.at > 0 else "",
            "offset": self.offset,
            "query": self.query,
            "summary": self.summary,
            "files": list(self.files),
            "tools": list(self.tools),
            "tags": list(self.tags),
            "language": self.language,
            "model": self.model,
            "success": self.success,
            "failures": self.failures,
        }
        if not self.verified:
            out["verified"] = False
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IndexEntry | None:
        """Parse one index entry; None when it has no id or no usable offset."""
        entry_id = _str(data.get("id")).strip()
        offset = data.get("offset")
        if not entry_id or not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            return None
        at_raw = data.get("at")
        at = parse_rfc3339(at_raw) or 0.0 if isinstance(at_raw, str) else 0.0
        return cls(
            id=entry_id,
            at=at,
            offset=offset,
            query=_str(data.get("query")),
            summary=_str(data.get("summary")),
            files=_strs(data.get("files")),
            tools=_strs(data.get("tools")),
            tags=_strs(data.get("tags")),
            language=_str(data.get("language")),
            model=_str(data.get("model")),
            success=bool(data.get("success")),
            failures=_int(data.get("failures")),
            verified=data.get("verified") is not False,
        )
