"""The labelled files each split of the real-sessions benches reads."""

from __future__ import annotations

import argparse

from bench.bench_real import SPLITS, add_split_options, load, load_split, split_of


def test_tuned_is_every_file_tuned_on_and_never_the_held_out_one() -> None:
    tuned = load_split("tuned")
    assert len(tuned) == len(load(SPLITS["dev"][0])) + len(load(SPLITS["heldout2"][0]))
    held_out = {(r["source"]["repo"], r["session"], r["seq"]) for r in load_split("heldout")}
    assert not held_out & {(r["source"]["repo"], r["session"], r["seq"]) for r in tuned}


def test_the_split_options_pick_one_split() -> None:
    parser = argparse.ArgumentParser()
    add_split_options(parser)
    assert [split_of(parser.parse_args(a)) for a in ([], ["--heldout"], ["--heldout2"], ["--tuned"])] \
        == ["dev", "heldout", "heldout2", "tuned"]
