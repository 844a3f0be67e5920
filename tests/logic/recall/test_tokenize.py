"""Tokenizer and path tokens of the ranker (SPEC S-3.2, S-3.3) and the plural/acronym repairs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.recall.rank import RankOptions
from slmactor.logic.recall.tokenize import (
    SEED_TOKENIZER,
    STOPWORDS,
    TokenizerOptions,
    fold_plural,
    is_noise,
    path_parts,
    path_tokens,
    tokenize,
)

IMPROVED = TokenizerOptions(fold_plurals=True, acronym_plurals=True)


def test_spec_example_camel_case_acronym_and_whole_identifier() -> None:
    assert tokenize("HTTPClient.go") == ("http", "client", "httpclient", "go")


def test_lower_to_upper_boundary_keeps_pieces_then_whole() -> None:
    assert tokenize("parseJSONBody") == ("parse", "json", "body", "parsejsonbody")
    assert tokenize("getUserName") == ("get", "user", "name", "getusername")


def test_splits_on_every_non_letter_non_digit_including_underscore() -> None:
    assert tokenize("ws_edit: foo-bar/baz.qux") == ("ws", "edit", "foo", "bar", "baz", "qux")


def test_single_chunk_is_not_duplicated() -> None:
    assert tokenize("runner") == ("runner",)
    assert tokenize("HTTP") == ("http",)


def test_drops_short_pieces_and_stopwords() -> None:
    assert tokenize("a b cd the and x9 to it is") == ("cd", "x9")
    assert len(STOPWORDS) == 35


def test_unicode_letters_are_kept_and_lowercased() -> None:
    assert tokenize("Größe ändern: Straße") == ("größe", "ändern", "straße")


def test_seed_rule_cuts_acronym_plural_and_repair_keeps_it() -> None:
    assert tokenize("URLs") == ("ur", "ls", "urls")
    assert tokenize("URLs", IMPROVED) == ("url",)
    assert tokenize("HTTPClients", IMPROVED) == ("http", "client", "httpclient")


def test_path_tokens_spec_example() -> None:
    assert path_parts("pkg/loop/runner.go") == ["pkg", "loop", "runner.go", "runner", "go"]
    assert path_tokens("pkg/loop/runner.go") == ["pkg", "loop", "runner", "go", "runner", "go"]


def test_path_tokens_backslashes_and_blank() -> None:
    assert path_parts("  src\\app\\main.py ") == ["src", "app", "main.py", "main", "py"]
    assert path_parts("   ") == []
    assert path_parts("Makefile") == ["Makefile"]
    assert path_parts(".gitignore") == [".gitignore"]


@pytest.mark.parametrize(
    ("plural", "singular"),
    [
        ("tests", "test"),
        ("files", "file"),
        ("retries", "retry"),
        ("dependencies", "dependency"),
        ("classes", "class"),
        ("fixes", "fix"),
        ("patches", "patch"),
        ("pushes", "push"),
        ("caches", "cache"),
        ("status", "status"),
        ("class", "class"),
        ("analysis", "analysis"),
        ("bus", "bus"),
        ("urls", "url"),
        ("changes", "change"),
    ],
)
def test_fold_plural(plural: str, singular: str) -> None:
    assert fold_plural(plural) == singular


def test_folding_is_applied_to_documents_and_queries_alike() -> None:
    assert tokenize("Fix failing tests", IMPROVED) == ("fix", "failing", "test")
    assert tokenize("uses", IMPROVED) == ()  # folds onto the stopword "use"


def test_numbers_are_noise() -> None:
    assert tokenize("(#1234)") == ("1234",)
    assert is_noise("1234")
    assert not is_noise("py3")


@settings(derandomize=True, max_examples=300)
@given(st.text(max_size=80))
def test_tokens_are_lowercase_long_enough_and_not_stopwords(text: str) -> None:
    for options in (TokenizerOptions(), IMPROVED):
        for token in tokenize(text, options):
            assert token == token.lower()
            assert len(token) >= 2
            assert token not in STOPWORDS
            assert all(ch.isalnum() for ch in token)


def test_whole_path_term_is_the_files_identity() -> None:
    opts = TokenizerOptions(whole_paths=True)
    assert path_tokens("./src/Parser.py", opts)[-1] == "path:src/parser.py"
    assert path_tokens("src\\parser.py", opts)[-1] == "path:src/parser.py"
    assert "path:src/parser.py" not in path_tokens("src/parser.py")  # not in seed mode
    assert path_tokens("  ", opts) == []
    # tokenize never produces it, so it only ever matches the same path
    assert all(":" not in t for t in tokenize("path:src/parser.py", opts))


def _reference_tokenize(text: str, options: TokenizerOptions) -> tuple[str, ...]:
    """S-3.2 written plainly: chunk, camel-split every chunk, lowercase, fold, filter."""
    import re

    out: list[str] = []
    for chunk in re.findall(r"[^\W_]+", text):
        pieces: list[str] = []
        start = 0
        for i in range(1, len(chunk)):
            c, prev = chunk[i], chunk[i - 1]
            if not c.isupper():
                continue
            nxt_lower = i + 1 < len(chunk) and chunk[i + 1].islower()
            if prev.islower() or (prev.isupper() and nxt_lower and not (
                    options.acronym_plurals and i + 2 == len(chunk) and chunk[-1] == "s")):
                pieces.append(chunk[start:i])
                start = i
        pieces.append(chunk[start:])
        words = [p.lower() for p in pieces] + ([chunk.lower()] if len(pieces) > 1 else [])
        for word in words:
            if options.fold_plurals:
                word = fold_plural(word)
            if len(word) >= 2 and word not in STOPWORDS:
                out.append(word)
    return tuple(out)


@settings(derandomize=True, max_examples=400)
@given(st.text(alphabet=st.sampled_from(list("aAbBsSzZ09_-. /ıİßℍǅ")) | st.characters(),
               max_size=60))
def test_fast_paths_equal_the_plain_tokenizer(text: str) -> None:
    for options in (TokenizerOptions(), IMPROVED):
        assert tokenize(text, options) == _reference_tokenize(text, options)
        assert tokenize(text * 3, options) == _reference_tokenize(text * 3, options)  # uncached


# --- plural folding over a word list ----------------------------------------------

_PAIRS_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "words" / "plurals.txt"
PAIRS = [tuple(line.split()) for line in _PAIRS_FILE.read_text(encoding="utf-8").splitlines()
         if line.strip() and not line.startswith("#")]
_DEFAULT = RankOptions().tokenizer
_WORDS = {w.lower() for pair in PAIRS for w in pair}


def test_the_word_list_is_pairs() -> None:
    assert len(PAIRS) > 200 and all(len(pair) == 2 for pair in PAIRS)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.sampled_from(PAIRS))
def test_a_plural_folds_onto_its_singular_and_never_onto_a_non_word(pair: tuple[str, str]) -> None:
    singular, plural = pair
    folded = tokenize(plural, _DEFAULT)
    assert folded == tokenize(singular, _DEFAULT)
    assert all(token in _WORDS for token in folded), (plural, folded)
    # A task that says the plural finds the file named after the singular, and the other way.
    if folded:
        assert folded[-1] in path_tokens(f"src/{singular}.py", _DEFAULT)
        assert tokenize(singular, _DEFAULT)[-1] in path_tokens(f"src/{plural}.py", _DEFAULT)


def test_the_folds_the_issue_found() -> None:
    assert fold_plural("cookies") == "cookie"
    assert fold_plural("aliases") == "alias" and fold_plural("alias") == "alias"
    assert fold_plural("statuses") == "status" and fold_plural("cases") == "case"


def test_glue_words_are_stop_words_by_default_only() -> None:
    text = "load config as JSON via the loader, by default"
    assert tokenize(text, _DEFAULT) == ("load", "config", "json", "loader", "default")
    assert "as" in tokenize(text, SEED_TOKENIZER) and "via" in tokenize(text, SEED_TOKENIZER)
