"""Choosing the repair for one failed call (SPEC S-10.8).

A failure class hides several repairs: "string to replace not found" is a line-number prefix in
one call and trailing whitespace in the next; "found N matches" is a rename (`replace_all`) in one
and an edit that needs more context in the next; "invalid JSON" is a slip in one and a call cut
off in the next. So a fingerprint keeps every transform that fixed it (one rule each, with its
own evidence and confidence), and `lookup` asks each transform's **precondition** on the failed
call's arguments (`transforms.fits`):

* exactly one transform fits (and changes the arguments) → its best rule, exact fingerprint
  first — including a rule `transfer.py` proposes from another language or edit tool;
* several fit → no repair is applied (`Suggestion.ambiguous`): guidance only, naming them;
* none fits → the best other rule (guidance, an action, …), exact fingerprint group first, then
  trigger matches, by confidence, specificity, id.  (H-S-25: a transform that cannot repair this
  call is never chosen.)

Without arguments, transform rules are not tested (the seed's behaviour).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from slmactor.logic.evolve import transfer
from slmactor.logic.evolve.rules import (
    INTENT_CONFIRMATIONS,
    MIN_APPLY_CONFIDENCE,
    Rule,
    RuleBook,
)
from slmactor.logic.evolve.transforms import (
    CallArgs,
    apply_transform,
    as_call_args,
    fits_call,
    is_token_edit,
    repaired,
)
from slmactor.logic.failures.fingerprint import Fingerprint, analyze
from slmactor.logic.text.trust import UNVERIFIED_LABEL
from slmactor.logic.working.toolclasses import DEFAULT_TOOL_CLASSES, ToolClasses

_EVIDENCE_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Suggestion:
    """The best rule for a failure (S-10.8)."""

    rule: Rule
    fingerprint: Fingerprint
    exact: bool
    #: The failed call edits a single token, so "every occurrence" is a plausible intent.
    token_edit: bool = False
    #: Transforms whose preconditions all hold on this call: none of them is applied.
    ambiguous: tuple[str, ...] = ()
    #: The rule `rule` was proposed from, when it is a new proposal (not yet in the book).
    source: Rule | None = None

    @property
    def proposed(self) -> bool:
        return self.source is not None

    @property
    def confidence(self) -> float:
        return self.rule.confidence

    @property
    def apply(self) -> bool:
        rule = self.rule
        if self.ambiguous or not rule.verified:
            return False
        if rule.repair.needs_intent and not rule.seeded and (
            rule.failures or (rule.successes < INTENT_CONFIRMATIONS and not self.token_edit)
        ):
            # One fix with replace_all says nothing about what the next ambiguous *statement*
            # edit means; for a single token (a rename) it does, and so does a pattern
            # confirmed by several fixes. A rule that was ever wrong goes back to suggesting.
            return False
        return rule.confidence >= MIN_APPLY_CONFIDENCE

    def reason(self) -> str:
        if not self.rule.verified:
            return (f"{UNVERIFIED_LABEL}: a rule this repository's .slmcode/evolve/rules.json "
                    "brought, which was not learned on this machine; it is never applied, its "
                    "statistics are not counted and its commands are withheld")
        if self.ambiguous:
            return (f"several repairs fit this call ({', '.join(self.ambiguous)}); none is "
                    "applied: see which one the failure needs")
        how = "seen this exact failure before" if self.exact else "matched the failure pattern"
        origin = {"builtin": "shipped with slmactor", "user":
                  "learned on another project with this model"}.get(self.rule.scope, "learned here")
        if self.rule.origin:
            origin = "proposed from a rule learned for another language or tool"
        n = self.rule.samples
        hint = ("; suggested only: whether it is right depends on what the edit meant, and "
                f"it needs {INTENT_CONFIRMATIONS} confirming fixes and no failure to be applied"
                if self.rule.repair.needs_intent and not self.rule.seeded and not self.apply
                else "")
        return (f"{how} ({origin}); repair: {self.rule.repair}; confidence "
                f"{round(100 * self.confidence)}% over {n} outcome{'' if n == 1 else 's'}"
                f"{hint}; {self.evidence()}")

    def evidence(self) -> str:
        """What the advice rests on: the runs that proved the rule (or its source)."""
        rule = self.rule
        source = self.source
        if source is not None or rule.origin:
            src = source.id if source is not None else rule.origin
            runs = _runs(source) if source is not None else ""
            own = f"; {rule.successes} fix(es) here" if rule.samples else "; no outcome here yet"
            return f"rests on {src}{runs}{own}"
        if rule.seeded and not rule.evidence:
            return "rests on the shipped rule"
        return f"rests on {rule.id}{_runs(rule)}"


def _runs(rule: Rule) -> str:
    shown = rule.evidence[-_EVIDENCE_SHOWN:]
    if not shown:
        return f" ({rule.successes} fix(es))"
    return f" ({rule.successes} fix(es); runs {', '.join(shown)})"


def _best(rules: list[Rule]) -> Rule:
    return min(rules, key=lambda r: (-r.confidence, -r.trigger.specificity, r.id))


def lookup(book: RuleBook, fp: Fingerprint, message: str,
           args: CallArgs | None = None, classes: ToolClasses = DEFAULT_TOOL_CLASSES,
           family: transfer.Family | None = None) -> Suggestion | None:
    """The repair for one failed call (see the module docstring); `family` (else `classes`) says
    which tools are one family (the daemon passes `harnesses.tool_family`).

    Rules this user learned (or shipped ones) answer first, and only they propose transfers;
    a rule a repository brought unsigned (`Rule.verified` false) is found only when none of
    them fits, and is then suggested, never applied.
    """
    if fp.is_zero:
        return None
    if args is not None:
        args = as_call_args(args)  # a map in the shared words (a text only when it never parsed)
    rules = list(book.rules.values())
    known = {rule.id for rule in rules}
    own = _lookup([r for r in rules if r.verified], fp, message, args, classes, known, family)
    if own is not None:
        return own
    return _lookup([r for r in rules if not r.verified], fp, message, args, classes, None, family)


def _same_family_advice(rule: Rule, fp: Fingerprint, message: str, classes: ToolClasses,
                        family: transfer.Family | None) -> bool:
    """A shipped rule of plain advice whose trigger names a tool (`bash`) matches the same
    family's tool of every harness (Gemini's `run_shell_command`, Codex's `exec_command`), as if
    that tool were named: the advice is worded in the harness's own names when it is shown.
    Never a rewrite or an action: a transform carries over only as `transfer` proposes it."""
    want = rule.trigger.tool
    if not (rule.seeded and want and rule.repair.kind == "guidance"):
        return False  # an action or a transform is slmcode's own tool's: it stays bound to it
    kind = transfer.family_of(want, classes, family)
    if kind != transfer.family_of(fp.tool, classes, family) or kind == want.strip().lower():
        return False  # not the same family, or `want` is a family of its own (no room knows it)
    return rule.trigger.matches(replace(fp, tool=want), message)


def _lookup(pool: list[Rule], fp: Fingerprint, message: str, args: CallArgs | None,
            classes: ToolClasses, known: set[str] | None,
            family: transfer.Family | None = None) -> Suggestion | None:
    """`lookup` over `pool`; transfers are proposed only with the ids `known` to the book."""
    exact: list[Rule] = []
    pattern: list[Rule] = []
    fitting: dict[str, list[Rule]] = {}
    for rule in pool:
        if not rule.usable or rule.repair.spec:
            # A learned typed repair holds a precondition on the failed call (its file, its
            # command): `typed_repairs.choose` answers with it where that holds, and nowhere
            # else — its words name another call's fix.
            continue
        is_exact = rule.exact_for(fp)
        if not is_exact and not rule.seeded and rule.repair.kind == "guidance" \
                and "`" in rule.repair.guidance:
            # A learned fix that names a command or file (`Run `X` first`) is that failure's
            # fix: for another failure of its class it names something that call never needed.
            continue
        if not is_exact and not (rule.trigger.matches(fp, message)
                                 or _same_family_advice(rule, fp, message, classes, family)):
            continue
        if args is not None and rule.repair.kind == "transform_args":
            if not (fits_call(rule.repair.transform, args)
                    and repaired(rule.repair.transform, args)[1]):
                continue  # its precondition does not hold, or it would change nothing (H-S-25)
            fitting.setdefault(rule.repair.transform, []).append(rule)
        (exact if is_exact else pattern).append(rule)
    sources: dict[str, Rule] = {}
    if args is not None and known is not None:
        for proposed, source in transfer.proposals(pool, fp, message, args, skip=fitting,
                                                    classes=classes, family=family):
            if proposed.id in known or not repaired(proposed.repair.transform, args)[1]:
                continue  # proposed before: that rule answers for itself (or was retired)
            fitting[proposed.repair.transform] = [proposed]
            sources[proposed.id] = source
    token = isinstance(args, Mapping) and is_token_edit(args)
    exact_ids = {rule.id for rule in exact}
    if len(fitting) > 1:
        best = _best([rule for group in fitting.values() for rule in group])
        return Suggestion(best, fp, best.id in exact_ids, token, tuple(sorted(fitting)))
    if fitting:
        (group,) = fitting.values()
        best = _best([r for r in group if r.id in exact_ids] or group)
        return Suggestion(best, fp, best.id in exact_ids, token, source=sources.get(best.id))
    if exact:
        return Suggestion(_best(exact), fp, True, token)
    return Suggestion(_best(pattern), fp, False, token) if pattern else None


def suggest_repair(book: RuleBook, tool: str, message: str, language: str = "",
                   model_family: str = "", args: str = "") -> tuple[str, str, bool]:
    """The seed's legacy helper (S-10.13): `(guidance, new_args, ok)` for a failure.

    Ignores the apply bar: any usable rule is suggested.  `new_args` is set only when the rule's
    transform changed the arguments (and no other transform fits them as well).
    """
    fp = analyze(tool, message, language, model_family=model_family)
    found = lookup(book, fp, message, args or None)
    if found is None:
        return "", "", False
    new_args = ""
    if found.rule.repair.kind == "transform_args" and args and not found.ambiguous:
        changed_args, changed = apply_transform(found.rule.repair.transform, args)
        new_args = changed_args if changed else ""
    return found.rule.repair.guidance, new_args, True
