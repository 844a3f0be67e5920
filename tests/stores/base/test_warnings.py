"""WarningLog: bounded, repeats folded, what `status` shows."""

from __future__ import annotations

import pytest

from slmactor.stores import WarningLog


def test_keeps_the_newest_cap_entries_oldest_first() -> None:
    warning_log = WarningLog(cap=3)
    for n in range(5):
        warning_log.warn(f"w{n}", now=1_790_000_000.0 + n)
    assert warning_log.texts() == ["w2", "w3", "w4"]
    assert warning_log.total == 5
    recent = warning_log.recent()
    assert recent[-1] == {
        "at": "2026-09-21T14:13:24Z",
        "epoch": 1_790_000_004.0,
        "text": "w4",
        "count": 1,
    }


def test_repeats_of_the_newest_warning_are_folded() -> None:
    warning_log = WarningLog(cap=2)
    warning_log.warn("old", now=1.0)
    for n in range(100):
        warning_log.warn("store deleted", now=10.0 + n)
    assert warning_log.texts() == ["old", "store deleted"]
    assert warning_log.recent()[-1]["count"] == 100
    assert warning_log.recent()[-1]["epoch"] == 109.0
    assert warning_log.total == 101
    assert len(warning_log) == 2


def test_cap_must_be_positive() -> None:
    with pytest.raises(ValueError):
        WarningLog(cap=0)


def test_on_warn_sees_every_warning_including_repeats() -> None:
    seen: list[str] = []
    warning_log = WarningLog(cap=1, on_warn=seen.append)
    warning_log.warn("a", now=1.0)
    warning_log.warn("a", now=2.0)
    warning_log.warn("b", now=3.0)
    assert seen == ["a", "a", "b"]
    assert warning_log.texts() == ["b"]
