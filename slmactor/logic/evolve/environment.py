"""Environment facts: what this project's environment needs, learned across sessions from the
failed calls and the calls that got past them.

A fact is a typed record (`EnvFact`): its *topic* (the runtime to activate, the interpreter that
has the modules, a server to start in the background, a service to start first, a setting),
the failure class it gets past, the *fix* as a shape (`env_shapes.Shape`: a prefix, a wrapper,
a substitute, a background tail or option), a *precondition* saying which commands it speaks
about (`scope`: a runtime family — npm, pnpm, yarn and node share a Node fact —, the words an
interpreter replaced, or one command head), its *evidence* (the failing calls and the calls
that got past them: session, call id, command, the error's head), the exact pairs seen
(failed command → the command that succeeded right after it), and a Beta record of outcomes.

`EnvBook` owns a project's facts: `learn` from a failed call and its fix, `observe` an outcome,
`relevant` facts for a failure (advice at the failure), `preflight` for a command about to run
(a rewrite only where exact and safe: the same command already failed here and the rewritten one
succeeded verbatim right after it; otherwise a fact proved `PROVEN` times and never failed),
`told` lines for a session's start, and `table` — the small per-project table a hook reads
before it asks the daemon anything. Pure: time comes in as `now`; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from slmactor.logic.evolve import env_shapes as sh
from slmactor.logic.failures.runtimes import family_heads
from slmactor.logic.text.redact import redact
from slmactor.logic.text.strings import clip, hash_id
from slmactor.logic.text.timefmt import parse_rfc3339, to_rfc3339

#: A fact rewrites another command of its scope once it got past its failure this many times
#: and never failed (the seed's "suggested until proved").
PROVEN = 3
MAX_FACTS = 200
MAX_EVIDENCE = 8
MAX_PAIRS = 8
MAX_COMMAND = 300
MAX_ERROR = 160
#: Classes an environment fix can be learned from: what the environment, not the code, decides.
#: A test that fails or code that does not compile is the model's work, whatever got past it.
LEARN_CLASSES = frozenset({
    "runtime_version", "env_not_activated", "server_no_return", "timeout", "dependency_missing",
    "file_not_found", "path_not_found", "provider_error", "stale_handle", "unknown",
    "runtime_error", "permission_denied"})
#: Failures one fact answers together: a wrong runtime, an inactive environment and a module the
#: shell's interpreter lacks are one problem seen three ways.
_GROUPS = {"runtime_version": "env", "env_not_activated": "env", "dependency_missing": "env",
           "unknown": "env", "runtime_error": "env", "file_not_found": "env",
           "path_not_found": "env", "timeout": "time", "server_no_return": "time",
           "provider_error": "service", "stale_handle": "service",
           "permission_denied": "permission"}
#: Classes whose fact is never applied without the model (permissions stay the harness's).
_ADVICE_ONLY = frozenset({"permission"})


def group_of(cls: str) -> str:
    return _GROUPS.get(cls, cls)


@dataclass(frozen=True, slots=True)
class Evidence:
    """One call behind a fact: a failing call (`ok` false) or the call that got past it."""

    session: str
    call_id: str
    command: str
    error: str
    ok: bool
    at: float

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"session": self.session, "command": self.command, "ok": self.ok,
                               "at": to_rfc3339(self.at)}
        if self.call_id:
            out["call_id"] = self.call_id
        if self.error:
            out["error"] = self.error
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Evidence | None:
        if not isinstance(data, Mapping) or not isinstance(data.get("command"), str):
            return None
        return cls(str(data.get("session") or ""), str(data.get("call_id") or ""),
                   str(data["command"]), str(data.get("error") or ""), data.get("ok") is True,
                   parse_rfc3339(str(data.get("at") or "")) or 0.0)


@dataclass(frozen=True, slots=True)
class EnvFact:
    """One thing this project's environment needs (see the module docstring)."""

    id: str
    topic: str
    cls: str
    shape: sh.Shape
    scope: tuple[str, str]
    #: The tool the fix was seen with (an ARGS fix is that tool's own option).
    tool: str = ""
    evidence: tuple[Evidence, ...] = ()
    #: (failed command, the command that succeeded right after it), normalised.
    pairs: tuple[tuple[str, str], ...] = ()
    successes: int = 0
    failures: int = 0
    first_seen: float = 0.0
    last_seen: float = 0.0
    retired: bool = False

    @property
    def confidence(self) -> float:
        """Beta(1,1) posterior mean of the outcomes."""
        return (self.successes + 1) / (self.successes + self.failures + 2)

    @property
    def proven(self) -> bool:
        return self.successes >= PROVEN and self.failures == 0 and not self.retired

    @property
    def rewritable(self) -> bool:
        """Whether this fact may ever change a call without the model."""
        return (not self.retired and self.failures == 0 and group_of(self.cls) not in _ADVICE_ONLY
                and sh.rewrite_safe(self.shape))

    @property
    def sessions(self) -> int:
        return len({e.session for e in self.evidence if e.session})

    def speaks_of(self, command: str, tool: str = "") -> bool:
        """The fact's precondition: a command of its scope (and, for an option of the
        harness's tool, that tool)."""
        if self.shape.kind == sh.ARGS and tool and tool != self.tool:
            return False
        return sh.in_scope(self.scope, command)

    def fix_for(self, command: str) -> str | None:
        """`command` with this fact's fix made, or None (it does not fit, or is there)."""
        if self.shape.kind == sh.ARGS:
            return sh.norm(command) or None
        return sh.apply(self.shape, command)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "topic": self.topic, "class": self.cls, "fix": self.shape.to_dict(),
            "scope": {"kind": self.scope[0], "value": self.scope[1]},
            "evidence": [e.to_dict() for e in self.evidence],
            "pairs": [list(p) for p in self.pairs], "successes": self.successes,
            "failures": self.failures, "first_seen": to_rfc3339(self.first_seen),
            "last_seen": to_rfc3339(self.last_seen)}
        if self.tool:
            out["tool"] = self.tool
        if self.retired:
            out["retired"] = True
        return out

    @classmethod
    def from_dict(cls, data: Any) -> EnvFact | None:
        """The fact a stored map describes; None for a map that is not one (never raises)."""
        if not isinstance(data, Mapping):
            return None
        shape = sh.Shape.from_dict(data.get("fix"))
        scope = data.get("scope")
        if shape is None or not isinstance(scope, Mapping) or not isinstance(data.get("id"), str):
            return None
        evidence = tuple(e for e in map(Evidence.from_dict, data.get("evidence") or ())
                         if e is not None)[-MAX_EVIDENCE:]
        pairs = tuple((str(p[0]), str(p[1])) for p in data.get("pairs") or ()
                      if isinstance(p, list | tuple) and len(p) == 2)[-MAX_PAIRS:]
        return cls(str(data["id"]), str(data.get("topic") or "environment"),
                   str(data.get("class") or "unknown"), shape,
                   (str(scope.get("kind") or "head"), str(scope.get("value") or "")),
                   str(data.get("tool") or ""), evidence, pairs,
                   _count(data.get("successes")), _count(data.get("failures")),
                   parse_rfc3339(str(data.get("first_seen") or "")) or 0.0,
                   parse_rfc3339(str(data.get("last_seen") or "")) or 0.0,
                   data.get("retired") is True)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclass(frozen=True, slots=True)
