"""What a told line presents as there to use (the paths `memory audit` checks): a path hint's
missing path is what it says is gone, never a path it presents."""

from __future__ import annotations

from slmactor.actors.distiller_claims import told_uses
from slmactor.logic.memory.claims import paths_named


def test_a_path_hint_presents_the_path_that_is_there_not_the_missing_one() -> None:
    said = ("`/p/tests_calc.py` is not there; `/p/test_calc.py` is (one part spelled "
            "differently).")
    assert paths_named(told_uses(said, "advice")) == ["/p/test_calc.py"]


def test_failure_advice_presents_its_fix_and_a_block_line_nothing_more() -> None:
    said = "`python3 app.py` failed here with `No module named x`; `.venv/bin/python app.py` worked"
    assert paths_named(told_uses(said, "advice")) == ["app.py"]
    assert told_uses("- `make` works here (3/3 runs succeeded)", "block") == ""
