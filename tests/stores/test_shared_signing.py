"""Merging keeps trust where it belongs: a record merged from two of the user's own versions is
signed again with the user's key (merging two of one's own branches does not turn one's rules
into unverified repository content); one with a version the user did not sign stays unverified."""

from __future__ import annotations

import json

from slmactor.logic.text.trust import signed, verified
from slmactor.stores.shared import BY_NAME, merge_texts

KEY = b"k" * 64
OTHER = b"o" * 64


def _rule(successes: int, evidence: list[str]) -> dict[str, object]:
    return {"id": "rule_1", "fingerprint": "fp_1", "trigger": {"class": "edit_no_match", "tool": "edit"},
            "repair": {"kind": "transform_args", "transform": "strip_line_number_prefix"},
            "evidence": evidence, "successes": successes, "failures": 0, "confidence": 0.5,
            "created_at": "2026-12-01T00:00:00Z", "last_used": "2026-12-01T00:00:00Z", "scope": "project"}


def _doc(*rules: dict[str, object]) -> bytes:
    return json.dumps({"version": 1, "rules": list(rules)}).encode()


def _merged(a_key: bytes, b_key: bytes) -> dict[str, object]:
    base = _rule(1, ["r0"])
    ours = signed(a_key, _rule(2, ["r0", "ra"]))
    theirs = signed(b_key, _rule(2, ["r0", "rb"]))
    out = merge_texts(BY_NAME["rules"], _doc(signed(KEY, base)), _doc(ours), _doc(theirs), KEY)
    (rule,) = json.loads(out)["rules"]
    return dict(rule)


def test_a_rule_merged_from_the_users_own_branches_stays_the_users() -> None:
    rule = _merged(KEY, KEY)
    assert rule["successes"] == 3 and sorted(rule["evidence"]) == ["r0", "ra", "rb"]  # type: ignore[arg-type]
    assert verified(KEY, rule)


def test_a_rule_merged_with_a_teammates_version_stays_unverified() -> None:
    rule = _merged(KEY, OTHER)
    assert rule["successes"] == 3 and not verified(KEY, rule)
