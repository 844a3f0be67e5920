"""Repairs that carry over to other languages and tools of the same family.

A learned rule is keyed by failure class, tool and language. Some repairs have nothing to do with
the language of the file: trailing whitespace, a line-number prefix, a code fence, a JSON syntax
slip in an edit's arguments, or `replace_all` for a one-token rename only rewrite the arguments.
Such a rule, once it has fixed something, is **proposed** for the same failure class in another
language (or another edit tool of the same family — `Edit`, `ws_edit`, `str_replace_editor`) when
its precondition holds on the failed call: a new rule keyed by the new language, starting a little
below its source's confidence and earning its own from outcomes there (one wrong repair and it is
no longer applied). A rule whose repair needs the language (guidance, an action, `shrink_old_str`)
keeps its key. The proposal names the rule and the runs it rests on.

Which tools are one family is the caller's to say: the daemon passes `harnesses.tool_family`
(every room's tool → edit, read, shell, search, web, task), so a rule learned on one harness's
`Edit` serves another's `replace`; without it, working memory's tool classes decide.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from slmactor.logic.evolve.rules import Rule, Trigger, rule_id
from slmactor.logic.evolve.transforms import CallArgs, fits_call
from slmactor.logic.failures.fingerprint import Fingerprint
from slmactor.logic.working.toolclasses import DEFAULT_TOOL_CLASSES, EDIT, MODE, ToolClasses

#: Transforms that only rewrite the call's arguments (the language of the file plays no part).
ARGUMENT_ONLY = frozenset({"strip_line_number_prefix", "trim_trailing_whitespace", "unfence_code",
                           "repair_json", "set_replace_all"})
#: Transforms whose precondition alone identifies the failure (arguments that do not parse; a
#: line-number gutter on every line): they carry over even when the tool's error text was not
#: recognised (class `unknown`, e.g. a harness version whose wording the classifier lacks).
SELF_EVIDENT = frozenset({"repair_json", "strip_line_number_prefix"})
#: A proposal starts at this share of its source's confidence, with a prior worth two outcomes:
#: a source proven once (0.50) gives 0.46 — applied — and one failure then takes it to 0.31.
TRANSFER_DISCOUNT = 0.92
TRANSFER_STRENGTH = 2.0

def tool_family(tool: str, classes: ToolClasses = DEFAULT_TOOL_CLASSES) -> str:
    """`edit`, `read`, `shell` for known tools (mode tools, editors with sub-commands, edit),
    else the tool's own name; `classes` knows the harnesses' names (the daemon passes them)."""
    name, cls = classes.classify(tool)
    if cls == MODE:
        return EDIT
    return cls or name


#: A tool's family, "" when unknown (then the tool is a family of its own).
Family = Callable[[str], str]


def family_of(tool: str, classes: ToolClasses, family: Family | None) -> str:
    """`tool`'s family by `family` (the daemon's room tables), else by `classes`."""
    if family is None:
        return tool_family(tool, classes)
    return family(tool) or tool.strip().lower()


def _can_carry(rule: Rule, fp: Fingerprint, message: str, classes: ToolClasses,
               family: Family | None = None) -> bool:
    return (not rule.seeded and rule.repair.kind == "transform_args"
            and rule.repair.transform in ARGUMENT_ONLY and rule.successes >= 1 and rule.applicable
            and rule.trigger.cls == fp.cls
            and (fp.cls != "unknown" or rule.repair.transform in SELF_EVIDENT)
            and family_of(rule.trigger.tool or fp.tool, classes, family)
            == family_of(fp.tool, classes, family)
            and not rule.exact_for(fp) and not rule.trigger.matches(fp, message))


def proposals(rules: Iterable[Rule], fp: Fingerprint, message: str, args: CallArgs,
              skip: Iterable[str] = (),
              classes: ToolClasses = DEFAULT_TOOL_CLASSES,
              family: Family | None = None) -> list[tuple[Rule, Rule]]:
    """`(proposed rule, its source)` for each argument-only transform, not in `skip`, that a rule
    of another language or tool learned and whose precondition holds on `args`; best source first.
    """
    done = set(skip)
    best: dict[str, Rule] = {}
    for rule in rules:
        name = rule.repair.transform
        if name in done or not _can_carry(rule, fp, message, classes, family):
            continue
        held = best.get(name)
        if held is None or (-rule.confidence, rule.id) < (-held.confidence, held.id):
            best[name] = rule
    return [(propose(best[name], fp), best[name]) for name in sorted(best)
            if fits_call(name, args)]


def propose(source: Rule, fp: Fingerprint) -> Rule:
    """The rule `source` suggests for `fp`: keyed by `fp`'s class, tool and language."""
    trigger = Trigger(cls=fp.cls, tool=fp.tool, language=fp.language)
    start = TRANSFER_DISCOUNT * source.confidence
    where = "/".join(p for p in (source.trigger.language, source.trigger.tool) if p) or "anywhere"
    return Rule(id=rule_id(trigger, source.repair), trigger=trigger, repair=source.repair,
                scope="project", prior=(TRANSFER_STRENGTH * start, TRANSFER_STRENGTH * (1 - start)),
                origin=source.id,
                note=f"proposed from {source.id} (learned for {where}): the repair only rewrites "
                     "the call's arguments")
