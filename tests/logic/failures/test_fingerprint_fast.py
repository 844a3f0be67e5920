"""The fingerprint fast paths give exactly the answers of the slow ones they replace.

* Every placeholder pattern in `normalize.placeholders` is skipped when its *hint* is absent; a
  hint must be a necessary condition (whenever the pattern matches, the hint is found), never a
  heuristic.  Checked on texts built from the characters and fragments those patterns care about.
* The quote-led `_QUOTED` and digit-led `_NUMBER` patterns match exactly where the look-behind-led
  forms did; `_DOTTED_FILE` and `_bare_files` replace exactly the dotted tokens `_bare_file`
  replaced, `_posix_paths` what `_POSIX_PATH` replaced; the possessive / literal-led forms of `_URL`, `_HEX_ADDR`, `_HASH`, `_PREFIXED_ID`,
  `_LONG_ID` and `_DURATION` match exactly where the backtracking forms did.
* `RuleTable.first` returns the class of the first rule whose `matches` is true, as trying each
  rule in order does.
* `_by_line` (line-local patterns applied only to the lines their hint finds) equals the
  substitution over the whole text.
* `squash` (str.split instead of a regex, an ASCII shortcut for the byte cut) and
  `diagnose.contains_ignorecase` (lowercase substrings) equal the regex forms.
* `_NOISE_LINE` (alternatives arranged to be entered on their first character) matches the same
  lines as the plain alternation.
* `fingerprint._fingerprint`, `normalize._prepared` and `diagnose._diagnosis` (slots filled
  directly) make what the dataclass constructors make.
* `classify.tokens_of` (a byte translation and a split) finds the runs the token regex finds.
* The re.ASCII twins `placeholders` uses on ASCII text match there as the Unicode patterns do.
* The possessive line patterns of `diagnose` match as their backtracking forms.
* `fingerprint.salient_text` returns a single part without squashing it again, as the squash did.
"""

from __future__ import annotations

import re
import unittest.mock
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.failures import diagnose as dg
from slmactor.logic.failures import fingerprint as fpm
from slmactor.logic.failures import normalize as nz
from slmactor.logic.failures.classify import (
    AGENT_RULES,
    NEEDLE_RULES,
    NeedleRule,
    RuleTable,
    tokens_of,
)
from slmactor.logic.text.strings import cut_bytes

FRAGMENTS = [
    "0", "1", "7", "42", "404", "2026", "-", "--", "_", ":", ".", "/", "\\", " ", "\n", "\t", "#",
    "*", "a", "f", "z", "e", "x", "0x", "ms", "s", "h", "µs", "min", "line", "lines", "col",
    "column", "pos", "char", "byte", "offset", "t", "z", "req", "request", "sk", "ws", "org",
    "chatcmpl", "toolu", "key", "user", "://", "http", "status", "error code", "'", '"', "`", "‘",
    "’", "“", "”", "<", ">", "<path>", "file ", "(", ")", ",", "é", "٣", "deadbeef", "abcdef012345",
    "550e8400", "e29b", "10.0.0.1", "12:34:56", "2026-11-29", ".py", ".pyi", ".c", ".tar", ".gz",
    "ty", "a.b", "x.rs", ".java", "-x", "@", "req_", "sess-", "a1b2c3d4e5f6", "1.5", "ns", "hours",
    "sec", "toolu_01", "0123456789abcdef", "_9", "*", "0x1f", "a0x1", "<", "..", "-.", "x.py.bak",
    "~", "+", "//", "</", ">/", "~/", "./", "../", "/usr/bin", "a/b/", 'file "<path>", ', "line#",
    "character", "position",
]
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)

