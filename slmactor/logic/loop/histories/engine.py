"""Replay real histories in time order with learning on, and say at every failure what memory
would have done.

Each project's sessions (`History`, one per recorded session, its calls as `Step`s) are
replayed oldest first with a rule book of its own, as the daemon's rules actor would hold it for
that project, starting with the shipped rules only. At every call:

1. **Before the call**: memory's pre-flight (`Memory.before`: the rules actor's
   `evolve.preflight` answer) may rewrite it. A rewrite of a call that failed is *repaired
   before the call* when it is the call that got past the failure, else a *wrong rewrite*; a
   rewrite of a call that succeeded is a wrong rewrite too (it changed a call that worked).
2. **After a failure** (a call the harness reported failed, and the fingerprint says is a
   failure): memory's answer (`Memory.after`: the rules actor's `evolve.on_failure` as the hook
   words it for the harness's model, with where a missing path probably is). A rewritten call is
   *repaired on the failure* when it is the fix, else a wrong rewrite; otherwise the advice
   *names the fix* when it names every facet of its distinguishing part (`facets.names_fix`).
3. **Learning**: the fix of a failure is the first later call of the same family on the same
   target that did not fail (`typed_repairs.pair`). When the session reaches it, memory learns
   from the pair (`Memory.learn`: what `evolve.resolved` learns), and the rule that answered is
   told whether it was right (Beta outcomes).

Decided from the calls alone, never from what was learned (`facets`): a failure is a *repeat*
when the project met its fingerprint before; its fix is *call-derivable* when the failed call's
own error names its distinguishing part (or a shipped transform makes it), *memory-derivable*
when an earlier failure of the project, of the same tool family and class, had a fix (already
made) with the same distinguishing part. The figure that matters is the share of derivable
repeats memory got right.

What it saves, per failure memory got right: a repair before the call avoids the failed call
and every call up to the fix, which takes its place (model turns: one per call, the fix
included); a repair on the failure avoids the calls after the failed one up to the fix, and the
model turns for them and for the fix; advice naming the fix avoids the calls between the failed
one and the fix (the fix is still the model's). A wrong rewrite costs one failed call and one
turn. Pure: no I/O, no clock (a history's own timestamps are its time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from slmactor.logic.evolve import typed_repairs as tr
from slmactor.logic.failures.call import ToolCall
from slmactor.logic.failures.fingerprint import Fingerprint
from slmactor.logic.loop.histories.facets import (
    Facets,
    call_derivable,
    facets,
    memory_key,
    names_fix,
    same_call,
)

#: When a history has no timestamps: the time its first call is given, and the gap per call.
EPOCH = 1_800_000_000.0
STEP_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Step:
    """One tool call of a history: the call, whether the harness said it failed, its error as
    the harness showed it, when it ran (0: not recorded)."""

    call: tr.Call
    ok: bool
    error: str = ""
    at: float = 0.0
    #: The call as its session's record keeps it (a ledger entry: `session_report.ledger_call`,
    #: with its command and the exit code the harness reported as a field): what the fingerprint
    #: reads, as `import sessions` reads it; None (a trajectory's step): built from `call`.
    record: ToolCall | None = None


@dataclass(frozen=True, slots=True)
class History:
    """One recorded session: its harness, the project it belongs to, its id, when it started."""

    harness: str
    project: str
    session: str
    started: float
    steps: tuple[Step, ...]


@dataclass(frozen=True, slots=True)
class Told:
    """Memory's answer to a call: a rewritten call, the text the model would read, and what
    answered (a rule's or a fact's id, "" for none; `learned`: false for a shipped rule, whose
    outcomes are not recorded)."""

    rewrite: tr.Call | None = None
    text: str = ""
    by: str = ""
    learned: bool = False


class Memory(Protocol):
    """The product's answers, passed in (the rules actor's functions and the hook's wording).
    `state` is one project's memory (what `start` made), opaque to the engine."""

    def start(self) -> Any:
        """A project's memory before anything was learned (the shipped rules)."""

    def fingerprint(self, step: Step) -> Fingerprint:
        """The failure's fingerprint, as the rules actor computes it."""

    def before(self, state: Any, harness: str, call: tr.Call) -> Told | None:
        """The call rewritten before it runs, if memory would rewrite it."""

    def after(self, state: Any, harness: str, fp: Fingerprint, step: Step,
              known_paths: Sequence[str], now: float) -> Told:
        """Memory's answer after the failure, worded for the harness's model."""

    def observe(self, state: Any, told: Told, ok: bool, now: float) -> None:
        """Tell what answered whether it was right."""

    def learn(self, state: Any, fp: Fingerprint, failed: Step, fix: Step | None, now: float,
              run: str) -> tuple[str, ...]:
        """Learn from a failure and the call that got past it (None: it never got past); the
        ids of the rules and facts it learned or confirmed."""

    def read_tools(self, tool: str) -> list[str]:
        """The read tools of the harness whose tool `tool` is."""

    def shipped_transform(self, failed: tr.Call, fix: tr.Call) -> str:
        """The shipped argument transform that turns `failed` into `fix` ("" when none)."""

    def named_paths(self, call: tr.Call) -> list[str]:
        """The paths a call names (its path argument, the path-like words of its command)."""


