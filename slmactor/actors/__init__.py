"""The actors of the daemon, one thin module each: receive → logic → store → reply.

`all_actors()` is the registry the daemon starts; the import happens inside it so that a
client importing `slmactor` never pays for the daemon's modules.
"""

from __future__ import annotations

from slmactor.runtime.actor import Actor


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
