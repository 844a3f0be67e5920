"""Claims: every line memory tells a model (or writes to `MEMORY.md`) as a record — what it says,
the records that support it, and a check run when it is told.

A `Claim` is made where a line is made (a fact, a lesson, an episode's hit, a rule's guidance,
hook advice): its text, its kind, its evidence (record ids: the episodes, runs and calls it
rests on, the fact or rule that holds it) and what it presents as there to use (paths, commands).
`check(claim, records)` judges it against the project's records as they are now:

* **unverified** — no record supports it (nothing here was seen to say it);
* **contradicted** — its own records say otherwise (a fix that did not hold: the next test run
  failed, the edit was undone);
* **stale** — a path it presents as there to use is gone: a later run deleted it (and nothing
  wrote it again), it is not in the project, or it lies outside the project;
* **true** — none of these.

Only a claim whose check passes is told; the others are retired or demoted with the reason
(`Verdict.why`), which `slmactor memory audit` shows. `Records` is what the checks read — the
project's deletions and edits by time (`Tally.paths` of the distiller's pass) and whether a path
is in the project (the actor answers from the disk). Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from slmactor.logic.text import shell

TRUE, STALE, CONTRADICTED, UNVERIFIED = "true", "stale", "contradicted", "unverified"
VERDICTS = (TRUE, STALE, CONTRADICTED, UNVERIFIED)

_TICKS = re.compile(r"`([^`\n]+)`")
#: A word that names a file or folder: a slash inside, or a name with an extension.
_PATHLIKE = re.compile(r"^(?:[~.]{0,2}/)?[\w@.+-]+(?:[/\\][\w@.+ -]+)+/?$|^[\w.-]+\.[A-Za-z]\w{0,7}$")
_NOT_PATH = re.compile(r"^(?:[a-z][\w+.-]*://|[\w.-]+@|@|\$|-)|[*?{}<>|=:$]|^\.\.\.?$|^\d[\d.]*$")


@dataclass(frozen=True, slots=True)
class Claim:
    """One line memory may tell, with what supports it."""

    #: fix | unresolved | works | format | layout | changed | task | lesson | rule | advice |
    #: procedure | fact
    kind: str
    says: str
    #: Ids of the records it rests on (episodes, runs, calls, facts, rules).
    evidence: tuple[str, ...] = ()
    #: The part of its text that presents something as there to use (its fix, its command, its
    #: folders), as written: the paths named there are checked. "" when it presents nothing.
    uses: str = ""
    #: Paths it presents as there to use besides those `uses` names.
    paths: tuple[str, ...] = ()
    #: False when its own records say it did not hold.
    held: bool | None = None
    #: A claim that needs no record of this project (a heading, the project's own file).
    free: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "says": self.says,
                               "evidence": list(self.evidence)}
        named = [*self.paths, *paths_named(self.uses)]
        if named:
            out["paths"] = list(dict.fromkeys(named))
        if self.held is False:
            out["held"] = False
        return out


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a check found: `status` one of `VERDICTS`, and why (empty for true)."""

    status: str
    why: str = ""

    @property
    def passes(self) -> bool:
        return self.status == TRUE

    def to_dict(self) -> dict[str, str]:
        return {"verdict": self.status, **({"why": self.why} if self.why else {})}


class Records(Protocol):
    """What a check reads of the project's records."""

    def gone(self, path: str) -> str:
        """Why `path` is not there to use ("" when it is): deleted by a later run, not in the
        project, outside the project."""


@dataclass(slots=True)
class PathEvents:
    """Deletions and writes of paths over the project's runs (newest time wins), and a way to
    ask whether a path is in the project now (None: cannot tell)."""

    deleted: dict[str, tuple[float, str]] = field(default_factory=dict)
    written: dict[str, float] = field(default_factory=dict)

    def add_run(self, run: str, at: float, deleted: Iterable[str], written: Iterable[str]) -> None:
        for path in deleted:
            key = _key(path)
            if key and (key not in self.deleted or self.deleted[key][0] < at):
                self.deleted[key] = (at, run)
        for path in written:
            key = _key(path)
            if key and self.written.get(key, -1.0) < at:
                self.written[key] = at

    def deleted_by(self, path: str) -> str:
        """The run that deleted `path` last, when no later run wrote it ("" otherwise)."""
        key = _key(path)
        for deleted, (at, run) in self.deleted.items():
            if _same(deleted, key) and not any(
                    _same(written, key) and when >= at for written, when in self.written.items()):
                return run or "a later run"
        return ""


def _key(path: str) -> str:
    return path.strip().strip("'\"").replace("\\", "/").rstrip("/").removeprefix("./")


def _same(a: str, b: str) -> bool:
    return bool(a) and bool(b) and (a == b or a.endswith("/" + b) or b.endswith("/" + a))


def paths_named(text: str) -> list[str]:
    """The paths a line presents as there to use: the path-like words of its backticked spans
    (a command's operands; not what a step of it creates or deletes), and of the words after
    " on " and "reading " (`Edit on src/a.py`, `reading src/a.py again`). URLs, package names,
    globs, options and variables are none."""
    found: list[str] = []
    for span in _TICKS.findall(text):
        words: list[str] = []
        made = set()
        if " " in span.strip() or shell.steps(span) and any(
                s.operands for s in shell.steps(span)):
            for step in shell.steps(span):
                words.extend(w for w in step.operands if "=" not in w[:1])
            made = {_key(p) for p in (*shell.deleted_paths(span), *shell.created_paths(span))}
        else:
            words = [span.strip()]
        found.extend(w for w in words if _pathlike(w) and _key(w) not in made)
    for match in re.finditer(r"\b(?:on|reading) (\S+?)[),.;]?(?:\s|$)", text):
        word = match.group(1).strip("`")
        if _pathlike(word):
            found.append(word)
    seen: dict[str, None] = {}
    for path in found:
        seen.setdefault(path, None)
    return list(seen)


def _pathlike(word: str) -> bool:
    w = word.strip().strip("'\"")
    return bool(w) and len(w) < 400 and not _NOT_PATH.search(w) and bool(_PATHLIKE.match(w))


def check(claim: Claim, records: Records) -> Verdict:
    """The claim judged against the records now (see the module docstring)."""
    if claim.held is False:
        return Verdict(CONTRADICTED, "the fix did not hold: the run went on to fail or undo it")
    if not claim.evidence and not claim.free:
        return Verdict(UNVERIFIED, "no record of this project supports it")
    for path in (*claim.paths, *paths_named(claim.uses)):
        why = records.gone(path)
        if why:
            return Verdict(STALE, f"`{path}` {why}")
    return Verdict(TRUE)


def claims_report(items: Iterable[tuple[Claim, Verdict]]) -> list[dict[str, Any]]:
    """Claims and their verdicts as plain records (`memory audit --json`)."""
    return [{**claim.to_dict(), **verdict.to_dict()} for claim, verdict in items]


def evidence_ids(record: Mapping[str, Any], *keys: str) -> tuple[str, ...]:
    """The record ids a plain record names under `keys` (strings, or lists of strings)."""
    out: list[str] = []
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value:
            out.append(value)
        elif isinstance(value, list | tuple):
            out.extend(v for v in value if isinstance(v, str) and v)
    return tuple(dict.fromkeys(out))
