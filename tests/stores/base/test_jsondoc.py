"""JsonDoc: atomic saves, quarantine of unreadable documents, read-only mode, stale temps."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.text.redact import redact_obj
from slmactor.stores import JsonDoc, StoreError, WarningLog
from slmactor.stores.base.errors import RecordNotSerializable, RecordTooLarge
from slmactor.stores.base.jsondoc import encode_document

CLOCK = 1_790_000_000.0


def make_doc(path: Path, **kwargs: Any) -> tuple[JsonDoc, WarningLog]:
    warnings = WarningLog()
    return JsonDoc(path, warnings, now=lambda: CLOCK, **kwargs), warnings


def test_missing_document_loads_as_none_without_a_warning(tmp_path: Path) -> None:
    doc, warnings = make_doc(tmp_path / "nothing" / "facts.json")
    assert doc.load() is None
    assert not doc.exists()
    assert len(warnings) == 0


def test_save_writes_indented_json_in_insertion_order_with_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "facts.json"
    doc, _ = make_doc(path)
    data = {"zeta": 1, "alpha": [1, {"b": 2, "a": "é"}]}
    doc.save(data)
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    assert list(json.loads(text)) == ["zeta", "alpha"]
    assert doc.load() == data
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


def test_save_replaces_the_inode_atomically(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    doc, _ = make_doc(path)
    doc.save({"v": 1})
    first_inode = os.stat(path).st_ino
    with path.open("rb") as old_reader:
        doc.save({"v": 2})
        # A reader that opened the old document still sees it whole.
        assert json.loads(old_reader.read()) == {"v": 1}
    assert os.stat(path).st_ino != first_inode
    assert doc.load() == {"v": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["rules.json"]


@pytest.mark.parametrize(
    "content",
    [b"", b"   \n", b"{not json", b'{"a": 1', b"\xff\xfe\x00garbage", b"\x00" * 64, b'{"a":1}x'],
    ids=["empty", "blank", "garbage", "truncated", "binary", "nul", "trailing"],
)
def test_unreadable_document_is_quarantined(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "facts.json"
    path.write_bytes(content)
    doc, warnings = make_doc(path)
    assert doc.load() is None
    assert not path.exists()
    assert (tmp_path / "facts.json.corrupt").read_bytes() == content
    [text] = warnings.texts()
    assert text.startswith("facts.json unreadable") and text.endswith("moved to facts.json.corrupt")
    doc.save({"fresh": True})
    assert doc.load() == {"fresh": True}


def test_earlier_corrupt_copies_are_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    (tmp_path / "policy.json.corrupt").write_bytes(b"first")
    (tmp_path / "policy.json.corrupt.1").write_bytes(b"second")
    doc, warnings = make_doc(path)
    for round_number in range(3):
        path.write_bytes(f"bad {round_number}".encode())
        assert doc.load() is None
    assert (tmp_path / "policy.json.corrupt").read_bytes() == b"first"
    assert (tmp_path / "policy.json.corrupt.1").read_bytes() == b"second"
    assert (tmp_path / "policy.json.corrupt.2").read_bytes() == b"bad 0"
    assert (tmp_path / "policy.json.corrupt.3").read_bytes() == b"bad 1"
    assert (tmp_path / "policy.json.corrupt.4").read_bytes() == b"bad 2"
    assert warnings.texts()[-1].endswith("moved to policy.json.corrupt.4")


def test_valid_json_of_any_shape_is_returned_as_is(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    for value in ([1, 2], "text", 3.5, None, {"a": None}):
        path.write_text(json.dumps(value))
        doc, warnings = make_doc(path)
        assert doc.load() == value
        assert len(warnings) == 0


def test_directory_symlink_and_fifo_in_place_of_the_document(tmp_path: Path) -> None:
    secret = tmp_path / "outside.json"
    secret.write_text('{"stolen": true}')
    link = tmp_path / "link.json"
    link.symlink_to(secret)
    link_doc, warnings = make_doc(link)
    assert link_doc.load() is None  # symlinks are never followed
    assert (tmp_path / "link.json.corrupt").is_symlink()
    link_doc.save({"own": 1})
    assert secret.read_text() == '{"stolen": true}'
    assert link_doc.load() == {"own": 1}

    directory = tmp_path / "dir.json"
    directory.mkdir()
    dir_doc, _ = make_doc(directory)
    assert dir_doc.load() is None
    dir_doc.save([1])
    assert dir_doc.load() == [1]
    assert (tmp_path / "dir.json.corrupt").is_dir()

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    fifo_doc, _ = make_doc(fifo)
    assert fifo_doc.load() is None  # must not block
    assert len(warnings) >= 1


def test_directory_in_the_way_of_a_save_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.mkdir()
    (path / "inner").write_text("x")
    doc, warnings = make_doc(path)
    doc.save({"ok": True})
    assert doc.load() == {"ok": True}
    assert (tmp_path / "doc.json.corrupt" / "inner").read_text() == "x"
    assert any("not a regular file" in text for text in warnings.texts())


def test_oversize_document_is_refused_and_treated_as_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    doc, _ = make_doc(path, max_bytes=100)
    with pytest.raises(RecordTooLarge):
        doc.save({"pad": "x" * 200})
    assert not path.exists()
    path.write_text(json.dumps({"pad": "y" * 200}))
    assert doc.load() is None
    assert (tmp_path / "doc.json.corrupt").exists()


def test_unserialisable_data_raises_before_touching_the_file(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    doc, _ = make_doc(path)
    doc.save({"v": 1})
    for bad in ({"v": float("inf")}, {"v": object()}, {"v": {1, 2}}):
        with pytest.raises(RecordNotSerializable):
            doc.save(bad)
    assert doc.load() == {"v": 1}


def test_deeply_nested_garbage_does_not_crash_load(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_bytes(b"[" * 200_000)
    doc, _ = make_doc(path)
    assert doc.load() is None
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    assert doc.load() is None  # too deep for the parser: quarantined, not raised


def test_secrets_are_redacted_on_save_unless_disabled(tmp_path: Path) -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    doc, _ = make_doc(tmp_path / "a.json")
    doc.save({"note": f"used {key}", "api_key": "s3cr3t-value-123"})
    raw = (tmp_path / "a.json").read_text()
    assert key not in raw and "s3cr3t-value-123" not in raw
    plain, _ = make_doc(tmp_path / "b.json", redact=False)
    plain.save({"note": key})
    assert key in (tmp_path / "b.json").read_text()


def test_stale_temp_files_are_removed_when_opened(tmp_path: Path) -> None:
    stale = [tmp_path / ".rules.json.tmp-a1b2", tmp_path / ".rules.json.tmp-zzz"]
    for path in stale:
        path.write_text("{")
    other = tmp_path / ".policy.json.tmp-a1b2"
    other.write_text("{")
    make_doc(tmp_path / "rules.json")
    assert not any(path.exists() for path in stale)
    assert other.exists()


def test_read_only_document_never_writes_or_quarantines(tmp_path: Path) -> None:
    path = tmp_path / "facts.json"
    path.write_bytes(b"{broken")
    stale = tmp_path / ".facts.json.tmp-1"
    stale.write_text("")
    doc, warnings = make_doc(path, read_only=True)
    assert doc.load() is None
    assert path.read_bytes() == b"{broken"
    assert stale.exists()
    assert "left in place (read-only)" in warnings.texts()[0]
    with pytest.raises(StoreError):
        doc.save({})
    with pytest.raises(StoreError):
        doc.delete()


def test_delete_is_idempotent(tmp_path: Path) -> None:
    doc, _ = make_doc(tmp_path / "doc.json")
    doc.delete()
    doc.save({"v": 1})
    doc.delete()
    doc.delete()
    assert doc.load() is None


def test_permission_denied_document_is_moved_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mode 000 as seen by a non-root daemon (root reads it anyway, so the error is injected)."""
    path = tmp_path / "facts.json"
    path.write_text('{"a": 1}')
    real_open = os.open

    def denied(target: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.fspath(target) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_open(target, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    doc, warnings = make_doc(path)
    assert doc.load() is None
    monkeypatch.setattr(os, "open", real_open)
    assert (tmp_path / "facts.json.corrupt").read_text() == '{"a": 1}'
    assert "permission denied" in warnings.texts()[0]
    doc.save({"b": 2})
    assert doc.load() == {"b": 2}


def test_transient_read_error_warns_but_keeps_the_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "facts.json"
    path.write_text('{"a": 1}')
    real_read = os.read

    def failing_read(fd: int, size: int) -> bytes:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "read", failing_read)
    doc, warnings = make_doc(path)
    assert doc.load() is None
    monkeypatch.setattr(os, "read", real_read)
    assert path.read_text() == '{"a": 1}'  # an EIO is not evidence of corruption
    assert "could not be read" in warnings.texts()[0]
    assert doc.load() == {"a": 1}


_SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
_texts = st.sampled_from(["make lint", f"token {_SECRET}", "password = hunter2hunter2", "é", ""])
_values = st.recursive(st.none() | st.integers() | _texts,
                       lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.sampled_from(["text", "api_key", "n"]), inner,
                                         max_size=3), max_leaves=8)
_records = st.lists(st.dictionaries(st.sampled_from(["id", "text", "api_key", "sources"]), _values,
                                    max_size=4), max_size=6)


@settings(max_examples=80, deadline=None)
@given(saves=st.lists(_records, min_size=1, max_size=4), change=st.integers(0, 5))
def test_saving_a_records_document_again_writes_what_redacting_it_whole_writes(
        saves: list[list[dict[str, Any]]], change: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        doc, _ = make_doc(Path(tmp) / "facts.json", records_key="facts")
        for records in saves:
            data = {"version": 1, "facts": records}
            doc.save(data)
            assert doc.path.read_bytes() == encode_document(redact_obj(data), "facts")
            assert _SECRET not in doc.path.read_text()
            if records:
                # A record changed in place between two saves is redacted afresh, not reused.
                records[change % len(records)]["text"] = f"now {_SECRET}"
                doc.save(data)
                assert doc.path.read_bytes() == encode_document(redact_obj(data), "facts")
                assert _SECRET not in doc.path.read_text()
