"""Repair rules: triggers, Beta confidence, lookup, observe, learn and prune (SPEC S-10.5–S-10.11).

A rule maps a failure (an exact fingerprint, or a trigger pattern) to a repair.  Its confidence
is a Beta posterior mean `(a0 + successes) / (a0 + b0 + n)`: shipped rules start believed at
Beta(4,1) = 0.80, learned rules start doubted at Beta(1,2) = 0.33.  A rule is *applied* at
confidence >= 0.45 and retires itself below 0.18 once it has at least 4 outcomes, so one unlucky
result cannot kill a good repair:

* a learned rule reaches 0.50 after one success (applicable);
* 4 straight failures of a learned rule give 1/7 = 0.143: retired;
* a shipped rule needs 18 straight failures to retire (4/23 = 0.174).

`RuleBook` is the pure in-memory collection (no I/O, time passed in as `now`); persistence lives
in `slmactor/stores/rules.py`.

Changes from the seed:

* **H-S-25** — `lookup(..., args=...)` (`suggest.py`, with the transforms' preconditions) skips
  a `transform_args` rule whose transform would not change the failed call's arguments: such a
  rule cannot repair this failure, so the next best rule is chosen.  (The seed let the "closest text" whitespace rule outrank the re-read rule on
  every not-found failure, whitespace or not.)
* A rule learned from an *observed* resolution whose repair is deterministic (a transform that
  reproduces the successful retry exactly) starts with that resolution as its first success
  (0.50, applicable): the second occurrence of the failure is repaired without a model.  A guess
  (guidance, or a candidate from reflection) starts at the bare prior, suggested but not applied.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from slmactor.logic.evolve.repairs import Repair
from slmactor.logic.failures.classify import describe
from slmactor.logic.failures.fingerprint import Fingerprint
from slmactor.logic.text.strings import hash_id
from slmactor.logic.text.timefmt import parse_rfc3339, to_rfc3339

SEEDED_PRIOR = (4.0, 1.0)
LEARNED_PRIOR = (1.0, 2.0)
#: Fixes that must confirm a learned intent-dependent transform (`Repair.needs_intent`) before
#: it is applied without a model; one failure sends it back to being a suggestion.
INTENT_CONFIRMATIONS = 2
MIN_APPLY_CONFIDENCE = 0.45
RETIRE_FLOOR = 0.18
RETIRE_MIN_SAMPLES = 4
MAX_RULES = 400
MAX_EVIDENCE = 5
MAX_AGE_DAYS = 365.0
SCOPES = ("builtin", "project", "user")


@dataclass(frozen=True, slots=True)
class Trigger:
    """Which failures a rule applies to; an empty field is a wildcard (S-10.5)."""

    cls: str = ""
    tool: str = ""
    language: str = ""
    model_family: str = ""
    message_contains: tuple[str, ...] = ()

    def matches(self, fp: Fingerprint, message: str) -> bool:
        for want, have in ((self.cls, fp.cls), (self.tool, fp.tool),
                           (self.language, fp.language), (self.model_family, fp.model_family)):
            if want and want.strip().lower() != have.strip().lower():
                return False
        if self.message_contains:
            haystack = f"{message} {fp.norm}".lower()
            return all(needle.lower() in haystack for needle in self.message_contains)
        return True

    def in_scope(self, fp: Fingerprint) -> bool:
        """Whether `fp` is within the language and model family this trigger keeps (a wildcard
        where it keeps none): an id says what failed, the trigger's scope whose failure it is."""
        return all(not want or want.strip().lower() == have.strip().lower()
                   for want, have in ((self.language, fp.language),
                                      (self.model_family, fp.model_family)))

    @property
    def specificity(self) -> int:
        return (4 * bool(self.cls) + 3 * bool(self.tool) + 2 * bool(self.language)
                + 2 * bool(self.model_family) + len(self.message_contains))

    def to_dict(self) -> dict[str, Any]:
        return {"class": self.cls, "tool": self.tool, "language": self.language,
                "model_family": self.model_family, "message_contains": list(self.message_contains)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trigger:
        contains = data.get("message_contains") or []
        return cls(cls=str(data.get("class", "")), tool=str(data.get("tool", "")),
                   language=str(data.get("language", "")),
                   model_family=str(data.get("model_family", "")),
                   message_contains=tuple(str(c) for c in contains if str(c)))


def rule_id(trigger: Trigger, repair: Repair) -> str:
    """`rule_` + 12 hex over the trigger and the repair's deterministic part (S-10.6).

    Guidance text is not part of the id: rewording a hint does not fork a rule.
    """
    return hash_id("rule_", trigger.cls, trigger.tool, trigger.language, trigger.model_family,
                   ",".join(trigger.message_contains), repair.kind, repair.transform, repair.tool,
                   repair.edit_format, repair.config_key, repair.config_value, repair.command,
                   repair.action, *((repair.spec.identity(),) if repair.spec else ()))


@dataclass(frozen=True, slots=True)
class Rule:
    """One repair rule (S-10.6 json shape)."""

    id: str
    trigger: Trigger
    repair: Repair
    fingerprint: str = ""
    evidence: tuple[str, ...] = ()
    successes: int = 0
    failures: int = 0
    created_at: str = ""
    last_used: str = ""
    scope: str = "project"
    seeded: bool = False
    retired: bool = False
    note: str = ""
    #: The Beta prior when it is neither the seeded nor the learned one: a rule proposed from a
    #: rule of another language starts a little below its source (`transfer.py`).
    prior: tuple[float, float] | None = None
    #: The rule this one was proposed from ("" = learned or shipped here).
    origin: str = ""
    #: False for a rule a project file brought without this user's signature (unverified
    #: repository content, `slmactor.logic.text.trust`): listed and shown labelled, never
    #: applied. Not part of `to_dict`: the store's `sig` says it on disk.
    verified: bool = True

    @property
    def samples(self) -> int:
        return self.successes + self.failures

    def exact_for(self, fp: Fingerprint) -> bool:
        """Learned on this very failure (its id) in the scope `fp` is in."""
        return bool(self.fingerprint) and self.fingerprint == fp.id and self.trigger.in_scope(fp)

    @property
    def confidence(self) -> float:
        a0, b0 = self.prior or (SEEDED_PRIOR if self.seeded else LEARNED_PRIOR)
        return (a0 + self.successes) / (a0 + b0 + self.samples)

    @property
    def worn_out(self) -> bool:
        return self.samples >= RETIRE_MIN_SAMPLES and self.confidence < RETIRE_FLOOR

    @property
    def usable(self) -> bool:
        return not self.retired and self.repair.valid and not self.worn_out

    @property
    def applicable(self) -> bool:
        return self.usable and self.confidence >= MIN_APPLY_CONFIDENCE

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "fingerprint": self.fingerprint, "trigger": self.trigger.to_dict(),
                "repair": self.repair.to_dict(), "evidence": list(self.evidence),
                "successes": self.successes, "failures": self.failures,
                "confidence": round(self.confidence, 4), "created_at": self.created_at,
                "last_used": self.last_used, "scope": self.scope, "seeded": self.seeded,
                "retired": self.retired, "note": self.note,
                **({"prior": list(self.prior)} if self.prior else {}),
                **({"origin": self.origin} if self.origin else {})}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rule:
        trigger = Trigger.from_dict(data.get("trigger") or {})
        repair = Repair.from_dict(data.get("repair") or {})
        scope = str(data.get("scope", "project"))
        return cls(id=str(data.get("id") or rule_id(trigger, repair)), trigger=trigger,
                   repair=repair, fingerprint=str(data.get("fingerprint", "")),
                   evidence=tuple(str(e) for e in (data.get("evidence") or []))[-MAX_EVIDENCE:],
                   successes=max(0, _int(data.get("successes"))),
                   failures=max(0, _int(data.get("failures"))),
                   created_at=str(data.get("created_at", "")),
                   last_used=str(data.get("last_used", "")),
                   scope=scope if scope in SCOPES else "project",
                   seeded=data.get("seeded") is True, retired=data.get("retired") is True,
                   note=str(data.get("note", "")), prior=_prior(data.get("prior")),
                   origin=str(data.get("origin", "") or ""))


