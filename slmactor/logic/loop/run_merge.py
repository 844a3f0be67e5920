"""The run report the daemon can vouch for, and its merge with the one a harness sends.

A harness that told the daemon every tool call should not have to count them again for
`run.finish`: `seen_report` turns the run's working-memory snapshot (`working.snapshot`'s
`snapshot`) into run-report fields (SPEC S-14.1) — calls, errors, redundant calls, files edited,
commands, tools, failures open and resolved, task, role, times — and `merge_report` combines them
with whatever report the harness sent, so nothing is counted twice:

* counters (`tool_calls`, `tool_errors`, `redundant_calls`) are the larger of the two: both count
  the same calls, one of them possibly fewer of them (working memory saw only what was told);
* lists (`files_changed`, `tools_used`, `commands`) are unions, the harness's entries first;
* failures: the harness's list, plus each failure the daemon saw that the harness did not report
  — the same failure is recognised by its tool and the first 120 characters of its message's
  first line, case-folded (how working memory keys failures, S-1.4);
* every other field: the harness's value when it gave one, else the daemon's.

Pure: no I/O, no clock. Both inputs are read tolerantly (wrong types count as absent), since the
report comes from another program and the snapshot possibly from another daemon version.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from slmactor.logic.loop.run_report import fingerprint_id
from slmactor.logic.text.timefmt import parse_rfc3339

#: Fields that count the run's tool calls; the merged value is the larger one.
COUNTERS = ("tool_calls", "tool_errors", "redundant_calls")
#: Characters of a failure message's first line that identify it (working memory's key uses 120).
FAILURE_KEY_CHARS = 120


def _str(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if not math.isfinite(value) or value <= 0:
        return 0
    return int(min(value, 2**62))


def _maps(data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = data.get(key)
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _strings(data: Mapping[str, Any], key: str) -> list[str]:
    value = data.get(key)
    return [v for v in value if isinstance(v, str) and v.strip()] if isinstance(value, list) else []


def failure_identity(tool: str, message: str) -> tuple[str, str]:
    """What makes two reports of a failure the same failure."""
    line = message.strip().split("\n", 1)[0].strip() if message else ""
    return tool.strip().lower(), line[:FAILURE_KEY_CHARS].lower()


def _failure_identity(failure: Mapping[str, Any]) -> tuple[str, str]:
    signal = failure.get("signal")
    source = signal if isinstance(signal, Mapping) else failure
    return failure_identity(_str(source, "tool"), _str(source, "message"))


def _union(first: Iterable[str], second: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


def seen_report(snapshot: Mapping[str, Any], run_id: str = "") -> dict[str, Any]:
    """Run-report fields for what working memory holds of a run; {} when it holds nothing."""
    if not snapshot:
        return {}
    counters = snapshot.get("counters")
    counted = counters if isinstance(counters, Mapping) else {}
    events = _maps(snapshot, "events")
    report: dict[str, Any] = {
        "run_id": _str(snapshot, "run_id") or run_id,
        "tool_calls": _count(counted.get("calls")),
        "tool_errors": _count(counted.get("errors")),
        "redundant_calls": _count(counted.get("redundant")),
        "files_changed": _strings(snapshot, "files_edited"),
        "commands": [
            {"cmd": _str(c, "command"), "ok": _str(c, "status") != "failed"}
            for c in _maps(snapshot, "commands") if _str(c, "command")
        ],
    }
    failures: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    # Resolved first: the same failure opened by record_tool (open) and by evolve.on_failure
    # (then resolved under its fingerprint) is one failure, and it was resolved.
    for note, resolved in [(f, True) for f in _maps(snapshot, "resolved_failures")] + [
        (f, False) for f in _maps(snapshot, "open_failures")
    ]:
        identity = failure_identity(_str(note, "tool"), _str(note, "message"))
        if identity in seen or identity == ("", ""):
            continue
        seen.add(identity)
        failure: dict[str, Any] = {
            "tool": _str(note, "tool"),
            "message": _str(note, "message"),
            "attempts": max(1, _count(note.get("attempts"))),
        }
        if fingerprint_id(note.get("key")):
            # Opened by evolve.on_failure under the fingerprint of the whole message; working
            # memory keeps only its first line, so the report names the fingerprint too.
            failure["fingerprint"] = _str(note, "key")
        if resolved:
            failure["resolved_by"] = _str(note, "resolved_by") or "other"
            failure["resolution"] = _str(note, "resolution")
            by = failure["resolved_by"]
            if by.lower().startswith("rule:"):
                failure["rule_id"] = by[5:].strip()
        failures.append(failure)
    report["failures"] = failures
    tools = [_str(e, "tool") for e in events] + [f["tool"] for f in failures]
    report["tools_used"] = _union([], (t for t in tools if t))
    times = [t for t in (parse_rfc3339(_str(e, "at")) for e in events) if t]
    if times:
        report["started_at"] = min(times)
    last = parse_rfc3339(_str(snapshot, "last_at"))
    if last:
        report["ended_at"] = last
    for field, key in (("query", "task"), ("role", "role"), ("summary", "summary")):
        text = _str(snapshot, key)
        if text:
            report[field] = text
    return report


def merge_report(given: Mapping[str, Any], seen: Mapping[str, Any]) -> dict[str, Any]:
    """The harness's report completed with what the daemon saw, nothing counted twice."""
    merged: dict[str, Any] = dict(given)
    if not seen:
        return merged
    for key, value in seen.items():
        if key in COUNTERS:
            merged[key] = max(_count(given.get(key)), _count(value))
        elif key in ("files_changed", "tools_used"):
            merged[key] = _union(_strings(given, key), _strings(seen, key))
        elif key == "commands":
            mine = _maps(given, key)
            commands = {_str(c, "cmd") for c in mine}
            merged[key] = [*mine, *(c for c in _maps(seen, key) if _str(c, "cmd") not in commands)]
        elif key == "failures":
            mine = _maps(given, key)
            reported = {_failure_identity(f) for f in mine}
            merged[key] = [
                *mine, *(f for f in _maps(seen, key) if _failure_identity(f) not in reported)
            ]
        elif not _present(given.get(key)):
            merged[key] = value
    return merged


def _present(value: Any) -> bool:
    """A field the harness actually filled in (a zero, blank or wrong-typed value is not)."""
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, bool):
        return True
    if isinstance(value, int | float):
        return value > 0
    return value is not None and not (isinstance(value, list | dict) and not value)