# Each pattern with the condition `placeholders` checks before it (copied from there).
HINTED: list[tuple[re.Pattern[str], Callable[[str], object]]] = [
    (nz._TIMESTAMP, lambda t: nz._TIMESTAMP_HINT.search(t)),
    (nz._CLOCK, lambda t: nz._CLOCK_HINT.search(t)),
    (nz._URL, lambda t: "://" in t),
    (nz._UUID, lambda t: nz._UUID_HINT.search(t)),
    (nz._HEX_ADDR, lambda t: "0x" in t),
    (nz._IP, lambda t: nz._IP_HINT.search(t)),
    (nz._HASH, lambda t: nz._HASH_HINT.search(t)),
    (nz._PREFIXED_ID, nz._prefixed_id_hint),
    (nz._LONG_ID, lambda t: nz._LONG_ID_HINT.search(t)),
    (nz._WINDOWS_PATH, lambda t: "\\" in t),
    (nz._POSIX_PATH, lambda t: "/" in t),
    (nz._LINE_WORD, lambda t: ("line" in t or "col" in t or "pos" in t or "char" in t
                               or "byte" in t or "offset" in t)),
    (nz._COLON_NUMBER, lambda t: ":" in t),
    (nz._DURATION, lambda t: nz._DURATION_HINT.search(t)),
    (nz._DOTTED_FILE, lambda t: nz._DOTTED_FILE_HINT.search(t)),
    (nz._TSC, lambda t: "<path>(" in t),
    (nz._QUOTED, lambda t: "'" in t or '"' in t or "`" in t or "‘" in t or "“" in t),
    (nz._FILE_LINE, lambda t: 'file "<path>", ' in t),
]


@settings(derandomize=True, max_examples=600, deadline=None)
@given(texts)
def test_every_placeholder_hint_is_necessary(text: str) -> None:
    for pattern, hint in HINTED:
        if pattern.search(text):
            assert hint(text), (pattern.pattern, text)
    if nz._QUOTED.sub(nz._quoted, text) != text:  # some quoted payload is replaced
        assert nz._QUOTED_PAYLOAD_HINT.search(text), text


# Runs of letters and digits of every length around the id patterns' thresholds (7 and 12).
run_texts = st.lists(st.sampled_from(["a", "f", "z", "0", "9", "00", "aaaaa", "aaaaaa", "a1b2c3",
                                      "٣", "é", "_", "-", " ", ".", "\n", "*"]),
                     max_size=24).map("".join)


@settings(derandomize=True, max_examples=1500, deadline=None)
@given(run_texts)
def test_id_hints_are_necessary_on_alphanumeric_runs(text: str) -> None:
    for pattern, hint in HINTED:
        if pattern.search(text):
            assert hint(text), (pattern.pattern, text)


def test_id_hints_on_every_short_run() -> None:
    # Every run of letters `a`/`g` and digits up to 13 long, alone and between spaces.
    import itertools

    for n in range(6, 14):
        for run in map("".join, itertools.product("a0g", repeat=n) if n <= 8 else
                       itertools.product("a0", repeat=n)):
            for text in (run, f" {run} "):
                for pattern, hint in HINTED:
                    if pattern.search(text):
                        assert hint(text), (pattern.pattern, text)


# The prefixed-id hint as one pattern led by the class of both separators.
_PLAIN_PREFIXED_ID_HINT = re.compile(r"[_-](?:" + "|".join(
    rf"(?<=(?:{'|'.join(p for p in nz._ID_PREFIXES if len(p) == n)})[_-])"
    for n in sorted({len(p) for p in nz._ID_PREFIXES})) + ")")


prefix_texts = st.lists(st.sampled_from([*nz._ID_PREFIXES, "_", "-", "x", " ", "1", "\n", "é"]),
                       max_size=8).map("".join)


@settings(derandomize=True, max_examples=600, deadline=None)
@given(st.one_of(texts, prefix_texts))
def test_prefixed_id_hint_is_the_plain_one(text: str) -> None:
    assert nz._prefixed_id_hint(text) == (_PLAIN_PREFIXED_ID_HINT.search(text) is not None), text


def test_hints_on_known_matches() -> None:
    for text in ("at 2026-11-29t10:00:00z", "12:34:56", "uuid 550e8400-e29b-41d4-a716-446655440000",
                 "from 10.0.0.1:80", "commit deadbeef1", "commit 1deadbeef", "req_abc1",
                 "sess-*", "k9x2abcdefghij", "line 3", "line\n3", "5\nms", "took 12 µs"):
        for pattern, hint in HINTED:
            if pattern.search(text):
                assert hint(text), (pattern.pattern, text)


