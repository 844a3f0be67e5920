"""Per-key admission for remote clients: a token bucket for rate and a cap on asks in flight.

A remote client (one CurveZMQ key) shares the daemon's actors with the local hooks; without a
bound, one container in a loop could fill every inbox and make a local `PreToolUse` hook wait
for BUSY retries. Each key gets `rate` requests per second with bursts of `burst`, and at most
`inflight` asks waiting for their reply; what is over is refused (the door answers BUSY for
asks and drops tells, counted per key). An ask whose reply never came stops counting against
its key after `stale_after` seconds, so a lost reply cannot lock a key out for good.

Pure: the caller passes `now` (monotonic seconds). Keys are bounded by the allow-list.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass(slots=True)
class KeyUse:
    """One key's bucket, its asks in flight and what it was refused."""

    tokens: float
    stamp: float
    inflight: deque[float] = field(default_factory=deque)
    admitted: int = 0
    limited: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"admitted": self.admitted, "limited": self.limited, "inflight": len(self.inflight)}


@dataclass(slots=True)
class Quota:
    """The limits every key gets, and each key's use of them."""

    rate: float
    burst: int
    inflight: int = 0
    stale_after: float = 30.0
    keys: dict[str, KeyUse] = field(default_factory=dict)

    def _use(self, key: str, now: float) -> KeyUse:
        use = self.keys.get(key)
        if use is None:
            use = self.keys[key] = KeyUse(tokens=float(self.burst), stamp=now)
        else:
            use.tokens = min(float(self.burst), use.tokens + (now - use.stamp) * self.rate)
            use.stamp = now
        while use.inflight and now - use.inflight[0] > self.stale_after:
            use.inflight.popleft()
        return use

    def admit(self, key: str, now: float, *, ask: bool) -> bool:
        """Whether one more request of `key` may go in now; an admitted ask counts as in flight
        until `done(key)`."""
        use = self._use(key, now)
        full = ask and self.inflight > 0 and len(use.inflight) >= self.inflight
        if use.tokens < 1.0 or full:
            use.limited += 1
            return False
        use.tokens -= 1.0
        use.admitted += 1
        if ask and self.inflight > 0:
            use.inflight.append(now)
        return True

    def done(self, key: str) -> None:
        """An ask of `key` was answered (its oldest slot is freed)."""
        use = self.keys.get(key)
        if use is not None and use.inflight:
            use.inflight.popleft()

    def report(self) -> dict[str, dict[str, int]]:
        return {key: use.to_dict() for key, use in sorted(self.keys.items())}
