"""Semantic facts (SPEC S-4): confidence, same claim vs contradiction, pinning, ranking, rendering."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.facts import (
    BLOCK_HEADING,
    Fact,
    FactBook,
    beta_confidence,
    claim_key,
    fact_id,
    semantic_markdown,
)
from slmactor.logic.text.strings import hash_id

NOW = 1_790_000_000.0
DAY = 86_400.0


def test_one_sighting_scores_two_thirds() -> None:
    book = FactBook()
    fact = book.observe("command", "go test ./...", "`go test ./...` works here (1/1 runs)", NOW)
    assert fact is not None
    assert fact.support == 1 and fact.contradict == 0
    assert fact.confidence == pytest.approx(0.67, abs=0.005)
    assert fact.score(NOW) == pytest.approx(2 / 3)


def test_fact_id_is_kind_and_lowercased_subject() -> None:
    assert fact_id("command", "  Make Test ") == hash_id("f_", "command", "make test")
    book = FactBook()
    a = book.observe("command", "Make Test", "x works", NOW)
    b = book.observe("COMMAND", "make test", "x works", NOW)
    assert a is not None and b is not None and a.id == b.id and len(book) == 1


def test_numeric_drift_is_the_same_claim() -> None:
    assert claim_key("works here (2/2 runs)") == claim_key("works here (7/8 runs)")
    assert claim_key("Works   here\n(2/2 runs) ") == claim_key("works here (2/2 runs)")
    book = FactBook()
    book.observe("command", "make", "`make` works here (2/2 runs succeeded)", NOW)
    fact = book.observe("command", "make", "`make` works here (7/8 runs succeeded)", NOW + 1)
    assert fact is not None
    assert (fact.support, fact.contradict) == (2, 0)
    assert fact.text == "`make` works here (7/8 runs succeeded)"  # fresher arithmetic kept
    assert fact.confidence == pytest.approx(3 / 4)


def test_contradiction_replaces_text_once_it_outweighs_support() -> None:
    book = FactBook()
    book.observe("convention", "indent", "tabs for indentation", NOW)
    first = book.observe("convention", "indent", "four spaces for indentation", NOW + 1)
    assert first is not None
    # 1 contradiction vs 1 support: not yet outweighed (ratio 1.0, strictly greater needed)
    assert (first.text, first.support, first.contradict) == ("tabs for indentation", 1, 1)
    assert first.confidence == pytest.approx(0.5)
    second = book.observe("convention", "indent", "four spaces for indentation", NOW + 2)
    assert second is not None
    assert (second.text, second.support, second.contradict) == ("four spaces for indentation", 1, 0)
    assert second.confidence == pytest.approx(2 / 3)
    assert second.first_seen == NOW and second.last_seen == NOW + 2


def test_blank_subject_or_text_is_a_no_op() -> None:
    book = FactBook()
    assert book.observe("command", "  ", "text", NOW) is None
    assert book.observe("command", "make", "   ", NOW) is None
    assert len(book) == 0


def test_kind_defaults_to_convention_and_caps_apply() -> None:
    book = FactBook()
    fact = book.observe("", "s" * 300, "t" * 500, NOW, sources=[f"ep{i}" for i in range(9)])
    assert fact is not None
    assert fact.kind == "convention"
    assert len(fact.subject.encode()) == 160 and len(fact.text.encode()) == 240
    assert fact.sources == ("ep0", "ep1", "ep2", "ep3", "ep4")


def test_sources_accumulate_across_sightings_first_five_kept() -> None:
    book = FactBook()
    book.observe("gotcha", "k", "msg", NOW, ["T3", "run-42"])
    fact = book.observe("gotcha", "k", "msg", NOW, ["T9", "run-43", "T3"])
    assert fact is not None and fact.sources == ("T3", "run-42", "T9", "run-43")


def test_refute_counts_against_without_changing_text() -> None:
    book = FactBook()
    book.observe("layout", "src", "code lives in src/", NOW)
    assert book.refute("layout", "src", NOW + 5)
    fact = book.get("layout", "src")
    assert fact is not None
    assert (fact.text, fact.support, fact.contradict) == ("code lives in src/", 1, 1)
    assert fact.last_seen == NOW + 5
    assert not book.refute("layout", "unknown", NOW)


def pinned_book() -> FactBook:
    return FactBook.from_records(
        [{"kind": "convention", "subject": "style", "text": "Use black (88 cols)", "pinned": True}]
    )


def test_pinned_fact_is_never_overwritten_refuted_or_pruned() -> None:
    book = pinned_book()
    for i in range(5):
        book.observe("convention", "style", f"use ruff format, variant {chr(97 + i)}", NOW + i)
    fact = book.get("convention", "style")
    assert fact is not None and fact.pinned
    assert fact.text == "Use black (88 cols)"
    assert fact.contradict == 5
    assert not book.refute("convention", "style", NOW)
    assert fact.score(NOW + 1000 * DAY) == 1.0
    book.observe("convention", "style", "Use black (100 cols)", NOW)  # same claim: support only
    still = book.get("convention", "style")
    assert still is not None and still.text == "Use black (88 cols)"
    assert book.prune(NOW + 5000 * DAY, max_facts=-1) == 0


def test_score_decays_with_a_60_day_hyperbolic_half_life() -> None:
    book = FactBook()
    fact = book.observe("file", "a.py", "`a.py` changed in 3 recent runs", NOW)
    assert fact is not None
    assert fact.score(NOW + 60 * DAY) == pytest.approx(fact.confidence / 2)
    assert fact.score(NOW - DAY) == pytest.approx(fact.confidence)  # future: no decay


def test_ranked_by_score_then_subject() -> None:
    book = FactBook()
    book.observe("command", "b", "b works", NOW)
    book.observe("command", "a", "a works", NOW)
    book.observe("command", "c", "c works", NOW)
    book.observe("command", "c", "c works", NOW)
    assert [f.subject for f in book.ranked(NOW)] == ["c", "a", "b"]
    assert [f.subject for f in book.ranked(NOW, kind="file")] == []


def rich_book() -> FactBook:
    book = FactBook()
    book.observe("file", "pkg/loop/runner.go", "`pkg/loop/runner.go` changed in 4 recent runs", NOW)
    book.observe("command", "go test", "`go test` works here (3/3 runs succeeded)", NOW)
    book.observe("layout", "hot-directories", "Most work happens in: `pkg/loop` (4)", NOW)
    book.observe("gotcha", "edit_not_found", "old_str not found — fix: re-read (seen 2×)", NOW)
    book.observe("dependency", "primary-language", "Primary language is go (5/5 recent runs)", NOW)
    book.observe(
        "convention", "edit-format:diff", "Edit format `diff` applies 90% of the time", NOW
    )
    book.observe("custom", "x", "a custom kind", NOW)
    return book


def test_render_groups_action_first_with_headings() -> None:
    text = rich_book().render(0, NOW)
    assert text.startswith(BLOCK_HEADING + "\n\n")
    assert text.endswith("\n") and not text.endswith("\n\n")
    headings = [line for line in text.splitlines() if line.endswith(":")]
    assert headings == [
        "Commands that work:",
        "Gotchas:",
        "Layout:",
        "Conventions:",
        "Toolchain:",
        "Files:",
        "CUSTOM:",
    ]


def test_render_is_byte_identical_to_render_for_empty_query() -> None:
    book = rich_book()
    assert book.render(400, NOW) == book.render_for("", 400, NOW)
    assert book.render(400, NOW) == book.render_for("   ", 400, NOW)


def test_render_for_orders_relevant_facts_first_and_never_filters() -> None:
    book = FactBook()
    for i in range(8):
        book.observe("file", f"pkg/f{i}.go", f"`pkg/f{i}.go` changed in 2 recent runs", NOW)
        book.observe("file", f"pkg/f{i}.go", f"`pkg/f{i}.go` changed in 3 recent runs", NOW)
    book.observe("file", "pkg/graph/walk.go", "`pkg/graph/walk.go` changed in 2 recent runs", NOW)
    plain = book.render(400, NOW)
    assert "walk.go" not in plain  # lowest score: crowded out of the six slots
    focused = book.render_for("fix the graph walk", 400, NOW)
    lines = [line for line in focused.splitlines() if line.startswith("- ")]
    assert lines[0] == "- `pkg/graph/walk.go` changed in 2 recent runs"
    assert len(lines) == 6  # still six per kind: relevance orders, it does not filter
    unrelated = book.render_for("zebra quantum", 400, NOW)
    assert unrelated == plain


def test_render_skips_facts_under_the_score_gate() -> None:
    book = FactBook()
    book.observe("command", "make", "make works", NOW)
    for _ in range(3):
        book.refute("command", "make", NOW)  # 2/6 = 0.33 < 0.34
    assert book.render(400, NOW) == ""
    book.observe("command", "old", "old works", NOW - 400 * DAY)  # 0.67 × 60/460 ≈ 0.09
    assert book.render(400, NOW) == ""


def test_render_fits_the_budget() -> None:
    book = FactBook()
    for i in range(40):
        book.observe("command", f"cmd{i}", f"`cmd{i}` " + "works here " * 20, NOW)
    text = book.render(50, NOW)
    assert 0 < len(text) <= 50 * 4


def test_prune_drops_weak_and_stale_then_keeps_best_by_score() -> None:
    book = FactBook()
    book.observe("command", "weak", "weak works", NOW)
    for _ in range(4):
        book.refute("command", "weak", NOW)  # 2/7 = 0.286 ≥ 0.25 — stays
    book.refute("command", "weak", NOW)  # 2/8 = 0.25 — stays
    book.refute("command", "weaker", NOW)
    book.observe("command", "weakest", "w", NOW)
    for _ in range(5):
        book.refute("command", "weakest", NOW)  # 2/8 → 2/9 after one more
    book.refute("command", "weakest", NOW)
    book.observe("file", "stale", "stale", NOW - 400 * DAY)
    for i in range(5):
        book.observe("file", f"f{i}", f"f{i} changed", NOW - i * DAY)
    removed = book.prune(NOW)
    assert removed == 2
    assert {f.subject for f in book} == {"weak", "f0", "f1", "f2", "f3", "f4"}
    assert book.prune(NOW, max_facts=3) == 3
    assert {f.subject for f in book} == {"f0", "f1", "f2"}  # newest score highest


def test_cap_is_enforced_lazily_at_twice_the_cap() -> None:
    book = FactBook(cap=5)
    for i in range(10):
        book.observe("file", f"f{i}", "x", NOW + i)
    assert len(book) == 10
    book.observe("file", "f10", "x", NOW + 10)
    assert len(book) == 5
    assert {f.subject for f in book} == {"f6", "f7", "f8", "f9", "f10"}


def test_load_skips_unusable_and_duplicate_records_and_repairs_the_rest() -> None:
    records: list[object] = [
        {"kind": "command", "subject": "make", "text": "make works", "support": 3, "contradict": 1},
        {"kind": "command", "subject": "", "text": ""},
        "not a record",
        {"kind": "command", "subject": "make", "text": "duplicate id"},
        {"subject": "no kind", "text": "x", "confidence": -1, "support": "many"},
    ]
    book = FactBook.from_records(records)
    assert len(book) == 2
    make = book.get("command", "make")
    assert make is not None and make.text == "make works"
    assert make.confidence == pytest.approx(4 / 6)
    other = book.get("convention", "no kind")
    assert other is not None and other.support == 1 and other.confidence == pytest.approx(2 / 3)


def test_a_hand_typed_id_is_replaced_so_sightings_meet_the_pinned_fact() -> None:
    book = FactBook.from_records(
        [
            {
                "id": "my-style",
                "kind": "convention",
                "subject": "style",
                "text": "tabs",
                "pinned": True,
            }
        ]
    )
    book.observe("convention", "style", "spaces", NOW)
    (fact,) = list(book)
    assert (
        fact.id == fact_id("convention", "style") and fact.text == "tabs" and fact.contradict == 1
    )


def test_dict_round_trip() -> None:
    book = rich_book()
    book.refute("command", "go test", NOW + 10)
    again = FactBook.from_records(book.to_records())
    assert [f.to_dict() for f in again] == book.to_records()
    fact = next(iter(again))
    assert isinstance(fact, Fact) and fact.first_seen == NOW


def test_semantic_markdown_has_title_note_and_block() -> None:
    text = semantic_markdown(rich_book(), NOW)
    assert text.startswith("# Semantic memory\n\n_Distilled from episodes.")
    assert BLOCK_HEADING in text
    assert semantic_markdown(FactBook(), NOW).startswith("# Semantic memory")


@settings(derandomize=True, max_examples=200)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["x 1", "x 22", "y", "z 3"])),
        max_size=30,
    )
)
def test_confidence_is_always_the_beta_mean_of_the_counters(seq: list[tuple[str, str]]) -> None:
    book = FactBook()
    for i, (subject, text) in enumerate(seq):
        book.observe("convention", subject, text, NOW + i)
    for fact in book:
        assert fact.support >= 1
        assert fact.contradict <= fact.support  # otherwise it would have been replaced
        assert fact.confidence == pytest.approx(beta_confidence(fact.support, fact.contradict))


_OPS = st.lists(
    st.tuples(st.sampled_from(["observe", "contradict", "refute", "adopt", "prune", "rekey"]),
              st.integers(0, 5), st.integers(0, 2)),
    max_size=30,
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(_OPS)
def test_records_after_any_changes_are_what_signing_each_fact_afresh_gives(ops) -> None:
    """A flush re-signs only the facts that changed since the last one: whatever the changes
    (new facts, support, contradictions, adoption, pruning, another key), the records written are
    exactly those of signing every fact again, and each verifies under the book's key."""
    from slmactor.logic.memory.facts import SIGN_LOOSE, _signed_record
    from slmactor.logic.text.trust import verified

    keys = [b"k" * 32, b"other-key" * 4]
    book = FactBook(key=keys[0])
    for step, (op, subject, variant) in enumerate(ops):
        now = 1_000.0 + step
        if op == "observe":
            book.observe("command", f"make t{subject}", f"Run make t{subject}", now)
        elif op == "contradict":
            book.observe("command", f"make t{subject}", f"Never run make t{subject} {variant}", now)
        elif op == "refute":
            book.refute("command", f"make t{subject}", now)
        elif op == "adopt":
            book.adopt(None)
        elif op == "prune":
            book.prune(now, max_facts=3)
        else:
            book.key = keys[variant % 2]
        records = book.to_records()
        assert book.key is not None
        assert records == [_signed_record(book.key, fact) for fact in book]
        assert all(verified(book.key, record, SIGN_LOOSE) for record in records)
