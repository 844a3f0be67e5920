"""The failure pipeline on real failed tool calls (`tests/fixtures/real_failures/dev.jsonl`,
labelled by the rules in that folder's README): floors a little below what it reaches, so a
change that reads real failures worse fails here. `python -m bench real` prints the figures and
the per-kind rows; this test holds them."""

from __future__ import annotations

from bench.bench_real import DEV, load, score

#: Measured 89 %, 97 %, 99.9 %, 100 %, 0.5 % on the 449 failures of the committed set.
MIN_AGREEMENT = 0.87
MIN_SAME = 0.95
MIN_APART = 0.995
MIN_BENIGN_FOUND = 0.90
MAX_REAL_CALLED_BENIGN = 0.015


def test_real_failures_are_read_as_labelled() -> None:
    r = score(load(DEV))
    assert r["n"] >= 400
    assert r["agree"] / r["n"] >= MIN_AGREEMENT
    assert r["same_pairs"] and r["same_equal"] / r["same_pairs"] >= MIN_SAME
    assert (r["apart_pairs"] - r["apart_equal"]) / r["apart_pairs"] >= MIN_APART
    assert r["benign_found"] / r["benign_n"] >= MIN_BENIGN_FOUND
    assert r["real_benign"] / r["real_n"] <= MAX_REAL_CALLED_BENIGN
    assert r["misuse_agree"] == r["misuse_n"]


def test_every_kind_of_the_corpus_is_recognised_somewhere() -> None:
    per_kind = score(load(DEV))["per_kind"]
    missed = [kind for kind, entry in per_kind.items() if entry["agree"] == 0]
    assert not missed
