"""Distillation: recent episodes → fact observations, by pure counting (SPEC S-5).

`distill(episodes)` reads the 120 most recent episodes (newest first, as JSON records of S-2.1) and
returns the observations to fold into a `FactBook`, in the seed's emission order: gotchas (during
the scan), commands, layout, files, conventions, dependency. Same episodes → same output; no model,
no clock, no randomness.

Two readings where the spec is silent, documented here so they can be checked:
* layout lists only directories changed in at least 2 episodes (the distiller's minimum
  observations) — one touch is not "where most work happens" — and a directory counts once per
  episode;
* the primary language needs at least 2 episodes too; a lone run says nothing about a project.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from slmactor.logic.memory.facts import GOTCHA_FIX, FactBook, Observation
from slmactor.logic.text.strings import clip, clip_words, dedupe, first_line

WINDOW = 120
MIN_OBSERVATIONS = 2
TOP_DIRS = 5
TOP_FILES = 8
MAX_SOURCES = 5
MAX_COMMAND_TOKENS = 6
MAX_COMMAND_BYTES = 120
GOTCHA_KEY_BYTES = 90
GOTCHA_MSG_BYTES = 100
GOTCHA_FIX_BYTES = 90
_DIGITS = re.compile(r"\d+")


def normalize_command(command: str) -> str:
    """S-5.2: first line, no leading `$ `, flags dropped, ≤ 6 tokens, ≤ 120 bytes."""
    line = command.strip()
    for stop in ("\r", "\n"):
        line = line.split(stop, 1)[0]
    line = line.strip()
    line = line.removeprefix("$ ")
    tokens = [t for t in line.split() if not t.startswith("-")][:MAX_COMMAND_TOKENS]
    return clip(" ".join(tokens), MAX_COMMAND_BYTES)


def _str(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(int(value), 0)


def _top(counts: Counter[str], n: int) -> list[tuple[str, int]]:
    """Highest counts first, ties by name (deterministic)."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


class Tally:
    """The counts of one distillation, fed one episode at a time (newest first).

    Streaming keeps memory flat: the caller can drop each episode right after `add` (the
    distiller fetches them one by one), so a pass leaves counters behind, not 120 records that
    the garbage collector would otherwise promote and later sweep in a long full collection.
    """

    def __init__(self) -> None:
        self.seen = 0
        self.gotchas: list[Observation] = []
        self._gotcha_seen: Counter[str] = Counter()
        self._cmd_runs: Counter[str] = Counter()
        self._cmd_ok: Counter[str] = Counter()
        self._cmd_sources: dict[str, list[str]] = {}
        self._dirs: Counter[str] = Counter()
        self._files: Counter[str] = Counter()
        self._fmt_ok: Counter[str] = Counter()
        self._fmt_fail: Counter[str] = Counter()
        self._languages: Counter[str] = Counter()

    def add(self, ep: Mapping[str, Any]) -> bool:
        """Count one episode; False (and nothing counted) once the window of 120 is full."""
        if self.seen >= WINDOW or not isinstance(ep, Mapping):
            return False
        self.seen += 1
        ep_id = _str(ep.get("id"))
        self.gotchas.extend(_gotchas(ep, ep_id, self._gotcha_seen))
        for cmd in _list(ep.get("commands")):
            if not isinstance(cmd, Mapping):
                continue
            norm = normalize_command(_str(cmd.get("cmd")))
            if not norm:
                continue
            self._cmd_runs[norm] += 1
            if cmd.get("ok") is True:
                self._cmd_ok[norm] += 1
            sources = self._cmd_sources.setdefault(norm, [])
            if ep_id and len(sources) < MAX_SOURCES and ep_id not in sources:
                sources.append(ep_id)
        files = dedupe((_str(f) for f in _list(ep.get("files_changed"))), 10_000)
        self._files.update(files)
        self._dirs.update({f.rsplit("/", 1)[0] for f in files if "/" in f.strip("/")})
        fmt = _str(ep.get("edit_format"))
        attempted = _count(ep.get("edits_attempted"))
        if fmt and attempted > 0:
            applied = min(_count(ep.get("edits_applied")), attempted)
            self._fmt_ok[fmt] += applied
            self._fmt_fail[fmt] += attempted - applied
        lang = _str(ep.get("language")).lower()
        if lang:
            self._languages[lang] += 1
        return True

    def observations(self) -> list[Observation]:
        """Everything counted, in the emission order of S-5.8."""
        if not self.seen:
            return []
        out = list(self.gotchas)
        for cmd in sorted(self._cmd_runs):
            runs, ok = self._cmd_runs[cmd], self._cmd_ok[cmd]
            if runs >= MIN_OBSERVATIONS and ok >= 1:
                out.append(
                    Observation(
                        "command",
                        cmd,
                        f"`{cmd}` works here ({ok}/{runs} runs succeeded)",
                        tuple(self._cmd_sources.get(cmd, [])),
                    )
                )
        hot = [(d, n) for d, n in _top(self._dirs, TOP_DIRS) if n >= MIN_OBSERVATIONS]
        if hot:
            listing = ", ".join(f"`{d}` ({n})" for d, n in hot)
            out.append(Observation("layout", "hot-directories", f"Most work happens in: {listing}"))
        for path, n in _top(self._files, TOP_FILES):
            if n >= MIN_OBSERVATIONS:
                out.append(Observation("file", path, f"`{path}` changed in {n} recent runs"))
        for fmt in sorted(set(self._fmt_ok) | set(self._fmt_fail)):
            ok, total = self._fmt_ok[fmt], self._fmt_ok[fmt] + self._fmt_fail[fmt]
            if total >= MIN_OBSERVATIONS:
                out.append(
                    Observation(
                        "convention",
                        f"edit-format:{fmt}",
                        f"Edit format `{fmt}` applies {ok * 100 // total}% of the time here"
                        f" ({ok}/{total} hunks)",
                    )
                )
        if self._languages:
            lang, n = _top(self._languages, 1)[0]
            if n >= MIN_OBSERVATIONS:
                out.append(
                    Observation(
                        "dependency",
                        "primary-language",
                        f"Primary language is {lang} ({n}/{self.seen} recent runs)",
                    )
                )
        return out


