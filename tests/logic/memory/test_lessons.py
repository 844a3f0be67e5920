"""Lessons (SPEC S-8): Markdown provenance, parsing, lessons → facts, adaptive selection."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.facts import FactBook
from slmactor.logic.memory.lessons import (
    FinishedTask,
    Lesson,
    append_bullets,
    append_global_block,
    extract_lessons,
    fact_from_lesson,
    fact_kind_for,
    first_sentence,
    join_memory_texts,
    json_lessons_to_markdown,
    lesson_subject,
    lessons_from_markdown,
    parse_markdown,
    recent_adaptive_memory,
    recent_adaptive_memory_for,
    record_facts,
    render_markdown,
    strip_provenance,
    trim_oldest_bullets,
)

NOW = 1_790_000_000.0
SEED_BULLET = (
    "- ⚠ Import cycle: pkg/graph must not import pkg/orchestrator "
    "<!-- slm task=T7 kind=failure at=2026-08-24T10:11:12Z -->"
)


def test_render_matches_the_seed_bullet() -> None:
    lesson = Lesson(
        "T7",
        "failure",
        "Import cycle: pkg/graph must not import pkg/orchestrator",
        "2026-08-24T10:11:12Z",
    )
    assert render_markdown([lesson]) == SEED_BULLET + "\n"


def test_glyphs_and_omitted_fields() -> None:
    md = render_markdown(
        [
            Lesson("", "convention", "use ruff", ""),
            Lesson("T 1", "success", "shipped", "2026-08-24T10:00:00+02:00"),
            Lesson("T--2", "odd kind", "other", ""),
            Lesson("", "", "   ", ""),
        ]
    )
    assert md.splitlines() == [
        "- ⚙ use ruff <!-- slm kind=convention -->",
        "- ✓ shipped <!-- slm kind=success at=2026-08-24T10:00:00+02:00 -->",
        "- • other",
    ]


def test_round_trip_keeps_offsets_verbatim() -> None:
    lessons = [
        Lesson("T3", "failure", "flaky fixture in tests/conftest.py", "2026-08-24T12:11:12+02:00"),
        Lesson("T4", "convention", "run `make lint` before push", "2026-08-24T10:11:12Z"),
        Lesson("", "success", "fixed it", ""),
    ]
    assert parse_markdown(render_markdown(lessons)) == lessons


@settings(derandomize=True, max_examples=300)
@given(
    st.builds(
        Lesson,
        st.from_regex(r"[A-Za-z0-9_.:-]{0,8}", fullmatch=True).filter(lambda s: "--" not in s),
        st.sampled_from(["success", "failure", "convention"]),
        st.text(min_size=1, max_size=80)
        .map(lambda s: " ".join(s.split()))
        .filter(lambda s: s and "<!-- slm " not in s and s[0] not in "⚠⚙✓•"),
        st.sampled_from(["", "2026-08-24T10:11:12Z", "2026-08-24T10:11:12+02:00"]),
    )
)
def test_render_parse_inverse_property(lesson: Lesson) -> None:
    assert parse_markdown(render_markdown([lesson])) == [lesson]


def test_parse_legacy_bullets_and_skips() -> None:
    lines = [
        "# Lessons",
        "",
        "Some prose that is not a bullet.",
        "- ⚠ legacy failure bullet",
        "* ⚙️ star bullet with a variation selector",
        "- ✓ ",
        "- plain bullet, no glyph",
        "- • dotted",
        "- text <!-- slm kind=failure",  # unclosed marker: no provenance
        "- a <!-- slm task=T1 --> b <!-- slm task=T2 kind=success -->",
    ]
    md = "\n".join(lines)
    assert parse_markdown(md) == [
        Lesson("", "failure", "legacy failure bullet", ""),
        Lesson("", "convention", "star bullet with a variation selector", ""),
        Lesson("", "", "plain bullet, no glyph", ""),
        Lesson("", "", "dotted", ""),
        Lesson("", "", "text <!-- slm kind=failure", ""),
        Lesson("T2", "success", "a <!-- slm task=T1 --> b", ""),
    ]


def test_strip_provenance() -> None:
    assert strip_provenance(SEED_BULLET) == (
        "- ⚠ Import cycle: pkg/graph must not import pkg/orchestrator"
    )
    assert strip_provenance("- plain  ") == "- plain  "


def test_lesson_from_request_dict() -> None:
    raw = {"task_id": " T1 ", "kind": "Failure", "text": " boom ", "at": 5}
    assert Lesson.from_dict(raw, "2026-01-01T00:00:00Z") == Lesson(
        "T1", "failure", "boom", "2026-01-01T00:00:00Z"
    )
    assert Lesson.from_dict({"at": "x"}).at == "x"


def test_first_sentence() -> None:
    assert first_sentence("Done.\nMore text.") == "Done."
    assert first_sentence(".leading dot then text") == ".leading dot then text"
    assert first_sentence("Fixed it! yes") == "Fixed it!"
    long = "x" * 200
    assert first_sentence(long) == "x" * 160 + "…"
    assert first_sentence("y" * 185 + ". tail") == "y" * 160 + "…"  # stop after byte 179
    assert first_sentence("a\nb") == "a b"


def test_extract_lessons() -> None:
    done = FinishedTask(
        "T7", "done", "Graph", "Added the walk. Then more.", "go test passes", "keep it small"
    )
    assert [(le.kind, le.text) for le in extract_lessons(done, "at")] == [
        ("success", "T7 (Graph): Added the walk."),
        ("convention", "Acceptance pattern that worked for T7: go test passes"),
        ("convention", "Human note honored on T7: keep it small"),
    ]
    blocked = FinishedTask("T8", "blocked", review="Reviewer says no. Because.")
    assert extract_lessons(blocked, "at") == [
        Lesson("T8", "failure", "Avoid repeating T8 failure: Reviewer says no.", "at")
    ]
    errored = FinishedTask("T9", "scoped", error="import cycle")
    assert extract_lessons(errored, "")[0].text == "Avoid repeating T9 failure: import cycle"
    assert extract_lessons(FinishedTask("T1", "active"), "") == []


def test_json_lessons_to_markdown() -> None:
    answer = 'Sure! {"lessons": [{"text": "use tabs", "kind": "failure"}, {"text": " "}, {"text": "b"}]} ok'
    md = json_lessons_to_markdown(answer, NOW)
    assert md.splitlines() == [
        "- ⚠ use tabs <!-- slm kind=failure at=2026-09-21T14:13:20Z -->",
        "- ⚙ b <!-- slm kind=convention at=2026-09-21T14:13:20Z -->",
    ]
    assert json_lessons_to_markdown('[{"text": "x"}]', NOW).startswith("- ⚙ x")
    assert json_lessons_to_markdown("no json here", NOW) == ""
    assert json_lessons_to_markdown("{broken", NOW) == ""


def test_lesson_subject_five_significant_words() -> None:
    assert lesson_subject("T7: The import cycle in pkg/graph is 3 times worse") == (
        "import cycle pkg graph times"
    )
    assert lesson_subject("a 1 to t12") == "a 1 to t12"
    assert lesson_subject("Ünïcode wörds matter") == "ünïcode wörds matter"


def test_fact_from_lesson() -> None:
    assert fact_kind_for("failure") == "gotcha" and fact_kind_for("success") == "convention"
    obs = fact_from_lesson(Lesson("T3", "failure", "Flaky fixture in conftest", ""), "run-42")
    assert obs is not None
    assert (obs.kind, obs.subject, obs.sources) == (
        "gotcha",
        "lesson: flaky fixture conftest",
        ("T3", "run-42"),
    )
    assert fact_from_lesson(Lesson("T3", "failure", "  ", ""), "r") is None


def test_record_facts_two_wordings_converge_and_sources_accumulate() -> None:
    book = FactBook()
    assert record_facts(None, [Lesson(text="x")], "r", NOW) == 0
    n = record_facts(
        book, [Lesson("T3", "failure", "Flaky fixture in conftest breaks CI", "")], "run-42", NOW
    )
    assert n == 1
    record_facts(
        book, [Lesson("T9", "failure", "flaky fixture in  conftest breaks CI", "")], "run-43", NOW
    )
    (fact,) = list(book)
    assert fact.support == 2
    assert fact.sources == ("T3", "run-42", "T9", "run-43")


def test_a_lesson_seen_twice_outranks_one_seen_once() -> None:
    book = FactBook()
    md = render_markdown([Lesson("T1", "convention", "Run make lint before every push", "")])
    lessons_from_markdown(book, md, "run-1", NOW)
    lessons_from_markdown(book, md, "run-2", NOW)
    lessons_from_markdown(
        book,
        render_markdown([Lesson("T2", "convention", "Prefer small pull requests", "")]),
        "run-2",
        NOW,
    )
    ranked = book.ranked(NOW)
    assert ranked[0].text == "Run make lint before every push"
    assert ranked[0].score(NOW) > ranked[1].score(NOW)


def test_a_contradicted_lesson_is_superseded() -> None:
    book = FactBook()
    old = Lesson(
        "T1", "convention", "Staging deploys run through the release script make deploy", ""
    )
    new = Lesson(
        "T5", "convention", "Staging deploys run through the release script tools/release.py", ""
    )
    record_facts(book, [old], "r1", NOW)
    record_facts(book, [new], "r2", NOW)
    record_facts(book, [new], "r3", NOW)
    (fact,) = list(book)
    assert fact.text == new.text


def test_global_memory_append_and_join() -> None:
    first = append_global_block("", "Run 42", "- ⚠ x", NOW)
    assert first == (
        "# SLMCode Global Memory\n\n## Lessons\n\n\n\n## Run 42 (2026-09-21T14:13:20Z)\n\n- ⚠ x\n"
    )
    second = append_global_block(first, "Run 43", "- ✓ y", NOW)
    assert second.startswith(first) and second.endswith(
        "## Run 43 (2026-09-21T14:13:20Z)\n\n- ✓ y\n"
    )
    assert join_memory_texts(["a", " ", "", "b"]) == "a\n\nb"
    md = append_bullets("", [Lesson("T1", "failure", "x", "")])
    assert md == "# Project memory\n\n## Lessons\n\n- ⚠ x <!-- slm task=T1 kind=failure -->\n"
    assert append_bullets("# Mine", [Lesson(text="y")]) == "# Mine\n- • y\n"


# --- the size budget: only the daemon's bullets are trimmed --------------------------------

USER_TEXT = "# Project memory\n\nMy notes: run `make lint` first.\n- ⚙ my own bullet, keep it\n"


def _ours(i: int) -> str:
    at = "2026-01-01T00:00:00Z"
    return render_markdown([Lesson(f"t{i}", "pitfall", f"lesson {i:03d} padded out", at)])


def test_the_oldest_daemon_bullets_go_first_and_the_users_text_stays() -> None:
    md = USER_TEXT + "".join(_ours(i) for i in range(50)) + "- * another of mine\n" + _ours(50)
    trimmed = trim_oldest_bullets(md, 1500)
    assert len(trimmed.encode()) <= 1500
    assert trimmed.startswith(USER_TEXT) and "- * another of mine\n" in trimmed
    assert "lesson 050" in trimmed and "lesson 000" not in trimmed
    assert trim_oldest_bullets(md, len(md.encode())) == md  # within budget: untouched


def test_a_global_block_goes_with_its_last_bullet() -> None:
    md = "# SLMCode Global Memory\n\n## Lessons\n"
    for run in range(3):
        md = append_global_block(md, f"Run {run}", _ours(run), NOW)
    trimmed = trim_oldest_bullets(md, len(md.encode()) - 1)
    assert "Run 0" not in trimmed and "lesson 000" not in trimmed
    kept = "# SLMCode Global Memory\n\n## Lessons\n"
    for run in (1, 2):
        kept = append_global_block(kept, f"Run {run}", _ours(run), NOW)
    assert trimmed == kept


def test_user_text_over_the_budget_keeps_it_and_the_newest_lesson() -> None:
    mine = "".join(f"- ⚙ hand-written {i}\n" for i in range(200))
    trimmed = trim_oldest_bullets(mine + _ours(1) + _ours(2), 100)
    assert trimmed == mine + _ours(2)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 999), st.sampled_from(
    ["- ⚙ mine", "* mine too", "prose", "", "## Heading", "- <!-- not a marker"])), max_size=60),
    st.integers(0, 4000))
def test_trimming_keeps_every_user_line_in_order(items: list[int | str], budget: int) -> None:
    lines = [_ours(x) if isinstance(x, int) else x + "\n" for x in items]
    md = "".join(lines)
    trimmed = trim_oldest_bullets(md, budget)
    user = [line for line in lines if isinstance(line, str) and "<!-- slm" not in line]
    kept = trimmed.splitlines(keepends=True)
    assert [line for line in kept if "<!-- slm" not in line] == user
    ours = [line for line in kept if "<!-- slm" in line]
    written = [line for line in lines if "<!-- slm" in line]
    assert ours == written[len(written) - len(ours):]  # the newest lessons, in order
    assert len(trimmed.encode()) <= budget or len(ours) <= 1 or trimmed == md


# --- adaptive selection (S-8.10) -----------------------------------------------------------

PROJECT_LINES = [
    "# Project memory",
    "- ⚠ Import cycle: pkg/graph must not import pkg/orchestrator <!-- slm task=T7 kind=failure at=2026-08-24T10:11:12Z -->",
    "- ⚙ Run make lint before pushing",
    "- ✓ Flaky fixture in tests/conftest.py fixed by pinning the seed",
    "- ⚙ Prefer small pull requests",
    "- ⚙ Run make lint before pushing",
]
PROJECT = "\n".join(PROJECT_LINES)
GLOBAL = "# SLMCode Global Memory\n## Lessons\n- ⚙ Never commit secrets\n"


def test_no_query_is_recency_shown_in_file_order() -> None:
    out = recent_adaptive_memory(PROJECT, GLOBAL, NOW)
    assert out.splitlines() == [
        "- global memory: ⚙ Never commit secrets",
        "- project memory: ⚠ Import cycle: pkg/graph must not import pkg/orchestrator",
        "- project memory: ⚙ Run make lint before pushing",
        "- project memory: ✓ Flaky fixture in tests/conftest.py fixed by pinning the seed",
        "- project memory: ⚙ Prefer small pull requests",
    ]


def test_relevant_lines_lead_and_nothing_is_filtered_by_keywords() -> None:
    # H-S-1: an import-cycle lesson has none of the old allow-list words and must still appear.
    out = recent_adaptive_memory_for("graph import cycle orchestrator", PROJECT, GLOBAL, NOW)
    lines = out.splitlines()
    assert lines[0].startswith("- project memory: ⚠ Import cycle")
    assert len(lines) == 5  # the rest follow by recency
    assert lines[1] == "- project memory: ⚙ Prefer small pull requests"


def test_a_query_without_hits_falls_back_to_pure_recency() -> None:
    out = recent_adaptive_memory_for("zebra quantum", PROJECT, GLOBAL, NOW)
    assert out.splitlines()[0] == "- project memory: ⚙ Prefer small pull requests"


def test_at_most_ten_whole_lines_within_the_byte_budget() -> None:
    project = "\n".join(f"- ⚙ lesson number {i} " + "word " * 20 for i in range(30))
    out = recent_adaptive_memory_for("", project, "", NOW)
    assert len(out.splitlines()) == 10
    assert out.splitlines()[-1].startswith("- project memory: ⚙ lesson number 29")
    small = recent_adaptive_memory_for("", project, "", NOW, max_bytes=300)
    assert len(small.encode()) <= 300
    assert all(line.endswith("word") for line in small.splitlines())  # never cut mid-line
    assert recent_adaptive_memory_for("", "- " + "x" * 2000, "", NOW) == ""


def test_empty_memory_is_empty() -> None:
    assert recent_adaptive_memory_for("anything", "", "", NOW) == ""


@pytest.mark.parametrize("prefix", ["- ", "* ", "+ ", "> ", "~ ", "!", "  -  "])
def test_leading_markers_are_trimmed_but_glyph_stays(prefix: str) -> None:
    out = recent_adaptive_memory(prefix + "⚠ careful", "", NOW)
    assert out == "- project memory: ⚠ careful"


line_text = st.text(alphabet="abcdefgh ijk⚠⚙✓-*#", min_size=0, max_size=60)


@settings(derandomize=True, max_examples=200)
@given(
    st.lists(line_text, max_size=25),
    st.lists(line_text, max_size=8),
    st.sampled_from(["", "abc", "hij dee", "zzz"]),
    st.integers(min_value=0, max_value=900),
)
def test_adaptive_selection_bounds(
    project: list[str], global_: list[str], query: str, max_bytes: int
) -> None:
    out = recent_adaptive_memory_for(query, "\n".join(project), "\n".join(global_), NOW, max_bytes)
    lines = out.splitlines() if out else []
    assert len(lines) <= 10
    assert len(out.encode()) <= (max_bytes if max_bytes > 0 else 1600)
    assert len(set(lines)) == len(lines)  # deduplicated per source
    for line in lines:
        source, _, text = line.partition(" memory: ")
        assert source in ("- project", "- global")
        pool = project if source == "- project" else global_
        assert any(text in candidate for candidate in pool)  # whole lines, never invented


def test_adopted_lines_are_signed_kept_and_never_trimmed() -> None:
    from slmactor.logic.memory.lessons import adopt_lines, daemon_written, foreign_lines

    key = b"k" * 64
    text = "# Project memory\n\n  - ⚠ keep the  spacing <!-- slm task=T1 sig=bad -->\r\nprose\n"
    assert [t for _i, t in foreign_lines(text, key)] == ["⚠ keep the  spacing", "prose"]
    adopted_text, ids = adopt_lines(text, key, None)
    assert len(ids) == 2 and foreign_lines(adopted_text, key) == []
    assert adopt_lines(adopted_text, key, None) == (adopted_text, [])  # idempotent
    first = adopted_text.splitlines()[2]
    assert first.startswith("  - ⚠ keep the  spacing <!-- slm task=T1 sig=")
    assert adopted_text.splitlines(keepends=True)[2].endswith("adopted=yes -->\r\n")
    assert not daemon_written(first)
