"""The recall actor: episodic memory and BM25F recall (issue 4).

Owns: nothing yet. Consumes: ping (every actor answers it). Emits: nothing.
"""

from __future__ import annotations

from slmactor.runtime.actor import Actor


class RecallActor(Actor):
    """Registered from day one; its handlers arrive with its issue."""

    name = "recall"
