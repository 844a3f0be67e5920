"""A memory block says each thing once: a fix learned as a gotcha, a convention and a lesson is
one line, a repeated line is dropped, and a heading left empty goes with it — by the keys and
fixes the renderers set on their items, never by reading the wording back (a renderer may word
its fix as it likes)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.block import (
    TITLE,
    BlockItem,
    bullet,
    heading,
    lines_as_items,
    plain,
    render,
    said_once,
)

PY = "`python3 greet.py` instead of `.venv/bin/python greet.py`"
MAKE = "`make -j1` instead of `make`"
ITEMS = [
    heading("semantic", "## What we know about this project", TITLE), plain("semantic", ""),
    heading("semantic", "Gotchas:"),
    bullet("semantic", f"- .venv/bin/python: No such file or directory — fix: {PY} (seen 2×)", fix=PY),
    bullet("semantic", f"- make: *** [all] Error 2 — fix: {MAKE} (seen 1×)", fix=MAKE),
    plain("semantic", ""), heading("semantic", "Conventions:"),
    bullet("semantic", f"- bash: a file or path did not exist — fixed by {PY}", fix=PY),
    plain("semantic", ""), heading("semantic", "## Lessons from past builds (apply these):", TITLE),
    bullet("semantic", f"- [error_pattern] When: bash: a file or path did not exist -> Do: {PY}",
           fix=PY),
    plain("episodic", ""), heading("episodic", "## Similar work done before", TITLE),
    bullet("episodic", "- ✓ Run greet.py"),
    bullet("episodic", f"  - hit: make: *** [all] Error 2 → fixed by {MAKE}", fix=MAKE),
    bullet("episodic", "- ✓ Run greet.py"),
]

def test_a_fix_is_said_once_and_empty_headings_go() -> None:
    out = render(said_once(ITEMS))
    assert out.count("`python3 greet.py` instead of") == 1 and out.count("`make -j1`") == 1
    assert "Conventions:" not in out and "## Lessons from past builds" not in out
    assert out.count("- ✓ Run greet.py") == 1
    assert out.startswith("## What we know about this project\n\nGotchas:\n")
    assert "## Similar work done before\n- ✓ Run greet.py" in out


def test_short_fixes_and_different_fixes_stay() -> None:
    items = [heading("semantic", "Gotchas:"), bullet("semantic", "- a failed — fix: retry", fix="retry"),
             bullet("semantic", "- b failed — fix: retry", fix="retry"),
             bullet("semantic", "- c — fix: `ls -la` instead of `ls -R`", fix="`ls -la` instead of `ls -R`")]
    assert said_once(items) == items


def test_the_same_fix_worded_otherwise_is_still_said_once() -> None:
    # Two renderers word one fix differently; the key they set is what is compared.
    items = [bullet("semantic", "- x — fix: run `uv sync` first", fix="uv sync first"),
             bullet("episodic", "  - hit: x ⇒ resolved: uv sync first", fix="uv sync first")]
    assert said_once(items) == items[:1]
    assert said_once([BlockItem("semantic", "- a", "k", True), BlockItem("semantic", "- b", "k", True)]) \
        == [BlockItem("semantic", "- a", "k", True)]


LINES = st.lists(st.sampled_from([
    "## Title", "Gotchas:", "Conventions:", "", "- x — fix: `python3 a.py` instead of `python a.py`",
    "- y — fixed by `python3 a.py` instead of `python a.py`", "- plain bullet", "- other bullet",
    "  - hit: e → fixed by `uv run pytest` instead of `pytest`", "text line",
]), max_size=30)


@settings(max_examples=300, derandomize=True)
@given(LINES)
def test_said_once_only_removes_and_is_idempotent(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    items = lines_as_items("semantic", text)
    once = said_once(items)
    assert said_once(once) == once
    out = render(once)
    kept = [line for line in out.splitlines() if line.strip()]
    assert all(line in text.splitlines() for line in kept)
    bullets = [" ".join(line.split()).lower() for line in kept if line.strip().startswith("- ")]
    assert len(bullets) == len(set(bullets))
