"""The bandit actor: policy learning over harness choices and calibration profiles.

Owns: `~/.slmcode/evolve/policy.json` (user scope, the default) and, per project asking for
project scope, `<project>/.slmcode/evolve/policy.json`; `~/.slmcode/memory/calibration.json` +
`CALIBRATION.md`.
Consumes: policy.choose, policy.update, policy.why, policy.forget, calibration.report,
calibration.get. Emits: nothing.

`policy.choose` answers the arm, the reason (warm-up / exploring / Thompson / deterministic) and
the posterior table it came from; with a non-zero `seed` the choice is reproducible (the generator
is seeded from seed, key and the key's pull count, so a seeded sequence of choose/update replays
identically). `policy.update` scores the outcome with the S-13.8 reward, updates the posterior,
may decay the key (every 200 pulls, or early on a detected change) and prunes to 300 keys.
Writes happen in a background job (snapshot on the loop, atomic write in a thread); a file
edited or deleted by hand is reloaded before the next request, never written back over.

Calibration seeds only what it measured (H-S-13): the reply to `calibration.report` /
`calibration.get` carries the decode rate and latency seeds for the roles the harness says have
no observations; no bandit posterior is ever touched by calibration.

Replies (maps; unknown keys are to be ignored by clients):
* policy.choose → {arm, reason, mode (none|single|warm-up|exploring|thompson|deterministic),
  explore, key, key_pulls, epsilon, deterministic, scope, table: [{name, alpha, beta, pulls, mean,
  stddev, sample|null}]}
* policy.update → {key, scope, reward, key_pulls, decayed, change_detected, pruned: [key…],
  arm: {name, alpha, beta, pulls, mean, stddev, reward_total}}
* policy.why → {decision, model_family, language, key, found, observations, arms: […], mode,
  epsilon, others: [{model_family, language, key, observations, arms}], text, scope}
* policy.forget → {ok, scopes, keys}
* calibration.report → {profile, knee, stored, pruned, seeds: {decode_tps, role_latency_ms}}
* calibration.get → with a model: {found, stale ("" when current), expired, profile, knee, seeds};
  without: {profiles: [… + expired], count}
"""

from __future__ import annotations

import random
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from slmactor.protocol import ErrorCode, RequestError
from slmactor.protocol.messages import (
    CalibrationGet,
    CalibrationReport,
    LatencySeed,
    PolicyChoose,
    PolicyForget,
    PolicyUpdate,
    PolicyWhy,
)
from slmactor.runtime.actor import Actor, ActorDead, handles
from slmactor.runtime.projects import ProjectCache
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.layout import ProjectLayout, UserLayout

from .acks import FlushAcks

if TYPE_CHECKING:  # the bandit, the calibration logic and their stores load with the first ask
    from slmactor.logic.policy.bandit import Choice, PolicyKey
    from slmactor.logic.policy.calibration import CalibrationProfile
    from slmactor.stores.calibration import CalibrationStore
    from slmactor.stores.policy import PolicyStore

SCOPES = ("user", "project")


def _counts(raw: dict[str, Any]) -> dict[str, int]:
    """{role: non-negative int} from a harness map; anything else is ignored."""
    out: dict[str, int] = {}
    for role, value in raw.items():
        if isinstance(role, str) and isinstance(value, int | float) and not isinstance(value, bool):
            out[role.strip().lower()] = max(0, int(value))
    return out


def _choice_dict(choice: Choice, scope: str, deterministic: bool) -> dict[str, Any]:
    return {
        "arm": choice.arm,
        "reason": choice.reason,
        "mode": choice.mode,
        "explore": choice.explore,
        "key": str(choice.key),
        "key_pulls": choice.key_pulls,
        "epsilon": choice.epsilon,
        "deterministic": deterministic,
        "scope": scope,
        "table": [
            {"name": r.name, "alpha": r.alpha, "beta": r.beta, "pulls": r.pulls, "mean": r.mean,
             "stddev": r.stddev, "sample": r.sample}
            for r in choice.table
        ],
    }


