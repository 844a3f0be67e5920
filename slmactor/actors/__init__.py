"""The actors of the daemon, one thin module each: receive → logic → store → reply.

`all_actors()` is the registry the daemon starts; the import happens inside it so that a
client importing `slmactor` never pays for the daemon's modules. The actors load their logic on
first use (READY does not wait for it); `warm_up()`, run in a background thread once the
daemon is READY, loads it ahead of the first asks.
"""

from __future__ import annotations

import contextlib
import importlib

from slmactor.runtime.actor import Actor

#: What the actors load on first use, in the order asks tend to need it: the memory block a
#: session starts with (lessons, facts, episodes and their ranker with numpy), a failing tool
#: call's advice, a finished run's reflection, then the rest.
FIRST_USE_MODULES = (
    "slmactor.stores.episodes",
    "slmactor.logic.memory.block",
    "slmactor.logic.memory.lesson_recall",
    "slmactor.stores.polar_lessons",
    "slmactor.stores.facts",
    "slmactor.logic.failures.fingerprint",
    "slmactor.logic.evolve.suggest",
    "slmactor.logic.evolve.transforms",
    "slmactor.logic.evolve.repair_json",
    "slmactor.stores.rules",
    "slmactor.logic.memory.distill",
    "slmactor.logic.loop.reflect",
    "slmactor.logic.loop.run_merge",
    "slmactor.stores.regressions",
    "slmactor.stores.policy",
    "slmactor.stores.calibration",
    "slmactor.logic.policy.bandit_why",
    "slmactor.logic.graph.backfill",
    "slmactor.stores.graph",
    "slmactor.logic.loop.metrics_compare",
    "slmactor.stores.metrics",
)


def warm_up() -> None:
    """Import `FIRST_USE_MODULES` (a module that cannot be imported is left to its first use,
    which reports the error to the ask that needs it)."""
    for name in FIRST_USE_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def all_actors() -> list[type[Actor]]:
    """Every actor class, in start order."""
    from .bandit import BanditActor
    from .distiller import DistillerActor
    from .graph import GraphActor
    from .metrics import MetricsActor
    from .recall import RecallActor
    from .reflector import ReflectorActor
    from .rules import RulesActor
    from .working import WorkingActor

    return [
        WorkingActor,
        RecallActor,
        DistillerActor,
        RulesActor,
        BanditActor,
        ReflectorActor,
        GraphActor,
        MetricsActor,
    ]
