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


def test_a_command_counts_every_run_by_its_key_and_is_shown_only_as_some_run_ran_it() -> None:
    from slmactor.logic.loop.session_report import command_counts

    def calls(*commands: tuple[str, bool]) -> list[dict[str, Any]]:
        return [{"e": "call", "tool": "Bash", "command": c, "ok": ok} for c, ok in commands]

    pull = "git checkout main && git pull"
    longer = f"{pull} && git checkout -b feat/x"  # the same key (six words)
    script = "cd app\npytest -q"  # several lines: its first line is not what ran
    only_longer = command_counts(calls((longer, True), (longer, False), (script, True),
                                       (script, True)))
    assert only_longer == [{"key": pull, "runs": 2, "ok": 1, "shown": longer}]  # `cd`: no fact
    episodes = [ep(1, command_counts=command_counts(calls((pull, True)))),
                ep(2, command_counts=only_longer)]
    obs = [o.text for o in distill(episodes) if o.kind == "command"]
    # Every run of the key counted; said as the key, which one run ran as it is.
    assert obs == [f"`{pull}` works here (2/3 runs succeeded)"]
    # A key no run ran as it is is never said: it would name a command nobody ran.
    assert not [o for o in distill(episodes[1:]) if o.kind == "command"]


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
            ("ep0", "ep1", "ep2", "ep9", "ep10"),  # the runs that worked there: its evidence
        )
    ]


def test_files_changed_at_least_twice_top_eight() -> None:
    episodes = [ep(i, files_changed=[f"f{j}.py" for j in range(10)]) for i in range(2)]
    episodes.append(ep(3, files_changed=["once.py"]))
    files = [o for o in distill(episodes) if o.kind == "file"]
    assert [o.subject for o in files] == [f"f{j}.py" for j in range(8)]
    assert files[0].text == "`f0.py` changed in 2 recent runs"


def test_a_gotcha_is_a_failure_with_its_newest_fix_counted_over_every_episode_that_met_it() -> None:
    failure = {"fingerprint": "fp_1", "message": "old_str not found\nmore", "resolution": "re-read"}
    episodes = [  # newest first
        ep(0, failures=[{**failure, "resolved_by": ""}]),  # met before any fix is known: counted
        ep(1, failures=[{**failure, "resolved_by": "rule:r1"}]),
        ep(2, failures=[{**failure, "resolved_by": ""}]),  # unresolved: still met
        ep(3, failures=[{**failure, "resolved_by": "llm", "resolution": "an older fix"}]),
        ep(4, failures=[{"message": "boom", "resolved_by": "unknown"}]),  # no fix told
        ep(5, failures=[{"message": "flaky net", "resolved_by": "retry"}]),  # retry is no fix
        ep(6, failures=[{**failure, "resolved_by": "llm", "kind": "refusal"}]),  # not a failure
        ep(7, failures=[{"message": "x", "resolved_by": "llm", "resolution": "y" * 300}]),
    ]
    gotchas = [o for o in distill(episodes) if o.kind == "gotcha"]
    # The count is every counted episode that met the failure (resolved or not), the fix the
    # newest one's, told whole: a fix too long to tell whole is not told.
    assert gotchas == [
        Observation("gotcha", "fp_1", "old_str not found — fix: re-read (seen 4×)", ("ep1",)),
    ]
    book = FactBook()
    apply(book, gotchas, NOW)
    apply(book, [Observation("gotcha", "fp_1", "old_str not found — fix: re-read (seen 4×)")], NOW)
    fact = book.get("gotcha", "fp_1")
    assert fact is not None and fact.support == 2  # "seen N×" is numeric drift, not contradiction
    assert fact.text.endswith("(seen 4×)")  # the count of the records now


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
            ("ep1", "ep2"),
        )
    ]


def test_an_edit_format_counts_the_calls_of_its_tools_in_every_session() -> None:
    # A session that edits mostly with search/replace also wrote whole files: those count under
    # whole_file, not under the format that led the session.
    episodes = [
        ep(1, edit_format="search_replace", edits_attempted=5, edits_applied=4,
           edit_formats=[{"format": "search_replace", "attempted": 3, "applied": 2},
                         {"format": "whole_file", "attempted": 2, "applied": 2}]),
        ep(2, edit_format="whole_file", edits_attempted=1, edits_applied=1,
           edit_formats=[{"format": "whole_file", "attempted": 1, "applied": 1}]),
    ]
    conv = {o.subject: o.text for o in distill(episodes) if o.kind == "convention"}
    assert conv == {
        "edit-format:search_replace":
            "Edit format `search_replace` applies 66% of the time here (2/3 hunks)",
        "edit-format:whole_file": "Edit format `whole_file` applies 100% of the time here (3/3 hunks)",
    }


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
        Observation("dependency", "primary-language", "Primary language is go (2/5 recent runs)",
                    ("ep1", "ep3"))
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
    assert kinds.count("gotcha") == 1  # one failure, one gotcha
    assert obs[0].text.endswith(f"(seen {WINDOW}×)")  # only the newest 120 are read
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
