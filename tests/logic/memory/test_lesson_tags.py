"""Stack tags (SPEC C-9): the strict task reader and the broad text reader."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.lesson_tags import (
    KNOWN_TAGS,
    TAG_SYNONYMS,
    infer_tags_from_text,
    infer_task_tags,
    normalize_tags,
)


def test_the_known_tag_list_and_synonym_map_are_the_specs() -> None:
    assert len(KNOWN_TAGS) == 54
    for tag in ("python", "golang", "mv3", "phpunit", "wiring", "package", "click", "flat"):
        assert tag in KNOWN_TAGS
    assert len(TAG_SYNONYMS) == 23
    assert TAG_SYNONYMS["aiosqlite"] == {"python", "sqlite", "asyncio"}
    assert TAG_SYNONYMS["uvicorn"] == {"python", "fastapi"}
    assert TAG_SYNONYMS["manifest_v3"] == {"browser", "extension", "chrome", "mv3"}
    assert TAG_SYNONYMS["redis"] == frozenset() and TAG_SYNONYMS["ascii"] == frozenset()


def test_task_tags_are_literal_known_words() -> None:
    assert infer_task_tags("Build a Python Flask REST API") == {"python", "flask", "build"}
    # strict: no synonyms, no extension hints
    assert infer_task_tags("async IRC server with uvicorn, edit main.py") == set()
    assert infer_task_tags("Rust/Cargo CLI") == {"rust", "cargo"}


def test_text_tags_add_synonyms_and_extension_hints() -> None:
    assert infer_tags_from_text("async IRC server with websocket fanout") == {"python", "asyncio"}
    assert infer_tags_from_text("use aiosqlite") == {"aiosqlite", "python", "sqlite", "asyncio"}
    assert infer_tags_from_text("run tsc on src/app.tsx") == {"typescript", "react"}
    assert infer_tags_from_text("tsconfig.json strict mode") == {"typescript"}
    assert infer_tags_from_text("edit src/main.rs") == {"rust"}
    assert infer_tags_from_text("cmd/server/main.go panics") == {"go"}
    assert infer_tags_from_text("tests/test_api.py fails") == {"python"}
    assert infer_tags_from_text("a pytest fixture") == {"pytest", "python"}
    assert infer_tags_from_text("wp_query loop") == {"php", "wordpress"}


def test_an_extension_must_end_its_word() -> None:
    # The seed matched substrings: `.pyc`, `.tsv` and `.gofmt` counted as Python, TS and Go.
    assert infer_tags_from_text("delete stale __pycache__/x.pyc files") == set()
    assert infer_tags_from_text("load results.tsv") == set()


def test_normalize_tags() -> None:
    assert normalize_tags([" Flask", "python", "flask", 3, "", "Browser Extension"]) == [
        "browser_extension", "flask", "python"]


@settings(derandomize=True, max_examples=200)
@given(st.text())
def test_task_tags_are_a_subset_of_text_tags(text: str) -> None:
    # Found by this test: `REVIEW_` was a review task for the strict reader, not the broad one.
    strict = infer_task_tags(text)
    assert strict <= KNOWN_TAGS
    assert strict <= infer_tags_from_text(text)


def test_underscore_words_count_whole_and_in_parts() -> None:
    assert infer_tags_from_text("code_review of the wp_query loop") >= {"review", "php", "wordpress"}
    assert infer_task_tags("REVIEW_") <= infer_tags_from_text("REVIEW_") == {"review"}
