"""The graph actor: the knowledge graph over the other stores.

Owns: nothing yet. Consumes: ping (every actor answers it). Emits: nothing.
"""

from __future__ import annotations

from slmactor.runtime.actor import Actor


class GraphActor(Actor):
    """Registered from day one; its handlers arrive with its issue."""

    name = "graph"
