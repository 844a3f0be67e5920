"""Timestamps as stored on disk: RFC 3339 UTC strings, truncated to whole seconds.

Pure helpers: callers pass the current time in (epoch seconds) — nothing here reads a clock.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache

SECONDS_PER_DAY = 86_400.0


def to_rfc3339(epoch: float) -> str:
    """Epoch seconds → `2026-08-24T10:11:12Z` (UTC, whole seconds)."""
    return _rfc3339_of_second(int(epoch))


# Every reply that lists episodes, facts or runs formats the same few thousand timestamps again
# and again (strftime is ~5 µs); a whole second always formats the same way.
@lru_cache(maxsize=8192)
def _rfc3339_of_second(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str) -> float | None:
    """RFC 3339 / ISO 8601 text → epoch seconds, or None when blank or unparseable.

    Offsets such as `+02:00` are honoured; a value without an offset is taken as UTC.
    """
    value = text.strip()
    if not value:
        return None
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def age_days(at: float | None, now: float) -> float:
    """Age of `at` in days at `now`; 0 for a missing or future timestamp."""
    if at is None or at <= 0:
        return 0.0
    return max(0.0, (now - at) / SECONDS_PER_DAY)
