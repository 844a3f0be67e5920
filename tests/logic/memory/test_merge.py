"""Three-way merge of shared records: symmetric, idempotent, evidence counted exactly once."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.merge import (
    Shape,
    canonical,
    field_key,
    merge_lines,
    merge_records,
    sort_records,
)

SHAPE = Shape(key=field_key("id"), counters=("successes", "failures"), flags=("retired",),
              sets=(("evidence", 5),), newest=("last_used",), oldest=("created_at",),
              stamp="last_used", order=("created_at",))
IDS = [f"rule_{i}" for i in range(6)]
STAMPS = [f"2026-01-0{d}T00:00:00Z" for d in range(1, 8)]

record = st.fixed_dictionaries({
    "id": st.sampled_from(IDS),
    "successes": st.integers(0, 9),
    "failures": st.integers(0, 9),
    "retired": st.booleans(),
    "evidence": st.lists(st.sampled_from(["r1", "r2", "r3", "r4"]), max_size=3, unique=True),
    "note": st.sampled_from(["", "a hint", "another hint"]),
    "created_at": st.sampled_from(STAMPS),
    "last_used": st.sampled_from(STAMPS),
})


def _unique(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for r in records:
        seen.setdefault(r["id"], r)
    return list(seen.values())


@st.composite
def learned_from(draw: Any, base: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What one branch makes of `base`: more evidence, flags set, notes edited, rules added
    or dropped — never fewer counts than the ancestor had (evidence only grows)."""
    out = []
    for r in base:
        if draw(st.integers(0, 9)) == 0:
            continue  # pruned on this branch
        grown = dict(r, successes=r["successes"] + draw(st.integers(0, 4)),
                     failures=r["failures"] + draw(st.integers(0, 4)))
        if draw(st.booleans()):
            grown["retired"] = True
        if draw(st.integers(0, 3)) == 0:
            grown["note"] = draw(st.sampled_from(["edited", "edited again"]))
        if draw(st.booleans()):
            grown["evidence"] = [*r["evidence"], draw(st.sampled_from(["r5", "r6", "r7"]))]
            grown["last_used"] = draw(st.sampled_from(STAMPS))
        out.append(grown)
    known = {r["id"] for r in out} | {r["id"] for r in base}
    out.extend(r for r in draw(st.lists(record, max_size=3)) if r["id"] not in known)
    return _unique(out)


@st.composite
def histories(draw: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                  list[dict[str, Any]]]:
    base = _unique(draw(st.lists(record, max_size=5)))
    return base, draw(learned_from(base)), draw(learned_from(base))


def _by_id(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in records}


@settings(derandomize=True, max_examples=300)
@given(histories())
def test_merging_is_symmetric(history: Any) -> None:
    o, a, b = history
    assert canonical(merge_records(o, a, b, SHAPE)) == canonical(merge_records(o, b, a, SHAPE))


@settings(derandomize=True, max_examples=200)
@given(st.lists(record, max_size=6))
def test_merging_a_store_with_itself_changes_nothing(raw: list[dict[str, Any]]) -> None:
    store = _unique(raw)
    assert canonical(merge_records(store, store, store, SHAPE)) == canonical(
        sort_records(store, SHAPE))


@settings(derandomize=True, max_examples=300)
@given(histories())
def test_evidence_is_the_ancestor_plus_each_sides_additions(history: Any) -> None:
    o, a, b = history
    merged = _by_id(merge_records(o, a, b, SHAPE))
    base, ours, theirs = _by_id(o), _by_id(a), _by_id(b)
    for rid, rule in merged.items():
        for counter in ("successes", "failures"):
            before = base[rid][counter] if rid in base else 0
            added_a = ours[rid][counter] - before if rid in ours else 0
            added_b = theirs[rid][counter] - before if rid in theirs else 0
            if rid in ours and rid in theirs and rid not in base and ours[rid] == theirs[rid]:
                # The same record reached both sides (one commit merged into both): once.
                assert rule[counter] == ours[rid][counter]
            elif rid in ours and rid in theirs:
                assert rule[counter] == before + added_a + added_b
            else:  # kept from one side (the other never had it, or pruned it)
                assert rule[counter] == (ours.get(rid) or theirs[rid])[counter]


@settings(derandomize=True, max_examples=200)
@given(histories())
def test_a_rule_retired_or_kept_on_either_side_stays_retired(history: Any) -> None:
    o, a, b = history
    merged = _by_id(merge_records(o, a, b, SHAPE))
    for side in (a, b):
        for r in side:
            if r["retired"] and r["id"] in merged:
                assert merged[r["id"]]["retired"] is True


def test_new_learning_from_both_sides_survives_and_a_shared_rule_sums() -> None:
    shared = {"id": "rule_s", "successes": 2, "failures": 1, "retired": False,
              "evidence": ["r1"], "note": "", "created_at": STAMPS[0], "last_used": STAMPS[0]}
    a = [dict(shared, successes=5, evidence=["r1", "ra"], last_used=STAMPS[2]),
         dict(shared, id="rule_a", successes=1, failures=0, evidence=["ra"])]
    b = [dict(shared, successes=3, failures=2, evidence=["r1", "rb"], last_used=STAMPS[1]),
         dict(shared, id="rule_b", successes=1, failures=0, evidence=["rb"])]
    merged = _by_id(merge_records([shared], a, b, SHAPE))
    assert sorted(merged) == ["rule_a", "rule_b", "rule_s"]
    assert (merged["rule_s"]["successes"], merged["rule_s"]["failures"]) == (2 + 3 + 1, 1 + 0 + 1)
    assert merged["rule_s"]["evidence"] == ["r1", "ra", "rb"]
    assert merged["rule_s"]["last_used"] == STAMPS[2]


def test_a_removal_stands_unless_the_other_side_changed_the_record() -> None:
    old = {"id": "rule_x", "successes": 1, "failures": 0, "note": ""}
    assert merge_records([old], [], [old], SHAPE) == []
    grown = dict(old, successes=4)
    assert merge_records([old], [], [grown], SHAPE) == [grown]


def test_a_conflicting_edit_goes_to_the_later_side_whichever_is_ours() -> None:
    old = {"id": "r", "note": "x", "last_used": STAMPS[0]}
    early = dict(old, note="early", last_used=STAMPS[1])
    late = dict(old, note="late", last_used=STAMPS[3])
    assert merge_records([old], [early], [late], SHAPE)[0]["note"] == "late"
    assert merge_records([old], [late], [early], SHAPE)[0]["note"] == "late"


bullets = st.lists(st.sampled_from([f"- lesson {i}" for i in range(8)] + [""]), max_size=8)


@settings(derandomize=True, max_examples=300)
@given(bullets, bullets, bullets)
def test_markdown_merge_is_symmetric_and_keeps_both_sides_additions(
    o: list[str], a: list[str], b: list[str],
) -> None:
    text = ["# Project memory", "## Lessons"]
    base, ours, theirs = ("\n".join(text + x) + "\n" for x in (o, o + a, o + b))
    merged = merge_lines(base, ours, theirs)
    assert merged == merge_lines(base, theirs, ours)
    assert merge_lines(base, base, base) == base
    for line in {*a, *b} - set(o):
        assert line in merged.splitlines()


def test_markdown_merge_drops_a_line_either_side_removed() -> None:
    base = "# M\n- keep\n- gone\n"
    merged = merge_lines(base, "# M\n- keep\n", "# M\n- keep\n- gone\n- new\n")
    assert merged == "# M\n- keep\n- new\n"
