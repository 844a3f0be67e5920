"""`clip_words`: text cut for people to read — at a word boundary, marked, within its bytes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.text.strings import clip_words

_WORDS = st.lists(st.text(st.characters(blacklist_categories=("Cs", "Zs", "Cc")), min_size=1,
                          max_size=12), min_size=1, max_size=20).map(" ".join)


def test_examples() -> None:
    assert clip_words("copy the code without the gutter", 20) == "copy the code…"
    assert clip_words("short", 20) == "short"
    assert clip_words("  padded  ", 6) == "padded"
    assert clip_words("abcdefghijkl", 8) == "abcde…"  # one long word: cut inside it
    assert clip_words("anything", 2) == ""


@settings(derandomize=True, max_examples=300, deadline=None)
@given(_WORDS, st.integers(4, 80))
def test_a_cut_keeps_whole_words_and_fits(text: str, limit: int) -> None:
    out = clip_words(text, limit)
    assert len(out.encode()) <= limit
    if out == text.strip() or not out:
        return
    assert out.endswith("…")
    kept = out[:-1].split()
    original = text.split()
    if len(kept) > 1 or kept == original[:1]:
        assert kept == original[: len(kept)]  # every kept word is whole


def test_fit_lines_drops_whole_lines_and_orphaned_headings() -> None:
    from slmactor.logic.text.strings import count_tokens_chars, fit_lines

    text = "## Facts\n\nGotchas:\n- one item here\n- two items here\n\nConventions:\n- three"
    assert fit_lines(text, 1000) == text
    cut = fit_lines(text, count_tokens_chars(text) - 1)
    assert cut == "## Facts\n\nGotchas:\n- one item here\n- two items here"
    assert fit_lines(text, 0) == ""
    assert fit_lines("x" * 100, 5).endswith("…\n")  # not even one line fits: cut as before


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=10), st.integers(1, 120))
def test_fit_lines_keeps_a_prefix_of_whole_lines_within_budget(lines: list[str], budget: int) -> None:
    from slmactor.logic.text.strings import count_tokens_chars, fit_lines

    text = "\n".join(f"- {line}" for line in lines)
    out = fit_lines(text, budget)
    assert count_tokens_chars(out) <= budget or not out
    if out and "…" not in out[-2:]:
        assert text.startswith(out) and (len(out) == len(text) or text[len(out)] == "\n")
