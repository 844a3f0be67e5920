"""Editing a JSON document's text in place: the result always parses to the value asked for,
what did not change keeps its bytes, and adding entries then taking them out gives back the
original file byte for byte, whatever its indentation, line endings and comments."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.text import jsonedit

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8))
keys = st.text("abcdefgh_\"\\é", min_size=1, max_size=6)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(keys, inner, max_size=4)),
                      max_leaves=12)
documents = st.dictionaries(keys, values, max_size=5)
indents = st.sampled_from([None, 2, 4, "\t", 1])


def _text(doc: Any, indent: Any, crlf: bool, final_newline: bool) -> str:
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    if crlf:
        text = text.replace("\n", "\r\n")
    return text + ("\r\n" if crlf else "\n") * final_newline


def _with_additions(doc: dict[str, Any], extra: dict[str, Any], items: list[Any]) -> dict[str, Any]:
    new: dict[str, Any] = json.loads(json.dumps(doc))
    for value in new.values():
        if isinstance(value, list):
            value.extend(items)
            break
    for key, value in extra.items():
        new.setdefault(key, value)
    return new


@settings(derandomize=True, max_examples=150, deadline=None)
@given(documents, st.dictionaries(keys, values, max_size=3), st.lists(values, max_size=2), indents,
       st.booleans(), st.booleans())
def test_adding_then_removing_gives_back_the_bytes(doc: dict[str, Any], extra: dict[str, Any],
                                                    items: list[Any], indent: Any, crlf: bool,
                                                    final_newline: bool) -> None:
    text = _text(doc, indent, crlf, final_newline)
    new = _with_additions(doc, extra, items)
    edited = jsonedit.rewrite(text, new)
    assert json.loads(edited) == new
    assert edited.endswith("\n") == text.endswith("\n")
    assert jsonedit.rewrite(edited, doc) == text


@settings(derandomize=True, max_examples=150, deadline=None)
@given(documents, documents, indents)
def test_any_change_gives_the_document_asked_for(old: dict[str, Any], new: dict[str, Any], indent: Any) -> None:
    text = _text(old, indent, False, True)
    assert json.loads(jsonedit.rewrite(text, new)) == new
    assert jsonedit.rewrite(text, old) == text  # no change, not a byte


@settings(derandomize=True, max_examples=100, deadline=None)
@given(documents, documents)
def test_the_parser_reads_what_json_reads(doc: dict[str, Any], other: dict[str, Any]) -> None:
    text = json.dumps([doc, other], indent=1)
    assert jsonedit.loads(text) == json.loads(text)


COMMENTED = """{
  // the user's note
  "a": 1, /* inline */
  "list": [
    "x" // last item
  ],
  "o": {"k": "v"} // trailing
}
"""


def test_comments_stay_where_they_were() -> None:
    doc = jsonedit.loads(COMMENTED, comments=True)
    assert doc == {"a": 1, "list": ["x"], "o": {"k": "v"}}
    new = {**doc, "list": ["x", "y"], "o": {"k": "v", "n": 2}, "added": True}
    edited = jsonedit.rewrite(COMMENTED, new, comments=True)
    assert jsonedit.loads(edited, comments=True) == new
    for piece in ("// the user's note", "/* inline */", '"x", // last item', "// trailing"):
        assert piece in edited
    assert '{"k": "v", "n": 2}' in edited  # a one-line object stays on one line
    assert jsonedit.rewrite(edited, doc, comments=True) == COMMENTED


@pytest.mark.parametrize(("text", "where"), [
    ('{"a": 1,}', "line 1 column 9"),  # trailing commas: refused, as strip-json-comments leaves them
    ('{"a": 1} x', "extra data"),
    ('{"a" 1}', "expected ':'"),
    ("{\n  /* open", "unterminated comment"),
])
def test_bad_documents_are_refused_with_where(text: str, where: str) -> None:
    with pytest.raises(ValueError, match=where):
        jsonedit.loads(text, comments=True)


def test_comments_are_an_error_unless_allowed() -> None:
    with pytest.raises(ValueError, match="expected"):
        jsonedit.loads('{"a": 1 // no\n}')
