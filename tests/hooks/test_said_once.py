"""Said once: a session is given each item of memory once (the session start the block, a later
prompt only what is new) — the items' keys compared, as their renderers set them — and the
context it was given is never stored back as its task."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.hooks.session import key_digest, told_entry, told_keys, told_lines, without_injected
from slmactor.logic.memory.block_items import (
    TITLE,
    BlockItem,
    bullet,
    heading,
    lines_as_items,
    plain,
    render,
    untold,
)

BLOCK = ("## What we know about this project\n- tests run with make test\n- the API is in api/\n\n"
         "## Similar work done before\n- ✓ fix the flaky upload test\n")


ITEMS = lines_as_items("semantic", BLOCK)


def _told(items: list[BlockItem]) -> set[str]:
    return told_keys([told_entry(render(items), 1.0, keys=[i.key for i in items if i.key])])


def test_a_prompt_gets_only_the_items_the_session_was_not_given() -> None:
    told = _told(ITEMS)
    assert untold(ITEMS, told, key_digest) == []
    later = [*ITEMS, bullet("episodic", "- ✓ add retries to the client")]
    assert render(untold(later, told, key_digest)) == (
        "## Similar work done before\n- ✓ add retries to the client\n")


def test_a_new_item_comes_with_its_sub_heading_whatever_its_wording() -> None:
    # The key is what the renderer set, not the words: a fix reworded is still told once.
    first = [heading("semantic", "## What we know", TITLE), heading("semantic", "Gotchas:"),
             BlockItem("semantic", "- x fails — fix: y", "gotcha:x", True)]
    reworded = [first[0], first[1], BlockItem("semantic", "- x fails -> use y", "gotcha:x", True),
                heading("semantic", "Commands:"), bullet("semantic", "- tests: make test")]
    assert render(untold(reworded, _told(first), key_digest)) == (
        "## What we know\nCommands:\n- tests: make test\n")
    assert untold([plain("working", "")], set()) == []


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
    items = lines_as_items("semantic", block)
    assert untold(items, _told(items), key_digest) == []  # given once is not given again