# The body may span lines (normalize.py says why: stopping at a line end would leave the quote
# for the next pass once `squash` joined the lines).
_OLD_QUOTED = re.compile(r"(?<!\w)(['\"`‘“])([^'\"`’”]{0,200})(['\"`’”])(?!\w)")
_OLD_NUMBER = re.compile(r"(?<![\w<.])\d+(?:\.\d+)*(?![\w>])")
# The plain (backtracking, look-behind-led) forms the possessive / led patterns replaced.
_PLAIN_FORMS = [
    (nz._URL, re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>)\]}]+")),
    (nz._HEX_ADDR, re.compile(r"\b0x[0-9a-f]+\b")),
    (nz._HASH, re.compile(r"\b(?=[0-9]*[a-f])(?=[a-f]*[0-9])[0-9a-f]{7,}\b")),
    (nz._PREFIXED_ID, re.compile(r"\b(?:req|request|msg|chatcmpl|run|call|toolu|org|sk|sess|"
                                 r"trace|span|resp|user|proj|ws|key)[_-][a-z0-9_*-]*[0-9*]"
                                 r"[a-z0-9_*-]*")),
    (nz._LONG_ID, re.compile(r"\b(?=(?:[a-z]*\d){2})(?=\d*[a-z])[a-z0-9]{12,}\b")),
    (nz._DURATION, re.compile(r"(?<![\w<])\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds?|m|"
                              r"mins?|minutes?|h|hrs?|hours?)\b")),
]


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(m.span(), m.groups()) for m in pattern.finditer(text)]


@settings(derandomize=True, max_examples=600, deadline=None)
@given(texts)
def test_led_patterns_match_like_the_look_behind_led_ones(text: str) -> None:
    assert _spans(nz._QUOTED, text) == _spans(_OLD_QUOTED, text)
    assert _spans(nz._NUMBER, text) == _spans(_OLD_NUMBER, text)
    for fast, plain in _PLAIN_FORMS:
        assert _spans(fast, text) == _spans(plain, text), plain.pattern
    # Templates written as functions.
    assert nz._LINE_WORD.sub(nz._line_word, text) == nz._LINE_WORD.sub(r"\1\2<line>", text)
    assert nz._FILE_LINE.sub("file <path>, ", text) == nz._FILE_LINE.sub(r"file \1, ", text)
    # Bare file names: the extension look-behind replaces what the callback on every dotted
    # token replaced, and nothing else.
    assert nz._DOTTED_FILE.sub("<path>", text) == nz._DOTTED.sub(nz._bare_file, text)
    assert nz._bare_files(text) == nz._DOTTED.sub(nz._bare_file, text)
    assert nz._posix_paths(text) == nz._POSIX_PATH.sub("<path>", text)


@pytest.mark.parametrize("text", [
    "key sk-**** was rejected", "req_abc*", "user_x9 and sess-a_b-9z", "request_id: req_011cvbq1",
    "run-abc", "toolu_01abc", "chatcmpl-9aa", "ws_", "org-*", "12 ms, 1.5s, 3 hours", "5\nms", "3 m",
    "http://a.b/c d", "x+y.z-1://q", "1://", "commit deadbeef1 and 1234567 and abcdefa",
    "k9x2abcdefghij a1b2c3d4e5f6 a1bcdefghijkl 12345678901234", "abc_a1b2c3d4e5f6g",
])
def test_possessive_forms_on_known_cases(text: str) -> None:
    for fast, plain in _PLAIN_FORMS:
        assert _spans(fast, text) == _spans(plain, text), (plain.pattern, text)


NEEDLE_WORDS = sorted({w for rule in (*AGENT_RULES, *NEEDLE_RULES) for n in rule.needles
                       for w in [n, *n.split(), n[:4], n[-4:]]})
needle_texts = st.lists(st.one_of(st.sampled_from(NEEDLE_WORDS), st.sampled_from(FRAGMENTS)),
                        max_size=12).map(" ".join).map(str.lower)
needle_texts_tight = st.lists(st.sampled_from(NEEDLE_WORDS + ["", "x", "_", "9"]),
                              max_size=8).map("".join).map(str.lower)


def _sequential(rules: tuple[NeedleRule, ...], text: str) -> str:
    tokens = tokens_of(text)
    for rule in rules:
        if rule.matches(text, tokens):
            return rule.cls
    return ""


@settings(derandomize=True, max_examples=500, deadline=None)
@given(st.one_of(needle_texts, needle_texts_tight))
def test_rule_table_finds_the_first_matching_rule(text: str) -> None:
    for rules in (AGENT_RULES, NEEDLE_RULES):
        expected = _sequential(rules, text)
        assert RuleTable(rules).first(text) == expected, text
        assert RuleTable(rules, index_tokens=True).first(text) == expected, text