#: What memory did at a failure.
BEFORE = "before the call"
ON_FAILURE = "repaired on the failure"
ADVICE = "advice"
NOTHING = "nothing"


@dataclass(slots=True)
class Failure:
    """One failure of a history, and what memory would have done at it."""

    harness: str
    project: str
    session: str
    index: int
    call: tr.Call
    error: str
    cls: str
    fingerprint: str
    repeat: bool
    fix_index: int | None = None
    fix: tr.Call | None = None
    parts: Facets = field(default_factory=list)
    from_call: bool = False
    from_memory: bool = False
    answer: str = NOTHING
    right: bool = False
    wrong: bool = False
    text: str = ""
    rewritten: tr.Call | None = None
    by: str = ""
    failed_avoided: int = 0
    turns_avoided: int = 0

    @property
    def derivable(self) -> bool:
        """A repeat whose fix the failed call or the project's memory could have told."""
        return self.repeat and (self.from_call or self.from_memory)

    def to_dict(self) -> dict[str, Any]:
        def call(c: tr.Call | None) -> dict[str, Any] | None:
            return None if c is None else {"tool": c.tool, "args": dict(c.args)}

        return {"harness": self.harness, "project": self.project, "session": self.session,
                "index": self.index, "call": call(self.call), "error": self.error, "class": self.cls,
                "fingerprint": self.fingerprint, "repeat": self.repeat, "fix_index": self.fix_index,
                "fix": call(self.fix), "distinguishing": self.parts,
                "call_derivable": self.from_call, "memory_derivable": self.from_memory,
                "derivable": self.derivable, "answer": self.answer, "right": self.right,
                "wrong": self.wrong, "told": self.text, "rewritten": call(self.rewritten),
                "by": self.by, "failed_calls_avoided": self.failed_avoided,
                "model_turns_avoided": self.turns_avoided}


@dataclass(frozen=True, slots=True)
class Unneeded:
    """A pre-flight rewrite of a call that succeeded as it was (a wrong rewrite)."""

    harness: str
    project: str
    session: str
    index: int
    call: tr.Call
    rewritten: tr.Call
    by: str


@dataclass(slots=True)
class Replayed:
    """Everything one replay saw: calls per harness, every failure, every unneeded rewrite."""

    calls: dict[str, int] = field(default_factory=dict)
    sessions: dict[str, int] = field(default_factory=dict)
    benign: dict[str, int] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    unneeded: list[Unneeded] = field(default_factory=list)
    learned: dict[str, int] = field(default_factory=dict)
    projects: int = 0


def _bump(counter: dict[str, int], key: str, n: int = 1) -> None:
    counter[key] = counter.get(key, 0) + n


def in_time_order(histories: Iterable[History]) -> dict[str, list[History]]:
    """Each project's histories, oldest first (ties: by session id)."""
    by_project: dict[str, list[History]] = {}
    for history in histories:
        by_project.setdefault(history.project, []).append(history)
    for items in by_project.values():
        items.sort(key=lambda h: (h.started, h.session))
    return by_project


def replay(histories: Iterable[History], memory: Memory) -> Replayed:
    """Replay every project's histories in time order (see the module docstring)."""
    out = Replayed()
    for project, items in sorted(in_time_order(histories).items()):
        out.projects += 1
        _Project(project, memory, out).run(items)
    return out


@dataclass(slots=True)
class _Pending:
    """A failure whose fix the session reaches later: what to learn and tell then."""

    failure: Failure
    fp: Fingerprint
    step: Step
    fix: Step
    told: Told | None
    right: bool


