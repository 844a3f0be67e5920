"""A rule learned on one harness's edit tool fits another's: the shared transforms read every
tool's arguments in one set of words (Gemini CLI's `allow_multiple` is their `replace_all`), and
what they produce goes back in the tool's own."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor import harnesses
from slmactor.logic.evolve.transforms import apply_transform, infer_transform

GEMINI = {"file_path": "/p/app.py", "old_string": "fetch_all", "new_string": "fetch_every"}


def test_gemini_replace_all_is_the_shared_replace_all_and_back() -> None:
    fixed = json.dumps({**GEMINI, "allow_multiple": True})
    # Read in the shared words, Gemini's fix is the transform a Claude Code fix taught.
    assert infer_transform(json.dumps(GEMINI), fixed) is None
    assert infer_transform(harnesses.canonical_args("replace", json.dumps(GEMINI)),
                           harnesses.canonical_args("replace", fixed)) == "set_replace_all"
    new_args, changed = apply_transform("set_replace_all", json.dumps(GEMINI))
    assert changed and json.loads(harnesses.localized_args("replace", new_args)) == json.loads(fixed)
    # Claude Code's Edit already says replace_all: nothing to translate.
    claude = json.dumps({**GEMINI, "replace_all": True})
    assert harnesses.canonical_args("Edit", claude) == claude


ARGS = st.dictionaries(st.sampled_from(["file_path", "old_string", "new_string", "allow_multiple", "x"]),
                       st.one_of(st.booleans(), st.text(max_size=5)), max_size=5)


@settings(max_examples=200, derandomize=True)
@given(st.one_of(ARGS.map(json.dumps), st.text(max_size=20)))
def test_translation_of_gemini_arguments_round_trips(text: str) -> None:
    # Gemini's `replace` never takes `replace_all`: its arguments go there and back unchanged,
    # and anything that is not a JSON object is left alone.
    there = harnesses.canonical_args("replace", text)
    back = harnesses.localized_args("replace", there)
    if there == text:
        assert back == text
    else:
        assert json.loads(back) == json.loads(text) and "allow_multiple" not in json.loads(there)
