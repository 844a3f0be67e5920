"""Learning that carries over (acceptance): the cross-language replay sets through a real
daemon. Every failure kind first appears in one language and repeats in others; repeats must be
fixed from memory (≥ 90 %), no repair may be wrong, and a truncated call is never repaired."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.bench_generalize import measure
from slmactor.testing import DaemonProcess
from tests.fixtures.replay_xlang.generate import generate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "replay_xlang"


@pytest.mark.parametrize("vocabulary", ["claude", "gemini", "bundled", "codex"])
def test_the_committed_set_is_what_its_seed_generates(vocabulary: str) -> None:
    directory = FIXTURES / f"seed1-{vocabulary}"
    committed = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(directory.glob("*.json"))]
    assert committed == sorted(generate(1, vocabulary), key=lambda t: t["id"])


@pytest.mark.parametrize("vocabulary", ["claude", "gemini", "bundled", "codex"])
def test_repeats_in_other_languages_are_fixed_from_memory_and_never_wrongly(
    daemon: DaemonProcess, vocabulary: str,
) -> None:
    with daemon.client(timeout=60) as client:
        got = measure(client, FIXTURES / f"seed1-{vocabulary}", vocabulary)
    assert got["repeats"] >= 20
    assert got["share"] >= 0.9, got
    assert got["wrong_repairs"] == 0, got
    assert got["truncated_applied"] == 0, got
