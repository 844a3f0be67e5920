"""Regression-check logic (S-15) and the lexical path confinement of offline checks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.loop.confine import Confined, Refused, confine
from slmactor.logic.loop.regressions import (
    MAX_CHECKS,
    Check,
    FileObservation,
    add,
    command_checks,
    infer_kind,
    judge,
    new_check,
    newest_first,
    offline,
    prune,
    record,
    runnable,
)


def _check(desc: str, now: float, **kw: str) -> Check:
    check = new_check(description=desc, now=now, **kw)
    assert check is not None
    return check


def test_kind_inference_follows_the_spec_order() -> None:
    assert infer_kind("", "pytest -q", "a.py", "x") == "command"
    assert infer_kind("", "", "a.py", "x") == "file_contains"
    assert infer_kind("", "", "a.py", "") == "file_exists"
    assert infer_kind("", "", "", "") == "none"
    assert infer_kind("FILE_ABSENT", "", "a.py", "x") == "file_absent"
    assert infer_kind("bogus", "", "a.py", "") == "file_exists"


def test_id_is_content_addressed_and_blank_descriptions_are_rejected() -> None:
    a = _check("fixed import", 10, path="a.py", substring="import os")
    b = _check("fixed import", 99, path="a.py", substring="import os")
    assert a.id == b.id and a.id.startswith("chk_") and len(a.id) == 16
    assert a.kind == "file_contains"
    assert new_check(description="   ", now=1, path="a.py") is None
    assert _check("x" * 400, 1).description == "x" * 300


def test_add_is_idempotent_and_backstop_prunes_at_twice_the_cap() -> None:
    a = _check("one", 1, path="a")
    checks, added = add([], a)
    assert added
    checks, added = add(checks, a)
    assert not added and len(checks) == 1
    many: list[Check] = []
    for i in range(2 * MAX_CHECKS + 1):
        many, _ = add(many, _check(f"c{i}", float(i), path=f"f{i}"))
    assert len(many) == MAX_CHECKS
    assert many[0].description == f"c{MAX_CHECKS + 1}"  # the oldest were dropped


def test_listing_orders_and_partitions() -> None:
    cmd = _check("tests pass", 3, command="pytest -q")
    exists = _check("file exists", 2, path="a.py")
    none = _check("just a note", 1)
    checks = [none, exists, cmd]
    assert [c.id for c in newest_first(checks)] == [cmd.id, exists.id, none.id]
    assert [c.id for c in runnable(checks)] == [cmd.id, exists.id]
    assert [c.id for c in offline(checks)] == [exists.id]
    assert [c.id for c in command_checks(checks)] == [cmd.id]
    assert [c.description for c in prune(checks, 2)] == ["file exists", "tests pass"]


def test_judge_gives_the_spec_messages() -> None:
    has = _check("has fix", 1, path="src/a.py", substring="return x")
    gone = _check("bad gone", 1, path="src/a.py", substring="eval(", kind="file_absent")
    exists = _check("exists", 1, path="src/a.py")
    missing = FileObservation("missing")
    present_with = FileObservation("present", contains=True)
    present_without = FileObservation("present", contains=False)
    assert judge(exists, missing).detail == "missing: src/a.py"
    assert judge(exists, present_without).status == "pass"
    assert judge(has, present_without).detail == "regressed: src/a.py no longer contains the fix"
    assert judge(has, present_with).status == "pass"
    assert judge(gone, present_with).detail == "regressed: src/a.py contains the bad pattern again"
    assert judge(gone, missing).status == "pass"  # absent file: the bad pattern is absent too
    refused = judge(has, FileObservation("refused", reason="symlink (not followed)"))
    assert refused.status == "skipped" and "symlink" in refused.detail


def test_record_counts_runs_and_skips_do_not_count() -> None:
    check = _check("exists", 1, path="a")
    failed = record(check, judge(check, FileObservation("missing")), 50.7)
    assert (failed.runs, failed.fails, failed.last_ok, failed.last_run) == (1, 1, False, 50.0)
    passed = record(failed, judge(check, FileObservation("present")), 60)
    assert (passed.runs, passed.fails, passed.last_ok) == (2, 1, True)
    skipped = record(passed, judge(check, FileObservation("refused", reason="fifo")), 70)
    assert skipped == passed


def test_check_round_trips_through_json() -> None:
    base = _check("has fix", 1_700_000_000, path="a", substring=" x ")
    check = record(base, judge(base, FileObservation("present", contains=True)), 1_700_000_100)
    assert Check.from_dict(check.to_dict()) == check
    assert Check.from_dict({"description": ""}) is None


def test_confine_accepts_plain_relative_paths() -> None:
    assert confine("src/app.py") == Confined(("src", "app.py"))
    assert confine("./src//app.py/") == Confined(("src", "app.py"))


def test_confine_refuses_escapes() -> None:
    for bad in ["", "  ", "/etc/passwd", "../x", "a/../../x", "a/..", "C:\\x", "\\\\srv\\s",
                "a\\b", "a\x00b", ".", "./", "a/" * 70]:
        assert isinstance(confine(bad), Refused), bad


segments = st.sampled_from(["a", "b", "..", ".", "", "src", "x.py", "...", "..a"])


@settings(derandomize=True, max_examples=400)
@given(st.lists(segments, min_size=1, max_size=8), st.booleans())
def test_confined_paths_never_escape(parts: list[str], absolute: bool) -> None:
    path = ("/" if absolute else "") + "/".join(parts)
    result = confine(path)
    absolute = path.startswith("/")  # an empty first segment makes the path absolute too
    if isinstance(result, Confined):
        assert not absolute
        assert ".." not in result.parts and "." not in result.parts and "" not in result.parts
        assert result.parts
    else:
        assert absolute or ".." in parts or all(p in ("", ".") for p in parts)
