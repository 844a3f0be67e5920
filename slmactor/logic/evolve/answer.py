"""What memory answers for a failed call and for a call about to run: the rules actor's
`evolve.on_failure` and `evolve.preflight`, as pure functions of a rule book.

The actor (`slmactor/actors/rules.py`) owns the stores, the counters and the tells; the answer
itself is made here, so the replay of real histories (`logic/loop/histories`) asks memory with
the very functions a harness's hook gets its answer from.

`on_failure`: a call cut off mid-JSON gets no repair (it must be resent); then a shipped or
learned argument transform that repairs this very call; else a learned typed repair whose
precondition fits the call (the fix named in the calls' own words, the rewritten call when the
repair is exact and proved: `typed_repairs.choose`); else any rule the lookup finds (its
guidance; an unverified rule's labelled and never applied). Harness particulars come in as
functions: `family` (tool → family), `canonical` / `localized` (a harness's argument names to
the shared transforms' and back), `read_tool` (the harness's read tool, named in a read-first
fix). Pure: no I/O; the book is changed only by adopting a proposed transfer (so its outcomes
teach it), as the actor did.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slmactor.logic.evolve.rules import Rule, RuleBook
from slmactor.logic.failures.fingerprint import Fingerprint

ArgsMap = Callable[[str, str], str]


@dataclass(frozen=True, slots=True)
class Answered:
    """The `evolve.on_failure` reply, and the rule behind it (None: none)."""

    advice: dict[str, Any]
    rule: Rule | None


def empty_advice(fp: Fingerprint) -> dict[str, Any]:
    return {"found": False, "fingerprint": fp.to_dict(), "rule_id": "", "apply": False,
            "repair": None, "new_args": "", "reason": "no repair known for this failure yet",
            "exact": False, "confidence": 0.0, "guidance": "", "seeded": False, "outcomes": 0,
            "verified": True, "benign": fp.benign}


def on_failure(book: RuleBook, fp: Fingerprint, tool: str, message: str, args: str, now: float, *,
               classes: Any, family: Callable[[str], str], canonical: ArgsMap, localized: ArgsMap,
               read_tool: str) -> Answered:
    """Memory's answer to one failed call (see the module docstring)."""
    from slmactor.logic.evolve.repair_json import CUT_OFF_GUIDANCE, CUT_OFF_REASON, json_cut_off
    from slmactor.logic.evolve.suggest import lookup
    from slmactor.logic.evolve.transforms import apply_transform
    from slmactor.logic.failures.fingerprint import describe

    advice = empty_advice(fp)
    if fp.benign:
        advice["reason"] = f"{describe(fp.cls)}: {fp.detail.replace('_', ' ')}"
        return Answered(advice, None)
    if args and json_cut_off(args):
        # A call cut off mid-string or mid-structure: closing it would apply a shortened
        # argument as if the model had meant it. Nothing can repair it; it must be resent.
        advice.update(reason=CUT_OFF_REASON, guidance=CUT_OFF_GUIDANCE)
        return Answered(advice, None)
    # The shared transforms' words (Gemini's `allow_multiple` is `replace_all` to them).
    shared = canonical(tool, args) if args else args
    suggestion = lookup(book, fp, message, shared or None, classes, family=family)
    # A transform that repairs this very call wins; otherwise a learned typed repair that
    # fits it names the fix with its content (before any generic guidance).
    transform = (suggestion is not None and suggestion.apply and not suggestion.ambiguous
                 and suggestion.rule.repair.kind == "transform_args")
    if not transform:
        typed = typed_advice(book, fp, tool, message, args, family=family, read_tool=read_tool)
        if typed is not None:
            advice.update(typed.advice)
            return Answered(advice, typed.rule)
    if suggestion is None:
        return Answered(advice, None)
    rule = suggestion.rule
    if suggestion.proposed:
        rule = book.adopt(rule, now)  # so its outcomes teach it
    if not rule.verified:
        advice.update(unverified_advice(rule), found=True, reason=suggestion.reason(),
                      exact=suggestion.exact)
        return Answered(advice, rule)
    guidance = rule.repair.guidance
    if suggestion.ambiguous:
        guidance = (f"Several repairs fit this call ({', '.join(suggestion.ambiguous)}); "
                    "none was applied. " + guidance)
    advice.update(found=True, rule_id=rule.id, apply=suggestion.apply,
                  repair=rule.repair.to_dict(), reason=suggestion.reason(),
                  exact=suggestion.exact, confidence=round(suggestion.confidence, 4),
                  guidance=guidance, seeded=rule.seeded, outcomes=rule.samples)
    if rule.repair.kind == "transform_args" and shared and not suggestion.ambiguous:
        new_args, changed = apply_transform(rule.repair.transform, shared)
        if changed:
            advice["new_args"] = localized(tool, new_args)
    return Answered(advice, rule)


def call_of(tool: str, args: str, family: Callable[[str], str]) -> Any:
    """A typed-repair call of JSON arguments, or None when they are no JSON object."""
    from slmactor.logic.evolve.typed_repairs import Call, parse_args

    parsed = parse_args(args)
    return None if parsed is None else Call(tool, parsed, family(tool) or tool.lower())