class Call:
    """What a fact needs of a call: its tool, shell command, arguments, and where it was seen."""

    tool: str
    command: str
    args: Mapping[str, Any] = field(default_factory=dict)
    session: str = ""
    call_id: str = ""
    error: str = ""


def _evidence(call: Call, ok: bool, now: float) -> Evidence:
    error = clip(redact(call.error.strip().split("\n", 1)[0]), MAX_ERROR) if not ok else ""
    return Evidence(call.session, call.call_id, clip(redact(sh.norm(call.command)), MAX_COMMAND),
                    error, ok, now)


@dataclass(frozen=True, slots=True)
class Preflight:
    """A call rewritten before it runs: by which facts (composed — a runtime's activation and a
    server's background tail are one rewrite), and why that is exact."""

    facts: tuple[EnvFact, ...]
    command: str
    args: Mapping[str, Any]
    #: Per fact, "exact" (this command failed here and the fact's fix succeeded right after
    #: it) or "proven" (the fact got past its failure every time, >= PROVEN).
    why: tuple[str, ...]

    @property
    def fact(self) -> EnvFact:
        return self.facts[0]


#: The order in which composed fixes are made: the program first, then what runs around it.
_COMPOSE = (sh.SUBSTITUTE, sh.WRAP, sh.PREFIX, sh.BACKGROUND, sh.ARGS)


