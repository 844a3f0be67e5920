"""Recall of polar lessons (SPEC C-10) and their prompt form (C-11); H-C-3, H-C-10."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.lesson_recall import (
    DO_HEADER,
    DONT_HEADER,
    format_for_prompt,
    recall,
    render_within,
    score_lesson,
)
from slmactor.logic.memory.polar_lessons import PolarLesson
from slmactor.logic.text.strings import count_tokens_chars

NOW = 1_790_000_000.0
DAY = 86400.0
FLASK_TASK = "Build a Python Flask REST API"


def lesson(trigger: str, fix: str = "do it", **kw: object) -> PolarLesson:
    fields: dict[str, object] = {"ts": NOW, "type": "error_pattern", "trigger": trigger, "fix": fix}
    fields.update(kw)
    return PolarLesson(**fields)  # type: ignore[arg-type]


def test_the_score_is_the_seeds_formula() -> None:
    le = lesson("flask api route", fix="return json", confidence=0.5, used=3, ts=NOW - 1 * DAY)
    scored = score_lesson(le, {"flask", "api", "tests"}, set(), NOW)
    # keyword 2/3, recency 1/(1+1), confidence 0.5, used 0.3
    assert scored.score == pytest.approx(2 * 2 / 3 + 0.5 + 0.5 + 0.3)


def test_layer_1_drops_lessons_of_another_stack_and_keeps_untagged_ones() -> None:
    react = lesson("useEffect loop", tags=("typescript", "react"))
    flask = lesson("blueprint import", tags=("flask",))
    agnostic = lesson("commit small changes")
    got = [s.lesson for s in recall([react, flask, agnostic], FLASK_TASK, NOW)]
    assert react not in got and flask in got and agnostic in got
    # a task naming no stack filters nothing
    assert len(recall([react, flask, agnostic], "tidy the repository", NOW)) == 3


def test_a_heavily_used_rust_lesson_does_not_outrank_a_matching_flask_lesson() -> None:
    rust = lesson("borrow checker error on shared state", fix="wrap it in Arc<Mutex>",
                  confidence=1.0, used=50, source_task="Build a Rust CLI with cargo")
    rust_tagged = lesson("cargo build fails", confidence=1.0, used=50, tags=("rust",))
    flask = lesson("Flask app factory", fix="register blueprints in create_app",
                   tags=("flask", "python"), confidence=0.3)
    got = recall([rust, rust_tagged, flask], FLASK_TASK, NOW)
    assert got[0].lesson == flask
    assert rust_tagged not in [s.lesson for s in got]  # layer 1
    assert {s.lesson.trigger: s.decays for s in got}[rust.trigger] == ("source_task",)


def test_source_task_decay_uses_the_broad_reader_and_applies_to_tagged_lessons() -> None:
    # H-C-3's case: an IRC-server lesson recalled into unrelated tasks. "async IRC server"
    # names no known tag literally; only the synonyms (irc → python, asyncio) see its stack.
    irc = lesson("fan out messages with a queue per client", confidence=0.9, used=10,
                 source_task="async IRC server with websocket fanout", tags=("asyncio",))
    plain = score_lesson(irc, {"build", "a", "react", "app"}, {"react"}, NOW)
    assert plain.decays == ("source_task",)  # H-C-10: tagged lessons decay too, as documented
    undecayed = score_lesson(irc, {"x"}, {"python"}, NOW)
    assert undecayed.decays == ()
    assert plain.score == pytest.approx(
        score_lesson(irc, {"build", "a", "react", "app"}, set(), NOW).score / 5)


def test_content_tag_decay_halves_untagged_lessons_of_another_stack() -> None:
    ts_body = lesson("tsconfig.json paths", fix="set baseUrl")
    got = score_lesson(ts_body, {"python"}, {"python"}, NOW)
    assert got.decays == ("content_tags",)
    assert got.score == pytest.approx(score_lesson(ts_body, {"python"}, set(), NOW).score / 2)
    sourced = lesson("tsconfig.json paths", source_task="a python task")
    assert "content_tags" not in score_lesson(sourced, {"python"}, {"python"}, NOW).decays


def test_recall_limits_and_orders_and_filters_by_required_tags() -> None:
    lessons = [lesson(f"lesson {i}", confidence=i / 10, tags=("python",) if i % 2 else ())
               for i in range(10)]
    top = recall(lessons, "anything", NOW, limit=3)
    assert [s.lesson.trigger for s in top] == ["lesson 9", "lesson 8", "lesson 7"]
    tagged = recall(lessons, "anything", NOW, tags=["Python"])
    assert all("python" in s.lesson.tags for s in tagged) and len(tagged) == 5
    assert recall(lessons, "anything", NOW, limit=0) == []


def test_format_splits_do_and_dont_with_the_never_framing() -> None:
    do = lesson("vitest 0.34 + jsdom on Node 18", fix="pin vitest to ^1 in devDependencies")
    dont = lesson("f-string SQL with user input", fix="SQL injection", polarity="dont")
    assert format_for_prompt([]) == ""
    assert format_for_prompt([do, dont]) == (
        f"{DO_HEADER}\n"
        "- [error_pattern] When: vitest 0.34 + jsdom on Node 18 -> Do: pin vitest to ^1 in "
        "devDependencies\n"
        f"\n{DONT_HEADER}\n"
        "- NEVER: f-string SQL with user input (Reason: SQL injection)"
    )
    only_dont = format_for_prompt([dont])
    assert DO_HEADER not in only_dont and "NEVER: f-string" in only_dont
    assert "NEVER" not in format_for_prompt([do])


@settings(derandomize=True, max_examples=100)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=60), st.booleans()), max_size=12),
       st.integers(min_value=0, max_value=200))
def test_render_within_keeps_whole_lines_inside_the_budget(
        items: list[tuple[str, bool]], budget: int) -> None:
    lessons = [lesson(" ".join(t.split()) or "t", polarity="dont" if d else "do")
               for t, d in items]
    text, shown = render_within(lessons, budget)
    assert count_tokens_chars(text) <= max(budget, 0)
    assert shown == lessons[: len(shown)]
    assert text == format_for_prompt(shown)
    if len(shown) < len(lessons):
        assert count_tokens_chars(format_for_prompt(lessons[: len(shown) + 1])) > budget


def test_phase_words_do_not_make_two_stacks_the_same() -> None:
    # "Build a Rust CLI" and "Build a Python Flask REST API" share only the phase word `build`.
    rust_build = lesson("cargo features", tags=("rust", "build"))
    phase_only = lesson("keep builds reproducible", tags=("build",))
    got = [s.lesson for s in recall([rust_build, phase_only], FLASK_TASK, NOW)]
    assert got == [phase_only]  # phase-only tags count as untagged
    sourced = lesson("x", source_task="Build a Rust CLI")
    assert score_lesson(sourced, set(), {"python", "flask"}, NOW).decays == ("source_task",)
