"""Stateful model test of the facts store (RELIABILITY T6): observe, refute, prune, flush,
reopen, `rm -rf`, corruption and hand edits, with the model checked after every step."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from slmactor.logic.memory.facts import FactBook
from slmactor.stores.base.layout import ProjectLayout
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.facts import FactStore

NOW = 1_790_000_000.0
SUBJECTS = st.sampled_from(["make", "go test", "src", "fixture", "lint"])
TEXTS = st.sampled_from(["works (1/1)", "works (5/9)", "broken", "moved to tools/"])
KINDS = st.sampled_from(["command", "gotcha", "layout"])


class FactStoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="facts-sm-"))
        self.layout = ProjectLayout(self.root)
        self.store = self._open()
        self.model = FactBook(cap=4)  # what the store should hold
        self.on_disk: list[dict[str, object]] | None = None  # what the last flush wrote
        self.t = NOW

    def _open(self) -> FactStore:
        return FactStore.for_project(self.layout, WarningLog(), cap=4, now=lambda: NOW)

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    @rule(kind=KINDS, subject=SUBJECTS, text=TEXTS)
    def observe(self, kind: str, subject: str, text: str) -> None:
        self.store.sync()
        self.t += 60
        self.store.book.observe(kind, subject, text, self.t)
        self.model.observe(kind, subject, text, self.t)
        self.store.touch()

    @rule(kind=KINDS, subject=SUBJECTS)
    def refute(self, kind: str, subject: str) -> None:
        self.store.sync()
        self.t += 60
        assert self.store.book.refute(kind, subject, self.t) == self.model.refute(
            kind, subject, self.t
        )
        self.store.touch()

    @rule()
    def prune(self) -> None:
        self.store.sync()
        assert self.store.book.prune(self.t, max_facts=3) == self.model.prune(self.t, max_facts=3)
        self.store.touch()

    @rule()
    def flush(self) -> None:
        wrote = self.store.dirty  # a store with nothing new writes nothing
        self.store.flush()
        if wrote:
            self.on_disk = self.model.to_records()

    @rule()
    def reopen(self) -> None:
        self.store = self._open()
        self.model = FactBook.from_records(self.on_disk or [], cap=4)

    @rule()
    def rm_rf(self) -> None:
        shutil.rmtree(self.layout.slmcode, ignore_errors=True)
        # Deleting the file forgets it (unsaved changes with it); deleting nothing changes nothing.
        assert self.store.sync() == (self.on_disk is not None)
        if self.on_disk is not None:
            self.model = FactBook(cap=4)
        self.on_disk = None

    @rule()
    def corrupt(self) -> None:
        self.layout.memory_dir.mkdir(parents=True, exist_ok=True)
        self.layout.facts.write_text('{"facts": [')
        self.store.sync()  # reloads: the corrupt file is moved aside, the store starts empty
        self.model = FactBook(cap=4)
        self.on_disk = None

    @rule(subject=SUBJECTS)
    def hand_pin(self, subject: str) -> None:
        if self.on_disk is None:
            return
        records = [dict(r, pinned=True) if r["subject"] == subject else r for r in self.on_disk]
        self.layout.facts.write_text(json.dumps({"version": 1, "facts": records}))
        assert self.store.sync()
        self.model = FactBook.from_records(records, cap=4)
        self.on_disk = records

    @invariant()
    def store_matches_model(self) -> None:
        assert self.store.book.to_records() == self.model.to_records()
        assert len(self.store.book) <= 2 * 4  # lazily capped at twice the cap

    @invariant()
    def disk_matches_last_flush(self) -> None:
        if self.on_disk is not None and not self.store.dirty:
            assert json.loads(self.layout.facts.read_text())["facts"] == self.on_disk


FactStoreMachine.TestCase.settings = settings(
    max_examples=30, stateful_step_count=25, derandomize=True, deadline=None
)
TestFactStore = FactStoreMachine.TestCase
