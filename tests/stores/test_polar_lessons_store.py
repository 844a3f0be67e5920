"""The polar-lesson and phase-budget files: seed format, redaction on every write, caps, hand
edits (H-C-2, H-C-8, H-C-12)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.budgets import PhaseOutcome
from slmactor.logic.memory.polar_lessons import PolarLesson, boost_confidence
from slmactor.stores.base.layout import ProjectLayout
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.polar_lessons import PhaseBudgetStore, PolarLessonStore

NOW = 1_790_000_000.0
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def lesson(trigger: str, **kw: object) -> PolarLesson:
    fields: dict[str, object] = {"ts": NOW, "type": "error_pattern", "trigger": trigger,
                                 "fix": "f"}
    fields.update(kw)
    return PolarLesson(**fields)  # type: ignore[arg-type]


def store(tmp_path: Path, **kw: int) -> PolarLessonStore:
    return PolarLessonStore(ProjectLayout(tmp_path).lessons, WarningLog(), now=lambda: NOW, **kw)


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_file_is_the_seeds_jsonl_one_line_per_lesson(tmp_path: Path) -> None:
    s = store(tmp_path)
    added, merged = s.add([lesson("alpha beta gamma"), lesson("delta epsilon zeta")])
    assert (len(added), merged) == (2, 0)
    assert s.path == tmp_path / ".slmcode" / "memory" / "lessons.jsonl"
    assert [row["trigger"] for row in lines(s.path)] == ["alpha beta gamma", "delta epsilon zeta"]
    assert set(lines(s.path)[0]) == {"ts", "type", "trigger", "fix", "confidence", "used",
                                     "polarity", "tags", "source_task"}
    again = store(tmp_path)
    again.sync()
    assert again.book.lessons == s.book.lessons


def test_a_merge_rewrites_instead_of_appending_a_duplicate(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.add([lesson("pin vitest to one in dev deps", confidence=0.3)])
    _added, merged = s.add([lesson("pin vitest to one in dev deps", confidence=0.9)])
    assert merged == 1
    assert [row["confidence"] for row in lines(s.path)] == [0.9]


def test_secrets_are_redacted_on_append_and_on_every_rewrite(tmp_path: Path) -> None:
    # H-C-2 (appends) and H-C-8: the seed's save_all (boost/penalize) rewrote unredacted text.
    s = store(tmp_path)
    s.add([lesson(f"auth with token {SECRET}", fix=f"export GH_TOKEN={SECRET}",
                  source_task=f"use {SECRET}")])
    assert SECRET not in s.path.read_text()
    assert all(SECRET not in le.trigger + le.fix + le.source_task for le in s.book.lessons)
    # a rewrite of lessons that (somehow) still hold a secret writes them redacted
    boosted, _b = boost_confidence([lesson(f"leaked {SECRET}")], [f"leaked {SECRET}"])
    s.replace(boosted)
    assert SECRET not in s.path.read_text()
    assert lines(s.path)[0]["used"] == 1


def test_unknown_keys_and_corrupt_lines_cost_only_themselves(tmp_path: Path) -> None:
    path = ProjectLayout(tmp_path).lessons
    path.parent.mkdir(parents=True)
    path.write_text(
        '{"ts": 1, "type": "architecture", "trigger": "kept", "fix": "f", "new_key": 1}\n'
        "garbage\n"
        '{"trigger": "", "fix": "no trigger"}\n'
        '{"ts": 2, "type": "dependency", "trigger": "also kept", "fix": "g"}\n'
    )
    s = store(tmp_path)
    s.sync()
    assert [le.trigger for le in s.book.lessons] == ["kept", "also kept"]
    assert s.skipped == 2


def test_hand_removal_forgets_and_hand_edits_are_read(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.add([lesson("first lesson here")])
    s.path.unlink()
    s.add([lesson("second lesson there")])
    assert [row["trigger"] for row in lines(s.path)] == ["second lesson there"]
    s.path.write_text(json.dumps(lesson("edited by hand").to_dict()) + "\n")
    assert s.sync() is True
    assert [le.trigger for le in s.book.lessons] == ["edited by hand"]


def test_the_cap_drops_the_weakest(tmp_path: Path) -> None:
    s = store(tmp_path, max_lessons=3)
    s.add([lesson(f"lesson number {i} {'x' * i}", confidence=i / 10) for i in range(1, 6)])
    assert sorted(le.confidence for le in s.book.lessons) == [0.3, 0.4, 0.5]
    assert len(lines(s.path)) == 3


def test_prune_and_forget(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.add([lesson("worn out lesson", confidence=0.2, used=7), lesson("good lesson entirely")])
    assert s.prune() == 1
    assert [row["trigger"] for row in lines(s.path)] == ["good lesson entirely"]
    s.forget()
    assert not s.path.exists() and len(s.book) == 0


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=30), st.sampled_from([0.1, 0.5, 0.9])),
                max_size=12))
def test_what_is_kept_is_what_reads_back(items: list[tuple[str, float]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        s = store(Path(tmp))
        for text, confidence in items:
            s.add([lesson(" ".join(text.split()) or "t", confidence=confidence)])
        fresh = store(Path(tmp))
        fresh.sync()
        assert fresh.book.lessons == s.book.lessons


def test_phase_budget_rows_append_and_trim_to_the_newest(tmp_path: Path) -> None:
    path = ProjectLayout(tmp_path).phase_budgets
    assert path == tmp_path / ".slmcode" / "memory" / "phase_budgets.jsonl"  # H-C-9: as documented
    s = PhaseBudgetStore(path, WarningLog(), max_rows=5)
    for i in range(5 + 200 + 1):
        s.record(PhaseOutcome(NOW + i, "build", i, 1, ("python",)))
    assert [row.rounds for row in s.rows] == [201, 202, 203, 204, 205]
    assert len(path.read_text().splitlines()) == 5
    s.record(PhaseOutcome(NOW, "plan", 3, 0, ()))
    fresh = PhaseBudgetStore(path, WarningLog())
    fresh.sync()
    assert fresh.rows == s.rows