class EnvBook:
    """One project's environment facts (see the module docstring)."""

    def __init__(self, facts: Iterable[EnvFact] = ()) -> None:
        self.facts: dict[str, EnvFact] = {f.id: f for f in facts}

    # ------------------------------------------------------------------ learning

    def learn(self, cls: str, failed: Call, fixed: Call | None, now: float) -> EnvFact | None:
        """Learn from a failed call and the call that got past it (None: no environment fact —
        the class is the model's work, or the fix changed what the command does)."""
        if fixed is None or cls not in LEARN_CLASSES or not failed.command:
            return None
        shape = sh.shape_of(failed.command, fixed.command) if fixed.command else None
        if shape is None and sh.norm(failed.command) == sh.norm(fixed.command):
            shape = sh.args_shape(failed.args, fixed.args)
        if shape is None:
            return None
        scope = sh.scope_of(shape, failed.command)
        topic = sh.topic_of(shape, cls)
        fid = hash_id("env_", topic, shape.key(), scope[0], scope[1])
        old = self.facts.get(fid)
        pair = (sh.norm(failed.command), sh.norm(fixed.command))
        proof = (_evidence(failed, False, now), _evidence(fixed, True, now))
        if old is None:
            fact = EnvFact(fid, topic, cls, shape, scope,
                           failed.tool if shape.kind == sh.ARGS else "", proof, (pair,), 1, 0,
                           now, now)
        else:
            pairs = old.pairs if pair in old.pairs else (old.pairs + (pair,))[-MAX_PAIRS:]
            fact = replace(old, evidence=(old.evidence + proof)[-MAX_EVIDENCE:], pairs=pairs,
                           successes=old.successes + 1, last_seen=now)
        self.facts[fid] = fact
        self._prune()
        return fact

    def observe(self, fact_id: str, ok: bool, now: float) -> EnvFact | None:
        """An outcome of a fact that was applied or advised: the call got past (or not)."""
        fact = self.facts.get(fact_id)
        if fact is None:
            return None
        fact = replace(fact, successes=fact.successes + ok, failures=fact.failures + (not ok),
                       last_seen=now)
        self.facts[fact_id] = fact
        return fact

    def retire(self, fact_id: str) -> bool:
        fact = self.facts.get(fact_id)
        if fact is None:
            return False
        self.facts[fact_id] = replace(fact, retired=True)
        return True

    def _prune(self) -> None:
        if len(self.facts) <= MAX_FACTS:
            return
        keep = sorted(self.facts.values(), key=lambda f: (f.confidence, f.last_seen),
                      reverse=True)[:MAX_FACTS]
        self.facts = {f.id: f for f in keep}

    # ------------------------------------------------------------------ using

    def relevant(self, cls: str, call: Call) -> list[EnvFact]:
        """Facts for a failure of class `cls` of this call, best first: same kind of failure,
        the call is of the fact's scope, and the fix fits the call."""
        group = group_of(cls)
        found = [f for f in self.facts.values()
                 if not f.retired and group_of(f.cls) == group
                 and f.speaks_of(call.command, call.tool) and f.fix_for(call.command)]
        return sorted(found, key=lambda f: (f.confidence, f.successes, f.last_seen), reverse=True)

    def preflight(self, call: Call) -> Preflight | None:
        """The call rewritten before it runs, when that is exact and safe (see the module
        docstring): every fact that may rewrite it, composed (at most one fix of each kind: two
        facts that would make the same part of the call differently rewrite nothing)."""
        command = sh.norm(call.command)
        if not command:
            return None
        chosen: dict[str, tuple[EnvFact, str]] = {}
        for fact in sorted(self.facts.values(), key=lambda f: f.id):
            if not fact.rewritable or not fact.speaks_of(command, call.tool):
                continue
            exact = any(failed == command for failed, _ in fact.pairs)
            if not (exact or fact.proven):
                continue
            # One fix per topic (one runtime activation, one way to the background) and per
            # kind of change: two that would make it differently leave the call to the model.
            for slot in (fact.topic, fact.shape.kind):
                held = chosen.get(slot)
                if held is not None and held[0].shape.key() != fact.shape.key():
                    return None
            chosen[fact.topic] = chosen[fact.shape.kind] = (fact, "exact" if exact else "proven")
        done, args = command, dict(call.args)
        used: list[tuple[EnvFact, str]] = []
        for kind in _COMPOSE:
            if kind not in chosen:
                continue
            fact, why = chosen[kind]
            if kind == sh.ARGS:
                if all(args.get(k) == v for k, v in fact.shape.args.items()):
                    continue
                args.update(fact.shape.args)
            else:
                fixed = sh.apply(fact.shape, done)
                if fixed is None:
                    continue
                done = fixed
            used.append((fact, why))
        if not used:
            return None
        return Preflight(tuple(f for f, _ in used), done, args, tuple(w for _, w in used))

    # ------------------------------------------------------------------ telling

    def told(self, query: str = "", limit: int = 4) -> list[EnvFact]:
        """The facts a session's start is told: those that got past their failure and never
        failed since, those whose scope the task names first."""
        words = {w.lower() for w in query.replace("`", " ").split()}
        live = [f for f in self.facts.values() if not f.retired and f.successes > f.failures]
        return sorted(live, key=lambda f: (_named(f, words), f.confidence, f.last_seen),
                      reverse=True)[:limit]

    def table(self) -> list[dict[str, Any]]:
        """The rows a hook matches before it asks the daemon (written by the daemon when facts
        change): for each fact that may rewrite, the command heads that can trigger it and the
        exact commands it was seen failing on."""
        rows: list[dict[str, Any]] = []
        for fact in sorted(self.facts.values(), key=lambda f: f.id):
            if not fact.rewritable:
                continue
            exact = sorted({failed for failed, fixed in fact.pairs
                            if failed != fixed or fact.shape.kind == sh.ARGS})
            if not exact and not fact.proven:
                continue
            rows.append({"fact": fact.id, "scope": list(fact.scope), "exact": exact,
                         "proven": fact.proven, "tool": fact.tool,
                         "keys": sorted(trigger_words(fact))})
        return rows

    def to_list(self) -> list[dict[str, Any]]:
        return [f.to_dict() for f in sorted(self.facts.values(), key=lambda f: f.id)]

    @classmethod
    def from_list(cls, data: Any) -> EnvBook:
        if not isinstance(data, list):
            return cls()
        return cls(f for f in map(EnvFact.from_dict, data) if f is not None)


