"""Procedural memory (SPEC S-6.1–S-6.4) and latency memory (S-6.7)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.procedures import (
    Procedure,
    ProcedureBook,
    ProcedureKey,
    fold_family,
    procedures_markdown,
)
from slmactor.logic.policy.latency import KEEP_SAMPLES, LatencyBook, latency_markdown, nearest_rank
from slmactor.logic.text.strings import hash_id

NOW = 1_790_000_000.0
DAY = 86_400.0


def record(book: ProcedureBook, key: ProcedureKey, ok: int, fail: int = 0, note: str = "") -> None:
    for _ in range(ok):
        book.record(key, True, NOW, note)
    for _ in range(fail):
        book.record(key, False, NOW, note)


def test_key_is_normalised_and_identified() -> None:
    key = ProcedureKey.of(" Edit_Format ", "Diff", "Qwen2.5-Coder", "golang")
    assert key == ProcedureKey("edit_format", "diff", "qwen2.5-coder", "go")
    assert key.id == hash_id("p_", "edit_format", "diff", "qwen2.5-coder", "go")
    assert str(key) == "edit_format/diff [qwen2.5-coder, go]"
    assert str(ProcedureKey.of("knob", "x")) == "knob/x [any-model, any-language]"


def test_fold_family_uses_explicit_family_else_the_model_id() -> None:
    assert fold_family("", "Qwen3-Coder-30B-A3B-Instruct-MLX-4bit") == "qwen3-coder"
    assert fold_family(" Custom ", "gpt-4o") == "custom"
    assert fold_family("", "") == ""


def test_record_counts_and_rates() -> None:
    book = ProcedureBook()
    key = ProcedureKey.of("edit_format", "diff", "qwen3-coder", "go")
    record(book, key, 3, 1, note="works with fences")
    book.record(key, True, NOW + 5)  # empty note keeps the old one
    (proc,) = list(book)
    assert (proc.successes, proc.failures, proc.samples) == (4, 1, 5)
    assert proc.rate == pytest.approx(5 / 7)
    assert proc.note == "works with fences"
    assert proc.first_seen == NOW and proc.last_used == NOW + 5
    assert book.record(ProcedureKey.of("", "x"), True, NOW) is None
    assert book.record(ProcedureKey.of("knob", " "), True, NOW) is None


def test_best_needs_three_samples() -> None:
    book = ProcedureBook()
    key = ProcedureKey.of("edit_format", "diff", "qwen3-coder", "go")
    record(book, key, 2)
    assert book.best("edit_format", "qwen3-coder", "go") is None
    record(book, key, 1)
    best = book.best("edit_format", "qwen3-coder", "go")
    assert best is not None and best.key.option == "diff"


def test_widening_order_family_language_first() -> None:
    book = ProcedureBook()
    record(book, ProcedureKey.of("edit_format", "any-any", "", ""), 9)
    assert _best_option(book) == "any-any"
    record(book, ProcedureKey.of("edit_format", "any-go", "", "go"), 3)
    assert _best_option(book) == "any-go"
    record(book, ProcedureKey.of("edit_format", "fam-any", "qwen3-coder", ""), 3)
    assert _best_option(book) == "fam-any"  # widens across languages only after models
    record(book, ProcedureKey.of("edit_format", "fam-go", "qwen3-coder", "go"), 3)
    assert _best_option(book) == "fam-go"
    # other families and languages never leak in
    record(book, ProcedureKey.of("edit_format", "other", "gpt-4o-mini", "python"), 50)
    assert _best_option(book) == "fam-go"


def _best_option(book: ProcedureBook) -> str:
    best = book.best("edit_format", "qwen3-coder", "golang")
    return best.key.option if best else ""


def test_best_keeps_widening_past_an_unproven_namespace() -> None:
    # H-S-28: one fresh sample for this exact model must not hide a proven wider answer.
    book = ProcedureBook()
    record(book, ProcedureKey.of("recovery", "reread", "qwen3-coder", "go"), 1)
    record(book, ProcedureKey.of("recovery", "retry", "", "go"), 4, 1)
    best = book.best("recovery", "qwen3-coder", "go")
    assert best is not None and best.key.option == "retry"
    # rank() is the seed's: the first non-empty namespace
    assert [p.key.option for p in book.rank("recovery", "qwen3-coder", "go")] == ["reread"]


def test_rank_sorts_by_rate_then_samples() -> None:
    book = ProcedureBook()
    record(book, ProcedureKey.of("knob", "a", "f", "go"), 3, 3)  # 4/8
    record(book, ProcedureKey.of("knob", "b", "f", "go"), 8, 0)  # 9/10
    record(book, ProcedureKey.of("knob", "c", "f", "go"), 3, 0)  # 4/5
    record(book, ProcedureKey.of("knob", "d", "f", "go"), 7, 1)  # 8/10
    assert [p.key.option for p in book.rank("knob", "f", "go")] == ["b", "d", "c", "a"]


def test_render_lists_proven_lines_in_topic_order() -> None:
    book = ProcedureBook()
    record(book, ProcedureKey.of("knob", "temp=0.2", "f", "go"), 3)
    record(book, ProcedureKey.of("edit_format", "diff", "f", "go"), 4, 1, note="prefer small hunks")
    record(book, ProcedureKey.of("tool_choice", "ws_grep", "f", ""), 3)
    record(book, ProcedureKey.of("prompt", "terse", "f", "go"), 2)  # not proven
    text = book.render("f", "go", 200)
    assert text.splitlines() == [
        "## What works for this model",
        "- edit_format → `diff` (71% over 5 runs) — prefer small hunks",
        "- tool_choice → `ws_grep` (80% over 3 runs)",
        "- knob → `temp=0.2` (80% over 3 runs)",
    ]
    assert ProcedureBook().render("f", "go") == ""


def test_render_caps_at_eight_lines() -> None:
    book = ProcedureBook()
    for i in range(12):
        record(book, ProcedureKey.of("knob", f"k{i}", "f", "go"), 3)
    lines = book.render("f", "go", 200).splitlines()
    assert len(lines) == 1 + 8


def test_prune_drops_unused_then_keeps_most_sampled() -> None:
    book = ProcedureBook()
    book.record(ProcedureKey.of("knob", "old"), True, NOW - 400 * DAY)
    for i in range(4):
        for _ in range(i + 1):
            book.record(ProcedureKey.of("knob", f"k{i}"), True, NOW)
    assert book.prune(NOW) == 1
    assert book.prune(NOW, max_procedures=2) == 2
    assert sorted(p.key.option for p in book) == ["k2", "k3"]


def test_lazy_cap_and_round_trip_and_markdown() -> None:
    book = ProcedureBook(cap=2)
    for i in range(5):
        book.record(ProcedureKey.of("knob", f"k{i}", "fam", ""), True, NOW + i)
    assert len(book) == 2
    again = ProcedureBook.from_records([*book.to_records(), {"key": "bad"}, {"key": {"topic": ""}}])
    assert again.to_records() == book.to_records()
    md = procedures_markdown(again)
    assert "| Topic | Option | Model family | Language | Success | Samples |" in md
    assert "| knob | k4 | fam | * | 67% | 1 |" in md


def test_procedure_from_dict_tolerates_junk_values() -> None:
    proc = Procedure.from_dict(
        {"key": {"topic": "knob", "option": "x"}, "successes": "3", "failures": -2}
    )
    assert proc is not None and proc.samples == 0


# --- latency -----------------------------------------------------------------------------


def test_latency_quantiles_nearest_rank() -> None:
    assert nearest_rank([], 0.5) == 0
    assert nearest_rank([5, 1, 3, 2, 4], 0.5) == 3
    assert nearest_rank([5, 1, 3, 2, 4], 0.95) == 5
    assert nearest_rank([5, 1, 3, 2, 4], 0.0) == 1
    assert nearest_rank([5, 1, 3, 2, 4], 7) == 5
    book = LatencyBook()
    for ms in (100, 200, 300, 400, 0.2, -5, 0):
        book.observe("Worker", "Qwen3-Coder", ms, NOW)
    assert book.quantile("worker", "qwen3-coder", 0.5) == (200, 5)
    assert book.p95("worker", "qwen3-coder") == (400, 5)
    assert book.max("worker", "qwen3-coder") == (400, 5)
    assert min(next(iter(book)).samples_ms) == 1  # sub-millisecond counts as 1


def test_latency_never_widens_across_families() -> None:
    book = LatencyBook()
    for _ in range(5):
        book.observe("worker", "qwen3-coder", 1000, NOW)
        book.observe("worker", "", 50, NOW)
    assert book.p95("worker", "qwen3.8") == (0, 0)
    assert book.p95("worker", "") == (0, 0)
    assert book.p95("tester", "qwen3-coder") == (0, 0)


def test_latency_keeps_last_32_and_counts_all() -> None:
    book = LatencyBook()
    for i in range(1, 41):
        book.observe("worker", "f", i, NOW)
    rec = next(iter(book))
    assert rec.samples_ms == tuple(range(9, 41)) and rec.count == 40
    assert len(rec.samples_ms) == KEEP_SAMPLES


def test_latency_load_drops_bad_samples_and_reapplies_retention() -> None:
    raw = {
        "key": {"role": "Worker", "model_family": "F"},
        "samples_ms": [-1, 0, "x", True, *range(1, 50)],
        "count": 3,
    }
    book = LatencyBook.from_records([raw, {"key": {"role": ""}}, 7])
    rec = next(iter(book))
    assert rec.key.role == "worker" and rec.samples_ms == tuple(range(18, 50))
    assert rec.count == 32  # never fewer observations than retained samples


def test_latency_prune_age_then_most_sampled() -> None:
    book = LatencyBook()
    book.observe("old", "f", 10, NOW - 100 * DAY)
    for i in range(3):
        for _ in range(i + 1):
            book.observe(f"r{i}", "f", 10, NOW)
    assert book.prune(NOW) == 1
    assert book.prune(NOW, max_keys=2) == 1
    assert sorted(r.key.role for r in book) == ["r1", "r2"]
    assert "| r2 | f | 3 | 3 | 10 | 10 | 10 |" in latency_markdown(book)
    assert LatencyBook.from_records(book.to_records()).to_records() == book.to_records()


@settings(derandomize=True, max_examples=200)
@given(
    st.lists(st.integers(min_value=1, max_value=10**6), min_size=1, max_size=40), st.floats(0, 1)
)
def test_nearest_rank_is_a_sample_and_monotone(samples: list[int], q: float) -> None:
    value = nearest_rank(samples, q)
    assert value in samples
    assert nearest_rank(samples, 0.0) <= value <= nearest_rank(samples, 1.0) == max(samples)


def test_latency_seed_only_for_a_key_with_no_observations() -> None:
    book = LatencyBook()
    assert book.seed("planner", "qwen3-coder", 1500.0, NOW)
    assert book.quantile("planner", "qwen3-coder", 0.95) == (1500, 3)  # usable: 3 samples
    assert not book.seed("planner", "qwen3-coder", 9000.0, NOW)  # seeded once
    book.observe("worker", "qwen3-coder", 800.0, NOW)
    assert not book.seed("worker", "qwen3-coder", 5000.0, NOW)  # a real observation wins
    assert book.quantile("worker", "qwen3-coder", 1.0) == (800, 1)
    assert not book.seed("tester", "qwen3-coder", 0.0, NOW)  # nothing measured, nothing stored
