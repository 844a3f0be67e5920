"""A recorded session as `import sessions` learns from it: what every harness room's session
reader returns (`SessionRecord`), and the pure steps from it to a `run.finish` report.

A room reads its harness's own on-disk history (a transcript, a rollout, a recorded chat, a task
history, a trajectory) into one record: session id, the directory it ran in, model, first
prompt, tokens, timestamps and every tool call as a session-ledger `call` entry
(`slmactor.harnesses.base.call_entry`). The report is built by the same `session_report` hook
sessions use, so an imported session and a hooked one are learned from alike. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from slmactor.logic.loop.transcripts import TranscriptStats

#: Longest arguments one imported call keeps: a report must fit the daemon's 1 MiB frame with
#: up to 200 failures, each with its failed and fixed arguments.
MAX_IMPORTED_ARGS = 2000


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One session of a harness's recorded history."""

    session_id: str
    #: The directory the session ran in ("" when the record does not say).
    cwd: str
    stats: TranscriptStats


def run_id(harness: str, session_id: str) -> str:
    """The run id an imported session is named by once: `import:<harness>:<session id>`."""
    return f"import:{harness}:{session_id}"


def _inside(path: str, root: str) -> str:
    """`path` relative to `root` when it lies under it ("" when it does not): slashes either
    way, a Windows drive's case aside."""
    p, r = path.replace("\\", "/"), root.replace("\\", "/").rstrip("/")
    if not r or not p.startswith(("/", r[:2])):
        return ""
    if p.lower().startswith(r.lower() + "/") if ":" in r[:3] else p.startswith(r + "/"):
        return p[len(r) + 1:]
    return ""


def _clip(call: Mapping[str, Any], cwd: str = "") -> dict[str, Any]:
    out = dict(call)
    path = out.get("path")
    if cwd and isinstance(path, str):
        # A path under the directory the session ran in is a path of the project, wherever
        # the project is checked out now.
        rel = _inside(path, cwd)
        if rel:
            out["path"] = rel
    args = out.get("args")
    if isinstance(args, str) and len(args) > MAX_IMPORTED_ARGS:
        from slmactor.logic.text.safecut import cut_chars

        # Never half a secret: the redactor must still recognise what is kept.
        out["args"] = cut_chars(args, MAX_IMPORTED_ARGS) + "…"
    return out


def continuation(record: SessionRecord, seen: int) -> SessionRecord:
    """What a session did after its first `seen` calls were imported: those calls only (its
    model use cannot be split by call, so the part reports none)."""
    from dataclasses import replace

    rest = record.stats.calls[seen:]
    stamps = [float(c["at"]) for c in rest if isinstance(c.get("at"), (int, float)) and c["at"]]
    stats = TranscriptStats(model=record.stats.model, started_at=min(stamps) if stamps else 0.0,
                            ended_at=record.stats.ended_at, calls=rest)
    return replace(record, stats=stats)


def import_report(harness: str, record: SessionRecord, project: str, *,
                  is_edit: Callable[[str], bool], edit_format_of: Callable[[str], str],
                  merge: Callable[..., list[dict[str, Any]]], part: int = 1) -> dict[str, Any]:
    """The `run.finish` report of an imported session (its `part`-th part: `<run id>#part`
    after the first). `merge` is the session ledger's `merge_transcript` (it redacts each call
    as the hook ledger does and makes paths inside `project` relative), so an imported call is
    stored exactly like a hooked one."""
    from slmactor.logic.loop.session_report import session_report

    stats = record.stats
    entries = merge([], [_clip(c, record.cwd) for c in stats.calls], is_edit, project)
    now = stats.ended_at or stats.started_at
    name = run_id(harness, record.session_id)
    report = session_report(name if part <= 1 else f"{name}#{part}", harness, entries, None, stats,
                            now, is_edit, edit_format_of=edit_format_of, first_segment=part <= 1)
    report["tags"] = ["import", harness]
    # A transcript records what was done, never whether the task was: no verdict is claimed.
    report.pop("planned_tasks", None)
    report.pop("completed_tasks", None)
    report["verdict"] = "unknown"
    if stats.ended_at:
        report["ended_at"] = max(stats.ended_at, report.get("started_at") or 0.0)
    return report


def failure_classes(report: Mapping[str, Any]) -> dict[str, int]:
    """Failure class → count over a report's failures (`fingerprint.analyze`; failures a
    pre-flight rewrite avoided are not failures that happened)."""
    counts: dict[str, int] = {}
    for failure in report.get("failures") or ():
        if not isinstance(failure, Mapping) or failure.get("avoided"):
            continue
        tool, message = str(failure.get("tool", "")), str(failure.get("message", ""))
        model = str(failure.get("model", "") or report.get("model", ""))
        cls = _class_of(tool, message, model) if len(message) <= MAX_MEMO_MESSAGE else \
            _analyze_class(tool, message, model)
        counts[cls] = counts.get(cls, 0) + 1
    return counts


#: Failure messages up to this long are classified once per process (`_class_of`): an imported
#: history repeats its errors (`File does not exist.`, a test run's summary) across sessions.
MAX_MEMO_MESSAGE = 2048


def _analyze_class(tool: str, message: str, model: str) -> str:
    from slmactor.logic.failures.fingerprint import analyze

    return analyze(tool, message, model=model).cls


_class_of = lru_cache(maxsize=1024)(_analyze_class)
