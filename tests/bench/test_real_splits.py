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


def test_a_build_banner_is_not_the_head_of_a_failure() -> None:
    # cargo's progress line and npm's script header name the package, not what failed: two
    # different compile errors of one crate are not "the same failure".
    from bench.bench_real import head

    a = head("Exit code 101\n    Checking leeson v0.1.0 (/r/leeson)\nerror[E0599]: no method "
             "named `is_closed` found")
    b = head("Exit code 101\n    Checking leeson v0.1.0 (/r/leeson)\nerror[E0624]: method "
             "`line_count` is private")
    assert a != b and a.startswith("error[e0599]")
    assert head("> app@1.0.0 build\n> vite build\nerror TS2304: Cannot find name 'x'.") \
        .startswith("error ts2304")
