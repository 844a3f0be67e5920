"""Distillation (SPEC S-5): six fact kinds from recent episodes by counting, in emission order."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.distill import WINDOW, Tally, apply, distill, normalize_command
from slmactor.logic.memory.facts import FactBook, Observation

NOW = 1_790_000_000.0


def ep(i: int, **fields: Any) -> dict[str, Any]:
    return {"id": f"ep{i}", "query": f"task {i}", **fields}


def test_normalize_command() -> None:
    assert normalize_command("$ go test -race ./... \n second line") == "go test ./..."
    assert normalize_command("pytest -q -x tests/a tests/b tests/c tests/d tests/e") == (
        "pytest tests/a tests/b tests/c tests/d tests/e"
    )
    assert normalize_command("  ") == ""
    assert len(normalize_command("x" * 500).encode()) == 120


def test_commands_need_two_runs_and_one_success() -> None:
    episodes = [
        ep(1, commands=[{"cmd": "make test", "ok": True}, {"cmd": "make lint", "ok": False}]),
        ep(2, commands=[{"cmd": "$ make test -v", "ok": False}, {"cmd": "make lint", "ok": False}]),
        ep(3, commands=[{"cmd": "make build", "ok": True}]),
    ]
    obs = [o for o in distill(episodes) if o.kind == "command"]
    assert obs == [
        Observation(
            "command", "make test", "`make test` works here (1/2 runs succeeded)", ("ep1", "ep2")
        )
    ]


def test_layout_lists_hot_directories_top_five() -> None:
    files = ["a/x.py", "a/y.py", "b/z.py", "c/d/e.py", "top.py"]
    episodes = [ep(i, files_changed=files) for i in range(3)]
    episodes.append(ep(9, files_changed=["f/1.py", "g/1.py", "h/1.py", "h/2.py"]))
    episodes.append(ep(10, files_changed=["f/1.py", "g/1.py", "h/1.py"]))
    layout = [o for o in distill(episodes) if o.kind == "layout"]
    assert layout == [
        Observation(
            "layout",
            "hot-directories",
            "Most work happens in: `a` (3), `b` (3), `c/d` (3), `f` (2), `g` (2)",
        )
    ]


def test_files_changed_at_least_twice_top_eight() -> None:
    episodes = [ep(i, files_changed=[f"f{j}.py" for j in range(10)]) for i in range(2)]
    episodes.append(ep(3, files_changed=["once.py"]))
    files = [o for o in distill(episodes) if o.kind == "file"]
    assert [o.subject for o in files] == [f"f{j}.py" for j in range(8)]
    assert files[0].text == "`f0.py` changed in 2 recent runs"


def test_gotchas_per_resolved_occurrence_with_growing_count() -> None:
    failure = {"fingerprint": "fp_1", "message": "old_str not found\nmore", "resolution": "re-read"}
    episodes = [
        ep(1, failures=[{**failure, "resolved_by": "rule:r1"}]),
        ep(2, failures=[{**failure, "resolved_by": ""}]),  # unresolved: skipped
        ep(3, failures=[{**failure, "resolved_by": "llm"}]),
        ep(4, failures=[{"message": "boom", "resolved_by": "unknown"}]),  # fix unknown: skipped
        ep(5, failures=[{"message": "flaky net", "resolved_by": "retry"}]),
    ]
    gotchas = [o for o in distill(episodes) if o.kind == "gotcha"]
    assert gotchas == [
        Observation("gotcha", "fp_1", "old_str not found — fix: re-read (seen 1×)", ("ep1",)),
        Observation("gotcha", "fp_1", "old_str not found — fix: re-read (seen 2×)", ("ep3",)),
        Observation("gotcha", "flaky net", "flaky net — fix: retry (seen 1×)", ("ep5",)),
    ]
    book = FactBook()
    apply(book, gotchas, NOW)
    fact = book.get("gotcha", "fp_1")
    assert fact is not None and fact.support == 2  # "seen N×" is numeric drift, not contradiction


def test_edit_format_convention() -> None:
    episodes = [
        ep(1, edit_format="diff", edits_attempted=3, edits_applied=2),
        ep(2, edit_format="diff", edits_attempted=4, edits_applied=4),
        ep(3, edit_format="whole", edits_attempted=1, edits_applied=1),
        ep(4, edit_format="udiff", edits_attempted=0, edits_applied=0),
    ]
    conv = [o for o in distill(episodes) if o.kind == "convention"]
    assert conv == [
        Observation(
            "convention",
            "edit-format:diff",
            "Edit format `diff` applies 85% of the time here (6/7 hunks)",
        )
    ]


def test_primary_language_ties_alphabetical() -> None:
    episodes = [
        ep(1, language="Go"),
        ep(2, language="rust"),
        ep(3, language="go"),
        ep(4, language="rust"),
        ep(5),
    ]
    dep = [o for o in distill(episodes) if o.kind == "dependency"]
    assert dep == [
        Observation("dependency", "primary-language", "Primary language is go (2/5 recent runs)")
    ]


def test_emission_order_and_window() -> None:
    busy = ep(
        0,
        failures=[{"message": "m", "resolved_by": "llm", "resolution": "fixed"}],
        commands=[{"cmd": "make", "ok": True}],
        files_changed=["src/a.py"],
        edit_format="diff",
        edits_attempted=2,
        edits_applied=2,
        language="python",
    )
    episodes = [{**busy, "id": f"ep{i}"} for i in range(WINDOW + 30)]
    obs = distill(episodes)
    kinds = [o.kind for o in obs]
    first_non_gotcha = next(i for i, k in enumerate(kinds) if k != "gotcha")
    assert set(kinds[:first_non_gotcha]) == {"gotcha"}
    assert kinds[first_non_gotcha:] == ["command", "layout", "file", "convention", "dependency"]
    assert kinds.count("gotcha") == WINDOW  # only the newest 120 are read
    assert obs[-1].text == f"Primary language is python ({WINDOW}/{WINDOW} recent runs)"


def test_no_episodes_no_facts_and_junk_is_survived() -> None:
    assert distill([]) == []
    junk: list[Any] = [
        {"commands": "nope", "files_changed": [1, None], "failures": [None, "x"]},
        "x",
    ]
    assert distill(junk) == []


episode_strategy = st.fixed_dictionaries(
    {
        "id": st.text(max_size=4),
        "commands": st.lists(
            st.fixed_dictionaries(
                {"cmd": st.sampled_from(["make", "make -j", "go test"]), "ok": st.booleans()}
            ),
            max_size=3,
        ),
        "files_changed": st.lists(
            st.sampled_from(["a/b.py", "a/c.py", "d.py", "e/f/g.py"]), max_size=4
        ),
        "language": st.sampled_from(["", "go", "python"]),
        "failures": st.lists(
            st.fixed_dictionaries(
                {
                    "message": st.sampled_from(["x", "y"]),
                    "resolved_by": st.sampled_from(["", "llm"]),
                }
            ),
            max_size=2,
        ),
    }
)


@settings(derandomize=True, max_examples=100)
@given(st.lists(episode_strategy, max_size=15))
def test_distill_is_deterministic(episodes: list[dict[str, Any]]) -> None:
    first = distill(episodes)
    assert first == distill([dict(e) for e in episodes])
    book_a, book_b = FactBook(), FactBook()
    apply(book_a, first, NOW)
    apply(book_b, distill(episodes), NOW)
    assert book_a.to_records() == book_b.to_records()


def test_tally_streams_to_the_same_result_and_stops_at_the_window() -> None:
    episodes = [
        ep(i, commands=[{"cmd": "make", "ok": True}], language="go") for i in range(WINDOW + 5)
    ]
    tally = Tally()
    accepted = [tally.add(e) for e in episodes]
    assert accepted == [True] * WINDOW + [False] * 5
    assert tally.seen == WINDOW
    assert tally.observations() == distill(episodes)
    assert Tally().observations() == []