def typed_advice(book: RuleBook, fp: Fingerprint, tool: str, message: str, args: str, *,
                 family: Callable[[str], str], read_tool: str) -> Answered | None:
    """Advice from a learned typed repair that fits the failed call: the fix named with its
    content, and the rewritten call when the repair is exact and never failed in >= 3 uses."""
    from slmactor.logic.evolve.typed_repairs import choose, dump_call
    from slmactor.logic.failures.fingerprint import salient_line
    from slmactor.logic.failures.unwrap import unwrap
    from slmactor.logic.text.redact import redact

    failed = call_of(tool, args, family)
    if failed is None:
        return None
    # The error as the program said it (case and values kept, secrets redacted): the model
    # recognises its own error; the fingerprint's masked text is a key, not words for it.
    said = redact(salient_line(unwrap(message).text))
    picked = choose(book, fp, message, failed, error_head=said, read_tool=read_tool)
    if picked is None:
        return None
    rule = picked.rule
    advice: dict[str, Any] = {
        "found": True, "rule_id": rule.id, "apply": picked.rewritten is not None,
        "repair": rule.repair.to_dict(), "exact": rule.fingerprint == fp.id,
        "reason": f"learned from the call that got past this failure ({rule.repair.kind}); "
                  f"{rule.successes} of {rule.samples} outcomes good; rests on "
                  f"{', '.join(rule.evidence[-2:]) or rule.id}",
        "confidence": round(rule.confidence, 4), "guidance": picked.text,
        "seeded": rule.seeded, "outcomes": rule.samples}
    if picked.rewritten is not None:
        advice["new_args"] = dump_call(picked.rewritten)
        advice["new_tool"] = picked.rewritten.tool
    return Answered(advice, rule)


def unverified_advice(rule: Rule) -> dict[str, Any]:
    """What `evolve.on_failure` may say of a rule nobody here learned: labelled, never applied,
    no command (the `repair` record keeps its kind and names, not its command or config)."""
    from slmactor.logic.text.trust import shown_unverified

    return {"rule_id": rule.id, "apply": False, "repair": withheld_repair(rule), "new_args": "",
            "confidence": 0.0, "guidance": shown_unverified(rule.repair.guidance),
            "verified": False}


def withheld_repair(rule: Rule) -> dict[str, Any]:
    """An unverified rule's repair record: its kind and names, every text quoted with its
    commands withheld, no command, setting or typed spec (which holds the fix's own words)."""
    from slmactor.logic.text.trust import WITHHELD, untrusted_value

    repair = rule.repair.to_dict()
    for name in ("command", "config_value", "spec"):
        if repair.get(name):
            repair[name] = WITHHELD
    shown = untrusted_value(repair)
    assert isinstance(shown, dict)
    return shown


def preflight(book: RuleBook, tool: str, args: str, *,
              family: Callable[[str], str]) -> dict[str, Any]:
    """The `evolve.preflight` reply: a call about to run, rewritten by a learned repair that
    always worked (`typed_repairs.preflight`), or `found: false`."""
    from slmactor.logic.evolve.typed_repairs import dump_call
    from slmactor.logic.evolve.typed_repairs import preflight as typed_preflight

    out: dict[str, Any] = {"found": False, "rule_id": "", "new_tool": "", "new_args": "",
                           "reason": "no learned rewrite for this call"}
    call = call_of(tool, args, family)
    if call is None:
        return out
    picked = typed_preflight(book, call)
    if picked is None or picked.rewritten is None:
        return out
    rule = picked.rule
    out.update(found=True, rule_id=rule.id, new_tool=picked.rewritten.tool,
               new_args=dump_call(picked.rewritten),
               reason=f"{picked.text}: worked {rule.successes} of {rule.samples} times")
    return out


def learn_resolved(book: RuleBook, fp: Fingerprint, tool: str, failed_args: str, fixed_tool: str,
                   fixed_args: str, now: float, run: str, *, family: Callable[[str], str],
                   canonical: ArgsMap) -> tuple[str | None, Rule | None]:
    """What `evolve.resolved` learns from a failure and the call that got past it: the named
    transform between their arguments (a rule that applies next time), else the typed repair
    between the calls. (transform name or None, the rule learned or None)."""
    from slmactor.logic.evolve.repairs import Repair
    from slmactor.logic.evolve.transforms import infer_transform
    from slmactor.logic.evolve.typed_repairs import learn
    from slmactor.logic.failures.fingerprint import describe

    same_tool = fixed_tool in ("", tool)
    name = infer_transform(canonical(tool, failed_args), canonical(tool, fixed_args)) if same_tool else None
    if name:
        repair = Repair("transform_args", transform=name, retry=True,
                        guidance=f"{describe(fp.cls)}; the arguments were repaired with {name}")
        return name, book.learn(fp, repair, now, evidence=run, proven=True)
    failed = call_of(tool, failed_args, family)
    fix = call_of(fixed_tool or tool, fixed_args, family)
    if failed is None or fix is None:
        return None, None
    rule: Rule | None = learn(book, fp, failed, fix, now, run=run)
    return None, rule


def dumps(args: Any) -> str:
    """A call's arguments as the JSON text the asks carry."""
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
