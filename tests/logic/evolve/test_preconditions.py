"""Preconditions of the named transforms: what a failed call must show for a transform
to be its repair, so one failure class can hold several repairs without applying the wrong one."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.evolve.transforms import fits, repair_for, strip_gutter

_LINE = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
                max_size=30)


def edit(old: str, new: str = "y", **extra: object) -> str:
    return json.dumps({"path": "/src/a", "old_str": old, "new_str": new, **extra})


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["", "\t", "\t\t", "    "]), _LINE).map("".join),
                min_size=1, max_size=5),
       st.lists(_LINE, min_size=1, max_size=5), st.integers(1, 9999))
def test_lines_the_model_added_without_a_gutter_survive(old: list[str], added: list[str],
                                                        start: int) -> None:
    numbered = [f"{start + i}\t{line}" for i, line in enumerate(old)]  # Claude Code's Read
    out = repair_for("strip_line_number_prefix", edit("\n".join(numbered),
                                                      "\n".join(numbered + added)))
    assert out is not None
    got = json.loads(out)
    assert got["old_str"] == "\n".join(old)  # tab-indented code keeps its tabs
    for line, result in zip(added, got["new_str"].split("\n")[len(old):], strict=True):
        if not line[:1].isdigit() and not line[:1].isspace():
            assert result == line


def test_a_markdown_table_read_by_claude_code_keeps_its_pipes() -> None:
    # Claude Code's Read numbers each line `N\t`; a table row's own `|` follows the tab.
    numbered = "    12\t| name | size |\n    13\t|------|------|\n    14\t| a    | 1    |"
    assert strip_gutter(numbered) == "| name | size |\n|------|------|\n| a    | 1    |"


@pytest.mark.parametrize("text", ["42", "7\n8", "x = 1\n  12| y = 2", "  12| a\n  14| b"])
def test_numbers_alone_or_a_broken_listing_are_no_gutter(text: str) -> None:
    assert strip_gutter(text) is None
    assert not fits("strip_line_number_prefix", edit(text))


def test_a_gutter_and_trailing_whitespace_are_different_repairs() -> None:
    numbered = edit("     7\tx = 1\n     8\t\n     9\ty = 2", "x = 3")
    # The blank line's gutter ends in a tab: that is a gutter, not trailing whitespace.
    assert fits("strip_line_number_prefix", numbered)
    assert not fits("trim_trailing_whitespace", numbered)
    spaced = edit("x = 1  \ny = 2", "x = 3")
    assert fits("trim_trailing_whitespace", spaced) and not fits("strip_line_number_prefix", spaced)
    assert fits("trim_trailing_whitespace", edit("     7\tx = 1  \n     8\ty = 2"))  # both


def test_fences_json_slips_and_tokens() -> None:
    assert fits("unfence_code", edit("```go\nx := 1\n```"))
    assert not fits("unfence_code", edit("x := 1"))
    assert fits("repair_json", '{"a": "b",}') and not fits("repair_json", '{"a": "b"}')
    assert not fits("repair_json", '{"a": "b", "c": "cut of')  # cut off, not a slip
    assert fits("set_replace_all", edit("defaultRetries"))
    assert not fits("set_replace_all", edit("defaultRetries", replace_all=True))
    assert not fits("set_replace_all", edit("if err != nil {\n\treturn err"))  # needs context
    assert not fits("no_such_transform", edit("x"))
    assert repair_for("set_replace_all", edit("x", replace_all=True)) is None
