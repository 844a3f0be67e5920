"""`salient_line`: the line of a failure that says what went wrong."""

from __future__ import annotations

import pytest

from slmactor.logic.failures.fingerprint import salient_line


@pytest.mark.parametrize(("message", "want"), [
    (("Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    f()\n"
     "ValueError: bad value 3"), "ValueError: bad value 3"),
    ("Exit code 1\n\nFAILED tests/test_a.py::test_x - AssertionError: assert 1 == 2\n1 failed",
     "FAILED tests/test_a.py::test_x"),
    ("Exit code 2\nsomething broke here", "something broke here"),
    ("ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim in /w/a.py.",
     "No replacement was performed, old_str `x` did not appear verbatim in /w/a.py."),
    ("<tool_use_error>String to replace not found in file.\nString: foo</tool_use_error>",
     "String to replace not found in file."),
    ("src/main.rs:3:5: error[E0425]: cannot find value `x` in this scope",
     "error[E0425]: cannot find value `x` in this scope"),
    ("Exit code 1", "Exit code 1"),  # nothing better to say
    ("", ""),
])
def test_salient_line(message: str, want: str) -> None:
    assert salient_line(message) == want