class _Project:
    """One project's replay: its rule book, the fingerprints it met, the fixes it saw."""

    def __init__(self, project: str, memory: Memory, out: Replayed) -> None:
        self.project, self.memory, self.out = project, memory, out
        self.state = memory.start()
        self.seen: set[str] = set()
        self.fixes: set[str] = set()
        self.known: set[str] = set()
        self.paths: list[str] = []
        self.clock = EPOCH

    def _now(self, at: float) -> float:
        # The history's own time when it has one (never backwards), else a step a call.
        self.clock = max(self.clock + 1e-3, at) if at > 0 else self.clock + STEP_SECONDS
        return self.clock

    def run(self, histories: Sequence[History]) -> None:
        for history in histories:
            self.session(history)

    def session(self, h: History) -> None:
        out, memory = self.out, self.memory
        _bump(out.sessions, h.harness)
        _bump(out.calls, h.harness, len(h.steps))
        pairs = [(s.call, not s.ok) for s in h.steps]
        due: dict[int, list[_Pending]] = {}
        known = list(self.paths)
        for i, step in enumerate(h.steps):
            now = self._now(step.at)
            for reached in due.pop(i, []):
                self._learned(reached, h, now)
            before = memory.before(self.state, h.harness, step.call)
            if before is not None and before.rewrite is None:
                before = None
            if step.ok:
                if before is not None and before.rewrite is not None \
                        and not same_call(before.rewrite, step.call):
                    out.unneeded.append(Unneeded(h.harness, self.project, h.session, i, step.call,
                                                 before.rewrite, before.by))
                    if before.learned:
                        memory.observe(self.state, before, False, now)
                known.extend(memory.named_paths(step.call))
                continue
            fp = memory.fingerprint(step)
            if fp.benign or fp.is_zero:
                _bump(out.benign, h.harness)
                continue
            failure, pending = self._failure(h, i, step, fp, before, pairs, known)
            out.failures.append(failure)
            if pending is not None:
                due.setdefault(failure.fix_index or 0, []).append(pending)
        self.paths = known

    def _failure(self, h: History, i: int, step: Step, fp: Fingerprint, before: Told | None,
                 pairs: list[tuple[tr.Call, bool]], known: list[str]) -> tuple[Failure, _Pending | None]:
        memory = self.memory
        failed = step.call
        f = Failure(h.harness, self.project, h.session, i, failed, step.error, fp.cls, fp.id,
                    repeat=fp.id in self.seen)
        self.seen.add(fp.id)
        j = tr.pair(pairs, i)
        fix = h.steps[j] if j is not None else None
        reads = memory.read_tools(failed.tool)
        if fix is not None:
            f.fix_index, f.fix = j, fix.call
            if failed.tool != fix.call.tool or dict(failed.args) != dict(fix.call.args):
                # Any difference is the fix (a trailing blank removed is one); the same call
                # again has none: what got past the failure happened between the calls.
                f.parts = facets(failed, fix.call, reads)
                shipped = memory.shipped_transform(failed, fix.call)
                f.from_call = call_derivable(failed, fix.call, step.error, f.parts, reads, shipped)
                f.from_memory = memory_key(failed.family, fp.cls, f.parts) in self.fixes
        told: Told
        if before is not None:
            told, f.answer = before, BEFORE
        else:
            told = memory.after(self.state, h.harness, fp, step, known, self.clock)
            f.answer = ON_FAILURE if told.rewrite is not None else ADVICE if told.text else NOTHING
        f.text, f.rewritten, f.by = told.text, told.rewrite, told.by
        if f.rewritten is not None:
            f.right = fix is not None and same_call(f.rewritten, fix.call)
            f.wrong = not f.right
        elif fix is not None and f.text and f.parts:
            f.right = names_fix(f.text, f.parts)
        self._savings(f, h.steps, i, j)
        if fix is None:
            # Never got past: a rewrite was wrong, and what memory learns is the failure alone
            # (a quota that is gone, a user who said no: do not retry).
            now = self._now(0.0)
            if told.learned and f.rewritten is not None:
                memory.observe(self.state, told, False, now)
            self._count_learned(memory.learn(self.state, fp, step, None, now, f"{h.session}#{i}"),
                                h.harness)
            return f, None
        return f, _Pending(f, fp, step, fix, told, f.right)

    @staticmethod
    def _savings(f: Failure, steps: Sequence[Step], i: int, j: int | None) -> None:
        if f.wrong:
            f.failed_avoided, f.turns_avoided = -1, -1
            return
        if not f.right or j is None:
            return
        failed_between = sum(1 for s in steps[i + 1:j] if not s.ok)
        if f.answer == BEFORE:
            f.failed_avoided, f.turns_avoided = 1 + failed_between, j - i
        elif f.answer == ON_FAILURE:
            f.failed_avoided, f.turns_avoided = failed_between, j - i
        else:
            f.failed_avoided, f.turns_avoided = failed_between, j - i - 1

    def _learned(self, pending: _Pending, h: History, now: float) -> None:
        f = pending.failure
        if f.parts:
            self.fixes.add(memory_key(f.call.family, f.cls, f.parts))
        told = pending.told
        if told is not None and told.learned and told.by:
            self.memory.observe(self.state, told, pending.right, now)
        self._count_learned(self.memory.learn(self.state, pending.fp, pending.step, pending.fix, now,
                                              f"{h.session}#{f.index}"), h.harness)

    def _count_learned(self, ids: tuple[str, ...], harness: str) -> None:
        """Rules and facts the project did not hold before, counted for the harness that taught
        them (one confirmed again is not learned again)."""
        for one in ids:
            if one and one not in self.known:
                self.known.add(one)
                _bump(self.out.learned, harness)


def steps_of(entries: Iterable[dict[str, Any]], call_of: Callable[[dict[str, Any]], tr.Call]) -> tuple[Step, ...]:
    """A session's ledger `call` entries (what every room's reader gives) as steps."""
    from slmactor.logic.loop.session_report import ledger_call

    out = []
    for entry in entries:
        if entry.get("e", "call") != "call":
            continue
        at = entry.get("at")
        out.append(Step(call_of(entry), entry.get("ok") is True, str(entry.get("error") or ""),
                        float(at) if isinstance(at, (int, float)) and not isinstance(at, bool) else 0.0,
                        ledger_call(entry)))
    return tuple(out)
