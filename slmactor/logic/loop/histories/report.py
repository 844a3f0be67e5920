"""The figures of a replay over real histories, per harness and in all, and their text.

Per harness: sessions and calls replayed; failures (benign results — an empty search, a probe's
"no" — are not failures); repeats; the repeats whose fix was derivable (from the call, from
memory); what memory got right — repaired before the call, repaired on the failure, advice
naming the fix — and the share of derivable repeats it got right; wrong rewrites; and what that
saves: failed calls and model turns avoided per 100 calls (net of wrong rewrites, which cost one
of each). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from slmactor.logic.loop.histories.engine import ADVICE, BEFORE, ON_FAILURE, Replayed

ALL = "all"


@dataclass(slots=True)
class Figures:
    """One harness's figures (or all harnesses')."""

    sessions: int = 0
    calls: int = 0
    failures: int = 0
    not_failures: int = 0
    repeats: int = 0
    derivable: int = 0
    call_derivable: int = 0
    memory_derivable: int = 0
    repaired_before: int = 0
    repaired_on_failure: int = 0
    advice_naming_fix: int = 0
    derivable_right: int = 0
    memory_derivable_right: int = 0
    wrong_rewrites: int = 0
    failed_calls_avoided: int = 0
    model_turns_avoided: int = 0
    rules_learned: int = 0

    def add(self, other: Figures) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def per_100(self, n: int) -> float:
        return round(100.0 * n / self.calls, 2) if self.calls else 0.0

    def share(self) -> float | None:
        """Derivable repeats memory got right (None: there were none)."""
        return round(self.derivable_right / self.derivable, 4) if self.derivable else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["derivable_right_share"] = self.share()
        out["memory_derivable_right_share"] = (round(self.memory_derivable_right / self.memory_derivable, 4)
                                               if self.memory_derivable else None)
        out["failed_calls_avoided_per_100_calls"] = self.per_100(self.failed_calls_avoided)
        out["model_turns_avoided_per_100_calls"] = self.per_100(self.model_turns_avoided)
        return out


def figures(result: Replayed) -> dict[str, Figures]:
    """Per harness (sorted by name), then `ALL`."""
    table: dict[str, Figures] = {}

    def row(harness: str) -> Figures:
        return table.setdefault(harness, Figures())

    for harness, n in result.sessions.items():
        row(harness).sessions += n
    for harness, n in result.calls.items():
        row(harness).calls += n
    for harness, n in result.benign.items():
        row(harness).not_failures += n
    for harness, n in result.learned.items():
        row(harness).rules_learned += n
    for f in result.failures:
        r = row(f.harness)
        r.failures += 1
        r.repeats += f.repeat
        r.derivable += f.derivable
        r.call_derivable += f.repeat and f.from_call
        r.memory_derivable += f.repeat and f.from_memory
        r.repaired_before += f.right and f.answer == BEFORE
        r.repaired_on_failure += f.right and f.answer == ON_FAILURE
        r.advice_naming_fix += f.right and f.answer == ADVICE
        r.derivable_right += f.derivable and f.right
        r.memory_derivable_right += f.repeat and f.from_memory and f.right
        r.wrong_rewrites += f.wrong
        r.failed_calls_avoided += f.failed_avoided
        r.model_turns_avoided += f.turns_avoided
    for u in result.unneeded:
        r = row(u.harness)
        r.wrong_rewrites += 1
        r.failed_calls_avoided -= 1
        r.model_turns_avoided -= 1
    out = {name: table[name] for name in sorted(table)}
    total = Figures()
    for one in out.values():
        total.add(one)
    out[ALL] = total
    return out


def to_dict(result: Replayed, *, failures: bool = True) -> dict[str, Any]:
    table = figures(result)
    data: dict[str, Any] = {"projects": result.projects,
                            "harnesses": {name: f.to_dict() for name, f in table.items()}}
    if failures:
        data["failures"] = [f.to_dict() for f in result.failures]
        data["unneeded_rewrites"] = [
            {"harness": u.harness, "project": u.project, "session": u.session, "index": u.index,
             "call": {"tool": u.call.tool, "args": dict(u.call.args)},
             "rewritten": {"tool": u.rewritten.tool, "args": dict(u.rewritten.args)}, "by": u.by}
            for u in result.unneeded]
    return data


def _pct(share: float | None) -> str:
    return "–" if share is None else f"{100 * share:.0f}%"


COLUMNS = ("harness", "sessions", "calls", "failures", "repeats", "derivable (call/memory)",
           "before the call", "on the failure", "advice names fix", "derivable right",
           "wrong rewrites", "failed calls saved/100", "turns saved/100")


def table_rows(table: dict[str, Figures]) -> list[tuple[str, ...]]:
    """One row of cells per harness (and `ALL`), in `COLUMNS` order."""
    return [(name, str(f.sessions), str(f.calls), str(f.failures), str(f.repeats),
             f"{f.derivable} ({f.call_derivable}/{f.memory_derivable})",
             str(f.repaired_before), str(f.repaired_on_failure), str(f.advice_naming_fix),
             f"{f.derivable_right}/{f.derivable} {_pct(f.share())}", str(f.wrong_rewrites),
             f"{f.per_100(f.failed_calls_avoided):.1f}", f"{f.per_100(f.model_turns_avoided):.1f}")
            for name, f in table.items()]


def headline(result: Replayed, total: Figures) -> str:
    return (f"Replay with learning: {total.sessions} session(s) in {result.projects} project(s), "
            f"{total.calls} calls, {total.failures} failures "
            f"({total.not_failures} failed results that are not failures), "
            f"{total.rules_learned} rule(s) and fact(s) learned")


def verdict(total: Figures) -> str:
    return (f"Memory got {_pct(total.share())} of derivable repeats right "
            f"({total.derivable_right} of {total.derivable}) with {total.wrong_rewrites} wrong "
            f"rewrite(s); that saves {total.per_100(total.failed_calls_avoided):.1f} failed calls and "
            f"{total.per_100(total.model_turns_avoided):.1f} model turns per 100 calls.")


def render(result: Replayed) -> str:
    """The per-harness table, with a headline above and the verdict below."""
    table = figures(result)
    rows: list[tuple[str, ...]] = [COLUMNS, *table_rows(table)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                       for i, (cell, w) in enumerate(zip(r, widths, strict=True))) for r in rows]
    return "\n".join([headline(result, table[ALL]), *lines, verdict(table[ALL])])