def test_rule_table_on_every_needle_alone_and_in_pairs() -> None:
    needles = [n for rule in (*AGENT_RULES, *NEEDLE_RULES) for n in rule.needles]
    tables = [(RuleTable(rules, index_tokens=index), rules)
              for rules in (AGENT_RULES, NEEDLE_RULES) for index in (False, True)]
    for i, a in enumerate(needles):
        for text in (f"zz {a} zz", a, f"x{a}x", f"{a} {needles[(i * 7 + 3) % len(needles)]}",
                     f"{needles[(i * 11 + 5) % len(needles)]}\n{a}"):
            for table, rules in tables:
                assert table.first(text) == _sequential(rules, text), text


SPACES = [" ", "\t", "\n", "\u00a0", "\u2028", "\x1c", "\u3000", "  "]


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS + SPACES + ["ü", "€", "𝄞"]), max_size=80).map("".join),
       st.integers(min_value=-2, max_value=120))
def test_squash_is_the_regex_collapse_and_byte_cut(text: str, limit: int) -> None:
    expected = cut_bytes(nz._SPACES.sub(" ", text).strip(), limit).rstrip()
    assert nz.squash(text, limit) == expected


CASE_FRAGMENTS = ["Segmentation Fault", "CORE dumped", "core  dumped", "ſegmentation fault",
                  "No Module Named", "cannot find MODULE", "library stub", "K", "é", " ", "x"]


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(CASE_FRAGMENTS), max_size=6).map("".join))
def test_contains_ignorecase_is_the_ignorecase_search(text: str) -> None:
    for pattern, words in ((dg._SEGV, dg._SEGV_WORDS), (dg._DEPENDENCY, dg._DEPENDENCY_WORDS)):
        assert dg.contains_ignorecase(text, pattern, words) == (pattern.search(text) is not None)


def test_case_folds_to_ascii_is_complete() -> None:
    # Every code point (surrogates too) that matches an ASCII letter or space case-insensitively,
    # or whose lowercase holds an ASCII character, is listed.
    every = "".join(map(chr, range(128, 0x110000)))
    matching = set(re.findall("[a-z ]", every, re.IGNORECASE))
    lowering = {c for c in every if any(ord(x) < 128 for x in c.lower())}
    assert matching | lowering <= set(dg.CASE_FOLDS_TO_ASCII)
    # ... which covers the words, all lowercase ASCII letters and spaces.
    for word in dg._SEGV_WORDS + dg._DEPENDENCY_WORDS:
        assert re.fullmatch("[a-z ]+", word)


CASE_TEXTS = CASE_FRAGMENTS + ["\u0130", "\u0131", "\u017f", "\u212a", "ü", "Σ", "ß", "ﬀ"]


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(CASE_TEXTS), max_size=8).map("".join))
def test_contains_ignorecase_on_non_ascii_text(text: str) -> None:
    for pattern, words in ((dg._SEGV, dg._SEGV_WORDS), (dg._DEPENDENCY, dg._DEPENDENCY_WORDS)):
        assert dg.contains_ignorecase(text, pattern, words) == (pattern.search(text) is not None)


def test_ascii_case_insensitivity_is_plain_lowercasing() -> None:
    # The premise of contains_ignorecase, for every pair of ASCII characters.
    for p in map(chr, range(128)):
        for c in map(chr, range(128)):
            matched = re.fullmatch(re.escape(p), c, re.IGNORECASE) is not None
            assert matched == (c.lower() == p.lower()), (p, c)


BY_LINE: list[tuple[re.Pattern[str], str, Callable[[str], object]]] = [
    (nz._HASH, "<hash>", nz._HASH_HINT.search),
    (nz._PREFIXED_ID, "<id>", nz._prefixed_id_hint),
    (nz._LONG_ID, "<id>", nz._LONG_ID_HINT.search),
]


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.lists(texts, min_size=1, max_size=6).map("\n".join))
def test_line_by_line_substitution_equals_the_whole_text_one(text: str) -> None:
    with unittest.mock.patch.object(nz, "BY_LINE_MIN_CHARS", 0):
        for pattern, repl, hint in BY_LINE:
            assert nz._by_line(pattern, repl, text, hint) == pattern.sub(repl, text), pattern.pattern