def _named(fact: EnvFact, words: set[str]) -> bool:
    if not words:
        return False
    return bool(words & trigger_words(fact)) or fact.scope[1].lower() in words


def trigger_words(fact: EnvFact) -> set[str]:
    """The first words of the commands a fact speaks about (what a hook looks for)."""
    kind, value = fact.scope
    if kind == "family":
        return set(family_heads(value))
    if kind == "words":
        first = sh.words_of(value)
        return {first[0]} if first else set()
    return {value.split(" ", 1)[0]} if value else set()


# ---------------------------------------------------------------------- words

_TOPIC_WORDS = {
    "runtime": "this project's {family} must be selected first",
    "interpreter": "this project's interpreter is another one",
    "background": "it starts a server that does not return: run it in the background",
    "service": "a service it needs must be started first",
    "setting": "it needs a setting here",
    "environment": "it needs this project's environment",
}


def advice(fact: EnvFact, call: Call, error_head: str = "") -> str:
    """The fix named in the call's own words, with its record: "`npm test` failed here with
    `…`: this project's node must be selected first — `nvm use 20 && npm test` got past it
    (3 of 3 times, 2 sessions)."""
    command = sh.norm(call.command)
    shown = command if len(command) <= 80 else command[:79] + "…"
    err = error_head.strip().split("\n", 1)[0]
    err = err if len(err) <= 100 else err[:99] + "…"
    said = f" with `{err}`" if err else ""
    why = _TOPIC_WORDS.get(fact.topic, _TOPIC_WORDS["environment"]).format(
        family=fact.scope[1] if fact.scope[0] == "family" else "runtime")
    fixed = fact.fix_for(command) or ""
    if fact.shape.kind == sh.ARGS:
        options = ", ".join(f"`{k}: {str(v).lower()}`" for k, v in fact.shape.args.items())
        how = f"the same {call.tool or 'call'} with {options}"
    elif fact.shape.kind == sh.SUBSTITUTE:
        how = f"`{fact.shape.words}` instead of `{fact.shape.was}` (`{fixed}`)"
    elif fact.shape.kind in (sh.PREFIX, sh.WRAP):
        how = f"`{fact.shape.words}` first (`{fixed}`)"
    else:
        how = f"`{fixed}`"
    record = f"{fact.successes} of {fact.successes + fact.failures} time" + (
        "" if fact.successes + fact.failures == 1 else "s")
    sessions = fact.sessions
    where = f", {sessions} sessions" if sessions > 1 else ""
    return f"`{shown}` failed here{said}: {why} — {how} got past it ({record}{where})."


