"""Regression memory: checks that prove a fixed failure has not come back (SPEC S-15).

Every fixed failure may carry a cheap re-check: a command, "file contains", "file absent" or
"file exists". The daemon never runs commands — `command_checks` are handed to the harness as
data, which runs them under its own permission system. Only file checks are evaluated offline, by
the store (`slmactor.stores.regressions`), on paths confined to the project root
(`slmactor.logic.loop.confine`). This module is the pure part: the record, id, kind inference, add /
prune ordering, and turning a file observation into a verdict.

Differences from the seed: a check whose file cannot be read safely (a symlink, a FIFO, a path
outside the root, an oversized file) is reported as **skipped** with the reason, neither passed nor
failed, and does not count as a run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from slmactor.logic.text.safecut import cut_chars
from slmactor.logic.text.strings import clip, hash_id
from slmactor.logic.text.timefmt import parse_rfc3339, to_rfc3339

MAX_CHECKS = 200
MAX_TEXT = 300
KINDS = ("command", "file_contains", "file_absent", "file_exists", "none")
FILE_KINDS = ("file_contains", "file_absent", "file_exists")


@dataclass(frozen=True, slots=True)
class Check:
    """One regression check (S-15.1). Times are epoch seconds (RFC 3339 on disk; 0 = never)."""

    id: str
    fingerprint: str = ""
    cls: str = ""
    description: str = ""
    kind: str = "none"
    command: str = ""
    path: str = ""
    substring: str = ""
    rule_id: str = ""
    added_at: float = 0.0
    last_run: float = 0.0
    last_ok: bool = False
    runs: int = 0
    fails: int = 0
    #: False for a check a project file brought without this user's signature: listed (its
    #: command withheld), never evaluated, never handed to a harness. Not part of `to_dict`.
    verified: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "fingerprint": self.fingerprint,
            "class": self.cls,
            "description": self.description,
            "kind": self.kind,
            "command": self.command,
            "path": self.path,
            "substring": self.substring,
            "rule_id": self.rule_id,
            "added_at": to_rfc3339(self.added_at) if self.added_at else "",
            "last_run": to_rfc3339(self.last_run) if self.last_run else "",
            "last_ok": self.last_ok,
            "runs": self.runs,
            "fails": self.fails,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Check | None:
        """A check from JSON, normalised; None when it has no description (S-15.3)."""

        def text(key: str) -> str:
            value = data.get(key, "")
            return value if isinstance(value, str) else ""

        def count(key: str) -> int:
            value = data.get(key, 0)
            return max(0, value) if isinstance(value, int) and not isinstance(value, bool) else 0

        check = new_check(
            description=text("description"),
            kind=text("kind"),
            command=text("command"),
            path=text("path"),
            substring=text("substring"),
            fingerprint=text("fingerprint"),
            cls=text("class"),
            rule_id=text("rule_id"),
            now=parse_rfc3339(text("added_at")) or 0.0,
        )
        if check is None:
            return None
        return replace(
            check,
            id=text("id") or check.id,
            last_run=parse_rfc3339(text("last_run")) or 0.0,
            last_ok=bool(data.get("last_ok", False)),
            runs=count("runs"),
            fails=count("fails"),
        )


def infer_kind(kind: str, command: str, path: str, substring: str) -> str:
    """S-15.2: a known explicit kind wins; else command → command, path + substring →
    file_contains, path → file_exists, else none."""
    kind = kind.strip().lower()
    if kind in KINDS:
        return kind
    if command.strip():
        return "command"
    if path.strip() and substring:
        return "file_contains"
    if path.strip():
        return "file_exists"
    return "none"


def new_check(
    *,
    description: str,
    now: float,
    kind: str = "",
    command: str = "",
    path: str = "",
    substring: str = "",
    fingerprint: str = "",
    cls: str = "",
    rule_id: str = "",
) -> Check | None:
    """Build a normalised check with its content id; None for a blank description (S-15.3)."""
    description = clip(description, MAX_TEXT)
    if not description:
        return None
    command, path = clip(command, MAX_TEXT), clip(path, MAX_TEXT)
    # The substring is matched byte for byte, so it is cut but never trimmed.
    substring = cut_chars(substring, MAX_TEXT)
    kind = infer_kind(kind, command, path, substring)
    fingerprint, rule_id = clip(fingerprint, MAX_TEXT), clip(rule_id, MAX_TEXT)
    check_id = hash_id("chk_", kind, command, path, substring, fingerprint, description)
    return Check(
        id=check_id,
        fingerprint=fingerprint,
        cls=clip(cls, MAX_TEXT),
        description=description,
        kind=kind,
        command=command,
        path=path,
        substring=substring,
        rule_id=rule_id,
        added_at=float(int(now)),
    )


def add(checks: Sequence[Check], check: Check, cap: int = MAX_CHECKS) -> tuple[list[Check], bool]:
    """Add `check` unless its id is known (idempotent); backstop-prune at twice the cap."""
    if any(c.id == check.id for c in checks):
        return list(checks), False
    out = [*checks, check]
    if cap > 0 and len(out) > 2 * cap:
        out = prune(out, cap)
    return out, True


def prune(checks: Iterable[Check], cap: int = MAX_CHECKS) -> list[Check]:
    """Keep the newest `cap` checks by `added_at`, returned oldest first (the save order)."""
    ordered = sorted(checks, key=lambda c: c.added_at)
    if cap <= 0 or len(ordered) <= cap:
        return ordered
    return ordered[len(ordered) - cap :]


def newest_first(checks: Iterable[Check]) -> list[Check]:
    """`Checks()`: newest first (ties by id for a stable listing)."""
    return sorted(checks, key=lambda c: (-c.added_at, c.id))


def runnable(checks: Iterable[Check]) -> list[Check]:
    return [c for c in newest_first(checks) if c.kind != "none"]


def offline(checks: Iterable[Check]) -> list[Check]:
    """The checks the daemon may evaluate itself: file kinds that name a path."""
    return [c for c in newest_first(checks) if c.kind in FILE_KINDS and c.path and c.verified]


def command_checks(checks: Iterable[Check]) -> list[Check]:
    """Command checks, returned to the harness as data — the daemon never executes them."""
    return [c for c in newest_first(checks)
            if c.kind == "command" and c.command and c.verified]


@dataclass(frozen=True, slots=True)
class FileObservation:
    """What the store saw at a check's path: `missing`, `present` (with whether the substring was
    found, when one was asked for) or `refused` (not safe to read, with the reason)."""

    state: Literal["missing", "present", "refused"]
    contains: bool = False
    reason: str = ""


Status = Literal["pass", "fail", "skipped"]


@dataclass(frozen=True, slots=True)
class CheckResult:
    check_id: str
    status: Status
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.check_id, "status": self.status, "detail": self.detail}


def judge(check: Check, seen: FileObservation) -> CheckResult:
    """S-15.4 verdicts: exists → `missing: p`; contains → `regressed: p no longer contains the
    fix`; absent → `regressed: p contains the bad pattern again` (and passes on a missing file)."""
    if seen.state == "refused":
        return CheckResult(check.id, "skipped", f"skipped: {check.path}: {seen.reason}")
    if check.kind == "file_exists":
        if seen.state == "missing":
            return CheckResult(check.id, "fail", f"missing: {check.path}")
        return CheckResult(check.id, "pass")
    if check.kind == "file_contains":
        if seen.state == "missing":
            return CheckResult(check.id, "fail", f"missing: {check.path}")
        if not seen.contains:
            return CheckResult(
                check.id, "fail", f"regressed: {check.path} no longer contains the fix"
            )
        return CheckResult(check.id, "pass")
    if check.kind == "file_absent":
        if seen.state == "present" and not check.substring:
            # No pattern named: the check asserts that the file itself stays gone.
            return CheckResult(check.id, "fail", f"regressed: {check.path} exists again")
        if seen.state == "present" and seen.contains:
            return CheckResult(
                check.id, "fail", f"regressed: {check.path} contains the bad pattern again"
            )
        return CheckResult(check.id, "pass")
    return CheckResult(check.id, "skipped", f"skipped: {check.kind} checks are not run offline")


def record(check: Check, result: CheckResult, now: float) -> Check:
    """Fold a result into the check's counters; a skipped check is not a run."""
    if result.status == "skipped":
        return check
    ok = result.status == "pass"
    return replace(
        check,
        runs=check.runs + 1,
        fails=check.fails + (0 if ok else 1),
        last_ok=ok,
        last_run=float(int(now)),
    )
