"""The bandit actor: policy learning and calibration (issue 7).

Owns: nothing yet. Consumes: ping (every actor answers it). Emits: nothing.
"""

from __future__ import annotations

from slmactor.runtime.actor import Actor


class BanditActor(Actor):
    """Registered from day one; its handlers arrive with its issue."""

    name = "bandit"
