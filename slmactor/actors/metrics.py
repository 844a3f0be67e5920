"""The metrics actor: per-run metrics and comparisons (issue 8).

Owns: nothing yet. Consumes: ping (every actor answers it). Emits: nothing.
"""

from __future__ import annotations

from slmactor.runtime.actor import Actor


class MetricsActor(Actor):
    """Registered from day one; its handlers arrive with its issue."""

    name = "metrics"