class BanditActor(Actor):
    name = "bandit"
    #: How often stores whose flush failed are written again.
    RETRY_UNSAVED_S = 2.0

    async def on_start(self) -> None:
        self.warnings = self.store_warnings()
        self.user = UserLayout(self.ctx.settings.home)
        # The user's stores open with the first ask that needs them (READY without the bandit).
        self._user_policy: PolicyStore | None = None
        self._calibration: CalibrationStore | None = None
        self.projects: ProjectCache[PolicyStore] = ProjectCache(
            self._open_project, self._close_project, self.ctx.settings.max_open_projects
        )
        self._roots: dict[int, Path] = {}
        self._flushing: set[int] = set()
        self.acks = FlushAcks()
        #: Per store: a write in a worker thread and a forget never overlap.
        self._locks: dict[int, anyio.Lock] = {}
        self._rng = random.Random()  # unseeded requests: OS entropy
        for key in ("chooses", "updates", "early_decays", "flush_errors"):
            self.ctx.stats.extra[key] = 0

    async def on_stop(self) -> None:
        stores: list[Any] = [s for s in (self._user_policy, self._calibration) if s is not None]
        stores += [store for _, store in self.projects.items()]
        for store in stores:
            try:
                await self.run_sync(self._flush_now, store)
            except (StoreError, OSError) as exc:
                self.warn(f"flush on stop failed: {exc}")

    # ---------------------------------------------------------------- stores

    @property
    def user_policy(self) -> PolicyStore:
        if self._user_policy is None:
            from slmactor.stores.policy import PolicyStore

            self._user_policy = PolicyStore.for_user(self.user, self.warnings, now=self.now)
        return self._user_policy

    @property
    def calibration(self) -> CalibrationStore:
        if self._calibration is None:
            from slmactor.stores.calibration import CalibrationStore

            self._calibration = CalibrationStore.for_user(self.user, self.warnings, now=self.now)
        return self._calibration

    def _open_project(self, root: Path) -> PolicyStore:
        from slmactor.stores.policy import PolicyStore

        store = PolicyStore.for_project(ProjectLayout(root), self.warnings, now=self.now)
        self._roots[id(store)] = root
        return store

    def _close_project(self, store: PolicyStore) -> None:
        try:
            store.flush()
        except (StoreError, OSError) as exc:
            self.warn(f"project policy not saved: {exc}")
        else:
            self.acks.forget(store)
        self._roots.pop(id(store), None)
        self._locks.pop(id(store), None)

    def _flush_now(self, store: Any) -> None:
        root = self._roots.get(id(store))
        if root is not None and store.dirty:
            ProjectLayout(root).ensure()
        store.flush()

    def _scope(self, raw: str) -> str:
        scope = raw.strip().lower() or "user"
        if scope not in SCOPES:
            raise RequestError(ErrorCode.BAD_FIELD, f"scope must be user or project, not {raw!r}")
        return scope

    def _policy(self, msg: Any, scope: str) -> PolicyStore:
        if scope == "project":
            store = self.projects.get(self.project_root(msg))
        else:
            store = self.user_policy
        store.sync()
        return store

    def _changed(self, store: Any) -> int:
        """Mark `store` changed and make sure a background flush will write it; the change's
        ticket, for an ask to wait on (`acks.wait`: acknowledged = written)."""
        store.touch()
        ticket = self.acks.changed(store)
        self._start_flush(store)
        return ticket

    def _start_flush(self, store: Any) -> None:
        if id(store) in self._flushing:
            return
        self._flushing.add(id(store))
        self.spawn(lambda: self._flush_job(store), "flush")

    def loops(self) -> list[Callable[[], Coroutine[Any, Any, None]]]:
        return [self._retry_unsaved]

    async def _retry_unsaved(self) -> None:
        """Write again, every few seconds, the stores whose flush failed (space came back)."""
        while True:
            await anyio.sleep(self.RETRY_UNSAVED_S)
            for store, _context in self.acks.retry_due():
                self._start_flush(store)

    async def _flush_job(self, store: Any) -> None:
        try:
            while True:
                generation = self.acks.generation(store)
                snapshot = store.snapshot(self.now())
                if snapshot is None:
                    self.acks.wrote(store, generation)
                    return
                store.writing = True
                try:
                    async with self._lock(store):
                        await self.run_sync(self._write, store, snapshot)
                except (StoreError, OSError) as exc:
                    store.dirty = True  # retried with the next change and by _retry_unsaved
                    self.ctx.stats.extra["flush_errors"] += 1
                    self.warn(f"policy/calibration not saved: {exc}")
                    self.acks.failed(store, str(exc))
                    return
                finally:
                    store.writing = False
                self.acks.wrote(store, generation)
        finally:
            self._flushing.discard(id(store))

    def _lock(self, store: Any) -> anyio.Lock:
        return self._locks.setdefault(id(store), anyio.Lock())

    def _write(self, store: Any, snapshot: Any) -> None:
        root = self._roots.get(id(store))
        if root is not None:
            ProjectLayout(root).ensure()  # directories + .gitignore (H-S-12) on first write
        store.write(snapshot)

    @staticmethod
    def _key(decision: str, model: str, language: str) -> PolicyKey:
        from slmactor.logic.policy.bandit import PolicyKey

        key = PolicyKey.make(decision, model, language)
        if not key.decision:
            raise RequestError(ErrorCode.BAD_FIELD, "decision is required")
        return key

    # ---------------------------------------------------------------- policy

    @handles(PolicyChoose)
    async def choose(self, msg: PolicyChoose) -> dict[str, Any]:
        scope = self._scope(msg.scope)
        key = self._key(msg.decision, msg.model, msg.language)
        store = self._policy(msg, scope)
        deterministic = msg.deterministic or self.ctx.settings.deterministic
        rng = self._rng
        if msg.seed:
            rng = random.Random(f"{msg.seed}|{key}|{store.policy.key_pulls(key)}")
        choice = store.policy.choose(key, msg.arms, rng, deterministic=deterministic)
        self.ctx.stats.extra["chooses"] += 1
        return _choice_dict(choice, scope, deterministic)

    @handles(PolicyUpdate)
    async def update(self, msg: PolicyUpdate) -> dict[str, Any]:
        from slmactor.logic.policy.reward import Outcome, reward

        scope = self._scope(msg.scope)
        key = self._key(msg.decision, msg.model, msg.language)
        if not msg.arm.strip():
            raise RequestError(ErrorCode.BAD_FIELD, "arm is required")
        store = self._policy(msg, scope)
        outcome = Outcome.from_dict(msg.outcome)
        result = store.policy.update(key, msg.arm, reward(outcome), self.now())
        pruned = store.policy.prune()
        await self.acks.wait(store, self._changed(store))
        self.ctx.stats.extra["updates"] += 1
        if result.change_detected:
            self.ctx.stats.extra["early_decays"] += 1
        arm = result.arm
        return {
            "key": str(key),
            "scope": scope,
            "reward": result.reward,
            "key_pulls": result.key_pulls,
            "decayed": result.decayed,
            "change_detected": result.change_detected,
            "pruned": pruned,
            "arm": {"name": arm.name, "alpha": arm.alpha, "beta": arm.beta, "pulls": arm.pulls,
                    "mean": arm.mean, "stddev": arm.stddev, "reward_total": arm.reward_total},
        }

    @handles(PolicyWhy)
    async def explain(self, msg: PolicyWhy) -> dict[str, Any]:
        from slmactor.logic.policy.bandit_why import why

        scope = self._scope(msg.scope)
        key = self._key(msg.decision, msg.model, msg.language)
        store = self._policy(msg, scope)
        report = why(store.policy, key,
                     deterministic=msg.deterministic or self.ctx.settings.deterministic)
        return {**report.to_dict(), "scope": scope}

    @handles(PolicyForget)
    async def forget(self, msg: PolicyForget) -> dict[str, Any]:
        scopes = [self._scope(msg.scope)] if msg.scope.strip() else ["user"]
        if not msg.scope.strip() and msg.project:
            scopes.append("project")
        keys = 0
        for scope in scopes:
            store = self._policy(msg, scope)
            keys += len(store.policy.keys)
            async with self._lock(store):
                await self.run_sync(store.forget)
        return {"ok": True, "scopes": scopes, "keys": keys}

    # ---------------------------------------------------------------- calibration

    def _seeds(self, profile: CalibrationProfile, roles: dict[str, Any],
               observed: dict[str, Any], task_timeout_ms: float) -> dict[str, Any]:
        from slmactor.logic.policy.calibration import seed_role_latencies

        latency = seed_role_latencies(profile, _counts(observed), _counts(roles),
                                      max(0.0, task_timeout_ms))
        return {"decode_tps": profile.decode_tps, "role_latency_ms": latency}

    @handles(CalibrationReport)
    async def report(self, msg: CalibrationReport) -> dict[str, Any]:
        from slmactor.logic.policy.calibration import CalibrationProfile

        try:
            profile = CalibrationProfile.from_dict(msg.profile, self.now())
        except ValueError as exc:
            raise RequestError(ErrorCode.BAD_FIELD, str(exc)) from None
        self.calibration.sync()
        self.calibration.book.put(profile)
        pruned = self.calibration.book.prune(self.now())
        await self.acks.wait(self.calibration, self._changed(self.calibration))
        stored = self.calibration.book.get(profile.model, profile.endpoint)
        current = stored if stored is not None else profile
        seeds = self._seeds(current, msg.roles, msg.observed, msg.task_timeout_ms)
        return {
            "profile": current.to_dict(),
            "knee": current.knee,
            "stored": stored == profile,
            "pruned": len(pruned),
            "seeds": seeds,
            "seeded_roles": await self._seed_latency_memory(current.model, seeds),
        }

    async def _seed_latency_memory(self, model: str, seeds: dict[str, Any]) -> list[str]:
        """Hand the latency seeds to the latency memory's owner, which keeps only those for roles
        it has never observed (S-12.4). Calibration never touches a bandit posterior (H-S-13)."""
        estimates = seeds.get("role_latency_ms") or {}
        if not estimates:
            return []
        try:
            result = await self.ask(LatencySeed(model=model, seeds=dict(estimates)))
        except (RequestError, ActorDead) as exc:
            self.warn(f"latency seeds not stored: {exc}")
            return []
        return list(result.get("seeded", []))

    @handles(CalibrationGet)
    async def get(self, msg: CalibrationGet) -> dict[str, Any]:
        from slmactor.logic.policy.calibration import staleness

        self.calibration.sync()
        now = self.now()
        if not msg.model.strip():
            profiles = self.calibration.book.all()
            return {
                "profiles": [{**p.to_dict(), "expired": p.expired(now)} for p in profiles],
                "count": len(profiles),
            }
        profile = self.calibration.book.get(msg.model, msg.endpoint)
        stale = staleness(profile, now, calibrator_version=msg.calibrator_version,
                          context_window=msg.context_window)
        if profile is None:
            return {"found": False, "stale": stale, "profile": None, "seeds": {}}
        expired = profile.expired(now)
        return {
            "found": True,
            "stale": stale,
            "expired": expired,
            "profile": profile.to_dict(),
            "knee": profile.knee,
            "seeds": {} if expired else self._seeds(profile, msg.roles, msg.observed,
                                                    msg.task_timeout_ms),
        }