def announce(pre: Preflight, original: str) -> str:
    """One line telling the model its call was changed before it ran, and on what record."""
    options = ", ".join(f"{k}: {str(v).lower()}" for f in pre.facts if f.shape.kind == sh.ARGS
                        for k, v in f.shape.args.items())
    changed = sh.norm(pre.command) != sh.norm(original)
    what = " and ".join(part for part in (
        f"ran `{pre.command}` instead of `{sh.norm(original)}`" if changed else "",
        f"ran it with {options}" if options else "") if part)
    basis = ("this command failed here before and that succeeded right after it"
             if all(w == "exact" for w in pre.why) else
             "; ".join(f"{_fix_words(f)} got past the same failure {f.successes} of "
                       f"{f.successes} times here" for f in pre.facts))
    return f"slmactor {what}: {basis}."


def _fix_words(fact: EnvFact) -> str:
    shape = fact.shape
    if shape.kind in (sh.PREFIX, sh.WRAP):
        return f"`{shape.words}`"
    if shape.kind == sh.SUBSTITUTE:
        return f"`{shape.words}` for `{shape.was}`"
    if shape.kind == sh.BACKGROUND:
        return f"`… {shape.tail}`"
    return ", ".join(f"`{k}: {str(v).lower()}`" for k, v in shape.args.items())


def told_line(fact: EnvFact) -> str:
    """A fact as one line of the session's memory block, with its record."""
    kind, value = fact.scope
    about = {"family": f"{value} commands", "words": f"`{value}`",
             "head": f"`{value}`"}.get(kind, f"`{value}`")
    failed = next((e for e in fact.evidence if not e.ok), None)
    err = f" (without it: `{failed.error}`)" if failed and failed.error else ""
    shape = fact.shape
    if shape.kind == sh.PREFIX:
        how = f"run `{shape.words}` first, in the same command"
    elif shape.kind == sh.WRAP:
        how = f"run them as `{shape.words} …`"
    elif shape.kind == sh.SUBSTITUTE:
        how = f"use `{shape.words}` instead of `{shape.was}`"
    elif shape.kind == sh.BACKGROUND:
        how = f"start it in the background (`{'nohup ' if shape.nohup else ''}… {shape.tail}`)"
    else:
        options = ", ".join(f"`{k}: {str(v).lower()}`" for k, v in shape.args.items())
        how = f"start it in the background ({options})"
    n = fact.successes + fact.failures
    return (f"{about}: {how}{err} — worked {fact.successes} of {n} time{'' if n == 1 else 's'}"
            f"{f' in {fact.sessions} sessions' if fact.sessions > 1 else ''}.")

