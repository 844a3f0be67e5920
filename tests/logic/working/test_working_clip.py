"""The hot path's fast clipping is byte-for-byte the shared helpers' clipping (S-0.6)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from slmactor.logic.text.strings import clip, first_line
from slmactor.logic.working.fastclip import clip_fast, first_line_fast

# Whitespace and line breaks of every kind splitlines()/strip() know, plus multi-byte letters.
_ALPHABET = st.sampled_from(
    list("ab é€😀 \t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029") + ["\ud800"]
)
_TEXT = st.one_of(st.text(max_size=400), st.text(alphabet=_ALPHABET, max_size=700))


@settings(derandomize=True, max_examples=400, deadline=None)
@given(text=_TEXT, limit=st.integers(min_value=-2, max_value=260))
@example(text=" " * 300 + "x" * 20, limit=10)
@example(text="\n" * 400 + "late line", limit=160)
@example(text="é" * 100, limit=7)
def test_clip_fast_equals_clip(text: str, limit: int) -> None:
    assert clip_fast(text, limit) == clip(text, limit)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(text=_TEXT, limit=st.integers(min_value=-2, max_value=260))
@example(text=" " * 300 + "x" * 20 + "\nnext", limit=10)
@example(text="\n" * 400 + "late line\nnext", limit=160)
@example(text="a\r\nb", limit=160)
@example(text="😀" * 80 + "\n", limit=7)
def test_first_line_fast_equals_first_line(text: str, limit: int) -> None:
    assert first_line_fast(text, limit) == first_line(text, limit)
