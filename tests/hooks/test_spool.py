"""The hook spool: what is written while the breaker is open comes back whole, in order, once;
a damaged tail loses only itself."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.hooks import spool

_text = st.text(alphabet=st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), max_size=40)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(st.tuples(_text, _text, _text, st.binary(max_size=200)), max_size=6))
def test_records_come_back_whole_and_in_order(items: list[tuple[str, str, str, bytes]]) -> None:
    import tempfile

    runtime = tempfile.mkdtemp()
    for n, (fmt, event, cwd, raw) in enumerate(items):
        assert spool.append(runtime, fmt, event, cwd, "", "", raw, float(n))
    taken = spool.take(runtime)
    assert [(r["fmt"], r["event"], r["cwd"], r["payload"], r["at"]) for r in taken] == [
        (fmt, event, cwd, raw.decode("utf-8", "replace"), float(n)) for n, (fmt, event, cwd, raw) in enumerate(items)]
    assert spool.take(runtime) == []  # taken once


@settings(derandomize=True, max_examples=60)
@given(st.binary(max_size=300))
def test_a_damaged_spool_never_raises(data: bytes) -> None:
    good = b"SLM1 27 2\nclaude\0PostToolUse\0/r\0\0\x001.0{}\n"
    records = spool.parse(good + data)
    assert records and records[0]["event"] == "PostToolUse" and records[0]["payload"] == "{}"


def test_a_full_spool_refuses_more(tmp_path: Path) -> None:
    import pytest

    mp = pytest.MonkeyPatch()
    mp.setattr(spool, "MAX_SPOOL_BYTES", 64)
    try:
        assert spool.append(str(tmp_path), "claude", "PostToolUse", "/r", "", "", b"x" * 100, 1.0)
        assert not spool.append(str(tmp_path), "claude", "PostToolUse", "/r", "", "", b"y", 2.0)
    finally:
        mp.undo()
    assert [r["payload"] for r in spool.take(str(tmp_path))] == ["x" * 100]