@pytest.mark.parametrize("message", [
    "c." * 4000, ".c" * 4000, "c.c-" * 2000, "a.py" * 2000, "x/" * 4000, "/a" * 4000,
    "a" * 8000 + "/", "1a" * 4000, "0x" * 4000, "req_" * 2000, "http://" * 1000,
])
def test_fast_paths_answer_long_runs_of_path_characters(message: str) -> None:
    # Each run of path or file-name characters is walked once (a walk per extension or slash
    # was quadratic); how long it takes is `python -m bench fingerprint`'s "fast paths" row.
    from slmactor.logic.failures.fingerprint import analyze

    fp = analyze("tool", message, "python")
    assert fp.id.startswith("fp_") and len(fp.norm) <= 300


# The noise-line alternation as first written (each form as it reads; `_NOISE_LINE` arranges the
# same forms so that each alternative is entered only on its first character).
_PLAIN_NOISE_LINE = re.compile(
    r"""^(?:
        \s*traceback\ \(most\ recent\ call\ last\):?\s*$
      | during\ handling\ of\ the\ above\ exception.*$
      | the\ above\ exception\ was\ the\ direct\ cause.*$
      | \s+at\ \S.*$
      | \s*\.\.\.\ \d+\ more\s*$
      | \s+\d+:\ +\S.*$
      | stack\ backtrace:\s*$
      | note:\ (?:some\ details\ are\ omitted|run\ with\ `rust_backtrace).*$
      | node\.js\ v[\d.]+\s*$
      | \s*[-+]?\d*\s*\|.*$
      | \s*[\^~]+[\s^~]*$
      | error:\ aborting\ due\ to.*$
      | for\ more\ information\ about\ this\ error.*$
      | (?:found|success:)\ \d+\ errors?\ in\ .*$
      | \d+\ (?:errors?|warnings?)(?:\ generated)?\.?\s*$
      | collect2:\ error:\ ld\ returned.*$
      | =+\ .*\ =+\s*$ | =+\s*$
      | !+\ .*\ !+\s*$
      | platform\ \S+\ --\ python\ .*$
      | (?:rootdir|plugins|cachedir|configfile|testpaths):\ .*$
      | collect(?:ed|ing)\ \d+\ items?.*$
      | \S+\ [.fesxp]+\s+\[\s*\d+%\]\s*$
      | _+\ .*\ _+\s*$ | (?:_\ )+_?\s*$
      | require\ stack:\s*$
    )""",
    re.VERBOSE,
)
NOISE_FRAGMENTS = [
    " ", "  ", "\t", "\u00a0", "\x1c", "\n", "traceback (most recent call last)", ":", "):", "at ",
    "at", "x", "f", "e", "s", "p", "...", "... ", "3", "42", "٣", " more", "|", " |", "-", "+", "^",
    "~", "=", "== ", "!", "! ", "_", "_ ", "__ ", "%]", "[", "[ ", "50", "%", "]", " errors",
    " error", " warning", " warnings", " generated", ".", "during handling of the above exception",
    "the above exception was the direct cause", "stack backtrace:", "note: ",
    "some details are omitted", "run with `rust_backtrace", "node.js v", "1.2", "error: aborting due to",
    "for more information about this error", "found ", "success: ", " in ", "collect2: error: ld returned",
    "platform ", " -- python ", "rootdir: ", "plugins: ", "cachedir: ", "configfile: ", "testpaths: ",
    "collected ", "collecting ", " items", " item", "require stack:", "tests/test_a.py ", ".f",
    "fesxp", " [100%]", "3: ", "   3 | code", "a x", " [1%]", "12 ",
]


noise_lines = st.tuples(st.sampled_from(["", "", " ", "  ", "\t", "\u00a0 "]),
                        st.lists(st.sampled_from(NOISE_FRAGMENTS), max_size=6)).map(
    lambda t: t[0] + "".join(t[1]))


@settings(derandomize=True, max_examples=3000, deadline=None)
@given(noise_lines)
def test_noise_line_matches_like_the_plain_alternation(line: str) -> None:
    assert (nz._NOISE_LINE.match(line) is None) == (_PLAIN_NOISE_LINE.match(line) is None), line


