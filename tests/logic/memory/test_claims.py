"""Claims and their checks (`logic.memory.claims`): a line is told only while the records support
it — not when no record does, not when its own records say the fix did not hold, not when a path
it presents as there to use was deleted later or is not in the project."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.claims import (
    CONTRADICTED,
    STALE,
    TRUE,
    UNVERIFIED,
    Claim,
    PathEvents,
    check,
    paths_named,
)


class Tree:
    """The records a check reads: the runs' deletions and a set of paths in the project."""

    def __init__(self, present: set[str], events: PathEvents | None = None) -> None:
        self.present = present
        self.events = events or PathEvents()

    def gone(self, path: str) -> str:
        run = self.events.deleted_by(path)
        if run:
            return f"was deleted by a later run ({run})"
        return "" if path.strip("/") in self.present else "is not in the project"


def test_paths_named_are_those_a_fix_presents_never_urls_options_or_what_it_creates() -> None:
    assert paths_named("`pytest tests/test_calc.py -k add`") == ["tests/test_calc.py"]
    assert paths_named("`mkdir -p build/out && cp a.txt build/out`") == ["a.txt"]
    assert paths_named("`curl -s https://example.com/a/b.json`") == []
    assert paths_named("reading src/app.py again, then Edit again") == ["src/app.py"]
    assert paths_named("Read instead of Edit on src/app.py") == ["src/app.py"]
    assert paths_named("`npm test`") == []


def test_a_claim_with_no_record_is_unverified_and_one_that_did_not_hold_is_contradicted() -> None:
    tree = Tree({"calc.py"})
    assert check(Claim("fix", "x — fix: y"), tree).status == UNVERIFIED
    assert check(Claim("fix", "x — fix: y", ("ep1",), held=False), tree).status == CONTRADICTED
    assert check(Claim("fix", "x — fix: `python calc.py`", ("ep1",),
                       uses="`python calc.py`"), tree).status == TRUE


def test_a_path_deleted_by_a_later_run_is_stale_until_a_run_writes_it_again() -> None:
    events = PathEvents()
    events.add_run("ep1", 10.0, [], ["scratch/tmp.py"])
    events.add_run("ep2", 20.0, ["scratch/tmp.py"], [])
    tree = Tree({"scratch/tmp.py"}, events)
    claim = Claim("fix", "f — fix: `python scratch/tmp.py`", ("ep1",), uses="`python scratch/tmp.py`")
    verdict = check(claim, tree)
    assert verdict.status == STALE and "ep2" in verdict.why
    events.add_run("ep3", 30.0, [], ["scratch/tmp.py"])
    assert check(claim, tree).passes


@settings(derandomize=True, max_examples=200)
@given(st.text(max_size=200))
def test_reading_paths_out_of_any_text_never_fails(text: str) -> None:
    for path in paths_named(text):
        assert path and "\n" not in path
