"""Past work as a reader wants it: one entry per task, however often that task was run.

Recall ranks episodes, and each run of a task is its own episode — rightly, since each is a
separate record with its own outcome. But a reader shown three runs of "fix the failing tests" as
three identical lines learns nothing from the second and third. `past_tasks` folds the episodes
of one task (the same query, case and spacing aside) into one `PastTask` that counts its runs and
how many succeeded, keeps the newest run's outcome, summary and time, the union of the files
touched, and each distinct failure once with its latest known fix. Order: the best-ranked run of
each task decides the task's place.

An episode recall answered `verified: false` (a repository's committed store, its texts already
quoted with commands withheld) folds only with others of its kind and is rendered labelled, with
no outcome and no fix: it is not work done here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from slmactor.logic.text.trust import UNVERIFIED_LABEL

#: Failures kept per task (the newest first), files per task.
MAX_FAILURES = 3
MAX_FILES = 8


@dataclass(slots=True)
class PastFailure:
    """One distinct failure met while doing a task, and how it ended the last time."""

    tool: str
    message: str
    fix: str = ""
    times: int = 1
    #: Something later in its run got past it (with or without a fix worth telling).
    resolved: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "message": self.message, "fix": self.fix, "times": self.times,
                "resolved": self.resolved}


@dataclass(slots=True)
class PastTask:
    """Every recalled run of one task, folded."""

    task: str
    succeeded: bool
    at: str
    summary: str = ""
    runs: int = 1
    successes: int = 0
    files: list[str] = field(default_factory=list)
    failures: list[PastFailure] = field(default_factory=list)
    #: False for runs a repository's committed store brought (not work done here).
    verified: bool = True
    #: False when a run of it states no verdict (an imported transcript): no outcome is said.
    outcome_known: bool = True

    def to_dict(self) -> dict[str, Any]:
        out = {"task": self.task, "succeeded": self.succeeded, "at": self.at,
               "summary": self.summary, "runs": self.runs, "successes": self.successes,
               "files": list(self.files), "failures": [f.to_dict() for f in self.failures]}
        if not self.verified:
            out.update(verified=False, source=UNVERIFIED_LABEL)
        return out


def task_key(query: str) -> str:
    """What makes two queries the same task: their words, case and spacing aside."""
    return " ".join(query.lower().split())


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value.strip() if isinstance(value, str) else ""


def _fix(failure: Mapping[str, Any]) -> str:
    """The fix in words ("" when none is known: who resolved it, `llm` or `retry`, is none)."""
    return _text(failure, "resolution").removeprefix("fixed by ").strip()


def _failures(episode: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    raw = episode.get("failures")
    return [f for f in raw if isinstance(f, Mapping)] if isinstance(raw, list) else []


def _files(episode: Mapping[str, Any]) -> list[str]:
    raw = episode.get("files_changed") or episode.get("files") or []
    return [f for f in raw if isinstance(f, str) and f.strip()] if isinstance(raw, list) else []


def _when(episode: Mapping[str, Any]) -> tuple[str, int]:
    """When a run ended: its RFC 3339 UTC time (such strings order as their times), then its
    offset in the episode log (runs ended in the same second are in log order)."""
    offset = episode.get("offset")
    number = offset if isinstance(offset, int) and not isinstance(offset, bool) else 0
    return _text(episode, "at"), number


def past_tasks(episodes: Iterable[Mapping[str, Any]], n: int) -> list[PastTask]:
    """Up to `n` tasks from `episodes` (best first), each run of a task counted once in it."""
    tasks: dict[str, PastTask] = {}
    newest: dict[str, tuple[str, int]] = {}
    for episode in episodes:
        query = _text(episode, "query")
        key = task_key(query)
        if not key:
            continue
        foreign = episode.get("verified") is False
        key = f"\0{key}" if foreign else key  # never folded with the user's own runs
        ok = episode.get("success") is True
        when = _when(episode)
        task = tasks.get(key)
        if task is None:
            if len(tasks) >= n:
                continue  # a new task past the n asked for; later runs of known ones still count
            task = tasks[key] = PastTask(task=query, succeeded=ok, at=when[0], runs=0,
                                         verified=not foreign)
            newest[key] = when
        newer = when >= newest[key]
        if newer:
            newest[key] = when
        task.runs += 1
        task.successes += ok
        if newer:
            task.succeeded, task.at = ok, when[0]
        summary = _text(episode, "summary")
        if summary and (newer or not task.summary):
            task.summary = summary
        for name in _files(episode):
            if name not in task.files and len(task.files) < MAX_FILES:
                task.files.append(name)
        if episode.get("verdict") == "unknown":
            task.outcome_known = False
        for raw in _failures(episode):
            message = _text(raw, "message")
            if not message or _text(raw, "kind") or raw.get("held") is False:
                continue  # a refusal or a policy is no failure; a fix that did not hold
            tool, fix = _text(raw, "tool"), _fix(raw)
            resolved = bool(_text(raw, "resolved_by"))
            seen = next((f for f in task.failures if (f.tool, f.message) == (tool, message)), None)
            if seen is not None:
                seen.times += 1
                seen.resolved = seen.resolved or resolved
                if fix and (newer or not seen.fix):
                    seen.fix = fix
            elif len(task.failures) < MAX_FAILURES:
                task.failures.append(PastFailure(tool, message, fix, resolved=resolved))
    return list(tasks.values())


def render(tasks: Iterable[PastTask]) -> str:
    """The tasks as Markdown bullets, one per task; a repeated task says how its runs ended."""
    lines: list[str] = []
    for task in tasks:
        if not task.verified:
            lines.append(f"- [{UNVERIFIED_LABEL}, not work done here] {' '.join(task.task.split())}")
            continue
        mark = ("" if not task.outcome_known else
                "[succeeded] " if task.succeeded else "[failed] ")
        # One line per head, spacing folded as `task_key` folds it: distinct tasks, distinct heads.
        line = f"- {mark}{' '.join(task.task.split())}"
        if task.files:
            line += " (files: " + ", ".join(task.files[:5]) + ")"
        if task.runs > 1:
            line += (f" — {task.runs} runs, {task.successes} succeeded; latest {task.at}"
                     if task.outcome_known else f" — {task.runs} runs; latest {task.at}")
        if task.summary:
            line += "\n  " + " ".join(task.summary.split())
        for failure in task.failures:
            if failure.resolved and not failure.fix:
                continue  # got past, with nothing worth telling of how
            times = f" ({failure.times} times)" if failure.times > 1 else ""
            # One line per failure: a multi-line error is read as one (the data keeps it whole).
            message, fix = " ".join(failure.message.split()), " ".join(failure.fix.split())
            line += f"\n  failure{times}: {message} → {fix or 'unresolved'}"
        lines.append(line)
    return "\n".join(lines)
