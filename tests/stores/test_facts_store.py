"""facts.json + SEMANTIC.md, procedures.json/latency.json + mirrors (SPEC S-4.10, S-6, S-18.5)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.procedures import ProcedureKey
from slmactor.stores.base.layout import ProjectLayout, UserLayout
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.facts import FactStore
from slmactor.stores.procedures import LatencyStore, ProcedureStore

NOW = 1_790_000_000.0


def clock() -> float:
    return NOW


def open_facts(root: Path, log: WarningLog | None = None) -> FactStore:
    return FactStore.for_project(
        ProjectLayout(root), log if log is not None else WarningLog(), now=clock
    )


def test_flush_writes_document_and_mirror(tmp_path: Path) -> None:
    store = open_facts(tmp_path)
    store.book.observe("command", "make test", "`make test` works here (2/2 runs succeeded)", NOW)
    store.touch()
    store.flush()
    layout = ProjectLayout(tmp_path)
    raw = layout.facts.read_text()
    assert raw.endswith("}\n") and raw.startswith('{\n  "version": 1,')
    doc = json.loads(raw)
    assert doc["updated"] == "2026-09-21T14:13:20Z"
    assert doc["facts"][0]["subject"] == "make test"
    assert doc["facts"][0]["first_seen"] == "2026-09-21T14:13:20Z"
    md = layout.semantic_md.read_text()
    assert md.startswith("# Semantic memory\n")
    assert "Commands that work:\n- `make test` works here" in md
    again = open_facts(tmp_path)
    assert again.book.to_records() == store.book.to_records()


def test_nothing_written_until_something_changed(tmp_path: Path) -> None:
    store = open_facts(tmp_path)
    store.flush()
    assert not ProjectLayout(tmp_path).facts.exists()


def test_corrupt_facts_json_is_moved_aside_and_the_store_starts_empty(tmp_path: Path) -> None:
    layout = ProjectLayout(tmp_path)
    layout.memory_dir.mkdir(parents=True)
    layout.facts.write_text('{"version": 1, "facts": [')
    log = WarningLog()
    store = open_facts(tmp_path, log)
    assert len(store.book) == 0
    assert (layout.memory_dir / "facts.json.corrupt").read_text() == '{"version": 1, "facts": ['
    assert any("facts.json unreadable" in w["text"] for w in log.recent())
    store.book.observe("layout", "src", "code in src/", NOW)
    store.touch()
    store.flush()
    assert json.loads(layout.facts.read_text())["facts"][0]["subject"] == "src"


def test_bad_records_are_skipped_good_ones_kept(tmp_path: Path) -> None:
    layout = ProjectLayout(tmp_path)
    layout.memory_dir.mkdir(parents=True)
    layout.facts.write_text(
        json.dumps({"facts": [{"subject": "", "text": ""}, 3, {"subject": "a", "text": "b"}]})
    )
    assert [f.subject for f in open_facts(tmp_path).book] == ["a"]
    # No version wrote a bare list: it is the wrong shape, set aside whole, not read as facts.
    layout.facts.write_text(json.dumps([{"subject": "bare", "text": "list"}]))
    assert [f.subject for f in open_facts(tmp_path).book] == []
    assert json.loads((layout.memory_dir / "facts.json.corrupt").read_text())[0]["subject"] == "bare"


def test_hand_pinned_fact_is_picked_up_while_open(tmp_path: Path) -> None:
    store = open_facts(tmp_path)
    store.book.observe("convention", "style", "use black", NOW)
    store.touch()
    store.flush()
    path = ProjectLayout(tmp_path).facts
    doc = json.loads(path.read_text())
    doc["facts"][0]["pinned"] = True
    doc["facts"][0]["text"] = "use black with 100 columns"
    path.write_text(json.dumps(doc))
    assert store.sync()
    fact = store.book.get("convention", "style")
    assert fact is not None and fact.pinned and fact.text == "use black with 100 columns"
    assert not store.sync()  # nothing new


def test_rm_rf_is_honoured_and_the_next_write_recreates_the_files(tmp_path: Path) -> None:
    store = open_facts(tmp_path)
    store.book.observe("command", "make", "make works", NOW)
    store.touch()
    store.flush()
    layout = ProjectLayout(tmp_path)
    shutil.rmtree(layout.slmcode)
    assert store.sync()
    assert len(store.book) == 0  # the user deleted memory: it is not written back
    store.book.observe("command", "go test", "go test works", NOW)
    store.touch()
    store.flush()
    assert [f["subject"] for f in json.loads(layout.facts.read_text())["facts"]] == ["go test"]
    assert layout.semantic_md.exists()


def test_sync_holds_off_while_a_write_is_in_flight(tmp_path: Path) -> None:
    store = open_facts(tmp_path)
    store.book.observe("command", "make", "make works", NOW)
    store.touch()
    store.flush()
    ProjectLayout(tmp_path).facts.unlink()
    with store._doc._saving:  # a save of ours in progress (in another thread)
        assert not store.sync()
    assert store.sync()


def test_forget_removes_document_corrupt_copies_and_mirror(tmp_path: Path) -> None:
    layout = ProjectLayout(tmp_path)
    layout.memory_dir.mkdir(parents=True)
    layout.facts.write_text("garbage")
    store = open_facts(tmp_path)
    store.book.observe("command", "make", "make works", NOW)
    store.touch()
    store.flush()
    (layout.memory_dir / "facts.json.corrupt.1").write_text("older garbage")
    store.forget()
    assert sorted(p.name for p in layout.memory_dir.iterdir()) == []
    assert len(store.book) == 0
    store.book.observe("command", "make", "make works", NOW)
    store.touch()
    store.flush()
    assert layout.facts.exists()


def test_secrets_are_redacted_on_disk(tmp_path: Path) -> None:
    store = open_facts(tmp_path)
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    store.book.observe("gotcha", "auth", f"export GITHUB_TOKEN={secret} before pushing", NOW)
    store.touch()
    store.flush()
    layout = ProjectLayout(tmp_path)
    assert secret not in layout.facts.read_text()
    assert secret not in layout.semantic_md.read_text()


def test_procedures_and_latency_round_trip_and_forget(tmp_path: Path) -> None:
    user = UserLayout(tmp_path / "home")
    log = WarningLog()
    procs = ProcedureStore.for_user(user, log, now=clock)
    lat = LatencyStore.for_user(user, log, now=clock)
    for _ in range(3):
        procs.book.record(ProcedureKey.of("edit_format", "diff", "qwen3-coder", "go"), True, NOW)
        lat.book.observe("worker", "qwen3-coder", 1200, NOW)
    procs.touch()
    lat.touch()
    procs.flush()
    lat.flush()
    assert "| edit_format | diff | qwen3-coder | go | 80% | 3 |" in user.procedures_md.read_text()
    assert "| worker | qwen3-coder | 3 | 3 | 1200 | 1200 | 1200 |" in user.latency_md.read_text()
    assert json.loads(user.latency.read_text())["roles"][0]["samples_ms"] == [1200] * 3
    again = ProcedureStore.for_user(user, log, now=clock)
    best = again.book.best("edit_format", "qwen3-coder", "go")
    assert best is not None and best.samples == 3
    assert LatencyStore.for_user(user, log).book.p95("worker", "qwen3-coder") == (1200, 3)
    procs.forget()
    lat.forget()
    assert sorted(p.name for p in user.memory_dir.iterdir()) == []


@pytest.mark.parametrize("name", ["procedures.json", "latency.json"])
def test_corrupt_user_documents_are_survived(tmp_path: Path, name: str) -> None:
    user = UserLayout(tmp_path)
    user.memory_dir.mkdir(parents=True)
    (user.memory_dir / name).write_bytes(b"\xff\xfe not json")
    log = WarningLog()
    procs = ProcedureStore.for_user(user, log)
    lat = LatencyStore.for_user(user, log)
    assert len(procs.book) == 0 and len(lat.book) == 0
    assert (user.memory_dir / f"{name}.corrupt").exists()
    assert any(name in w["text"] for w in log.recent())


@settings(
    derandomize=True, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["command", "gotcha", "file", "pinned?"]),
            st.text(min_size=1, max_size=20),
            st.text(min_size=1, max_size=40),
        ),
        max_size=12,
    )
)
def test_what_is_flushed_is_what_is_loaded(tmp_path: Path, seq: list[tuple[str, str, str]]) -> None:
    root = tmp_path / "p"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    store = open_facts(root)
    for kind, subject, text in seq:
        store.book.observe(kind, subject, text, NOW)
    store.touch()
    store.flush()
    assert open_facts(root).book.to_records() == store.book.to_records()
