"""Grouping quality on the real-tool corpus (tests/fixtures/failures), against the seed's algorithm.

The corpus is produced by `tests/fixtures/failures/build_corpus.py` from real runs of python,
pytest, mypy, gcc, rustc, node, javac/java, bash and git, plus agent-tool and provider formats.
"""

from __future__ import annotations

from collections import Counter

from slmactor.logic.failures.classify import CLASSES
from slmactor.logic.failures.fingerprint import analyze
from slmactor.logic.failures.fingerprint_seed import seed_analyze
from tests.fixtures.failures.evaluate import load, measure


def test_corpus_covers_real_tools_and_formats() -> None:
    records = load()
    tools = Counter(r["tool"] for r in records if r["source"] == "real")
    assert {"python", "pytest", "mypy", "gcc", "rustc", "node", "javac", "java", "bash", "git"} \
        <= set(tools)
    assert all(r["class"] in CLASSES for r in records)
    by_bug = Counter(r["bug"] for r in records)
    assert min(by_bug.values()) >= 3  # every bug has its variants


def test_grouping_meets_the_issue_targets_and_beats_the_seed() -> None:
    records = load()
    ours = measure(records, analyze)
    seed = measure(records, seed_analyze)
    assert ours["collapse_pct"] >= 95.0
    assert ours["apart_pct"] >= 98.0
    assert ours["class_pct"] >= 95.0
    assert ours["collapse_pct"] > seed["collapse_pct"]
    assert ours["apart_pct"] > seed["apart_pct"]
    assert ours["class_pct"] > seed["class_pct"]


def test_every_content_fingerprint_explains_its_salient_text() -> None:
    for rec in load():
        fp = analyze(rec["tool"], rec["message"], rec["language"], rec["model"])
        assert fp.explain
        if fp.structural:
            assert fp.salient == ""
        else:
            assert fp.salient, rec["bug"]