def distill(episodes: Iterable[Mapping[str, Any]]) -> list[Observation]:
    """Facts supported by the newest `WINDOW` episodes (given newest first)."""
    tally = Tally()
    for ep in episodes:
        if isinstance(ep, Mapping) and not tally.add(ep):
            break
    return tally.observations()


def gotcha_key(failure: Mapping[str, Any]) -> str:
    """The gotcha a resolved failure counts for: its fingerprint, else its salient line with
    numbers masked — so the same failure with another line number or JSON column is one gotcha.
    (Gotchas of several fingerprints fixed by one rule are one item of the block:
    `facts.item_meaning`.)"""
    fingerprint = _str(failure.get("fingerprint"))
    if fingerprint:
        return fingerprint
    return _DIGITS.sub("N", first_line(salient_of(failure), GOTCHA_KEY_BYTES))


def fix_key(failure: Mapping[str, Any]) -> str:
    """What a resolved failure means for a reader: the rule that fixed it, else its gotcha."""
    resolved_by = _str(failure.get("resolved_by"))
    return resolved_by if resolved_by.startswith("rule:") else gotcha_key(failure)


def salient_of(failure: Mapping[str, Any]) -> str:
    """The line of a failure that says what went wrong (the reflector's `salient`, else the
    message's first line)."""
    return _str(failure.get("salient")) or first_line(_str(failure.get("message")), 400)


def _gotchas(ep: Mapping[str, Any], ep_id: str, seen: Counter[str]) -> list[Observation]:
    """One observation per resolved failure occurrence; "seen N×" grows as the scan goes."""
    found: list[Observation] = []
    for failure in _list(ep.get("failures")):
        if not isinstance(failure, Mapping):
            continue
        resolved_by = _str(failure.get("resolved_by"))
        if not resolved_by:
            continue
        key = gotcha_key(failure)
        if not key:
            continue
        # What fixed it, in words: who fixed it ("llm", "rule:<id>") is no fix a model can use.
        fix = _str(failure.get("resolution")) or (resolved_by if resolved_by == "retry" else "")
        if not fix.strip() or fix.lower() == "unknown":
            continue
        seen[key] += 1
        said = _str(failure.get("said"))  # as the program wrote it, where the episode has it
        text = (
            f"{clip_words(said or salient_of(failure) or key, GOTCHA_MSG_BYTES)}"
            f"{GOTCHA_FIX}{clip_words(first_line(fix, 400), GOTCHA_FIX_BYTES)} (seen {seen[key]}×)"
        )
        found.append(Observation("gotcha", key, text, (ep_id,) if ep_id else ()))
    return found


def apply(book: FactBook, observations: Sequence[Observation], now: float) -> int:
    """Fold observations into `book` in order; returns how many were recorded."""
    return book.observe_all(observations, now)
