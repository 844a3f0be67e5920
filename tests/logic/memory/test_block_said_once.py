"""A memory block says each thing once: a fix learned as a gotcha, a convention and a lesson is
one line, a repeated line is dropped, and a heading left empty goes with it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.block import said_once

BLOCK = """## What we know about this project

Gotchas:
- .venv/bin/python: No such file or directory — fix: `python3 greet.py` instead of `.venv/bin/python greet.py` (seen 2×)
- make: *** [all] Error 2 — fix: `make -j1` instead of `make` (seen 1×)

Conventions:
- bash: a file or path did not exist — fixed by `python3 greet.py` instead of `.venv/bin/python greet.py`

## Lessons from past builds (apply these):
- [error_pattern] When: bash: a file or path did not exist -> Do: `python3 greet.py` instead of `.venv/bin/python greet.py`

## Similar work done before
- ✓ Run greet.py
  - hit: make: *** [all] Error 2 → fixed by `make -j1` instead of `make`
- ✓ Run greet.py
"""


def test_a_fix_is_said_once_and_empty_headings_go() -> None:
    out = said_once(BLOCK)
    assert out.count("`python3 greet.py` instead of") == 1 and out.count("`make -j1`") == 1
    assert "Conventions:" not in out and "## Lessons from past builds" not in out
    assert out.count("- ✓ Run greet.py") == 1
    assert out.startswith("## What we know about this project\n\nGotchas:\n")
    assert "## Similar work done before\n- ✓ Run greet.py" in out


def test_short_fixes_and_different_fixes_stay() -> None:
    text = "Gotchas:\n- a failed — fix: retry\n- b failed — fix: retry\n- c — fix: `ls -la` instead of `ls -R`\n"
    assert said_once(text) == text


LINES = st.lists(st.sampled_from([
    "## Title", "Gotchas:", "Conventions:", "", "- x — fix: `python3 a.py` instead of `python a.py`",
    "- y — fixed by `python3 a.py` instead of `python a.py`", "- plain bullet", "- other bullet",
    "  - hit: e → fixed by `uv run pytest` instead of `pytest`", "text line",
]), max_size=30)


@settings(max_examples=300, derandomize=True)
@given(LINES)
def test_said_once_only_removes_and_is_idempotent(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    out = said_once(text)
    assert said_once(out) == out
    kept = [line for line in out.splitlines() if line.strip()]
    assert all(line in text.splitlines() for line in kept)
    bullets = [" ".join(line.split()).lower() for line in kept if line.strip().startswith("- ")]
    assert len(bullets) == len(set(bullets))
