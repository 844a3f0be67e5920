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