def _prior(value: object) -> tuple[float, float] | None:
    if not isinstance(value, list) or len(value) != 2:
        return None
    a0, b0 = value
    ok = all(isinstance(v, int | float) and not isinstance(v, bool) and 0 < v < 100
             for v in (a0, b0))
    return (float(a0), float(b0)) if ok else None


def _int(value: object) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except ValueError:
        return 0


@dataclass(frozen=True, slots=True)
class RulePolicy:
    """Prune policy (S-10.11)."""

    max_rules: int = MAX_RULES
    max_age_days: float = MAX_AGE_DAYS
    drop_retired: bool = True


@dataclass
class RuleBook:
    """The rules of one project (seeds + user + project), keyed by id.  Pure; `dirty` after edits."""

    rules: dict[str, Rule] = field(default_factory=dict)
    dirty: bool = False

    def add(self, rule: Rule) -> None:
        self.rules[rule.id] = rule
        self.dirty = True

    def get(self, rid: str) -> Rule | None:
        return self.rules.get(rid)

    def all(self, include_retired: bool = True) -> list[Rule]:
        items = [r for r in self.rules.values() if include_retired or r.usable]
        return sorted(items, key=lambda r: (r.scope != "builtin", -r.confidence, r.id))

    def _update(self, rule: Rule, **changes: Any) -> Rule:
        new = dataclasses.replace(rule, **changes)
        self.rules[rule.id] = new
        self.dirty = True
        return new

    def adopt(self, rule: Rule, now: float) -> Rule:
        """Add a rule proposed by `suggest.lookup` (`Suggestion.proposed`), so outcomes teach it."""
        held = self.rules.get(rule.id)
        if held is not None:
            return held
        rule = dataclasses.replace(rule, created_at=to_rfc3339(now))
        self.add(rule)
        return rule

    def observe(self, rid: str, ok: bool, now: float) -> Rule | None:
        """Record one outcome of applying a rule; auto-retire a worn-out rule (S-10.9)."""
        rule = self.rules.get(rid)
        if rule is None:
            return None
        rule = self._update(rule, successes=rule.successes + ok, failures=rule.failures + (not ok),
                            last_used=to_rfc3339(now))
        if rule.worn_out and not rule.retired:
            rule = self._update(rule, retired=True)
        return rule

    def bind(self, rid: str, fingerprint: str) -> bool:
        """Bind a fingerprint to a rule that has none yet."""
        rule = self.rules.get(rid)
        if rule is None or rule.fingerprint or not fingerprint:
            return False
        self._update(rule, fingerprint=fingerprint)
        return True

    def adopt_verified(self, rid: str) -> Rule | None:
        """Take an unverified rule as the user's own (`slmactor trust`); None when unknown."""
        rule = self.rules.get(rid)
        if rule is None:
            return None
        return rule if rule.verified else self._update(rule, verified=True)

    def retire(self, rid: str) -> bool:
        rule = self.rules.get(rid)
        if rule is None:
            return False
        self._update(rule, retired=True)
        return True

    def learn(self, fp: Fingerprint, repair: Repair, now: float, *, scope: str = "project",
              evidence: str = "", proven: bool = False, held: bool = True) -> Rule | None:
        """Create or strengthen the rule that repairs `fp` (S-10.10).

        `proven`: the repair was seen to fix this failure (counts as the rule's first success).
        `evidence` (a run id) already recorded on the rule is not counted again.
        `held=False`: the repair was followed by evidence against it (the next test run failed,
        the edit was undone — the second seed's backfire): an existing rule counts a failure,
        none is created.
        """
        if fp.is_zero or not repair.valid:
            return None
        scope = scope if scope in ("project", "user") else "project"
        if scope == "user":
            trigger = Trigger(cls=fp.cls, tool=fp.tool, model_family=fp.model_family)
        else:
            trigger = Trigger(cls=fp.cls, tool=fp.tool, language=fp.language)
        rid = rule_id(trigger, repair)
        stamp = to_rfc3339(now)
        existing = self.rules.get(rid)
        if existing is not None and not existing.verified:
            # This user's own fix of a failure a repository's rule claims to repair: the
            # claimed statistics are not theirs, so the rule starts again as learned here.
            del self.rules[rid]
            existing = None
        if not held:
            if existing is None or not existing.verified:
                return None
            if evidence and evidence in existing.evidence:
                # This run's fix was counted a success when it got past the failure (the hook's
                # `evolve.resolved`); the run then showed it did not hold: the success is taken
                # back and counted a failure, and a rule that rests on nothing else is dropped.
                others = tuple(e for e in existing.evidence if e != evidence)
                successes = max(0, existing.successes - 1)
                if not others and successes == 0:
                    del self.rules[rid]
                    return None
                return self._update(existing, successes=successes,
                                    failures=existing.failures + 1, last_used=stamp)
            seen = bool(evidence) and evidence in existing.evidence
            trail = (*existing.evidence, evidence) if evidence and not seen else existing.evidence
            return self._update(existing, failures=existing.failures + (not seen),
                                evidence=trail[-MAX_EVIDENCE:], last_used=stamp)
        if existing is not None:
            # The same resolution reported twice (evolve.resolved, then reflection of the same
            # run; or a client retry) is one success, not two.
            seen = bool(evidence) and evidence in existing.evidence
            trail = (*existing.evidence, evidence) if evidence and not seen else existing.evidence
            rule = self._update(existing, successes=existing.successes + (not seen),
                                fingerprint=existing.fingerprint or fp.id,
                                evidence=trail[-MAX_EVIDENCE:], retired=False, last_used=stamp)
        else:
            rule = Rule(id=rid, trigger=trigger, repair=repair, fingerprint=fp.id,
                        evidence=(evidence,) if evidence else (), successes=int(proven),
                        created_at=stamp, last_used=stamp if proven else "", scope=scope,
                        note=f"synthesized from a resolved failure: {describe(fp.cls)}")
            self.add(rule)
        if len(self.rules) > 2 * MAX_RULES:
            self.prune(RulePolicy(), now)
        return rule

    def prune(self, policy: RulePolicy, now: float) -> int:
        """Drop retired and stale learned rules, then cap the learned ones (S-10.11)."""
        before = len(self.rules)
        keep: dict[str, Rule] = {}
        learned: list[Rule] = []
        for rule in self.rules.values():
            if rule.seeded:
                keep[rule.id] = rule
                continue
            if policy.drop_retired and (rule.retired or rule.worn_out):
                continue
            created = parse_rfc3339(rule.created_at)
            age_days = (now - created) / 86400 if created is not None else 0.0
            if rule.samples == 0 and age_days > policy.max_age_days:
                continue
            learned.append(rule)
        room = max(0, policy.max_rules - len(keep))
        learned.sort(key=lambda r: (-r.confidence, -r.samples, r.id))
        for rule in learned[:room]:
            keep[rule.id] = rule
        dropped = before - len(keep)
        if dropped:
            self.rules = keep
            self.dirty = True
        return dropped
