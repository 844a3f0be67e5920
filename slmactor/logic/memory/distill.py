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

from slmactor.logic.memory.claims import PathEvents
from slmactor.logic.memory.facts import GOTCHA_FIX, FactBook, Observation
from slmactor.logic.text.strings import clip, clip_words, dedupe, first_line
from slmactor.logic.text.timefmt import parse_rfc3339

WINDOW = 120
MIN_OBSERVATIONS = 2
TOP_DIRS = 5
TOP_FILES = 8
MAX_SOURCES = 5
MAX_COMMAND_TOKENS = 6
MAX_COMMAND_BYTES = 120
GOTCHA_KEY_BYTES = 90
GOTCHA_MSG_BYTES = 100
#: A fix longer than this is not shown as a gotcha (it is told whole or not at all).
GOTCHA_FIX_MAX = 240
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
        self._gotchas: dict[str, _Gotcha] = {}
        #: In how many counted episodes each failure line was met (a gotcha's "seen N×").
        self._said_in: Counter[str] = Counter()
        self._cmd_runs: Counter[str] = Counter()
        self._cmd_ok: Counter[str] = Counter()
        self._cmd_sources: dict[str, list[str]] = {}
        #: Per key, a command as one of its runs ran it (newest first): what is shown of it.
        self._cmd_shown: dict[str, str] = {}
        self._dirs: Counter[str] = Counter()
        self._files: Counter[str] = Counter()
        self._fmt_ok: Counter[str] = Counter()
        self._fmt_fail: Counter[str] = Counter()
        self._languages: Counter[str] = Counter()
        #: The episodes each kind of count came from (the evidence of its fact).
        self._seen_in: dict[str, list[str]] = {}
        #: Paths deleted and written, by run and time: what makes a claim naming them stale.
        self.paths = PathEvents()

    def add(self, ep: Mapping[str, Any]) -> bool:
        """Count one episode; False (and nothing counted) once the window of 120 is full."""
        if self.seen >= WINDOW or not isinstance(ep, Mapping):
            return False
        self.seen += 1
        ep_id = _str(ep.get("id"))
        _gotchas(ep, ep_id, self._gotchas, self._said_in)
        counts = _list(ep.get("command_counts"))
        for row in counts or _list(ep.get("commands")):
            if not isinstance(row, Mapping):
                continue
            if counts:  # every command of the run, by key
                norm, runs, ok = _str(row.get("key")), _count(row.get("runs")), _count(
                    row.get("ok"))
                shown = shown_command(_str(row.get("shown")) or (
                    norm if row.get("exact") is True else ""))
            else:  # an older episode: its last commands as they ran
                norm = normalize_command(_str(row.get("cmd")))
                runs, ok = 1, int(row.get("ok") is True)
                shown = shown_command(_str(row.get("cmd")))
            if not norm:
                continue
            if shown == norm:  # some run was the key itself: it can be shown as it ran
                self._cmd_shown[norm] = shown
            self._cmd_runs[norm] += runs
            self._cmd_ok[norm] += ok
            sources = self._cmd_sources.setdefault(norm, [])
            if ep_id and len(sources) < MAX_SOURCES and ep_id not in sources:
                sources.append(ep_id)
        files = dedupe((_str(f) for f in _list(ep.get("files_changed"))), 10_000)
        at = parse_rfc3339(_str(ep.get("at"))) or 0.0
        self.paths.add_run(ep_id or _str(ep.get("run_id")), at,
                           (_str(p) for p in _list(ep.get("deleted"))), files)
        by_format = [(_str(f.get("format")), _count(f.get("attempted")), _count(f.get("applied")))
                     for f in _list(ep.get("edit_formats")) if isinstance(f, Mapping)]
        if not by_format:  # an older episode: every edit under the format it used most
            by_format = [(_str(ep.get("edit_format")), _count(ep.get("edits_attempted")),
                          _count(ep.get("edits_applied")))]
        keys = [*(f"file:{f}" for f in files),
                *(f"dir:{f.rsplit('/', 1)[0]}" for f in files if "/" in f.strip("/")),
                *(f"fmt:{fmt}" for fmt, attempted, _ in by_format if fmt and attempted > 0),
                f"lang:{_str(ep.get('language')).lower()}"]
        for key in dict.fromkeys(keys):
            seen_in = self._seen_in.setdefault(key, [])
            if ep_id and len(seen_in) < MAX_SOURCES:
                seen_in.append(ep_id)
        self._files.update(files)
        self._dirs.update({f.rsplit("/", 1)[0] for f in files if "/" in f.strip("/")})
        for fmt, attempted, applied in by_format:
            if fmt and attempted > 0:
                applied = min(applied, attempted)
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
        out = [g.observation(self._said_in[g.said]) for g in self._gotchas.values()]
        for cmd in sorted(self._cmd_runs):
            runs, ok = self._cmd_runs[cmd], self._cmd_ok[cmd]
            shown = self._cmd_shown.get(cmd, "")
            # Said only as some run ran it: a key that dropped flags names a command nobody ran.
            if runs >= MIN_OBSERVATIONS and ok >= 1 and shown and project_command(cmd):
                out.append(
                    Observation(
                        "command",
                        cmd,
                        f"`{shown}` works here ({ok}/{runs} runs succeeded)",
                        tuple(self._cmd_sources.get(cmd, [])),
                    )
                )
        hot = [(d, n) for d, n in _top(self._dirs, TOP_DIRS) if n >= MIN_OBSERVATIONS]
        if hot:
            listing = ", ".join(f"`{d}` ({n})" for d, n in hot)
            sources = dedupe((e for d, _ in hot for e in self._seen_in.get(f"dir:{d}", ())),
                             MAX_SOURCES)
            out.append(Observation("layout", "hot-directories", f"Most work happens in: {listing}",
                                   tuple(sources)))
        for path, n in _top(self._files, TOP_FILES):
            if n >= MIN_OBSERVATIONS:
                out.append(Observation("file", path, f"`{path}` changed in {n} recent runs",
                                       tuple(self._seen_in.get(f"file:{path}", ()))))
        for fmt in sorted(set(self._fmt_ok) | set(self._fmt_fail)):
            ok, total = self._fmt_ok[fmt], self._fmt_ok[fmt] + self._fmt_fail[fmt]
            if total >= MIN_OBSERVATIONS:
                out.append(
                    Observation(
                        "convention",
                        f"edit-format:{fmt}",
                        f"Edit format `{fmt}` applies {ok * 100 // total}% of the time here"
                        f" ({ok}/{total} hunks)",
                        tuple(self._seen_in.get(f"fmt:{fmt}", ())),
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
                        tuple(self._seen_in.get(f"lang:{lang}", ())),
                    )
                )
        return out