@pytest.mark.parametrize("line", [
    " ^", "^ ~", "  ~~~ ^", " ... 42 more", "... 42 more", "  3 | x", "3 |", "-3|", " +|", " |", "|",
    "a x [ 1%]", "tests/a.py .fexsp  [100%]", "x f [50%] ", " 12: core::x", "12 errors generated.",
    "3 warning", "== a ==", "=== ", "===", "! a !", "_ _ _", "__ a __", "_",
    "  traceback (most recent call last):", "found 2 errors in 1 file", "success: 0 errors in 3 files",
    "collected 3 items", "node.js v18.2.0", "  at foo (x.js:1:2)", "at x",
])
def test_noise_line_on_known_lines(line: str) -> None:
    assert (nz._NOISE_LINE.match(line) is None) == (_PLAIN_NOISE_LINE.match(line) is None), line


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=8), min_size=8, max_size=8))
def test_fingerprint_maker_is_the_constructor(values: list[str]) -> None:
    # `analyze` fills the slots itself; every field must come out as the constructor sets it (a
    # field added to Fingerprint but not to `_fingerprint` stays unset: getattr raises).
    made = fpm._fingerprint(*values)
    built = fpm.Fingerprint(*values[:7], explain=values[7])
    assert [getattr(made, f) for f in fpm.Fingerprint.__slots__] == [
        getattr(built, f) for f in fpm.Fingerprint.__slots__]
    assert made == built and hash(made) == hash(built)


TOKEN_FRAGMENTS = ["a", "z", "0", "9", "_", "-", " ", "\n", ".", "A", "Z", "é", "ß", "٣", "\u00a0",
                   "\x80", "\xff", "\ud800", "𝄞", "old_str", "x1", "__"]


@settings(derandomize=True, max_examples=600, deadline=None)
@given(st.one_of(st.text(max_size=40),
                 st.lists(st.sampled_from(TOKEN_FRAGMENTS), max_size=20).map("".join)))
def test_tokens_of_is_the_token_regex(text: str) -> None:
    # Byte translation and split, against the regex scan it replaced.
    from slmactor.logic.failures.classify import _TOKEN

    assert tokens_of(text) == frozenset(_TOKEN.findall(text))


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["(", ")", "status", "Status", " code", "HTTP", ": ", " ", "429",
                                 "x", "\t"]), max_size=10).map("".join))
def test_status_suffix_needs_a_parenthesis(text: str) -> None:
    # `_exception` strips the status suffix only from a message holding "(".
    if dg._STATUS_SUFFIX.search(text):
        assert "(" in text


ASCII_FRAGMENTS = [f for f in FRAGMENTS if f.isascii()] + ["\x1c", "\x1f", "\x0b", "\x0c", "\r",
                                                           "5\x1cms", "line\x1d3", "A", "_"]


@settings(derandomize=True, max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(ASCII_FRAGMENTS), max_size=30).map("".join))
def test_ascii_twins_match_like_the_unicode_patterns_on_ascii_text(text: str) -> None:
    assert len(nz._ASCII_FORMS) == len(nz._UNICODE_FORMS)
    for unicode_form, ascii_form in zip(nz._UNICODE_FORMS, nz._ASCII_FORMS, strict=True):
        assert _spans(ascii_form, text) == _spans(unicode_form, text), unicode_form.pattern


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.text(max_size=8), st.lists(st.text(max_size=8), max_size=3).map(tuple),
       st.lists(st.text(max_size=8), max_size=3).map(tuple))
def test_prepared_and_diagnosis_makers_are_the_constructors(text: str, lines: tuple[str, ...],
                                                            more: tuple[str, ...]) -> None:
    # Slots filled directly, as the dataclass constructors fill them (every slot: getattr raises
    # on one left unset).
    for made, built in ((nz._prepared(text, lines, more), nz.Prepared(text, lines, more)),
                        (dg._diagnosis(text, lines, text), dg.Diagnosis(text, lines, text))):
        assert [getattr(made, f) for f in type(built).__slots__] == [
            getattr(built, f) for f in type(built).__slots__]
        assert made == built and hash(made) == hash(built)


