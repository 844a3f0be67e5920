"""Read-only records of working memory (SPEC S-1.10 `Snapshot`): tool events, commands, failures.

`WorkingMemory` keeps its live state in cheap tuples and dicts (the hot path appends, nothing
more); these frozen records are what leaves it: `snapshot()` for the `working.snapshot` ask, the
CLI's `--json` and tests. Every record has `to_dict()` / `from_dict()`; timestamps are RFC 3339
UTC strings in dicts (`timefmt`), epoch seconds in the records. `from_dict` is forgiving (a
missing or wrong-typed field takes its zero value) because a snapshot may come from another
version of the daemon.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from slmactor.logic.text.timefmt import parse_rfc3339, to_rfc3339


def _str(d: dict[str, Any], key: str) -> str:
    value = d.get(key)
    return value if isinstance(value, str) else ""


def _int(d: dict[str, Any], key: str) -> int:
    value = d.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _bool(d: dict[str, Any], key: str, default: bool) -> bool:
    value = d.get(key)
    return value if isinstance(value, bool) else default


def _time(d: dict[str, Any], key: str) -> float:
    value = d.get(key)
    if isinstance(value, bool):
        return 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return parse_rfc3339(value) or 0.0
    return 0.0


def _stamp(epoch: float) -> str:
    return to_rfc3339(epoch) if epoch > 0 else ""


def _strs(d: dict[str, Any], key: str) -> list[str]:
    value = d.get(key)
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, str)]


def _dicts(d: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = d.get(key)
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, dict)]


@dataclass(frozen=True, slots=True)
class ToolEvent:
    """One recorded tool call (S-1.3): `args` ≤ 200 bytes, `error` its first line ≤ 160 bytes."""

    tool: str
    path: str = ""
    args: str = ""
    command: str = ""
    ok: bool = True
    error: str = ""
    key: str = ""
    at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "path": self.path,
            "args": self.args,
            "command": self.command,
            "ok": self.ok,
            "error": self.error,
            "key": self.key,
            "at": _stamp(self.at),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ToolEvent:
        return cls(
            tool=_str(d, "tool"),
            path=_str(d, "path"),
            args=_str(d, "args"),
            command=_str(d, "command"),
            ok=_bool(d, "ok", True),
            error=_str(d, "error"),
            key=_str(d, "key"),
            at=_time(d, "at"),
        )


@dataclass(frozen=True, slots=True)
class CommandRun:
    """A shell command (first line ≤ 120 bytes) and whether it succeeded."""

    command: str
    ok: bool

    @property
    def status(self) -> str:
        """`"ok"` or `"failed"`, as the rendered digest shows it (S-1.3)."""
        return "ok" if self.ok else "failed"

    def to_dict(self) -> dict[str, Any]:
        return {"command": self.command, "status": self.status}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CommandRun:
        return cls(command=_str(d, "command"), ok=_str(d, "status") != "failed")


@dataclass(frozen=True, slots=True)
class FailureNote:
    """An open or resolved failure of this run (S-1.4, S-1.5)."""

    key: str
    tool: str = ""
    path: str = ""
    message: str = ""
    attempts: int = 1
    first_at: float = 0.0
    last_at: float = 0.0
    resolution: str = ""
    resolved_by: str = ""

    def fixed_by(self) -> str:
        """What fixed it, for the digest: resolution, else resolved_by, else "unknown" (S-1.7)."""
        return self.resolution or self.resolved_by or "unknown"

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "tool": self.tool,
            "path": self.path,
            "message": self.message,
            "attempts": self.attempts,
            "first_at": _stamp(self.first_at),
            "last_at": _stamp(self.last_at),
            "resolution": self.resolution,
            "resolved_by": self.resolved_by,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FailureNote:
        return cls(
            key=_str(d, "key"),
            tool=_str(d, "tool"),
            path=_str(d, "path"),
            message=_str(d, "message"),
            attempts=_int(d, "attempts"),
            first_at=_time(d, "first_at"),
            last_at=_time(d, "last_at"),
            resolution=_str(d, "resolution"),
            resolved_by=_str(d, "resolved_by"),
        )


@dataclass(frozen=True, slots=True)
class Counters:
    """Tool calls, failed calls and redundant (repeated-signature) calls of a run (S-1.10)."""

    calls: int = 0
    errors: int = 0
    redundant: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"calls": self.calls, "errors": self.errors, "redundant": self.redundant}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Counters:
        return cls(calls=_int(d, "calls"), errors=_int(d, "errors"), redundant=_int(d, "redundant"))


@dataclass(frozen=True, slots=True)
class WorkingSnapshot:
    """A copy of every field of one run's working memory (S-1.10). Lists are oldest first,
    except `focus`, which is most-recent first (S-1.1)."""

    run_id: str = ""
    task: str = ""
    role: str = ""
    summary: str = ""
    focus: list[str] = field(default_factory=list)
    events: list[ToolEvent] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    files_edited: list[str] = field(default_factory=list)
    commands: list[CommandRun] = field(default_factory=list)
    open_failures: list[FailureNote] = field(default_factory=list)
    resolved_failures: list[FailureNote] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    counters: Counters = field(default_factory=Counters)
    last_at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "task": self.task,
            "role": self.role,
            "summary": self.summary,
            "focus": list(self.focus),
            "events": [e.to_dict() for e in self.events],
            "files_read": list(self.files_read),
            "files_edited": list(self.files_edited),
            "commands": [c.to_dict() for c in self.commands],
            "open_failures": [f.to_dict() for f in self.open_failures],
            "resolved_failures": [f.to_dict() for f in self.resolved_failures],
            "decisions": list(self.decisions),
            "counters": self.counters.to_dict(),
            "last_at": _stamp(self.last_at),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WorkingSnapshot:
        counters = d.get("counters")
        return cls(
            run_id=_str(d, "run_id"),
            task=_str(d, "task"),
            role=_str(d, "role"),
            summary=_str(d, "summary"),
            focus=_strs(d, "focus"),
            events=[ToolEvent.from_dict(e) for e in _dicts(d, "events")],
            files_read=_strs(d, "files_read"),
            files_edited=_strs(d, "files_edited"),
            commands=[CommandRun.from_dict(c) for c in _dicts(d, "commands")],
            open_failures=[FailureNote.from_dict(f) for f in _dicts(d, "open_failures")],
            resolved_failures=[FailureNote.from_dict(f) for f in _dicts(d, "resolved_failures")],
            decisions=_strs(d, "decisions"),
            counters=Counters.from_dict(counters) if isinstance(counters, dict) else Counters(),
            last_at=_time(d, "last_at"),
        )
