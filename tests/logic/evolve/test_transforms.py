"""Named argument transforms (SPEC S-10.4), mechanical JSON repair and transform inference."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.evolve.repair_json import json_cut_off, repair_json
from slmactor.logic.evolve.transforms import (
    TRANSFORMS,
    apply_transform,
    fits,
    infer_transform,
    strip_gutter,
)


def _apply(name: str, obj: dict[str, object]) -> tuple[dict[str, object], bool]:
    out, changed = apply_transform(name, json.dumps(obj))
    return json.loads(out), changed


@pytest.mark.parametrize(("old", "want"), [
    ("   42| code", "code"),
    ("42|code", "code"),
    ("\t7 | code", "code"),
    ("1| a\n2| b", "a\nb"),
])
def test_strip_line_number_prefix_shapes(old: str, want: str) -> None:
    out, changed = _apply("strip_line_number_prefix", {"old_str": old})
    assert changed and out["old_str"] == want


#: How real read tools print line 12 of a file: slmcode's ws_read, Claude Code's Read (current and
#: older versions), `cat -n` / `nl -ba` (six columns and a tab), `grep -n`, and `12: ` tools.
GUTTER_FORMATS = (
    lambda n: f"{n:>4}| ",
    lambda n: f"{n}|",
    lambda n: f"{n}\t",
    lambda n: f"{n:>6}\u2192",
    lambda n: f"{n:>6}\t",
    lambda n: f"{n}:",
    lambda n: f"{n}: ",
)


@pytest.mark.parametrize("gutter", GUTTER_FORMATS)
def test_strip_line_number_prefix_every_real_format(gutter: object) -> None:
    code = ["def f(x):", "\tif x:", "\t\treturn 1", "", "return 2"]
    numbered = "\n".join(gutter(12 + i) + line for i, line in enumerate(code))  # type: ignore[operator]
    out, changed = _apply("strip_line_number_prefix",
                          {"old_str": numbered, "new_str": numbered.replace("2", "3")})
    assert changed and out["old_str"] == "\n".join(code)
    # Tabs after a `12\t` gutter are the code's own indentation and stay.
    assert "\n\t\treturn 1\n" in str(out["old_str"])


@pytest.mark.parametrize("text", [
    "x | y",                           # a table cell, no number
    "12: value\n14: other",            # YAML-ish numbers that do not count up by one
    "  3| a\nplain line",              # only some lines carry a gutter
    "key: 1\n2: b",
    "a\tb",
])
def test_strip_line_number_prefix_leaves_text_without_a_consistent_gutter(text: str) -> None:
    assert strip_gutter(text) is None
    args = json.dumps({"old_str": text})
    assert apply_transform("strip_line_number_prefix", args) == (args, False)


#: Formats whose separator is an optional blank: a line that starts with a blank is ambiguous.
_OPTIONAL_BLANK = {0, 1, 5, 6}


@settings(derandomize=True, max_examples=300)
@given(lines=st.lists(st.text(st.characters(blacklist_characters="\n\r"), max_size=30),
                      min_size=1, max_size=8),
       start=st.integers(1, 5000), which=st.integers(0, len(GUTTER_FORMATS) - 1))
def test_strip_gutter_round_trips_every_format(lines: list[str], start: int, which: int) -> None:
    if which in _OPTIONAL_BLANK:
        lines = [line.lstrip(" ") for line in lines]
    numbered = "\n".join(GUTTER_FORMATS[which](start + i) + line for i, line in enumerate(lines))
    assert strip_gutter(numbered) == "\n".join(lines)


@settings(derandomize=True, max_examples=200)
@given(st.lists(st.text(st.characters(blacklist_characters="\n\r0123456789"), max_size=30),
                min_size=1, max_size=8))
def test_strip_gutter_never_touches_lines_without_a_number(lines: list[str]) -> None:
    assert strip_gutter("\n".join(lines)) is None


def test_strip_line_number_prefix_leaves_plain_pipes() -> None:
    args = json.dumps({"old_str": "x | y"})
    assert apply_transform("strip_line_number_prefix", args) == (args, False)


def test_strip_line_number_prefix_mirrors_new_str_only_with_a_gutter_h_s_4() -> None:
    out, changed = _apply("strip_line_number_prefix",
                          {"old_str": "3| a = 1", "new_str": "3| a = 2", "content": "1| keep"})
    assert changed and out == {"old_str": "a = 1", "new_str": "a = 2", "content": "1| keep"}
    # old_str has no gutter: new_str (a Markdown table row) is left alone.
    table = {"old_str": "| a | b |", "new_str": "1 | 2 |", "body": "| 1 | x |"}
    assert apply_transform("strip_line_number_prefix", json.dumps(table))[1] is False
    out, _ = _apply("strip_line_number_prefix", {"patch": "10|-x\n11|+y"})
    assert out["patch"] == "-x\n+y"
    out, _ = _apply("strip_line_number_prefix", {"patch": " 4 | a", "hunk": "5| b"})
    assert out == {"patch": "a", "hunk": "b"}


def test_trim_trailing_whitespace() -> None:
    out, changed = _apply("trim_trailing_whitespace",
                          {"old_str": "a  \nb\t\r\nc", "new_str": "d \n", "content": "e  "})
    assert changed and out == {"old_str": "a\nb\nc", "new_str": "d\n", "content": "e  "}
    assert _apply("trim_trailing_whitespace", {"old_str": "clean"})[1] is False


def test_unfence_code() -> None:
    fenced = "```python\ndef f():\n    return 1\n```"
    out, changed = _apply("unfence_code", {"content": fenced, "new_str": "```\nx\n```",
                                           "old_str": "no fence"})
    assert changed and out == {"content": "def f():\n    return 1", "new_str": "x",
                               "old_str": "no fence"}
    two = "```\na\n```\ntext\n```\nb\n```"
    assert _apply("unfence_code", {"body": two})[1] is False


ENVELOPE = ("*** Begin Patch\n*** Update File: app/cache.py\n@@\n def load(self):\n"
            "-    return self._cache\n+    return dict(self._cache)\n*** End Patch")


@pytest.mark.parametrize("tag", ["diff", "patch", ""])
def test_unfence_code_takes_a_patch_envelope_out_of_its_fence(tag: str) -> None:
    fenced = {"patch": f"```{tag}\n{ENVELOPE}\n```"}
    out, changed = _apply("unfence_code", fenced)
    assert changed and out == {"patch": ENVELOPE}
    assert fits("unfence_code", json.dumps(fenced))
    assert infer_transform(json.dumps(fenced), json.dumps({"patch": ENVELOPE})) == "unfence_code"


@pytest.mark.parametrize("args", [
    {"command": "```bash\npytest -q\n```"},  # a fenced shell command is the shell's business
    {"patch": ENVELOPE},
    {"patch": f"```diff\n{ENVELOPE}\n```\nand then\n```\nmore\n```"},
    {"path": f"```\n{ENVELOPE}\n```"},
])
def test_unfence_code_leaves_other_commands_and_fields_alone(args: dict[str, object]) -> None:
    assert _apply("unfence_code", args)[1] is False
    assert not fits("unfence_code", json.dumps(args))


def test_shrink_old_str() -> None:
    out, changed = _apply("shrink_old_str", {"old_str": "\n  def f():\n    x = 1\n    y = 2"})
    assert changed and out["old_str"] == "  def f():"
    assert _apply("shrink_old_str", {"old_str": "a\nb"})[1] is False


def test_set_replace_all() -> None:
    out, changed = _apply("set_replace_all", {"old_str": "x"})
    assert changed and out["replace_all"] is True
    assert _apply("set_replace_all", {"replace_all": True})[1] is False
    assert _apply("set_replace_all", {"replace_all": "yes"})[0]["replace_all"] is True


def test_claude_code_field_names_are_understood() -> None:
    out, changed = _apply("strip_line_number_prefix",
                          {"old_str": "  5| x = 1", "new_str": "  5| x = 2"})
    assert changed and out == {"old_str": "x = 1", "new_str": "x = 2"}


def test_unknown_unparsable_or_non_object_args_are_unchanged() -> None:
    assert apply_transform("no_such_transform", '{"a": 1}') == ('{"a": 1}', False)
    assert apply_transform("set_replace_all", "not json") == ("not json", False)
    assert apply_transform("set_replace_all", "[1, 2]") == ("[1, 2]", False)


def test_repair_json_transform() -> None:
    broken = "```json\n{'path': 'a.py', 'replace_all': True, 'n': None,}\n```"
    out, changed = apply_transform("repair_json", broken)
    assert changed and json.loads(out) == {"path": "a.py", "replace_all": True, "n": None}
    assert apply_transform("repair_json", '{"a": 1}') == ('{"a": 1}', False)
    assert apply_transform("repair_json", "no json here") == ("no json here", False)


@pytest.mark.parametrize(("text", "want"), [
    ('{"a": 1,}', {"a": 1}),
    ("{'a': 'it\\'s'}", {"a": "it's"}),
    ('{"a": [1, 2,], "b": {"c": false,},}', {"a": [1, 2], "b": {"c": False}}),
    ('Sure! Here it is: {"a": "x"} Hope that helps.', {"a": "x"}),
    ('{"a": "complete"', {"a": "complete"}),
    ('{"a": [1, {"b": "c"', {"a": [1, {"b": "c"}]}),
    ('{a: 1, b_2: "x",}', {"a": 1, "b_2": "x"}),
    ("{'q': 'say \"hi\"'}", {"q": 'say "hi"'}),
    ('{"a": True, "b": False, "c": None}', {"a": True, "b": False, "c": None}),
    ('{"a": "line\nbreak"}', {"a": "line\nbreak"}),
])
def test_repair_json_cases(text: str, want: object) -> None:
    fixed = repair_json(text)
    assert fixed is not None and json.loads(fixed) == want


def test_repair_json_gives_up_without_json() -> None:
    assert repair_json("hello") is None
    assert json_cut_off("hello") is False


@pytest.mark.parametrize("text", [
    '{"path": "a.go", "old_str": "x',            # cut mid-string
    '{"path": "a.py", "new_str": "de',   # cut mid-string (Claude Code's names)
    '{"a": [1, {"b": 2',                          # cut after a number (it may be cut too)
    '{"a": "x",',                                 # cut after a comma
    '{"a": "x", "b"',                             # cut after a key
    '{"a":',                                      # cut after a colon
    '{"a": [',                                    # cut after an opener
])
def test_cut_off_json_cannot_be_repaired(text: str) -> None:
    assert repair_json(text) is None
    assert json_cut_off(text) is True
    assert apply_transform("repair_json", text) == (text, False)


@pytest.mark.parametrize("text", [
    '{"a": 1,}', "{'a': 'b'}", '{a: 1}', '{"a": "x"', '{"a": {"b": true}', '{"a": [1, 2]',
])
def test_syntax_slips_are_not_cut_off(text: str) -> None:
    assert json_cut_off(text) is False
    assert repair_json(text) is not None


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=6), st.text(min_size=1, max_size=12),
                       min_size=1, max_size=4), st.data())
def test_any_call_cut_inside_a_string_is_never_repaired(obj: dict[str, str], data: st.DataObject) -> None:
    text = json.dumps(obj)
    # Cut strictly inside the last value string: after its opening quote, before its closing one
    # (found from the end: the value itself may hold `: "`).
    value_start = len(text) - 1 - len(json.dumps(list(obj.values())[-1])) + 1
    cut = data.draw(st.integers(value_start, len(text) - 3))
    damaged = text[:cut]
    assert repair_json(damaged) is None
    assert json_cut_off(damaged)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=4),
    max_leaves=12,
)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _JSON, max_size=5))
def test_repair_json_round_trips_and_undoes_trailing_commas(obj: dict[str, object]) -> None:
    text = json.dumps(obj)
    assert repair_json(text) == text
    if obj:
        damaged = text[:-1] + ",}"
        fixed = repair_json(damaged)
        assert fixed is not None and json.loads(fixed) == obj


def test_infer_transform_finds_the_fix() -> None:
    failed = json.dumps({"path": "a.py", "old_str": "  12| x = 1", "new_str": "  12| x = 2"})
    fixed = json.dumps({"path": "a.py", "old_str": "x = 1", "new_str": "x = 2"})
    assert infer_transform(failed, fixed) == "strip_line_number_prefix"
    assert infer_transform('{"old_str": "a", "path": "p"}',
                           '{"path": "p", "old_str": "a", "replace_all": true}') == "set_replace_all"
    assert infer_transform("{'a': 1,}", '{"a": 1}') == "repair_json"


def test_infer_transform_declines_other_fixes() -> None:
    assert infer_transform('{"old_str": "a"}', '{"old_str": "b"}') is None
    assert infer_transform('{"old_str": "a"}', '{"old_str": "a"}') is None
    assert infer_transform('{"old_str": "a"}', "not json") is None
    assert len(TRANSFORMS) == 6


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("{}[]\"',:  \n\tabcTrueFalseNone0123`")), max_size=60))
def test_repair_json_never_raises_and_only_returns_json(text: str) -> None:
    fixed = repair_json(text)
    if fixed is not None:
        json.loads(fixed)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.sampled_from(TRANSFORMS + ("unknown",)), st.text(max_size=80))
def test_apply_transform_never_raises(name: str, args: str) -> None:
    out, changed = apply_transform(name, args)
    if changed:
        assert isinstance(json.loads(out), dict)
    else:
        assert out == args


def test_pathologically_deep_args_do_not_raise() -> None:
    deep = "[" * 100_000
    assert repair_json(deep) is None
    assert apply_transform("repair_json", deep) == (deep, False)
    assert apply_transform("set_replace_all", deep) == (deep, False)
    assert infer_transform(deep, '{"a": 1}') is None


def test_codex_read_file_gutter_is_stripped() -> None:
    # Codex's read_file numbers lines `L{n}: ` (openai/codex codex-rs/core/src/tools/handlers/
    # read_file.rs); a model that copies them into old_string misses the file.
    args = json.dumps({"path": "a.py", "old_str": "L10: def f():\nL11:     return 1",
                       "new_str": "def f():\n    return 2"})
    out, changed = apply_transform("strip_line_number_prefix", args)
    assert changed and json.loads(out)["old_str"] == "def f():\n    return 1"
    # `L` alone or a word starting with L is no gutter.
    plain = json.dumps({"old_str": "Lines: 3\nLabel: x", "new_str": "y"})
    assert apply_transform("strip_line_number_prefix", plain) == (plain, False)


def test_gutters_inside_unified_diff_hunks_are_stripped() -> None:
    diff = ("--- a/x.py\n+++ b/x.py\n@@ -10,2 +10,2 @@\n"
            " 10\tdef f():\n-11\t    return 1\n+11\t    return 2")
    out, changed = apply_transform("strip_line_number_prefix", json.dumps({"patch": diff}))
    assert changed
    assert json.loads(out)["patch"] == ("--- a/x.py\n+++ b/x.py\n@@ -10,2 +10,2 @@\n"
                                       " def f():\n-    return 1\n+    return 2")
    clean = json.dumps({"patch": "@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3"})
    assert apply_transform("strip_line_number_prefix", clean)[1] is False