# The diagnose line patterns as first written (lazy or backtracking runs) and their possessive forms.
_PLAIN_LINE_PATTERNS = [
    (dg._EXC_IN, re.compile(r"^((?:[A-Za-z_][\w$]*\.)*[A-Z][\w$]*)(?::|$)")),
    (dg._EXC_LINE, re.compile(r"^((?:[A-Za-z_][\w$]*\.)*[A-Z][\w$]*)(?: \[[\w-]+\])?(?::\s*(.*))?$")),
    (dg._DIAG, re.compile(r"^(?:[A-Za-z]:[\\/])?(?:[^\s:][^:\s]*?):\d+(?::\d+)?:\s*"
                          r"(?:(fatal error|error|warning|note)\s*:\s*)?(.+)$")),
    (dg._SHELL, re.compile(r"^(?:[^:\n]+: ){0,2}line \d+: (.+)$")),
    (dg._ZSH, re.compile(r"^(?:zsh|\(eval\)|\(anon\))(?::[\w.-]+)?:\d+: (.+)$")),
]
LINE_FRAGMENTS = ["Error", "error", "Foo", "foo", "É", "é", "x", "_", "$", "1", "42", ".", ":", ": ",
                  " ", "\t", "\n", "[E1]", " [e-1]", "[", "]", "line ", "line 3: ", "main.c", ":12",
                  ":3:", " error: ", "warning", "note", "fatal error", "C:\\", "c:/", "a.B", "Bar",
                  "zsh", "(eval)", "(anon)", "cd", "-"]


@settings(derandomize=True, max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(LINE_FRAGMENTS), max_size=10).map("".join))
def test_possessive_line_patterns_match_like_the_plain_ones(line: str) -> None:
    for fast, plain in _PLAIN_LINE_PATTERNS:
        assert _spans(fast, line) == _spans(plain, line), (plain.pattern, line)
        fast_match, plain_match = fast.match(line), plain.match(line)
        assert (fast_match and fast_match.groups()) == (plain_match and plain_match.groups())


@pytest.mark.parametrize("line", [
    "x\nFoo: line 3: y", "script.sh: line 3: foo: command not found", "line 12: x", "a: b: line 1: c",
    "main.c:3:5: error: x", "C:\\a\\b.c:3: warning: y", "a:1:2:3: msg", "a b:1: c", ":1: x",
    "foo.Bar: baz", "foo.bar.Baz", "Foo [E1]: x", "Foo [e-1]", "foo.Bar.baz: x", "É: x", "Error",
])
def test_possessive_line_patterns_on_known_lines(line: str) -> None:
    for fast, plain in _PLAIN_LINE_PATTERNS:
        fast_match, plain_match = fast.match(line), plain.match(line)
        assert (fast_match and fast_match.groups()) == (plain_match and plain_match.groups()), line


def _plain_salient_text(diagnosis: dg.Diagnosis, norm: str, source: str) -> str:
    # `salient_text` as first written: the parts always joined and squashed.
    parts: list[str] = []
    for line in diagnosis.lines:
        text = norm if source and line == source else nz.squash(nz.placeholders(line.lower()), 300)
        if text and text not in parts:
            parts.append(text)
    return nz.squash(" | ".join(parts), 300) if parts else norm


SALIENT_FRAGMENTS = [*FRAGMENTS, "\ud800", "  ", " \ud800 ", "é" * 40, "x" * 90, "\u3000"]


@settings(derandomize=True, max_examples=600, deadline=None)
@given(st.lists(st.lists(st.sampled_from(SALIENT_FRAGMENTS), max_size=12).map("".join),
                max_size=3))
def test_salient_text_is_the_plain_join(lines: list[str]) -> None:
    diagnosis = dg.Diagnosis("compile_error", tuple(lines), "test")
    source = lines[0] if lines else ""
    norm = nz.normalize(source)
    assert fpm.salient_text(diagnosis, norm, source) == _plain_salient_text(diagnosis, norm, source)
    assert fpm.salient_text(diagnosis, norm) == _plain_salient_text(diagnosis, norm, "")


@pytest.mark.parametrize("line", ["a \ud800 b " + "x" * 400, "\ud800 abc " + "é" * 300,
                                  "a \ud800 b", "x" * 400, "é" * 200 + " a", "\ud800" * 200])
def test_salient_text_on_lines_the_byte_cut_changes(line: str) -> None:
    diagnosis = dg.Diagnosis("compile_error", (line,), "test")
    norm = nz.normalize(line)
    assert fpm.salient_text(diagnosis, norm) == _plain_salient_text(diagnosis, norm, "")
