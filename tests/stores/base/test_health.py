"""The store-fault registry behind `status`'s `store_faults`: a failed write marks its
directory; a good write there clears it; a full disk is cleared by a good write anywhere on the
same file system, a permission fault only by one in its own directory."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path

import pytest

from slmactor.stores.base import health
from slmactor.stores.base.fsutil import atomic_write_bytes


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    health.clear()
    yield
    health.clear()


def test_a_full_disk_is_cleared_by_any_good_write_on_that_file_system(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    health.write_failed(tmp_path / "a" / "facts.json", "disk full", errno.ENOSPC)
    health.write_failed(tmp_path / "b" / "x.json", "no access", errno.EACCES)
    assert [f["dir"] for f in health.faults()] == [str(tmp_path / "a"), str(tmp_path / "b")]
    atomic_write_bytes(tmp_path / "c.json", b"{}")  # space is back on this file system
    assert [f["dir"] for f in health.faults()] == [str(tmp_path / "b")]
    atomic_write_bytes(tmp_path / "b" / "y.json", b"{}")  # the directory is writable again
    assert health.faults() == []


def test_a_failed_primitive_write_is_recorded_with_its_reason(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where a directory should be")
    with pytest.raises(Exception, match="could not"):
        atomic_write_bytes(blocked / "doc.json", b"{}")
    (fault,) = health.faults()
    assert fault["dir"] == str(blocked) and "could not" in str(fault["reason"])
