"""`normalize` stays idempotent when a quoted payload spans lines.

A quoted string holding a real newline was kept on the first pass (the quote pattern stopped at
line ends) and, once the lines were joined, became `<str>` on the second: `normalize` of its own
output changed it, though its docstring promises a fixed point.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.failures.normalize import normalize

WORDS = st.text(alphabet="abcdefgh _=()", min_size=1, max_size=30)


def test_a_multi_line_quoted_payload_is_a_payload() -> None:
    once = normalize('error: "a\nb" failed')
    assert once == "error: <str> failed"
    assert normalize(once) == once
    assert normalize("old_str `def f():\n    return 1` did not appear verbatim in x.py") == (
        "old_str <str> did not appear verbatim in <path>")


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.sampled_from("'\"`"), st.lists(WORDS, min_size=2, max_size=4), WORDS, WORDS)
def test_normalize_is_idempotent_with_newlines_inside_quotes(
        quote: str, body: list[str], before: str, after: str) -> None:
    message = f"{before} {quote}{chr(10).join(body)}{quote} {after}"
    once = normalize(message)
    assert normalize(once) == once
