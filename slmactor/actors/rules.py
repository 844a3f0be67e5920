"""The rules actor: failure fingerprints and repair rules (SPEC S-9, S-10, S-11.2/S-11.3).

Owns: <project>/.slmcode/evolve/rules.json (one store per project) and ~/.slmcode/evolve/rules.json
(user-scope rules, shared by every project's store; this actor is its only writer).
Consumes: evolve.fingerprint, evolve.on_failure, evolve.resolved, evolve.observe, evolve.rules,
evolve.learn, evolve.forget, evolve.trust, evolve.preflight.
Emits (tells → working): `fail` with key = fingerprint id when a failure arrives, `resolve` when it
is fixed.

A failed call that is no failure (an empty search, a probe answering "no", a quiet exit: the
fingerprint's `benign`) is answered `found: false, benign: true` and goes no further: it is not
opened in working memory, counted, learned from or advised on.

`evolve.on_failure` is the hot ask of the self-improvement loop: fingerprint, look the repair up
(exact fingerprint first, then trigger patterns), and — for a deterministic transform — apply it
to the failed call's arguments so the harness can retry with `new_args` without asking a model.
`evolve.resolved` closes the loop: if the successful retry's arguments differ from the failed
call's by exactly one named transform, a rule carrying that transform is learned (counted as its
first success, so it applies on the next occurrence); a resolution by an existing rule binds the
fingerprint to that rule.  When no transform explains the retry, the *typed* repair between the
two calls is learned (`logic/evolve/typed_repairs.py`: a command substitution, an argument, a
tool switch, a path, a bounded rerun, a precondition; `fixed_tool` names the fixing call's tool),
and `evolve.on_failure` answers a call it fits with the fix named in the calls' own words — after
a transform that repairs the call, before generic guidance.  `evolve.preflight` answers a call
about to run with its rewrite by a learned command substitution that always worked (>= 3 times).
Learning and outcomes are saved at once (a small atomic rewrite); a
failed save is a warning, never a failed ask (memory failures never fail a run).

A rule a project file brought without this user's signature (`Rule.verified` false) is answered
as unverified repository content: never applied (no `new_args`), confidence 0, its guidance
labelled and its commands withheld (also from the `repair` record); `evolve.trust` lists such
rules and adopts them.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slmactor.harnesses import tool_classes as harness_tool_classes
from slmactor.harnesses import tool_family
from slmactor.logic.text.models import model_family, normalize_language
from slmactor.protocol import ErrorCode, RequestError
from slmactor.protocol.messages import (
    EvolveFingerprint,
    EvolveForget,
    EvolveLearn,
    EvolveObserve,
    EvolveOnFailure,
    EvolvePreflight,
    EvolveResolved,
    EvolveRetire,
    EvolveRules,
    EvolveTrust,
    FactObserve,
    FactRefute,
    Fail,
    Resolve,
)
from slmactor.runtime.actor import Actor, handles
from slmactor.runtime.projects import ProjectCache
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.layout import ProjectLayout, UserLayout
from slmactor.stores.base.signing import signing_key

if TYPE_CHECKING:  # the fingerprint and rule logic load with the first evolve ask
    from slmactor.logic.evolve.environment import Call as EnvCall
    from slmactor.logic.evolve.environment import EnvFact
    from slmactor.logic.evolve.rules import Rule
    from slmactor.logic.evolve.typed_repairs import Call
    from slmactor.logic.failures.call import ToolCall
    from slmactor.logic.failures.fingerprint import Fingerprint
    from slmactor.stores.environment import EnvStore
    from slmactor.stores.rules import RuleStore

#: Fingerprints of recent failures, so `evolve.resolved` can learn from an id alone.
MAX_REMEMBERED_FAILURES = 2048


class RulesActor(Actor):
    name = "rules"

    async def on_start(self) -> None:
        self.warnings = self.store_warnings()
        signing, fault = await self.run_sync(signing_key, self.ctx.settings.home)
        self.key: bytes | None = signing
        if fault:
            self.warn(fault)
        self.stores: ProjectCache[RuleStore] = ProjectCache(
            self._open, self._save_now, self.ctx.settings.max_open_projects)
        #: Each project's environment facts (and the hook's pre-flight table they write).
        self.envs: ProjectCache[EnvStore] = ProjectCache(
            self._open_env, self._save_env_now, self.ctx.settings.max_open_projects)
        self._seen: OrderedDict[str, Fingerprint] = OrderedDict()
        for key in ("fingerprints", "advice_found", "advice_applied", "rules_learned"):
            self.ctx.stats.extra[key] = 0

    async def on_stop(self) -> None:
        self.stores.close_all()
        self.envs.close_all()

    def _open(self, root: Path) -> RuleStore:
        from slmactor.stores.rules import RuleStore

        return RuleStore(ProjectLayout(root).rules, UserLayout(self.ctx.settings.home).user_rules,
                         self.warnings, now=self.now, key=self.key)

    async def _save(self, store: RuleStore) -> None:
        """Write the store's changed files in a worker thread.

        Saving is two atomic replaces with fsync (user and project rules.json), 2–7 ms: on the
        event loop it stalled every actor's asks for that long after each observe or learn of a
        run.finish pipeline. This actor still waits for the write before its next message, so
        the order of its operations and of the shared user file is what it was.
        """
        error = await self.run_sync(_try_save, store)
        self._warn_unsaved(error)
        if error:
            # Acknowledged = written; the change stays in memory for the next save.
            raise RequestError(ErrorCode.STORE_ERROR, f"rules.json not saved: {error}")

    def _save_now(self, store: RuleStore) -> None:
        """`_save` on the loop: for a store being closed (evicted, or the daemon stopping)."""
        self._warn_unsaved(_try_save(store))

    def _warn_unsaved(self, error: str) -> None:
        if error:
            self.warn(f"rules.json not saved: {error}")

    def _open_env(self, root: Path) -> EnvStore:
        from slmactor.stores.environment import EnvStore

        return EnvStore(ProjectLayout(root).evolve_dir, self.warnings, key=self.key, now=self.now)

    async def _save_env(self, store: EnvStore) -> None:
        """Write the facts and the hook's table in a worker thread (as `_save`); a failed write
        is a warning, never a failed ask: the facts stay in memory for the next one."""
        error = await self.run_sync(_try_save_env, store)
        if error:
            self.warn(f"environment.json not saved: {error}")

    def _save_env_now(self, store: EnvStore) -> None:
        error = _try_save_env(store)
        if error:
            self.warn(f"environment.json not saved: {error}")

    async def _learn_env(self, root: Path, cls: str, failed: ToolCall, fixed: ToolCall,
                         run_id: str) -> EnvFact | None:
        """An environment fact from a failed call and the call that got past it; saved (with
        the hook's table), and told to semantic memory as a line of the project's toolchain."""
        store = self.envs.get(root)
        fact = store.book.learn(cls, _env_call(failed, run_id), _env_call(fixed, run_id),
                                self.now())
        if fact is None:
            return None
        await self._save_env(store)
        self._tell_fact(root, fact, run_id)
        return fact

    def _tell_fact(self, root: Path, fact: EnvFact, run_id: str) -> None:
        """What a session's start is told: the fact as a line of semantic memory (its
        `Toolchain` section), with the sessions it rests on; a fact that failed is refuted."""
        from slmactor.logic.evolve.environment import told_line

        if fact.failures or fact.retired:
            self.tell(FactRefute(project=str(root), kind="dependency",
                                 subject=f"environment {fact.id}"))
            return
        sessions = list(dict.fromkeys(e.session for e in fact.evidence if e.session))[-5:]
        self.tell(FactObserve(project=str(root), kind="dependency",
                              subject=f"environment {fact.id}", text=told_line(fact),
                              sources=sessions or ([run_id] if run_id else [])))

    def _store(self, root: Path) -> RuleStore:
        store = self.stores.get(root)
        store.sync()  # a rules.json edited or deleted by hand is read again, not overwritten
        return store

    def _count(self, key: str) -> None:
        self.ctx.stats.extra[key] = int(self.ctx.stats.extra.get(key, 0)) + 1

    def _remember(self, fp: Fingerprint) -> None:
        if fp.is_zero:
            return
        self._seen[fp.id] = fp
        self._seen.move_to_end(fp.id)
        while len(self._seen) > MAX_REMEMBERED_FAILURES:
            self._seen.popitem(last=False)

    # ---------------------------------------------------------------- asks

    @handles(EvolveFingerprint)
    async def fingerprint(self, msg: EvolveFingerprint) -> dict[str, Any]:
        self._count("fingerprints")
        call = _wire_call(msg.call, msg.tool, "", msg.message)
        if call is None:
            from slmactor.logic.failures.call import ToolCall

            call = ToolCall("", ok=False, error=msg.message)
        return analyze_call(call, msg.language, msg.model).to_dict()

    @handles(EvolveOnFailure)
    async def on_failure(self, msg: EvolveOnFailure) -> dict[str, Any]:
        from slmactor.logic.evolve.answer import on_failure
        from slmactor.logic.failures.call import ToolCall

        root = self.project_root(msg)
        call = _wire_call(msg.call, msg.tool, msg.args, msg.message) or ToolCall(
            "", ok=False, error=msg.message)  # a failure that names no tool is still one
        fp = analyze_call(call, msg.language, msg.model)
        self._count("fingerprints")
        if fp.benign:
            from slmactor.logic.evolve.answer import empty_advice
            from slmactor.logic.failures.fingerprint import describe

            # Recorded by the caller as a call, never opened, counted, learned from or advised on.
            advice = empty_advice(fp)
            advice["reason"] = f"{describe(fp.cls)}: {fp.detail.replace('_', ' ')}"
            return advice
        self._remember(fp)
        if not fp.is_zero and msg.open:
            self.tell(Fail(project=str(root), run_id=msg.run_id, key=fp.id, tool=call.tool,
                           message=call.error))
        book = self._store(root).book
        if call.command:
            from slmactor.logic.evolve.answer import empty_advice

            # An environment fact that speaks of this shell call first: the project's own fix.
            advice = empty_advice(fp)
            if self._env_advice(root, fp, call, advice):
                self._count("advice_found")
                if advice["apply"]:
                    self._count("advice_applied")
                return advice
        answered = on_failure(book, fp, call, self.now(), classes=harness_tool_classes(),
                              family=tool_family, read_tool=read_tool_of(call.tool))
        advice = answered.advice
        if advice.get("found") and not _checked(advice, book.get(str(advice.get("rule_id") or "")),
                                                call, root):
            return advice
        if advice.get("found"):
            self._count("advice_found")
            if advice.get("apply"):
                self._count("advice_applied")
        return advice

    def _env_advice(self, root: Path, fp: Fingerprint, call: ToolCall,
                    advice: dict[str, Any]) -> bool:
        """Advice from an environment fact that speaks of this failed call: the fix in the
        call's own words with its record, and the call rewritten when the fact may rewrite it
        (exact or proven, and safe)."""
        from slmactor.logic.evolve import environment as env
        from slmactor.logic.failures.fingerprint import salient_line
        from slmactor.logic.failures.unwrap import unwrap
        from slmactor.logic.text.redact import redact

        book = self.envs.get(root).book
        ecall = _env_call(call)
        found = book.relevant(fp.cls, ecall)
        if not found:
            return False
        fact = found[0]
        said = redact(salient_line(unwrap(call.error).text))
        pre = book.preflight(ecall)
        rewrites = pre is not None and fact in pre.facts
        advice.update(found=True, rule_id=fact.id, apply=rewrites,
                      repair={"kind": "environment", "topic": fact.topic,
                              "spec": {"when": {"scope": list(fact.scope)},
                                       "what": fact.shape.to_dict()}},
                      exact=True, confidence=round(fact.confidence, 4),
                      guidance=env.advice(fact, ecall, said), seeded=False,
                      outcomes=fact.successes + fact.failures,
                      reason=f"an environment fact of this project ({fact.topic}): "
                             f"{fact.successes} of {fact.successes + fact.failures} outcomes "
                             f"good; rests on {fact.sessions or 1} session(s)")
        if pre is not None and rewrites:
            from slmactor.logic.evolve.answer import answer_call

            answer_call(advice, call, call.rewritten({**pre.args, "command": pre.command}))
        return True

    def _failure(self, msg: EvolveResolved, failed: ToolCall | None) -> Fingerprint | None:
        if failed is not None and failed.error.strip():
            fp = analyze_call(failed, msg.language, msg.model)
            if not msg.fingerprint or fp.id == msg.fingerprint:
                return fp
        return self._seen.get(msg.fingerprint)

    @handles(EvolveResolved)
    async def resolved(self, msg: EvolveResolved) -> dict[str, Any]:
        from slmactor.logic.evolve.answer import learn_resolved

        root = self.project_root(msg)
        store = self._store(root)
        failed = _wire_call(msg.failed, msg.tool, msg.failed_args, msg.message)
        fixed = _wire_call(msg.fixed, msg.fixed_tool or msg.tool, msg.fixed_args, "", ok=True)
        fp = self._failure(msg, failed)
        key = msg.fingerprint or (fp.id if fp else "")
        if key:
            self.tell(Resolve(project=str(root), run_id=msg.run_id, key=key,
                              resolution=msg.resolution,
                              resolved_by=f"rule:{msg.rule_id}" if msg.rule_id else "llm"))
        out: dict[str, Any] = {"fingerprint": key, "bound": False, "transform": None,
                               "learned": None}
        if msg.rule_id:
            if store.book.get(msg.rule_id) is None:
                raise RequestError(ErrorCode.NOT_FOUND, f"no rule {msg.rule_id!r}")
            out["bound"] = store.book.bind(msg.rule_id, key)
        elif fp is not None and failed is not None and fixed is not None \
                and (failed.args or failed.unparsed) and (fixed.args or fixed.unparsed):
            name, rule = learn_resolved(store.book, fp, failed, fixed, self.now(), msg.run_id)
            out["transform"] = name
            if rule is not None:
                self._count("rules_learned")
                out["learned"] = rule.to_dict()
        if fp is not None and failed is not None and fixed is not None and failed.command:
            fact = await self._learn_env(root, fp.cls, failed, fixed, msg.run_id)
            if fact is not None:
                out["environment"] = fact.to_dict()
        await self._save(store)
        return out

    @handles(EvolvePreflight)
    async def preflight(self, msg: EvolvePreflight) -> dict[str, Any]:
        from slmactor.logic.evolve.answer import no_rewrite, preflight

        call = _wire_call(msg.call, msg.tool, msg.args, "", ok=True)
        if call is None or not call.args:
            return no_rewrite()
        root = self.project_root(msg)
        if call.command:
            from slmactor.logic.evolve.answer import answer_call
            from slmactor.logic.evolve.environment import announce

            pre = self.envs.get(root).book.preflight(_env_call(call, msg.run_id))
            if pre is not None:
                said = next((e.error for e in reversed(pre.fact.evidence) if e.error), "")
                out = no_rewrite()
                out.update(found=True, rule_id=pre.fact.id, facts=[f.id for f in pre.facts],
                           reason=announce(pre, call.command), message=said,
                           new_command=pre.command)
                answer_call(out, call, call.rewritten({**pre.args, "command": pre.command}))
                return out
        return preflight(self._store(root).book, call)

    @handles(EvolveObserve)
    async def observe(self, msg: EvolveObserve) -> dict[str, Any]:
        if msg.rule_id.startswith("env_"):
            # An environment fact's outcome (a rewrite before the call, or its advice).
            root = self.project_root(msg)
            envs = self.envs.get(root)
            fact = envs.book.observe(msg.rule_id, msg.ok, self.now())
            if fact is None:
                raise RequestError(ErrorCode.NOT_FOUND, f"no environment fact {msg.rule_id!r}")
            await self._save_env(envs)
            self._tell_fact(root, fact, "")
            return fact.to_dict()
        store = self._store(self.project_root(msg))
        rule = store.book.observe(msg.rule_id, msg.ok, self.now())
        if rule is None:
            raise RequestError(ErrorCode.NOT_FOUND, f"no rule {msg.rule_id!r}")
        await self._save(store)
        return rule.to_dict()

    @handles(EvolveRules)
    async def rules(self, msg: EvolveRules) -> dict[str, Any]:
        store = self._store(self.project_root(msg))
        rules = [r for r in store.book.all() if msg.include_all or _listed(r)]
        return {"rules": [_shown(r) for r in rules], "total": len(store.book.rules)}

    @handles(EvolveTrust)
    async def trust(self, msg: EvolveTrust) -> dict[str, Any]:
        """List the unverified rules and environment facts (whole, for the user to review), or
        adopt them (`environment`: the facts a repository brought, as the rules)."""
        root = self.project_root(msg)
        store, envs = self._store(root), self.envs.get(root)
        pending = store.unverified()
        if not msg.adopt:
            return {"unverified": [r.to_dict() for r in pending], "adopted": [],
                    "environment": {"unverified": list(envs.unverified.values()), "adopted": []}}
        if self.key is None:
            raise RequestError(ErrorCode.STORE_ERROR, "no signing key: nothing can be adopted")
        wanted = None if msg.every else list(set(msg.ids))
        adopted = store.trust(wanted)
        if adopted:
            await self._save(store)
        facts = envs.trust(wanted)
        if facts:
            await self._save_env(envs)
        return {"unverified": [r.to_dict() for r in store.unverified()],
                "adopted": [r.id for r in adopted],
                "environment": {"unverified": list(envs.unverified.values()), "adopted": facts}}

    @handles(EvolveLearn)
    async def learn(self, msg: EvolveLearn) -> dict[str, Any]:
        from slmactor.logic.evolve.repairs import Repair
        from slmactor.logic.failures.fingerprint import describe

        root = self.project_root(msg)
        store = self._store(root)
        learned: list[str] = []
        environment: list[str] = []
        rejected = 0
        for cand in msg.candidates:
            fp = _candidate_fingerprint(cand)
            raw = cand.get("repair")
            repair = Repair.from_dict(raw) if isinstance(raw, dict) else None
            if repair is not None and not repair.guidance.strip() and fp is not None:
                repair = Repair.from_dict({**repair.to_dict(), "guidance": describe(fp.cls)})
            rule = None
            if fp is not None and repair is not None and repair.kind != "transform_args":
                # The failed call and its fix, where a typed repair names the difference (a
                # corrected command, a setting, a switched tool): that beats the resolution text.
                rule = _learn_pair(store.book, fp, cand, self.now())
            if rule is None and fp is not None and repair is not None:
                rule = store.book.learn(fp, repair, self.now(), scope=str(cand.get("scope", "")),
                                        evidence=str(cand.get("evidence", "")),
                                        proven=cand.get("proven") is True,
                                        held=cand.get("held") is not False)
            if rule is None:
                rejected += 1
            else:
                learned.append(rule.id)
                self._count("rules_learned")
            fact = self._learn_env_pair(root, fp, cand) if fp is not None else None
            if fact is not None:
                environment.append(fact.id)
                self._tell_fact(root, fact, str(cand.get("evidence", "")))
        await self._save(store)
        if environment:
            await self._save_env(self.envs.get(root))
        return {"learned": learned, "rejected": rejected, "environment": environment}

    def _learn_env_pair(self, root: Path, fp: Fingerprint, cand: dict[str, Any]) -> EnvFact | None:
        """The environment fact a reflection candidate's failed and fixing commands teach (a
        session reported at its end, or imported), or None."""
        from slmactor.logic.evolve.environment import Call as EnvCall

        tool = str(cand.get("tool", ""))
        # The calls as the room that has the tool builds them: its command from its own words
        # (Cline's `commands` list, Codex's argv), not only a `command` key.
        failed = _wire_call({}, tool, str(cand.get("failed_args") or ""), "")
        fixed = _wire_call({}, tool, str(cand.get("fixed_args") or ""), "", ok=True)
        if failed is None or fixed is None or not failed.command:
            return None
        run = str(cand.get("evidence", ""))
        return self.envs.get(root).book.learn(
            fp.cls, EnvCall(tool, failed.command, dict(failed.args), session=run),
            EnvCall(tool, fixed.command, dict(fixed.args), session=run), self.now())

    @handles(EvolveRetire)
    async def retire(self, msg: EvolveRetire) -> dict[str, Any]:
        """Retire rules by id (a user taking back what was learned): never applied again."""
        store = self._store(self.project_root(msg))
        ids = list(dict.fromkeys(i.strip() for i in msg.ids if i.strip()))
        retired = [rid for rid in ids if store.book.retire(rid)]
        if retired:
            await self._save(store)
        return {"retired": retired, "unknown": [rid for rid in ids if rid not in retired]}

    @handles(EvolveForget)
    async def forget(self, msg: EvolveForget) -> dict[str, Any]:
        root = self.project_root(msg)
        store = self._store(root)
        dropped = store.forget()
        self.envs.get(root).forget()
        for entry in self.stores.items():
            entry[1].refresh_user()  # the user file is gone for every project
        return {"ok": True, "dropped": dropped}


def _wire_call(data: dict[str, Any], tool: str, args: str, message: str, *,
               ok: bool = False) -> ToolCall | None:
    """The call a request carries: its `call` map as the harness's room built it; for a client
    that sends the older fields (a tool, its arguments as JSON text, the error), the call the
    room that has the tool builds of them."""
    from slmactor.logic.failures.call import ToolCall

    call = ToolCall.from_wire(data) if data else None
    if call is not None or not (tool.strip() or args):
        return call
    from slmactor import harnesses

    return harnesses.tool_call(tool, args or {}, ok=ok, error=message)


def analyze_call(call: ToolCall | None, language: str = "", model: str = "") -> Fingerprint:
    """The fingerprint every ask of this actor gives a failure: `fingerprint(call)`, the one
    function every path uses (the language and model are its scope, not part of its id)."""
    from dataclasses import replace

    from slmactor.logic.failures.fingerprint import ZERO, fingerprint

    if call is None:
        return ZERO
    if not call.family:
        call = replace(call, family=tool_family(call.tool))
    return fingerprint(call, language, model)


def _try_save_env(store: EnvStore) -> str:
    try:
        store.save()
    except (OSError, StoreError) as exc:
        return str(exc)
    return ""


def _env_call(call: ToolCall, run_id: str = "") -> EnvCall:
    """What an environment fact reads of a call: its tool, command, arguments in the shared
    words, where it was seen, its error."""
    from slmactor.logic.evolve.environment import Call

    return Call(call.tool, call.command, call.shared(), session=run_id, call_id=call.call_id,
                error=call.error)


def _try_save(store: RuleStore) -> str:
    """Save `store`; the reason when that failed, else ""."""
    try:
        store.save()
    except (OSError, StoreError) as exc:
        return str(exc)
    return ""


def _checked(advice: dict[str, Any], rule: Rule | None, call: ToolCall, root: Path) -> bool:
    """Advice is a claim, checked before it is told (`logic.memory.claims`): a learned rule's
    guidance rests on the rule and its evidence, did not stop holding (a rule whose every
    outcome failed), and every path it presents as there to use — beyond the failed call's own —
    is in the project. A shipped rule's words name nothing of the project. When the check
    fails, nothing is told and `claim` says why; when it passes, `claim` names the records."""
    from slmactor.logic.memory.claims import Claim, check, paths_named
    from slmactor.logic.text.shell import same_path
    from slmactor.stores.base.project_paths import ProjectRecords

    if rule is None or rule.seeded:
        return True
    guidance = str(advice.get("guidance") or "")
    own = [p for p in (call.path, *call.paths) if p]
    # What it presents to use: not what it says to use instead of (`B` instead of `A`).
    presented = re.sub(r"instead of `[^`\n]*`", "", guidance)
    named = tuple(p for p in paths_named(presented)
                  if not any(same_path(p, mine) for mine in own))
    claim = Claim("advice", guidance, (rule.id, *rule.evidence[-3:]), paths=named,
                  held=False if rule.failures and not rule.successes else None)
    verdict = check(claim, ProjectRecords(root, None))
    advice["claim"] = {**verdict.to_dict(), "evidence": list(claim.evidence)}
    if verdict.passes:
        return True
    advice.update(found=False, apply=False, guidance="", new_args="", repair=None,
                  reason=f"not told: {verdict.status}: {verdict.why}")
    advice.pop("new_input", None)
    advice.pop("new_tool", None)
    return False


def _shown(rule: Rule) -> dict[str, Any]:
    """A rule as `evolve.rules` lists it: unverified ones marked, their texts (guidance,
    evidence, note) quoted with commands withheld (`evolve.trust` shows them whole, for the
    user to review)."""
    from slmactor.logic.text.trust import untrusted_record

    if rule.verified:
        return {**rule.to_dict(), "verified": True}
    from slmactor.logic.evolve.answer import withheld_repair

    return {**untrusted_record(rule.to_dict()), "repair": withheld_repair(rule)}


def _listed(rule: Rule) -> bool:
    """Default listing: learned rules and shipped rules that were used; nothing retired."""
    return not rule.retired and (not rule.seeded or rule.samples > 0 or bool(rule.fingerprint))


def _candidate_fingerprint(cand: dict[str, Any]) -> Fingerprint | None:
    """The failure a reflection candidate describes (its id as reflection computed it)."""
    from slmactor.logic.failures.fingerprint import Fingerprint

    fid = str(cand.get("fingerprint", ""))
    cls = str(cand.get("class", ""))
    if not fid or not cls:
        return None
    model = str(cand.get("model", ""))
    return Fingerprint(id=fid, cls=cls, tool=str(cand.get("tool", "")).strip().lower(),
                       language=normalize_language(str(cand.get("language", ""))),
                       model_family=model_family(model) if model.strip() else "", norm="",
                       salient="")


def _learn_pair(book: Any, fp: Fingerprint, cand: dict[str, Any], now: float) -> Rule | None:
    """The typed repair a reflection candidate's failed and fixing calls teach, or None."""
    from slmactor.logic.evolve.typed_repairs import learn

    failed_args, fixed_args = cand.get("failed_args"), cand.get("fixed_args")
    if not (isinstance(failed_args, str) and isinstance(fixed_args, str)):
        return None
    tool = str(cand.get("tool", ""))
    failed, fix = _call(tool, failed_args), _call(tool, fixed_args)
    if failed is None or fix is None:
        return None
    rule: Rule | None = learn(book, fp, failed, fix, now, run=str(cand.get("evidence", "")),
                              held=cand.get("held") is not False)
    return rule


def _call(tool: str, args: str) -> Call | None:
    """A reflection candidate's call: its arguments are a report's JSON text, in the shared
    words already (the ledger keeps them so)."""
    from slmactor.logic.evolve.answer import call_of

    return call_of(tool, args, tool_family)


def read_tool_of(tool: str) -> str:
    """The read tool of the room that has `tool` (named in a read-first fix; "" when none)."""
    from slmactor import harnesses

    return next((t for t in harnesses.room_of(tool).families if tool_family(t) == "read"), "")


