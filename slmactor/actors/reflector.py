"""The reflector actor: the finish pipeline, reflection and regression memory (issue 8).

Owns: nothing yet. Consumes: ping (every actor answers it). Emits: nothing.
"""

from __future__ import annotations

from slmactor.runtime.actor import Actor


class ReflectorActor(Actor):
    """Registered from day one; its handlers arrive with its issue."""

    name = "reflector"
