"""What memory answers for a failed call and for a call about to run: the rules actor's
`evolve.on_failure` and `evolve.preflight`, as pure functions of a rule book.

The actor (`slmactor/actors/rules.py`) owns the stores, the counters and the tells; the answer
itself is made here, so the replay of real histories (`logic/loop/histories`) asks memory with
the very functions a harness's hook gets its answer from.

`on_failure`: a call cut off mid-JSON gets no repair (it must be resent); then a shipped or
learned argument transform that repairs this very call; else a learned typed repair whose
precondition fits the call (the fix named in the calls' own words, the rewritten call when the
repair is exact and proved: `typed_repairs.choose`); else any rule the lookup finds (its
guidance; an unverified rule's labelled and never applied). The call is the `ToolCall` its
harness's room built: its arguments are read in the shared words (`ToolCall.shared`) and a
rewrite is given back in the harness's keys (`new_input`, a map; `new_args`, the same as JSON
text). Harness particulars come in as values and functions: `family` (tool → family),
`read_tool` (the harness's read tool, named in a read-first fix). Pure: no I/O; the book is
changed only by adopting a proposed transfer (so its outcomes teach it), as the actor did.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slmactor.logic.evolve.rules import Rule, RuleBook
from slmactor.logic.evolve.typed_repairs import Call
from slmactor.logic.failures.call import ToolCall
from slmactor.logic.failures.fingerprint import Fingerprint


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


def on_failure(book: RuleBook, fp: Fingerprint, call: ToolCall, now: float, *, classes: Any,
               family: Callable[[str], str], read_tool: str) -> Answered:
    """Memory's answer to one failed call (see the module docstring)."""
    from slmactor.logic.evolve.repair_json import CUT_OFF_GUIDANCE, CUT_OFF_REASON, json_cut_off
    from slmactor.logic.evolve.suggest import lookup
    from slmactor.logic.evolve.transforms import apply_transform, transform
    from slmactor.logic.failures.fingerprint import describe

    advice = empty_advice(fp)
    if fp.benign:
        advice["reason"] = f"{describe(fp.cls)}: {fp.detail.replace('_', ' ')}"
        return Answered(advice, None)
    if call.unparsed and json_cut_off(call.unparsed):
        # A call cut off mid-string or mid-structure: closing it would apply a shortened
        # argument as if the model had meant it. Nothing can repair it; it must be resent.
        advice.update(reason=CUT_OFF_REASON, guidance=CUT_OFF_GUIDANCE)
        return Answered(advice, None)
    # The arguments in the shared words the transforms speak (the room renamed its keys).
    args: Any = call.shared() if call.args else (call.unparsed or None)
    suggestion = lookup(book, fp, call.error, args, classes, family=family)
    # A transform that repairs this very call wins; otherwise a learned typed repair that
    # fits it names the fix with its content (before any generic guidance).
    transform_fits = (suggestion is not None and suggestion.apply and not suggestion.ambiguous
                      and suggestion.rule.repair.kind == "transform_args")
    if not transform_fits:
        typed = typed_advice(book, fp, call, read_tool=read_tool)
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
    if rule.repair.kind == "transform_args" and not suggestion.ambiguous:
        if isinstance(args, dict):
            new_args, changed = transform(rule.repair.transform, args)
            if changed:
                answer_call(advice, call, call.rewritten(new_args))
        elif isinstance(args, str) and rule.repair.transform == "repair_json":
            text, changed = apply_transform("repair_json", args)
            if changed:
                advice["new_args"] = text
    return Answered(advice, rule)


def answer_call(out: dict[str, Any], failed: ToolCall, done: ToolCall) -> None:
    """A rewritten call in an answer: `new_input` (its arguments as the harness's tool takes
    them, a map), `new_args` (the same as JSON text, for clients that read text) and
    `new_tool` when it is another tool."""
    out["new_input"] = dict(done.args)
    out["new_args"] = json.dumps(out["new_input"], ensure_ascii=False, separators=(",", ":"))
    if done.tool != failed.tool or "new_tool" in out:
        out["new_tool"] = done.tool


def call_of(tool: str, args: str, family: Callable[[str], str]) -> Call | None:
    """A typed-repair call of JSON arguments already in the shared words (a run report's), or
    None when they are no JSON object."""
    from slmactor.logic.evolve.typed_repairs import parse_args

    parsed = parse_args(args)
    return None if parsed is None else Call(tool, parsed, family(tool) or tool.lower())


