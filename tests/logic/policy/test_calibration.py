"""Calibration profiles (S-12): knee rule, endpoint keys, expiry, bounded book, seeds (H-S-13)."""

from __future__ import annotations

import ast
import inspect

import pytest

from slmactor.logic.policy import calibration
from slmactor.logic.policy.calibration import (
    CalibrationBook,
    CalibrationProfile,
    calibration_markdown,
    knee,
    normalize_endpoint,
    seed_role_latencies,
    staleness,
)

NOW = 1_790_000_000.0
DAY = 86_400.0


def _profile(model: str = "qwen2.5-coder:7b", endpoint: str = "http://localhost:11434",
             measured_at: float = NOW, **extra: object) -> CalibrationProfile:
    raw: dict[str, object] = {"model": model, "endpoint": endpoint,
                              "efficiency": {"1": 1.0, "2": 0.93, "4": 0.71, "8": 0.41},
                              "p50_ms": 420, "p95_ms": 610, "decode_tps": 40.0,
                              "context_window": 32768, "measured_at": measured_at}
    raw.update(extra)
    return CalibrationProfile.from_dict(raw, NOW)


@pytest.mark.parametrize(
    ("efficiency", "expected"),
    [
        ({1: 1.0, 2: 0.93, 4: 0.71, 8: 0.41}, 4),
        ({1: 1.0, 2: 0.60}, 2),  # exactly 60 % counts
        ({1: 1.0, 2: 0.599, 4: 0.9}, 1),  # a failing lower level ends the search
        ({1: 1.0, 2: 0.8, 4: 0.5, 8: 0.95}, 2),
        ({1: 1.0, 2: 0.9, 4: 0.8, 8: 0.7}, 8),
        ({}, 1),
        ({1: 0.3}, 1),  # solo always works
    ],
)
def test_knee_rule(efficiency: dict[int, float], expected: int) -> None:
    assert knee(efficiency) == expected


def test_profile_from_report_and_round_trip() -> None:
    profile = _profile()
    assert profile.knee == 4 and profile.family == "qwen2.5-coder"
    assert profile.key == ("qwen2.5-coder:7b", "http://localhost:11434")
    data = profile.to_dict()
    assert data["knee"] == 4 and data["measured_at"] == "2026-09-21T14:13:20Z"
    assert data["efficiency"] == {"1": 1.0, "2": 0.93, "4": 0.71, "8": 0.41}
    assert CalibrationProfile.from_dict(data) == profile


def test_efficiency_from_raw_walls_and_list_form() -> None:
    walls = CalibrationProfile.from_dict(
        {"model": "m", "wall_ms": {"1": 800, "2": 1000, "4": 1600, "8": 4000}}, NOW)
    assert dict(walls.efficiency) == {1: 1.0, 2: 0.8, 4: 0.5, 8: 0.2}
    assert walls.knee == 2 and walls.measured_at == NOW
    listed = CalibrationProfile.from_dict(
        {"model": "m", "efficiency": [{"level": 2, "efficiency": 0.7}, {"level": "x"}]}, NOW)
    assert dict(listed.efficiency) == {1: 1.0, 2: 0.7}


def test_report_without_model_is_refused() -> None:
    with pytest.raises(ValueError):
        CalibrationProfile.from_dict({"endpoint": "http://x"}, NOW)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Localhost:8080/v1/chat?x=1", "http://localhost:8080"),
        ("https://api.example.com/v1", "https://api.example.com:443"),
        ("localhost:11434", "http://localhost:11434"),
        ("http://user:secret@host:9000/", "http://host:9000"),
        ("http://[::1]:8000", "http://[::1]:8000"),
        ("", ""),
    ],
)
def test_endpoint_key_is_scheme_host_port(raw: str, expected: str) -> None:
    assert normalize_endpoint(raw) == expected


def test_expiry_and_staleness_reasons() -> None:
    profile = _profile(measured_at=NOW - 29 * DAY)
    assert not profile.expired(NOW) and staleness(profile, NOW) == ""
    assert profile.expired(NOW + 2 * DAY)
    assert staleness(profile, NOW + 2 * DAY) == "older than 30 days"
    assert staleness(None, NOW) == "never measured"
    assert staleness(profile, NOW, calibrator_version=2) == "measured by an older calibrator"
    assert staleness(profile, NOW, context_window=8192) == "context window changed"
    assert staleness(profile, NOW, context_window=32768) == ""


def test_book_keeps_newest_per_key_and_at_most_fifty() -> None:
    book = CalibrationBook()
    book.put(_profile(measured_at=NOW - DAY))
    book.put(_profile(measured_at=NOW - 2 * DAY))  # older: does not replace
    kept = book.get("qwen2.5-coder:7b", "http://LOCALHOST:11434/v1")
    assert kept is not None and kept.measured_at == NOW - DAY
    book.put(_profile(endpoint="http://gpu-box:8000", measured_at=NOW))
    newest = book.get("qwen2.5-coder:7b")
    assert newest is not None and newest.endpoint == "http://gpu-box:8000"  # newest of the model
    assert book.get("other") is None
    for i in range(60):
        book.put(_profile(model=f"m{i}", measured_at=NOW - i * 60))
    book.put(_profile(model="ancient", measured_at=NOW - 40 * DAY))
    dropped = book.prune(NOW)
    assert len(book) == 50
    assert {p.model for p in dropped} >= {"ancient", "m59"}
    assert book.get("ancient") is None and book.get("m0") is not None


def test_seeds_only_roles_without_observations() -> None:
    profile = _profile()
    seeds = seed_role_latencies(
        profile,
        observed={"worker": 12, "planner": 0},
        role_tokens={"Worker": 800, "planner": 400, "reviewer": 200},
        task_timeout_ms=120_000,
    )
    assert set(seeds) == {"planner", "reviewer"}
    # overhead = 610 − 16·25 = 210 ms; planner = (210 + 400·25)·1.5
    assert seeds["planner"] == 15_315
    assert seeds["reviewer"] == int((210 + 200 * 25) * 1.5)
    capped = seed_role_latencies(profile, {}, {"planner": 100_000}, task_timeout_ms=60_000)
    assert capped == {"planner": 60_000}
    assert seed_role_latencies(_profile(p50_ms=0, p95_ms=0), {}, {"planner": 1}) == {}


def test_calibration_never_touches_the_bandit() -> None:
    # H-S-13: a probe measures speed, not correctness; the module cannot reach a posterior.
    tree = ast.parse(inspect.getsource(calibration))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any("bandit" in (m or "") or "policy" in (m or "") for m in imported)


def test_markdown_lists_profiles() -> None:
    book = CalibrationBook([_profile(), _profile(model="a|b", measured_at=NOW - 40 * DAY)])
    text = calibration_markdown(book, NOW)
    assert "| qwen2.5-coder:7b | http://localhost:11434 | 4 | 1:100%, 2:93%, 4:71%, 8:41% |" in text
    assert "| a\\|b |" in text and "| expired |" in text
    assert "(no profiles yet)" in calibration_markdown(CalibrationBook(), NOW)
