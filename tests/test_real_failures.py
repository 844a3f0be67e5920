"""The labelled real failures keep the shape the README promises and agree with the manifest.

`tests/fixtures/real_failures/{dev,heldout}.jsonl` are measured against (class agreement, repair
replay), so a line that lost its source, a label outside the vocabulary, an unclipped error or a
repository on the wrong side of the split would silently skew every figure taken from them.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "real_failures"
MANIFEST = REPO / "bench" / "real_sessions.json"
KINDS = {"runtime_version", "env_not_activated", "runtime_error", "path_not_found", "output_too_large", "test_failure", "format_rejected", "policy_denied",
         "user_rejected", "tool_misuse", "missing_module", "timeout", "not_a_failure", "self_kill", "stale_handle",
         "service_exhausted", "compile_error", "edit_text_not_found", "permission_denied", "network_error", "other"}
MISUSES = {"exists", "multiple_commands", "missing_parameter", "directory", "other"}
FIX_SOURCES = {"call", "memory", "model", "outside", "none"}


def _lines(split: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]


def _sides() -> dict[str, str]:
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return {s["repo"]: s["split"] for s in manifest["sources"]}


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_every_line_has_the_documented_fields(split: str) -> None:
    for entry in _lines(split):
        assert set(entry["source"]) >= {"repo", "commit", "path", "harness"}
        assert len(entry["source"]["commit"]) == 40
        assert entry["kind"] in KINDS
        assert (entry["misuse"] in MISUSES) == (entry["kind"] == "tool_misuse")
        assert entry["benign"] == (entry["kind"] == "not_a_failure")
        assert entry["fix_source"] in FIX_SOURCES
        assert len(entry["error"]) <= 1500
        assert len(json.dumps(entry["args"], ensure_ascii=False)) <= 400
        if entry["fix"] is not None:
            assert entry["fix"]["tool"]
            assert len(json.dumps(entry["fix"]["args"], ensure_ascii=False)) <= 400


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_every_source_is_in_the_manifest_on_its_own_side(split: str) -> None:
    sides = _sides()
    for entry in _lines(split):
        assert sides.get(entry["source"]["repo"]) == split, entry["source"]["repo"]


def test_the_sets_are_big_and_varied_enough_to_measure_on() -> None:
    dev, heldout = _lines("dev"), _lines("heldout")
    assert len(dev) >= 300 and len(heldout) >= 150
    per_harness = Counter(e["source"]["harness"] for e in dev)
    assert sum(1 for n in per_harness.values() if n >= 20) >= 5
    assert not {e["source"]["repo"] for e in dev} & {e["source"]["repo"] for e in heldout}


def test_no_line_carries_a_recognisable_secret() -> None:
    from slmactor.logic.text.redact import redact

    for split in ("dev", "heldout"):
        for entry in _lines(split):
            text = entry["error"] + json.dumps(entry["args"], ensure_ascii=False)
            assert redact(text) == text, (split, entry["source"]["path"], entry["seq"])
