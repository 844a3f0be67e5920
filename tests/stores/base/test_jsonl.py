"""JsonlLog: round trips, offsets, torn tails, corrupt lines, rm -rf while open, rewrite."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.stores import JsonlLog, StoreError, WarningLog
from slmactor.stores.base.errors import RecordNotSerializable, RecordTooLarge

CLOCK = 1_790_000_000.0


def make_log(path: Path, **kwargs: Any) -> tuple[JsonlLog, WarningLog]:
    warnings = WarningLog()
    return JsonlLog(path, warnings, now=lambda: CLOCK, **kwargs), warnings


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
records = st.dictionaries(st.text(max_size=10), json_values, max_size=6)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(records, max_size=12))
def test_append_scan_read_at_round_trip(batch: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log, warnings = make_log(Path(tmp) / "log.jsonl", redact=False)
        offsets = [log.append(record) for record in batch]
        scanned = list(log.scan())
        assert [offset for offset, _ in scanned] == offsets
        assert [record for _, record in scanned] == batch
        assert [log.read_at(offset) for offset in offsets] == batch
        assert log.corrupt_lines == 0
        assert len(warnings) == 0
        log.close()
        reopened, _ = make_log(Path(tmp) / "log.jsonl", redact=False)
        assert reopened.records() == batch


def test_offsets_are_byte_offsets_of_each_line(tmp_path: Path) -> None:
    log, _ = make_log(tmp_path / "log.jsonl")
    first = log.append({"text": "naïve"})
    second = log.append({"n": 2})
    raw = (tmp_path / "log.jsonl").read_bytes()
    assert first == 0
    assert second == raw.index(b"\n") + 1
    assert raw[second:] == b'{"n":2}\n'
    assert log.size() == len(raw)


def test_read_at_rejects_offsets_inside_a_line_and_past_the_end(tmp_path: Path) -> None:
    log, _ = make_log(tmp_path / "log.jsonl")
    log.append({"outer": {"inner": 1}})
    second = log.append({"n": 2})
    raw = (tmp_path / "log.jsonl").read_bytes()
    inside = raw.index(b'{"inner"')
    assert log.read_at(inside) is None
    assert log.read_at(second + 1) is None
    assert log.read_at(len(raw)) is None
    assert log.read_at(-1) is None
    assert make_log(tmp_path / "missing.jsonl")[0].read_at(0) is None


def test_torn_tail_is_cut_before_the_next_append(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n{"c":')
    log, warnings = make_log(path)
    assert log.records() == [{"a": 1}, {"b": 2}]
    assert log.corrupt_lines == 1
    offset = log.append({"d": 4})
    assert offset == len(b'{"a":1}\n{"b":2}\n')
    assert path.read_bytes() == b'{"a":1}\n{"b":2}\n{"d":4}\n'
    assert log.records() == [{"a": 1}, {"b": 2}, {"d": 4}]
    assert log.corrupt_lines == 0
    assert any("torn final record" in text for text in warnings.texts())


def test_whole_final_record_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}')
    log, warnings = make_log(path)
    assert log.records() == [{"a": 1}, {"b": 2}]
    log.append({"c": 3})
    assert path.read_bytes() == b'{"a":1}\n{"b":2}\n{"c":3}\n'
    assert any("missing final newline" in text for text in warnings.texts())


def test_torn_tail_longer_than_a_line_limit_is_cut(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a":1}\n' + b"x" * 200_000)
    log, _ = make_log(path, max_line_bytes=1024)
    log.append({"b": 2})
    assert path.read_bytes() == b'{"a":1}\n{"b":2}\n'


def test_corrupt_and_oversize_lines_are_skipped_neighbours_kept(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    lines = [
        b'{"n":1}',
        b"not json at all",
        b'{"n":2}',
        b"[1,2,3]",  # valid JSON, not an object
        b'"just a string"',
        b'{"n":3}',
        b'{"bad utf8":"\xff\xfe"}',
        b'{"big":"' + b"y" * 5000 + b'"}',  # over the 1 KiB limit
        b"\x00\x00\x00",
        b"",  # blank lines are not records and not corruption
        b'{"n":4}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    log, warnings = make_log(path, max_line_bytes=1024)
    scanned = list(log.scan())
    assert [record for _, record in scanned] == [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}]
    assert log.corrupt_lines == 6
    assert warnings.texts() == ["skipped 6 corrupt record(s) in log.jsonl"]
    for offset, record in scanned:
        assert log.read_at(offset) == record
    oversize_offset = path.read_bytes().index(b'{"big"')
    assert log.read_at(oversize_offset) is None


def test_ten_megabyte_line_is_skipped_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with path.open("wb") as handle:
        handle.write(b'{"n":1}\n')
        handle.write(b"z" * (10 * 1024 * 1024) + b"\n")
        handle.write(b'{"n":2}\n')
    log, _ = make_log(path)
    assert log.records() == [{"n": 1}, {"n": 2}]
    assert log.corrupt_lines == 1


def test_store_directory_removed_while_open_is_recreated(tmp_path: Path) -> None:
    store = tmp_path / "proj" / ".slmcode" / "memory"
    path = store / "episodes.jsonl"
    log, warnings = make_log(path)
    log.append({"n": 1})
    shutil.rmtree(tmp_path / "proj")
    offset = log.append({"n": 2})
    assert offset == 0
    assert path.read_bytes() == b'{"n":2}\n'
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o700
    assert any("deleted or replaced" in text for text in warnings.texts())
    assert log.records() == [{"n": 2}]


def test_file_replaced_while_open_gets_the_next_record(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log, warnings = make_log(path)
    log.append({"n": 1})
    replacement = tmp_path / "other.jsonl"
    replacement.write_bytes(b'{"other":true}\n')
    os.replace(replacement, path)
    log.append({"n": 2})
    assert log.records() == [{"other": True}, {"n": 2}]
    assert any("deleted or replaced" in text for text in warnings.texts())


def test_file_unlinked_while_open_is_not_written_into(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log, _ = make_log(path)
    log.append({"n": 1})
    os.unlink(path)
    log.append({"n": 2})
    assert path.read_bytes() == b'{"n":2}\n'


def test_new_files_are_private(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "log.jsonl"
    log, _ = make_log(path)
    log.append({"n": 1})
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


def test_rewrite_shrinks_the_file_and_returns_new_offsets(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log, _ = make_log(path)
    for n in range(10):
        log.append({"n": n, "pad": "p" * 50})
    before = log.size()
    offsets = log.rewrite([{"n": 8}, {"n": 9}])
    assert offsets == [0, len(b'{"n":8}\n')]
    assert log.size() < before
    assert [log.read_at(offset) for offset in offsets] == [{"n": 8}, {"n": 9}]
    # Appends after a rewrite land in the new file, not the replaced inode.
    log.append({"n": 10})
    assert log.records() == [{"n": 8}, {"n": 9}, {"n": 10}]
    assert not [name for name in os.listdir(tmp_path) if ".tmp-" in name]


def test_rewrite_of_nothing_leaves_an_empty_log(tmp_path: Path) -> None:
    log, _ = make_log(tmp_path / "log.jsonl")
    log.append({"n": 1})
    assert log.rewrite([]) == []
    assert log.records() == []
    assert log.size() == 0


def test_stale_temp_files_are_removed_on_open(tmp_path: Path) -> None:
    stale = tmp_path / ".log.jsonl.tmp-abc123"
    stale.write_bytes(b"half a rewrite")
    unrelated = tmp_path / ".other.jsonl.tmp-abc123"
    unrelated.write_bytes(b"not ours")
    make_log(tmp_path / "log.jsonl")
    assert not stale.exists()
    assert unrelated.exists()


def test_record_limits_are_enforced_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log, _ = make_log(path, max_line_bytes=64)
    with pytest.raises(RecordTooLarge):
        log.append({"text": "x" * 100})
    with pytest.raises(RecordNotSerializable):
        log.append({"value": float("nan")})
    with pytest.raises(RecordNotSerializable):
        log.append({"value": {1, 2}})
    assert not path.exists() or path.read_bytes() == b""
    assert isinstance(RecordTooLarge(path, 1, 0), StoreError)


def test_records_are_redacted_unless_disabled(tmp_path: Path) -> None:
    token = "ghp_" + "Ab1" * 12
    redacting, _ = make_log(tmp_path / "a.jsonl")
    redacting.append({"error": f"auth failed for {token}", "password": "hunter2hunter2"})
    raw = (tmp_path / "a.jsonl").read_text()
    assert token not in raw and "hunter2hunter2" not in raw
    assert "«redacted:github_token»" in raw
    plain, _ = make_log(tmp_path / "b.jsonl", redact=False)
    plain.append({"error": token})
    assert token in (tmp_path / "b.jsonl").read_text()


def test_read_only_log_reads_but_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"n":1}\n{"torn')
    stale = tmp_path / ".log.jsonl.tmp-x"
    stale.write_bytes(b"")
    log, _ = make_log(path, read_only=True)
    assert log.records() == [{"n": 1}]
    with pytest.raises(StoreError):
        log.append({"n": 2})
    with pytest.raises(StoreError):
        log.rewrite([])
    with pytest.raises(StoreError):
        log.delete()
    assert path.read_bytes() == b'{"n":1}\n{"torn'
    assert stale.exists()


def test_missing_log_reads_empty_and_delete_is_idempotent(tmp_path: Path) -> None:
    log, warnings = make_log(tmp_path / "nope" / "log.jsonl")
    assert log.records() == []
    assert log.size() == 0
    log.delete()
    log.append({"n": 1})
    log.delete()
    log.delete()
    assert not (tmp_path / "nope" / "log.jsonl").exists()
    assert len(warnings) == 0


def test_symlink_at_the_log_path_is_never_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    path = tmp_path / "log.jsonl"
    path.symlink_to(victim)
    log, warnings = make_log(path)
    assert log.records() == []
    log.append({"n": 1})
    assert victim.read_text() == "precious\n"
    assert path.read_bytes() == b'{"n":1}\n'
    assert (tmp_path / "log.jsonl.corrupt").is_symlink()
    assert any("not a regular file" in text for text in warnings.texts())


def test_directory_or_fifo_at_the_log_path_is_moved_aside(tmp_path: Path) -> None:
    directory = tmp_path / "dir.jsonl"
    directory.mkdir()
    log, _ = make_log(directory)
    assert log.records() == []
    log.append({"n": 1})
    assert log.records() == [{"n": 1}]
    assert (tmp_path / "dir.jsonl.corrupt").is_dir()

    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    fifo_log, _ = make_log(fifo)
    assert fifo_log.records() == []  # must not block
    assert fifo_log.read_at(0) is None
    fifo_log.append({"n": 1})
    assert fifo_log.records() == [{"n": 1}]


def test_unicode_and_separators_survive(tmp_path: Path) -> None:
    log, _ = make_log(tmp_path / "log.jsonl")
    record = {"text": "line1\nline2\u2028\u2029 «ok» \U0001f600", "nested": {"a": [1, "\n"]}}
    offset = log.append(record)
    assert log.read_at(offset) == record
    raw = (tmp_path / "log.jsonl").read_bytes()
    assert raw.count(b"\n") == 1
    assert json.loads(raw) == record


def test_scan_resumes_from_an_offset(tmp_path: Path) -> None:
    log, _ = make_log(tmp_path / "log.jsonl")
    offsets = [log.append({"n": n}) for n in range(5)]
    assert list(log.scan(start=offsets[3])) == [(offsets[3], {"n": 3}), (offsets[4], {"n": 4})]
    # Inside a line: that line is skipped, reading starts at the next one.
    assert list(log.scan(start=offsets[1] + 2)) == [
        (offsets[2], {"n": 2}),
        (offsets[3], {"n": 3}),
        (offsets[4], {"n": 4}),
    ]
    assert list(log.scan(start=log.size())) == []
    assert list(log.scan(start=log.size() + 100)) == []
    assert log.corrupt_lines == 0


def test_store_removed_during_the_write_gets_the_record_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    path = store / "log.jsonl"
    log, warnings = make_log(path)
    log.append({"n": 1})
    real_write = os.write
    removed: list[bool] = []

    def write_then_remove(fd: int, data: bytes) -> int:
        written = real_write(fd, data)
        if not removed:
            removed.append(True)
            shutil.rmtree(store)  # lands between the write and the acknowledgement
        return written

    monkeypatch.setattr(os, "write", write_then_remove)
    offset = log.append({"n": 2})
    monkeypatch.setattr(os, "write", real_write)
    assert offset == 0
    assert path.read_bytes() == b'{"n":2}\n'
    assert any("during a write" in text for text in warnings.texts())


def test_write_burst_with_repeated_rm_rf_never_acknowledges_a_lost_record(tmp_path: Path) -> None:
    """RELIABILITY T17: after every acknowledged append the record is in the file at the path,
    unless a later deletion removed it; the log never raises anything but StoreWriteError."""
    store = tmp_path / "proj" / ".slmcode" / "memory"
    path = store / "episodes.jsonl"
    log, _ = make_log(path)
    since_last_delete: list[dict[str, Any]] = []
    for n in range(300):
        if n % 37 == 5:
            shutil.rmtree(tmp_path / "proj", ignore_errors=True)
            since_last_delete = []
        record = {"n": n, "pad": "x" * (n % 50)}
        offset = log.append(record)
        since_last_delete.append(record)
        assert log.read_at(offset) == record
    assert log.records() == since_last_delete


def test_read_many_answers_each_offset_through_one_descriptor(tmp_path: Path) -> None:
    log, _ = make_log(tmp_path / "log.jsonl")
    offsets = [log.append({"n": n, "pad": "p" * (n * 3000)}) for n in range(4)]
    inside = offsets[2] + 3
    assert log.read_many([offsets[3], inside, offsets[0], -5, 10**9, offsets[1]]) == [
        {"n": 3, "pad": "p" * 9000},  # longer than the first read: the read grows
        None,
        {"n": 0, "pad": ""},
        None,
        None,
        {"n": 1, "pad": "p" * 3000},
    ]
    assert log.read_many([]) == []
    assert make_log(tmp_path / "missing.jsonl")[0].read_many([0, 1]) == [None, None]


def test_scan_is_a_snapshot_of_the_log_when_it_started(tmp_path: Path) -> None:
    """Records appended while a scan runs are left for the next scan: a record still being
    written by another thread can never look like a torn tail to a scan already reading."""
    log, warnings = make_log(tmp_path / "log.jsonl")
    for n in range(3):
        log.append({"n": n})
    scan = log.scan()
    assert next(scan) == (0, {"n": 0})
    log.append({"n": 3})
    assert [record["n"] for _offset, record in scan] == [1, 2]
    assert log.corrupt_lines == 0
    assert [record["n"] for record in log.records()] == [0, 1, 2, 3]
    assert len(warnings) == 0


@settings(max_examples=60, deadline=None)
@given(records=st.lists(st.dictionaries(st.sampled_from(["a", "b", "note"]), json_values,
                                        max_size=3), min_size=1, max_size=12),
       keep=st.lists(st.booleans(), min_size=12, max_size=12))
def test_keeping_lines_gives_the_log_a_rewrite_of_the_same_records_gives(
        records: list[dict[str, Any]], keep: list[bool]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        copied, _ = make_log(Path(tmp) / "copied.jsonl")
        encoded, _ = make_log(Path(tmp) / "encoded.jsonl")
        offsets = []
        for n, record in enumerate(records):
            record = {**record, "id": f"r{n}"}
            offsets.append((copied.append(record), record["id"]))
            encoded.append(record)
        kept = [pair for pair, wanted in zip(offsets, keep, strict=False) if wanted]
        new_offsets = copied.keep_lines(kept)
        by_id = {r["id"]: r for r in encoded.records()}
        assert new_offsets == encoded.rewrite(by_id[record_id] for _, record_id in kept)
        assert copied.path.read_bytes() == encoded.path.read_bytes()
        assert [copied.read_at(offset) for offset in new_offsets] == [
            by_id[record_id] for _, record_id in kept]


def test_keeping_lines_of_a_log_someone_else_changed_leaves_it_alone(tmp_path: Path) -> None:
    log, _ = make_log(tmp_path / "log.jsonl")
    first = log.append({"id": "a", "n": 1})
    second = log.append({"id": "b", "n": 2})
    # Another writer put a record of its own where "b" was: the offsets no longer name "b".
    log.path.write_bytes(b'{"id":"a","n":1}\n{"id":"c","n":3}\n')
    before = log.path.read_bytes()
    assert log.keep_lines([(first, "a"), (second, "b")]) is None
    assert log.keep_lines([(first + 1, "a")]) is None  # not the start of a line
    assert log.path.read_bytes() == before
    assert log.keep_lines([(second, "c")]) == [0]
    assert log.records() == [{"id": "c", "n": 3}]
