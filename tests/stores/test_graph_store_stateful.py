"""The graph store against a model, under random sequences of adds, re-observations, prunes,
flushes, restarts, index corruption and `rm -rf` (RELIABILITY T6 for the graph)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from slmactor.logic.graph.core import Edge, make_edge, refresh
from slmactor.logic.text.timefmt import SECONDS_PER_DAY
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.graph import INDEX_NAME, GraphStore

NOW = 1_790_000_000.0
AGES = [0, 1, 100, 200, 400]  # days before NOW; > 180 falls to the default prune

edges_st = st.builds(
    lambda a, b, t, age, note: make_edge(f"episode:{a}", f"file:{b}.py", t,
                                         NOW - age * SECONDS_PER_DAY, note=note),
    st.sampled_from("abcd"), st.sampled_from("wxyz"), st.sampled_from(["touched", "mentions"]),
    st.sampled_from(AGES), st.sampled_from(["", "n1", "n2"]),
)


class GraphModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.base = Path(tempfile.mkdtemp(prefix="graph-model-"))
        self.directory = self.base / "graph"
        self.warnings = WarningLog()
        self.store = GraphStore(self.directory, self.warnings, now=lambda: NOW)
        #: What the index holds (refreshes applied) and what the log holds (as written).
        self.index: dict[str, Edge] = {}
        self.log: dict[str, Edge] = {}

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.base, ignore_errors=True)

    def _reopen(self) -> None:
        self.store.close()
        self.store = GraphStore(self.directory, self.warnings, now=lambda: NOW)

    @rule(batch=st.lists(edges_st, max_size=6))
    def add(self, batch: list[Edge]) -> None:
        result = self.store.add_many(batch)
        added = 0
        for edge in batch:
            known = self.index.get(edge.id)
            if known is None:
                self.index[edge.id] = self.log[edge.id] = edge
                added += 1
            else:
                self.index[edge.id] = refresh(known, edge)
        assert result.added == added and not result.errors

    @rule()
    def flush(self) -> None:
        self.store.flush()

    @rule()
    def restart(self) -> None:
        self._reopen()  # close flushes: the index survives with its refreshes

    @rule()
    def prune_by_age(self) -> None:
        cutoff = NOW - 180 * SECONDS_PER_DAY
        stale = {i for i, e in self.index.items() if 0 < e.at < cutoff}
        assert self.store.prune() == len(stale)
        if stale:  # the rewrite puts the refreshed values into the log
            self.index = {i: e for i, e in self.index.items() if i not in stale}
            self.log = dict(self.index)

    @precondition(lambda self: self.directory.exists())
    @rule()
    def corrupt_index_and_restart(self) -> None:
        self.store.flush()
        self.store.close()
        (self.directory / INDEX_NAME).write_text("{torn")
        self.store = GraphStore(self.directory, self.warnings, now=lambda: NOW)
        self.index = dict(self.log)  # rebuilt from the log: refreshes since the last rewrite go

    @rule()
    def remove_directory(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)
        self.index.clear()
        self.log.clear()

    @invariant()
    def store_matches_model(self) -> None:
        stored = {e.id: e for e in self.store.edges()}
        assert stored == self.index
        offsets = [e.offset for e in self.store.index().entries()]
        assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)


GraphModel.TestCase.settings = settings(max_examples=40, stateful_step_count=25, deadline=None,
                                        derandomize=True)
TestGraphModel = GraphModel.TestCase
