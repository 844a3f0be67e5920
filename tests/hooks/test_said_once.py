"""Said once: a session is given each line of memory once (the session start the block, a later
prompt only what is new), and the context it was given is never stored back as its task."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.hooks.session import told_entry, told_lines, untold, without_injected

BLOCK = ("## What we know about this project\n- tests run with make test\n- the API is in api/\n\n"
         "## Similar work done before\n- ✓ fix the flaky upload test\n")


def test_a_prompt_gets_only_the_lines_the_session_was_not_given() -> None:
    told = told_lines([told_entry(BLOCK, 1.0)])
    assert untold(BLOCK, told) == ""
    later = BLOCK + "- ✓ add retries to the client\n"
    assert untold(later, told) == "## Similar work done before\n- ✓ add retries to the client\n"


def test_context_echoed_in_a_prompt_is_not_the_task() -> None:
    told = told_lines([told_entry(BLOCK, 1.0)])
    # Gemini CLI's headless mode prepends the session start's context (HTML-escaped) to the prompt.
    echoed = BLOCK.replace("<", "&lt;") + "\nrename the config loader"
    assert without_injected(echoed, told) == "rename the config loader"
    wrapped = "<system-reminder>todo list empty</system-reminder>\nrename the config loader"
    assert without_injected(wrapped, set()) == "rename the config loader"


@settings(derandomize=True, max_examples=80)
@given(st.lists(st.text(alphabet="abc #-\n", max_size=30), max_size=8), st.text(alphabet="xyz ", max_size=20))
def test_a_users_own_words_survive(block_lines: list[str], own: str) -> None:
    block = "\n".join(block_lines)
    told = told_lines([told_entry(block, 1.0)])
    kept = without_injected(block + "\n" + own, told)
    assert own.strip() in kept
    assert untold(block, told) == ""  # everything given once is not given again
