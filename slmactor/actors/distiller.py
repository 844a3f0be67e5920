"""The distiller actor: semantic facts, lessons, procedural memory and the memory block (issue 5).

Owns: nothing yet. Consumes: ping (every actor answers it). Emits: nothing.
"""

from __future__ import annotations

from slmactor.runtime.actor import Actor


class DistillerActor(Actor):
    """Registered from day one; its handlers arrive with its issue."""

    name = "distiller"
