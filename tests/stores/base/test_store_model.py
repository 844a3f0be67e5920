"""Stateful model test of the store primitives (RELIABILITY T6).

Hypothesis drives a JSONL log and a JSON document through appends, prunes (rewrite), restarts
(a fresh object on the same files), `rm -rf` of the store directory, torn tails and corrupted
documents, and after every step compares them with a plain in-memory model: the log must hold
exactly the model's records in order (every offset reading back its record), and the document
must equal the model's last saved value, or read as missing once it was corrupted or deleted.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from slmactor.stores import JsonDoc, JsonlLog, WarningLog
from slmactor.stores.base.jsonl_lines import parse_line

SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
MAX_LINE = 4096
CAP = 20

values = st.one_of(
    st.integers(-1000, 1000),
    st.text(max_size=30),
    st.lists(st.integers(0, 9), max_size=4),
    st.none(),
)


class StoreModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(dir=SCRATCH))
        self.store = self.tmp / "project" / ".slmcode"
        self.log_path = self.store / "memory" / "episodes.jsonl"
        self.doc_path = self.store / "evolve" / "rules.json"
        self.warnings = WarningLog()
        self.records: list[dict[str, Any]] = []
        self.offsets: list[int] = []
        self.document: Any = None
        self.serial = 0
        self.open_stores()

    def open_stores(self) -> None:
        self.log = JsonlLog(self.log_path, self.warnings, max_line_bytes=MAX_LINE)
        self.doc = JsonDoc(self.doc_path, self.warnings)

    def teardown(self) -> None:
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    @rule(value=values)
    def append(self, value: Any) -> None:
        self.serial += 1
        record = {"id": self.serial, "value": value}
        self.offsets.append(self.log.append(record))
        self.records.append(record)

    @precondition(lambda self: len(self.records) > CAP // 2)
    @rule(keep=st.integers(0, CAP // 2))
    def prune(self, keep: int) -> None:
        kept = self.records[len(self.records) - keep :] if keep else []
        self.offsets = self.log.rewrite(kept)
        self.records = list(kept)

    @rule()
    def restart(self) -> None:
        self.log.close()
        self.open_stores()

    @rule()
    def remove_store(self) -> None:
        shutil.rmtree(self.store, ignore_errors=True)
        self.records, self.offsets, self.document = [], [], None

    @precondition(lambda self: self.log_path.exists() and self.log_path.read_bytes()[-1:] == b"\n")
    @rule(
        garbage=st.binary(min_size=1, max_size=40).filter(
            lambda b: b"\n" not in b and parse_line(b) is None
        )
    )
    def tear_the_tail(self, garbage: bytes) -> None:
        """A crash mid-append: a partial line at the end (skipped, then cut by the next append).
        A partial record is never a whole JSON object, so such garbage is not drawn."""
        with self.log_path.open("ab") as handle:
            handle.write(garbage)
        self.log.close()
        self.open_stores()

    @rule(value=values)
    def save(self, value: Any) -> None:
        document = {"rules": value, "serial": self.serial}
        self.doc.save(document)
        self.document = document

    @precondition(lambda self: self.doc_path.exists())
    @rule(garbage=st.binary(max_size=20))
    def corrupt_document(self, garbage: bytes) -> None:
        self.doc_path.write_bytes(b"\x00{" + garbage)
        self.document = None

    @rule()
    def delete_document(self) -> None:
        self.doc.delete()
        self.document = None

    @invariant()
    def log_matches_the_model(self) -> None:
        assert self.log.records() == self.records
        assert self.log.read_many(self.offsets) == self.records

    @invariant()
    def document_matches_the_model(self) -> None:
        assert self.doc.load() == self.document
        if self.document is None:
            assert not self.doc_path.exists()


StoreModel.TestCase.settings = settings(
    derandomize=True, max_examples=60, stateful_step_count=30, deadline=None
)
TestStoreModel = StoreModel.TestCase