#: Programs that work the same in every repository: run without an operand they say nothing
#: of this project (`git status`, `ls`); the sub-command of a task runner does (`npm test`).
_NEUTRAL = frozenset({"git", "gh", "ls", "pwd", "whoami", "date", "echo", "cat", "which", "env",
                      "clear", "history", "id", "uname", "hostname", "true", "sleep"})


def shown_command(command: str) -> str:
    """A command as it can be shown to run: one line, whole, not longer than a key's bytes
    ("" for a script of several lines or a longer one: its first line is not what ran)."""
    text = command.strip().removeprefix("$ ")  # a prompt's `$ ` is no part of it
    if not text or "\n" in text or "\r" in text or len(text.encode()) > MAX_COMMAND_BYTES:
        return ""
    return " ".join(text.split())


def project_command(command: str) -> bool:
    """Whether a command that works is a fact of this project: it runs as a step that does
    something (not only `cd`, `export`, `mkdir` …: one shell's state) and names something of
    the project (an operand, or a task runner's sub-command)."""
    from slmactor.logic.text.shell import acting, only_shell_state

    found = acting(command)
    if not found or only_shell_state(command):
        return False
    return any(step.program not in _NEUTRAL or step.operands for step in found)


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


def _said(failure: Mapping[str, Any]) -> str:
    """What a gotcha shows of a failure: its line as the program wrote it, else its salient."""
    return _str(failure.get("said")) or salient_of(failure)


def _gotchas(ep: Mapping[str, Any], ep_id: str, gotchas: dict[str, _Gotcha],
             said_in: Counter[str]) -> None:
    """Fold one episode's failures into the gotchas (newest episode first): a failure to repair
    whose fix held and is told whole; the newest fix of a failure is the one shown. `said_in`
    counts the episodes each failure line was met in, with a fix or not, older or newer."""
    said_here: set[str] = set()
    for failure in _list(ep.get("failures")):
        if not isinstance(failure, Mapping) or _str(failure.get("kind")):
            continue  # a refusal, a policy, a call that never ran, no failure: nothing to fix
        key = gotcha_key(failure)
        said = _said(failure) or key
        if said and said not in said_here:
            said_here.add(said)
            said_in[said] += 1
        fix = _str(failure.get("resolution"))
        if (not key or key in gotchas or not _str(failure.get("resolved_by")) or not fix
                or failure.get("held") is False or "\n" in fix or len(fix) > GOTCHA_FIX_MAX):
            continue  # who fixed it ("llm", "retry") is no fix; a fix is told whole or not at all
        gotchas[key] = _Gotcha(key, said, fix, ep_id)


class _Gotcha:
    """A failure with a fix: its line, its fix, the episode the fix was seen in."""

    __slots__ = ("fix", "key", "said", "source")

    def __init__(self, key: str, said: str, fix: str, source: str) -> None:
        self.key, self.said, self.fix, self.source = key, said, fix, source

    def observation(self, episodes: int) -> Observation:
        """The gotcha as a fact, with the episodes of the window it was met in."""
        text = (f"{clip_words(self.said, GOTCHA_MSG_BYTES)}{GOTCHA_FIX}{self.fix}"
                f" (seen {max(1, episodes)}×)")
        return Observation("gotcha", self.key, text, (self.source,) if self.source else ())


def apply(book: FactBook, observations: Sequence[Observation], now: float) -> int:
    """Fold observations into `book` in order; returns how many were recorded."""
    return book.observe_all(observations, now)
