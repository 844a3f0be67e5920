"""One project's transcripts as the truth labeller reads them: sessions in time order, each with its
calls (the `bench/real_census.py` readers and failure verdicts), its start time, working directory
and first prompt; the project tree's paths.

Nothing here comes from the product: calls and verdicts are the census's, failure kinds are
`bench/label_real.py`'s stated rules (used only to pick the hook probes, one failed call per kind).

* A session that several files hold (Entire checkpoints one session many times; Cline backups copy
  task folders) is read once: the copy with the most calls.
* Start time: Claude Code and Codex the first record's `timestamp`, Gemini CLI `startTime`, Cline the
  task folder's name (milliseconds since the epoch). Sessions are ordered by it, then by path.
* Working directory: Claude Code's `cwd`, Codex's `session_meta.cwd`, Cline's `# Current Working
  Directory (…)` in the first user message; Gemini CLI records none.
* First prompt: the first user text that is not a harness's own frame (a text opening with `<`,
  Claude Code's `[Request interrupted…` and `Caveat:` lines); Cline's `<task>` body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.label_real import classify, failure_of
from bench.real_census import READERS, Call, jsonl_records

_CLINE_CWD = re.compile(r"# Current Working Directory \(([^)]*)\)")
_CLINE_TASK = re.compile(r"<task>\s*(.*?)\s*</task>", re.DOTALL)


@dataclass
class HSession:
    harness: str
    session_id: str
    path: Path
    start: float
    cwd: str
    prompt: str
    calls: list[Call] = field(default_factory=list)


@dataclass
class History:
    project: str
    harness: str
    sessions: list[HSession]
    #: every path (files and their directories) of the project tree, relative; None without one
    tree: set[str] | None = None
    #: the tree's .gitignore patterns (directory of the .gitignore, pattern)
    ignores: list[tuple[str, str]] = field(default_factory=list)

    def calls(self) -> Iterator[tuple[int, int, Call]]:
        """(session index, call index, call) in time order."""
        for s, session in enumerate(self.sessions):
            for c, call in enumerate(session.calls):
                yield s, c, call

    @property
    def cwds(self) -> list[str]:
        return sorted({s.cwd for s in self.sessions if s.cwd}, key=len, reverse=True)


def _epoch(stamp: Any) -> float | None:
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return None


def _plain_prompt(text: str) -> str:
    text = text.strip()
    if not text or text.startswith(("<", "[Request interrupted", "Caveat:")):
        return ""
    return text


def _user_texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") in ("text", "input_text"):
                yield str(block.get("text", ""))


def _jsonl_meta(path: Path, cwd_of: Callable[[dict[str, Any]], str],
                prompt_of: Callable[[dict[str, Any]], Any]) -> tuple[float | None, str, str]:
    """(start, cwd, first prompt) of a JSONL transcript: the first record's `timestamp`, the first
    working directory `cwd_of` finds, the first plain text of a message `prompt_of` says is the user's."""
    start: float | None = None
    cwd = prompt = ""
    for rec in jsonl_records(path):
        start = start if start is not None else _epoch(rec.get("timestamp"))
        cwd = cwd or cwd_of(rec)
        content = prompt_of(rec) if not prompt else None
        if content is not None:
            prompt = next((p for p in map(_plain_prompt, _user_texts(content)) if p), "")
        if start is not None and cwd and prompt:
            break
    return start, cwd, prompt


def _payload(rec: dict[str, Any]) -> dict[str, Any]:
    found = rec.get("payload")
    return found if isinstance(found, dict) else {}


def _claude_meta(path: Path) -> tuple[float | None, str, str]:
    def prompt_of(rec: dict[str, Any]) -> Any:
        message = rec.get("message")
        return message.get("content") if rec.get("type") == "user" and isinstance(message, dict) else None
    return _jsonl_meta(path, lambda rec: str(rec.get("cwd") or ""), prompt_of)


def _codex_meta(path: Path) -> tuple[float | None, str, str]:
    def prompt_of(rec: dict[str, Any]) -> Any:
        payload = _payload(rec)
        return payload.get("content") if payload.get("type") == "message" and payload.get("role") == "user" else None
    return _jsonl_meta(path, lambda rec: str(_payload(rec).get("cwd") or "") if rec.get("type") == "session_meta"
                       else "", prompt_of)


def _gemini_meta(path: Path) -> tuple[float | None, str, str]:
    doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    prompt = ""
    for msg in doc.get("messages", []):
        if msg.get("type") == "user":
            content = msg.get("content")
            prompt = _plain_prompt(content if isinstance(content, str) else " ".join(_user_texts(content)))
            if prompt:
                break
    return _epoch(doc.get("startTime")), "", prompt


def _cline_meta(path: Path) -> tuple[float | None, str, str]:
    start = float(path.parent.name) / 1000 if path.parent.name.isdigit() else None
    history = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    cwd = prompt = ""
    for msg in history[:1]:
        text = "\n".join(_user_texts(msg.get("content")))
        found = _CLINE_CWD.search(text)
        cwd = found.group(1) if found else ""
        task = _CLINE_TASK.search(text)
        prompt = task.group(1).strip() if task else ""
    return start, cwd, prompt


_META = {"claude": _claude_meta, "codex": _codex_meta, "gemini": _gemini_meta, "cline": _cline_meta}


def read_history(project: str, harness: str, files: list[Path], tree: set[str] | None = None,
                 ignores: list[tuple[str, str]] | None = None) -> History:
    """The project's sessions (one copy each, the one with most calls), in time order."""
    best: dict[str, HSession] = {}
    for path in files:
        if not path.is_file():
            continue
        try:
            sessions = list(READERS[harness](path))
            start, cwd, prompt = _META[harness](path)
        except (ValueError, OSError, AttributeError, TypeError):
            continue
        for session in sessions:
            if harness == "codex":
                _codex_script_verdicts(session.calls)
            found = HSession(harness, session.session_id, path, start if start is not None else 0.0, cwd, prompt,
                             session.calls)
            kept = best.get(session.session_id)
            if kept is None or len(found.calls) > len(kept.calls):
                if kept is not None:
                    found.start = min(found.start, kept.start) if kept.start else found.start
                best[session.session_id] = found
    ordered = sorted(best.values(), key=lambda s: (s.start, str(s.path)))
    return History(project, harness, ordered, tree, ignores or [])


def _codex_script_verdicts(calls: list[Call]) -> None:
    """Codex's `exec` tool (a script that calls its other tools) answers `Script failed` when the
    script did: its own verdict, which the census reader does not read."""
    for call in calls:
        if not call.failed and call.tool == "exec" and re.match(r'\[\{"type": "input_text", "text": "Script failed',
                                                                 call.result):
            call.failed = True


def task_text(history: History, limit: int = 300) -> str:
    """TASK of the rendered channels: the first plain prompt of the newest session that has one."""
    for session in reversed(history.sessions):
        if session.prompt:
            return " ".join(session.prompt.split())[:limit]
    return f"work on {history.project.split('/', 1)[-1]}"


def hook_probes(history: History) -> list[tuple[str, HSession, int, Call]]:
    """One failed call per failure kind of the history (bench/label_real.py's kinds): the latest."""
    latest: dict[str, tuple[HSession, int, Call]] = {}
    for s, c, call in history.calls():
        if call.failed:
            kind = classify(failure_of(history.harness, call)).kind
            latest[kind] = (history.sessions[s], c, call)
    return [(kind, session, c, call) for kind, (session, c, call) in sorted(latest.items())]
