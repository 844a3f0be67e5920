"""The rules actor: failure fingerprints and repair rules (issue 6).

Owns: nothing yet. Consumes: ping (every actor answers it). Emits: nothing.
"""

from __future__ import annotations

from slmactor.runtime.actor import Actor


class RulesActor(Actor):
    """Registered from day one; its handlers arrive with its issue."""

    name = "rules"