def typed_advice(book: RuleBook, fp: Fingerprint, call: ToolCall, *,
                 read_tool: str) -> Answered | None:
    """Advice from a learned typed repair that fits the failed call: the fix named with its
    content, and the rewritten call when the repair is exact and never failed in >= 3 uses."""
    from slmactor.logic.evolve.typed_repairs import choose
    from slmactor.logic.failures.fingerprint import salient_line
    from slmactor.logic.failures.unwrap import unwrap
    from slmactor.logic.text.redact import redact

    if not call.args:
        return None
    # The error as the program said it (case and values kept, secrets redacted): the model
    # recognises its own error; the fingerprint's masked text is a key, not words for it.
    said = redact(salient_line(unwrap(call.error).text))
    picked = choose(book, fp, call.error, Call.of(call), error_head=said, read_tool=read_tool)
    if picked is None:
        return None
    rule = picked.rule
    advice: dict[str, Any] = {
        "found": True, "rule_id": rule.id, "apply": picked.rewritten is not None,
        "repair": rule.repair.to_dict(), "exact": rule.exact_for(fp),
        "reason": f"learned from the call that got past this failure ({rule.repair.kind}); "
                  f"{rule.successes} of {rule.samples} outcomes good; rests on "
                  f"{', '.join(rule.evidence[-2:]) or rule.id}",
        "confidence": round(rule.confidence, 4), "guidance": picked.text,
        "seeded": rule.seeded, "outcomes": rule.samples}
    if picked.rewritten is not None:
        advice["new_tool"] = picked.rewritten.tool
        answer_call(advice, call, call.rewritten(picked.rewritten.args, picked.rewritten.tool))
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


def no_rewrite() -> dict[str, Any]:
    """The `evolve.preflight` reply when memory would not rewrite the call."""
    return {"found": False, "rule_id": "", "new_tool": "", "new_args": "",
            "reason": "no learned rewrite for this call"}


def preflight(book: RuleBook, call: ToolCall) -> dict[str, Any]:
    """The `evolve.preflight` reply: a call about to run, rewritten by a learned repair that
    always worked (`typed_repairs.preflight`), or `found: false`."""
    from slmactor.logic.evolve.typed_repairs import preflight as typed_preflight

    out = no_rewrite()
    if not call.args:
        return out
    picked = typed_preflight(book, Call.of(call))
    if picked is None or picked.rewritten is None:
        return out
    rule = picked.rule
    out.update(found=True, rule_id=rule.id,
               reason=f"{picked.text}: worked {rule.successes} of {rule.samples} times")
    answer_call(out, call, call.rewritten(picked.rewritten.args, picked.rewritten.tool))
    return out


def transform_between(failed: ToolCall, fixed: ToolCall) -> str | None:
    """The named transform between two calls' arguments, read in the shared words (a text that
    never parsed only by `repair_json`)."""
    from slmactor.logic.evolve.transforms import infer_between, infer_transform

    if failed.args and fixed.args:
        return infer_between(failed.shared(), fixed.shared())
    if failed.unparsed and fixed.args:
        return infer_transform(failed.unparsed, json.dumps(dict(fixed.args)))  # both as sent
    return None


def learn_resolved(book: RuleBook, fp: Fingerprint, failed: ToolCall, fixed: ToolCall,
                   now: float, run: str) -> tuple[str | None, Rule | None]:
    """What `evolve.resolved` learns from a failure and the call that got past it: the named
    transform between their arguments (a rule that applies next time), else the typed repair
    between the calls. (transform name or None, the rule learned or None)."""
    from slmactor.logic.evolve.repairs import Repair
    from slmactor.logic.evolve.typed_repairs import learn
    from slmactor.logic.failures.fingerprint import describe

    name = transform_between(failed, fixed) if fixed.tool == failed.tool else None
    if name:
        repair = Repair("transform_args", transform=name, retry=True,
                        guidance=f"{describe(fp.cls)}; the arguments were repaired with {name}")
        return name, book.learn(fp, repair, now, evidence=run, proven=True)
    if not failed.args or not fixed.args:
        return None, None
    rule: Rule | None = learn(book, fp, Call.of(failed), Call.of(fixed), now, run=run)
    return None, rule
