"""The memory block (SPEC S-7.4): role shares, section order, leftovers flowing on (H-S-21)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.block import (
    DEFAULT_SHARES,
    SECTIONS,
    TITLE,
    BlockBuilder,
    BlockItem,
    bullet,
    distinct_items,
    episodes_of,
    episodic_items,
    episodic_section,
    heading,
    items_text,
    memory_block,
    render,
    said_once,
    shares_for,
)
from slmactor.logic.text.strings import count_tokens_chars


def test_role_shares_table() -> None:
    assert shares_for("worker") == (0.45, 0.25, 0.18, 0.12)
    assert shares_for("Python-Worker") == (0.45, 0.25, 0.18, 0.12)
    assert shares_for("go-tester") == (0.35, 0.35, 0.20, 0.10)
    assert shares_for("reviewer") == (0.35, 0.30, 0.25, 0.10)
    assert shares_for("architect") == (0.15, 0.40, 0.35, 0.10)
    assert shares_for("docs") == (0.20, 0.45, 0.30, 0.05)
    assert shares_for("someone-else") == DEFAULT_SHARES == (0.30, 0.35, 0.25, 0.10)
    for role in ("worker", "tester", "reviewer", "planner", "explorer", "x"):
        assert sum(shares_for(role)) == pytest.approx(1.0)


def test_nothing_known_is_an_empty_block() -> None:
    assert memory_block("worker", 1200, lambda section, budget: "") == ""
    assert memory_block("worker", 1200, lambda section, budget: "  \n ") == ""


def test_sections_in_order_joined_by_a_blank_line() -> None:
    texts = {s: f"## {s}\n- item" for s in SECTIONS}
    block = memory_block("worker", 1200, lambda s, b: texts[s])
    assert block == "\n\n".join(texts[s] for s in SECTIONS) + "\n"


def test_each_section_asked_with_its_own_share_when_all_are_full() -> None:
    asked: dict[str, int] = {}

    def render(section: str, budget: int) -> str:
        asked[section] = budget
        return "x" * (budget * 4)  # fills its allowance exactly

    block = memory_block("worker", 1000, render)
    assert asked["working"] == 450
    assert 245 <= asked["semantic"] <= 250  # minus the joint and the fitting marker slack
    assert count_tokens_chars(block) <= 1000


def test_leftover_flows_on_to_later_sections() -> None:
    # H-S-21: a blank working section's 45 % is not lost.
    asked: dict[str, int] = {}

    def render(section: str, budget: int) -> str:
        asked[section] = budget
        return "" if section == "working" else "y" * 40

    memory_block("worker", 1000, render)
    assert asked["semantic"] == 700  # 0.45 + 0.25 of the budget, nothing used yet
    used = count_tokens_chars("y" * 40 + "\n")  # the block so far, newline-terminated
    assert (
        asked["episodic"] == 880 - used - 1
    )  # cumulative 0.88, minus what is used, minus the joint
    used = count_tokens_chars("y" * 40 + "\n\n" + "y" * 40 + "\n")
    assert asked["procedural"] == 1000 - used - 1


def test_no_section_exceeds_what_remains() -> None:
    builder = BlockBuilder("worker", 100)
    builder.add("working", "w" * 400)
    assert builder.sizes["working"] <= 45
    assert builder.allowance("semantic") <= 100 - builder.sizes["working"]
    with pytest.raises(ValueError, match="comes before"):
        builder.add("working", "again")


def test_non_positive_budget_uses_the_default() -> None:
    builder = BlockBuilder("worker", 0)
    assert builder.budget == 1200
    assert builder.allowance("working") == 540


@settings(derandomize=True, max_examples=200)
@given(
    st.sampled_from(["worker", "tester", "reviewer", "planner", "explorer", "other"]),
    st.integers(min_value=1, max_value=3000),
    st.lists(st.integers(min_value=0, max_value=4000), min_size=4, max_size=4),
)
def test_block_never_exceeds_the_budget(role: str, budget: int, sizes: list[int]) -> None:
    lengths = dict(zip(SECTIONS, sizes, strict=True))

    def render(section: str, allowance: int) -> str:
        return ("z" * lengths[section]) if lengths[section] else ""

    block = memory_block(role, budget, render)
    assert count_tokens_chars(block) <= budget
    if block:
        assert block.endswith("\n")


# --- the episodic section (S-7.5) ------------------------------------------------------------

EPISODE = {
    "query": "Fix the graph walker\nsecond line",
    "success": True,
    "files_changed": ["a.go", "b.go", "c.go", "d.go", "e.go"],
    "failures": [
        {
            "message": "old_str not found",
            "resolution": "re-read the file",
            "resolved_by": "rule:r1",
        },
        {"message": "still open", "resolved_by": ""},
        {"message": "flaky", "resolved_by": "retry"},
    ],
}


def test_episodic_section_format() -> None:
    failed = {"query": "port the parser", "success": False, "files": ["p.py"]}
    text = episodic_section([EPISODE, failed, {"query": " "}], 500)
    assert text.splitlines() == [
        "## Similar work done before",
        "- ✓ Fix the graph walker → touched `a.go`, `b.go`, `c.go`, `d.go`",
        "  - hit: old_str not found → fixed by re-read the file",
        # "flaky", resolved by a retry: who got past it is no fix to tell.
        "- ✗ port the parser → touched `p.py`",
    ]
    assert episodic_section([], 500) == ""


def test_a_run_whose_record_states_no_verdict_gets_no_mark() -> None:
    imported = {"query": "port the parser", "success": False, "verdict": "unknown",
                "files": ["p.py"]}
    assert episodic_section([imported], 500).splitlines()[1] == "- port the parser → touched `p.py`"


def test_a_resolution_that_says_fixed_by_is_not_said_twice() -> None:
    # Harness adapters write resolutions like "fixed by running: sed ..." themselves.
    episode = {"query": "fix add()", "success": True, "failures": [
        {"message": "AssertionError: add(2, 3) should be 5",
         "resolution": "fixed by running: sed -i s/-/+/ calc.py", "resolved_by": "llm"}]}
    hits = [line for line in episodic_section([episode], 500).splitlines() if "hit:" in line]
    assert len(hits) == 1
    assert "→ fixed by running: sed -i s/-/+/ calc.py" in hits[0]
    assert "fixed by fixed by" not in hits[0]


def test_episodic_section_drops_whole_episodes_to_fit() -> None:
    episodes = [{**EPISODE, "query": f"task {i}"} for i in range(5)]
    full = episodic_section(episodes, 1000)
    assert full.count("\n- ") == 3  # at most three episodes
    one = episodic_section(episodes, count_tokens_chars(full) // 2)
    assert one.count("\n- ") == 1 and one.endswith("fixed by re-read the file\n")
    assert episodic_section(episodes, 5) == ""


def test_episodes_of_accepts_recall_and_recent_replies() -> None:
    ep = {"query": "q"}
    assert episodes_of({"hits": [{"episode": ep, "score": 1.0}, {"entry": {"query": "e"}}]}) == [
        ep,
        {"query": "e"},
    ]
    assert episodes_of({"episodes": [ep, 3]}) == [ep]
    assert episodes_of([ep]) == [ep]
    assert episodes_of(None) == [] and episodes_of({"hits": "x"}) == []


# --- a block worth its tokens -----------------------------------------------------


def test_a_task_shown_once_and_a_rule_named_once() -> None:
    fixed = {"message": "ws_edit: old_str still contains ws_read's line-number prefix (e.g. \"  14| \")",
             "salient": "ws_edit: old_str still contains ws_read's line-number prefix (e.g. <str>)",
             "resolved_by": "rule:rule_4e733349a0b6", "fingerprint": "fp_a",
             "resolution": "the same edit without the read tool's line-number gutter"}
    again = {**fixed, "fingerprint": "fp_b", "message": fixed["message"].replace("14", "27")}
    first = {"query": "Fix the graph walker", "success": True, "failures": [fixed, again]}
    repeat = {**first, "success": False}
    other = {"query": "Port the parser", "success": True, "failures": [again]}
    text = episodic_section([first, repeat, other], 500)
    assert text.splitlines() == [
        "## Similar work done before",
        "- ✓ Fix the graph walker",
        ("  - hit: ws_edit: old_str still contains ws_read's line-number prefix (e.g. <str>) → "
         "fixed by the same edit without the read tool's line-number gutter"),
        "- ✓ Port the parser",
        ("  - hit: ws_edit: old_str still contains ws_read's line-number prefix (e.g. <str>) → "
         "fixed by the same edit without the read tool's line-number gutter"),
    ]
    # Who fixed it is no fix: a hit whose failure carries no resolution text is not shown.
    bare = {k: v for k, v in fixed.items() if k != "resolution"}
    assert "hit:" not in episodic_section([{"query": "q", "success": True, "failures": [bare]}], 500)
    # A fix the facts above already give is not given again under an episode (said once).
    gotcha = "the same edit without the read tool's line-number gutter"
    shown = [heading("semantic", "Gotchas:"),
             bullet("semantic", f"- ws_edit: … — fix: {gotcha} (seen 6×)", fix=gotcha)]
    text = render(said_once([*shown, *episodic_items([first, other], 500, shown=shown)]))
    assert text.count("line-number gutter") == 1 and "Port the parser" in text
    assert distinct_items(text) == (3, 3)


def test_hits_show_the_salient_line_cut_between_words() -> None:
    # As the reflector stores it: the salient line of the message, not its first line.
    long = {"message": "Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: "
                       + "the configuration value is not valid " * 5,
            "salient": "valueerror: " + "the configuration value is not valid " * 5,
            "resolved_by": "llm", "resolution": "a valid configuration value"}
    text = episodic_section([{"query": "load config", "failures": [long]}], 500)
    hit = text.splitlines()[2]
    assert hit.startswith("  - hit: valueerror: the configuration value")
    message = hit.split("hit: ", 1)[1].split(" → ", 1)[0]
    assert message.endswith("…") and message[:-1].split()[-1] in long["salient"].split()
    old = episodic_section([{"query": "load config", "failures": [{**long, "salient": ""}]}], 500)
    assert "hit: Traceback (most recent call last):" in old  # an older episode: its first line


def test_distinct_items_counts_meanings_not_texts() -> None:
    block = ("Gotchas:\n- failed to parse: line 1 column 110 — fix: llm (seen 2×)\n"
             "- failed to parse: line 1 column 176 — fix: llm (seen 3×)\n"
             "- x — fix: rule:rule_aaaaaaaaaaaa (seen 1×)\n- y — fix: rule:rule_aaaaaaaaaaaa\n")
    assert distinct_items(block) == (2, 4)


def test_the_semantic_section_gives_the_facts_what_the_lessons_leave() -> None:
    from slmactor.logic.memory.block import semantic_section

    asked: list[int] = []

    def facts(tokens: int) -> list[BlockItem]:
        asked.append(tokens)
        return [heading("semantic", "## What we know about this project", TITLE),
                bullet("semantic", "- Run make test before pushing")]

    lessons = [bullet("semantic", "- DO: run the linter first")]
    text = items_text(semantic_section(facts, lessons, 100, counter=len))
    assert asked == [100 - len("- DO: run the linter first\n\n")]
    assert text.endswith("\n\n- DO: run the linter first") and text.startswith("## What we know")
    assert semantic_section(facts, [], 100, counter=len) == facts(100)  # the facts alone
    assert asked[-2:] == [100, 100]
