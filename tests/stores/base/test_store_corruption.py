"""Corrupt-file recovery (RELIABILITY T4): one random mutation of a valid store file, then every
read path and a write. Nothing may raise; every undamaged JSONL line survives; an unreadable JSON
document is moved aside (earlier corrupt copies kept) and the store keeps working.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slmactor.stores import JsonDoc, JsonlLog, WarningLog, read_text

MAX_LINE = 512
# tmpfs when available: these tests exercise parsing and recovery, not the disk, and a real
# fsync per save would make 300 examples take many seconds on a shared machine.
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
MUTATIONS = ("truncate", "flip", "garbage", "nul", "invalid_utf8", "long_line", "empty")
SETTINGS = settings(
    derandomize=True,
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@dataclass(frozen=True)
class Mutation:
    """The mutated bytes, and which byte positions of the original were damaged."""

    data: bytes
    damaged_from: int  # original lines ending after this position are damaged (truncate)
    damaged: frozenset[int]  # positions damaged in place or inserted before


def mutate(original: bytes, data: st.DataObject) -> Mutation:
    kind = data.draw(st.sampled_from(MUTATIONS), label="mutation")
    size = len(original)
    if kind == "empty":
        return Mutation(b"", 0, frozenset())
    if kind == "truncate":
        cut = data.draw(st.integers(0, size), label="cut")
        return Mutation(original[:cut], cut, frozenset())
    if kind == "flip":
        count = data.draw(st.integers(1, 16), label="flips")
        positions = data.draw(
            st.lists(st.integers(0, size - 1), min_size=count, max_size=count), label="positions"
        )
        mutated = bytearray(original)
        for position in positions:
            mutated[position] ^= data.draw(st.integers(1, 255), label="xor")
        return Mutation(bytes(mutated), size, frozenset(positions))
    insert = {
        "garbage": data.draw(st.binary(min_size=1, max_size=64), label="garbage"),
        "nul": b"\x00" * data.draw(st.integers(1, 32), label="nuls"),
        "invalid_utf8": b"\xff\xfe\xc3\x28\xa0\xa1",
        "long_line": b"L" * (MAX_LINE * 4),
    }[kind]
    at = data.draw(st.integers(0, size), label="at")
    return Mutation(original[:at] + insert + original[at:], size, frozenset({at}))


def line_spans(raw: bytes) -> list[tuple[int, int]]:
    spans, start = [], 0
    for index, byte in enumerate(raw):
        if byte == 0x0A:
            spans.append((start, index + 1))
            start = index + 1
    return spans


def undamaged(raw: bytes, mutation: Mutation) -> list[int]:
    """Indices of original lines the mutation did not touch."""
    keep = []
    for number, (start, end) in enumerate(line_spans(raw)):
        if end > mutation.damaged_from:
            continue
        # A damaged newline just before this line merges it with the previous one.
        if any(start - 1 <= position < end for position in mutation.damaged):
            continue
        keep.append(number)
    return keep


@SETTINGS
@given(st.integers(1, 12), st.data())
def test_jsonl_survives_any_single_mutation(count: int, data: st.DataObject) -> None:
    records = [{"n": n, "text": f"record {n} ✓", "tags": ["a", "b"][: n % 3]} for n in range(count)]
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        path = Path(tmp) / "episodes.jsonl"
        writer = JsonlLog(path, WarningLog(), max_line_bytes=MAX_LINE)
        offsets = [writer.append(record) for record in records]
        writer.close()
        original = path.read_bytes()
        mutation = mutate(original, data)
        path.write_bytes(mutation.data)

        log = JsonlLog(path, WarningLog(), max_line_bytes=MAX_LINE)
        scanned = log.records()
        assert all(isinstance(record, dict) for record in scanned)
        for number in undamaged(original, mutation):
            assert records[number] in scanned
        for offset in offsets:
            log.read_at(offset)  # must not raise
        assert log.size() == len(mutation.data)

        new = {"n": "new", "text": "after the damage"}
        offset = log.append(new)
        assert log.read_at(offset) == new
        assert log.records() == [*scanned, new]


@SETTINGS
@given(st.data())
def test_json_doc_survives_any_single_mutation(data: st.DataObject) -> None:
    document = {"rules": [{"id": f"r{n}", "alpha": n + 1, "text": "é ✓"} for n in range(4)]}
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        path = Path(tmp) / "rules.json"
        earlier = Path(tmp) / "rules.json.corrupt"
        earlier.write_bytes(b"an earlier corrupt copy")
        JsonDoc(path, WarningLog()).save(document)
        mutation = mutate(path.read_bytes(), data)
        path.write_bytes(mutation.data)
        warnings = WarningLog()
        doc = JsonDoc(path, warnings)
        loaded = doc.load()
        if loaded is None:
            assert not path.exists()
            assert (Path(tmp) / "rules.json.corrupt.1").read_bytes() == mutation.data
            assert len(warnings) == 1
        else:
            assert loaded == json.loads(mutation.data)
            assert len(warnings) == 0
        assert earlier.read_bytes() == b"an earlier corrupt copy"
        doc.save({"rules": []})
        assert doc.load() == {"rules": []}


@settings(derandomize=True, max_examples=100, deadline=None)
@given(st.binary(max_size=4096), st.integers(0, 5000))
def test_markdown_read_never_raises(content: bytes, cap: int) -> None:
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        path = Path(tmp) / "MEMORY.md"
        path.write_bytes(content)
        text = read_text(path, cap_bytes=cap)
        assert len(text.encode("utf-8", "surrogatepass")) <= max(cap, 0) * 3


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads mode-000 files anyway")
def test_mode_000_files_read_as_empty_and_are_replaced(tmp_path: Path) -> None:
    log_path, doc_path = tmp_path / "log.jsonl", tmp_path / "doc.json"
    log_path.write_bytes(b'{"n":1}\n')
    doc_path.write_text("{}")
    os.chmod(log_path, 0)
    os.chmod(doc_path, 0)
    log = JsonlLog(log_path, WarningLog())
    assert log.records() == []
    doc = JsonDoc(doc_path, WarningLog())
    assert doc.load() is None
    doc.save({"ok": 1})
    assert doc.load() == {"ok": 1}
