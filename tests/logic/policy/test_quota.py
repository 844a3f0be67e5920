"""Per-key admission: a flooding key is held to its rate and in-flight cap, others are not."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.policy.quota import Quota


def test_a_flood_gets_its_burst_then_the_rate_and_another_key_is_untouched() -> None:
    quota = Quota(rate=10.0, burst=5)
    admitted = sum(quota.admit("flood", 100.0, ask=False) for _ in range(50))
    assert admitted == 5
    assert quota.admit("local-ci", 100.0, ask=False)  # its own bucket
    assert sum(quota.admit("flood", 100.5, ask=False) for _ in range(50)) == 5  # 0.5 s × 10/s
    assert quota.report()["flood"] == {"admitted": 10, "limited": 90, "inflight": 0}


def test_asks_in_flight_are_capped_until_answered_or_stale() -> None:
    quota = Quota(rate=1000.0, burst=1000, inflight=2, stale_after=30.0)
    assert quota.admit("k", 0.0, ask=True) and quota.admit("k", 0.0, ask=True)
    assert not quota.admit("k", 0.0, ask=True)
    quota.done("k")
    assert quota.admit("k", 0.1, ask=True)
    assert not quota.admit("k", 0.2, ask=True)
    assert quota.admit("k", 31.0, ask=True)  # the unanswered ones no longer count


@settings(derandomize=True, max_examples=200)
@given(st.lists(st.floats(0.0, 0.5), min_size=1, max_size=200))
def test_admissions_never_exceed_burst_plus_rate_times_elapsed(gaps: list[float]) -> None:
    quota = Quota(rate=20.0, burst=3)
    now = 0.0
    admitted = 0
    for gap in gaps:
        now += gap
        admitted += quota.admit("k", now, ask=False)
    assert admitted <= 3 + 20.0 * now + 1e-9
