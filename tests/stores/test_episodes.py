"""The episode store on real files: S-2.4–S-2.6 load/append/get, S-7.8 prune, corruption."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.recall.episode import Episode, FailureNote
from slmactor.logic.recall.index import RecallQuery
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.episodes import INDEX_NAME, LOG_NAME, STALE_WARNING, EpisodeStore

DAY = 86_400.0
NOW = 1_800_000_000.0


class Clock:
    def __init__(self, t: float = NOW) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def ep(query: str, age_days: float = 0.0, files: tuple[str, ...] = (), **kw: object) -> Episode:
    return Episode(query=query, at=NOW - age_days * DAY, files_changed=files, **kw)  # type: ignore[arg-type]


def open_store(tmp_path: Path, **kw: object) -> tuple[EpisodeStore, WarningLog]:
    warnings = WarningLog()
    store = EpisodeStore(tmp_path / "memory", warnings, now=Clock(), **kw)  # type: ignore[arg-type]
    return store, warnings


def test_append_get_recent_all_and_reopen_from_the_index(tmp_path: Path) -> None:
    store, warnings = open_store(tmp_path)
    a, added = store.append(ep("fix the parser crash", 3, ("src/parser.py",), success=True))
    assert added and a.id.startswith("ep_") and a.verdict == "success"
    b, _ = store.append(ep("add retry to the http client", 1, ("src/http.py",)))
    c, _ = store.append(ep("document the cache", 2))
    assert [e.id for e in store.recent(0)] == [b.id, c.id, a.id]
    assert [e.id for e in store.recent(2)] == [b.id, c.id]
    assert [e.id for e in store.all()] == [a.id, c.id, b.id]
    assert store.get(b.id) == b
    assert store.get("ep_missing") is None
    store.close()
    index = json.loads((tmp_path / "memory" / INDEX_NAME).read_text())
    assert index["version"] == 1 and [e["id"] for e in index["entries"]] == [a.id, c.id, b.id]
    assert set(index["entries"][0]) >= {"id", "at", "offset", "query", "summary", "files",
                                        "tools", "tags", "language", "model", "success",
                                        "failures"}
    again, warnings2 = open_store(tmp_path)
    assert len(again) == 3 and warnings2.texts() == [] and warnings.texts() == []
    hits = again.recall(RecallQuery("parser crash"), NOW)
    assert [h.entry.id for h in hits] == [a.id]
    assert again.get(a.id) == a


def test_the_index_is_one_entry_per_line_and_a_flush_encodes_only_new_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The index is written from a worker thread while the actor answers recalls: unchanged
    # entries keep their line from the last flush instead of being encoded again.
    from slmactor.stores import episodes

    encoded: list[str] = []
    real = episodes.encode_row
    monkeypatch.setattr(episodes, "encode_row", lambda r: encoded.append(r["id"]) or real(r))
    store, warnings = open_store(tmp_path)
    first = [store.append(ep(f"task number {i}", 3 - i))[0].id for i in range(3)]
    assert store.flush() and sorted(encoded) == sorted(first)
    newest, _ = store.append(ep("one more task", 0))
    encoded.clear()
    assert store.flush() and encoded == [newest.id]
    lines = (tmp_path / "memory" / INDEX_NAME).read_text().splitlines()
    assert sum('"id":' in line for line in lines) == 4  # one entry per line: diffs stay small
    again, warnings2 = open_store(tmp_path)
    assert [e.id for e in again.all()] == [e.id for e in store.all()]
    assert warnings.texts() == [] and warnings2.texts() == []


def test_duplicate_id_is_a_no_op(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path)
    first, added = store.append(ep("same task", 1, ("a.py",)))
    size = (tmp_path / "memory" / LOG_NAME).stat().st_size
    again, added_again = store.append(ep("same task", 1, ("a.py",)))
    explicit, added_explicit = store.append(Episode(id=first.id, query="other text"))
    assert added and not added_again and not added_explicit
    assert again == first and explicit == first
    assert (tmp_path / "memory" / LOG_NAME).stat().st_size == size
    assert len(store) == 1


def test_stale_index_is_rebuilt_with_the_warning(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path)
    ids = [store.append(ep(f"task number {i}", 10 - i))[0].id for i in range(4)]
    store.close()
    log = tmp_path / "memory" / LOG_NAME
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[1:]))  # the newest entry's offset no longer holds its id
    again, warnings = open_store(tmp_path)
    assert STALE_WARNING in warnings.texts()
    assert sorted(e.id for e in again.recent(0)) == sorted(ids[1:])
    assert again.get(ids[3]) is not None
    index = json.loads((tmp_path / "memory" / INDEX_NAME).read_text())
    assert len(index["entries"]) == 3  # and the rebuilt index was written back


def test_missing_or_unreadable_index_rebuilds_silently(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path)
    store.append(ep("alpha task", 1))
    store.append(ep("beta task", 0))
    store.close()
    (tmp_path / "memory" / INDEX_NAME).unlink()
    again, warnings = open_store(tmp_path)
    assert len(again) == 2 and STALE_WARNING not in warnings.texts()
    again.close()
    (tmp_path / "memory" / INDEX_NAME).write_text("{not json")
    third, warnings3 = open_store(tmp_path)
    assert len(third) == 2 and STALE_WARNING not in warnings3.texts()


def test_corrupt_and_oversize_lines_are_skipped_and_neighbours_kept(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    good1 = Episode(id="ep_one", query="first good", at=NOW - DAY).to_dict()
    good2 = Episode(id="ep_two", query="second good", at=NOW).to_dict()
    huge = Episode(id="ep_huge", query="x", summary="y" * 40_000, at=NOW).to_dict()
    lines = [
        json.dumps(good1),
        "{this is not json",
        json.dumps(huge),  # > 32 KiB: treated as corrupt, drained, not parsed
        json.dumps({"query": "no id here"}),
        "[1, 2, 3]",
        "",
        json.dumps(good2),
    ]
    (memory / LOG_NAME).write_text("\n".join(lines) + "\n")
    store, warnings = open_store(tmp_path)
    assert [e.id for e in store.recent(0)] == ["ep_two", "ep_one"]
    assert "skipped 4 corrupt episode record(s) in episodes.jsonl" in warnings.texts()
    got = store.get("ep_two")
    assert got is not None and got.query == "second good"
    assert store.get("ep_huge") is None


def test_duplicate_ids_in_the_log_keep_the_first(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    rows = [Episode(id="ep_x", query="original", at=NOW).to_dict(),
            Episode(id="ep_x", query="copy", at=NOW).to_dict()]
    (memory / LOG_NAME).write_text("".join(json.dumps(r) + "\n" for r in rows))
    store, _ = open_store(tmp_path)
    assert len(store) == 1
    got = store.get("ep_x")
    assert got is not None and got.query == "original"


def test_hand_edited_log_still_answers_get(tmp_path: Path) -> None:
    store, warnings = open_store(tmp_path)
    a, _ = store.append(ep("edit me by hand", 2))
    b, _ = store.append(ep("leave me alone", 1))
    log = tmp_path / "memory" / LOG_NAME
    text = log.read_text()
    # A person adds a note line at the top and lengthens a record: every offset moves.
    log.write_text('{"id": "ep_note", "query": "a note"}\n' + text.replace("edit me by hand",
                                                                          "edited by a person"))
    got_a, got_b = store.get(a.id), store.get(b.id)
    assert got_a is not None and got_a.query == "edited by a person"
    assert got_b == b
    # The first miss rebuilt the index: offsets point at the edited lines again.
    assert warnings.texts().count(STALE_WARNING) == 1
    entry = store.entry(b.id)
    assert entry is not None and log.read_bytes()[entry.offset:].startswith(b'{"id":"' + b.id.encode())
    assert store.get("ep_note") is not None and len(store) == 3


def test_appends_after_the_last_flush_are_caught_up_on_open(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path)
    store.append(ep("flushed task", 2))
    store.flush()
    late, _ = store.append(ep("appended but never flushed", 1))  # then the process dies
    again, _ = open_store(tmp_path)
    assert again.get(late.id) == late
    assert [h.entry.id for h in again.recall(RecallQuery("never flushed"), NOW)] == [late.id]


def test_prune_rewrites_and_shrinks_the_file(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path, cap=8)
    for i in range(12):
        store.append(ep(f"task {i} about the parser", age_days=(i % 4) * 70 + i * 0.01))
    log = tmp_path / "memory" / LOG_NAME
    before = log.stat().st_size
    removed = store.prune()  # cap 8 (configured), 180 days (default): 3 too old, then 1 over
    assert removed == 4 and len(store) == 8
    assert log.stat().st_size < before
    assert len(log.read_text().splitlines()) == 8
    for entry in store.recent(0):
        assert entry.at > NOW - 180 * DAY
        assert store.get(entry.id) is not None  # offsets were rebuilt
    again, warnings = open_store(tmp_path)
    assert len(again) == 8 and warnings.texts() == []
    assert store.prune(5, 0) == 3 and len(store) == 5


def test_prune_defaults_and_knob_rule(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path)
    for i in range(4):
        store.append(ep(f"old task {i}", 200 + i))
    store.append(ep("fresh task", 1))
    assert store.prune(0, 0) == 4  # 0 → defaults: 300 episodes, 180 days
    store.append(ep("another old task", 400))
    assert store.prune(-1, -1) == 0  # negative → unlimited
    assert store.prune(1, -1) == 1 and [e.query for e in store.recent(0)] == ["fresh task"]


def test_backstop_prunes_to_cap_past_twice_the_cap(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path, cap=3)
    for i in range(7):
        store.append(ep(f"task {i}", 10 - i))
    assert len(store) == 3
    assert [e.query for e in store.recent(0)] == ["task 6", "task 5", "task 4"]


def test_secrets_are_redacted_on_disk_and_in_recall(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path)
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    stored, _ = store.append(ep(f"rotate token {secret} in ci", 1))
    store.close()
    for name in (LOG_NAME, INDEX_NAME):
        assert secret not in (tmp_path / "memory" / name).read_text()
    assert secret not in stored.query
    again, _ = open_store(tmp_path)
    hit = again.recall(RecallQuery("rotate token"), NOW)[0]
    assert secret not in hit.entry.query


def test_an_oversize_episode_is_shrunk_to_fit_one_line(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path)
    huge = Episode(
        query="big", at=NOW, files_changed=tuple(f"d/{i}/" + "p" * 500 for i in range(24)),
        plan=tuple(f"{i} " + "s" * 150 for i in range(12)),
        # Control characters are escaped as \u0001 (six bytes each) in JSON.
        failures=tuple(FailureNote(message="\x01" * 240, resolution="\x02" * 240, tool="t" * 150)
                       for _ in range(8)),
        tools_used=tuple(f"tool{i}" + "x" * 150 for i in range(16)),
    )
    stored, added = store.append(huge)
    assert added and len(stored.plan) <= 4
    assert store.get(stored.id) == stored


def test_forget_removes_files_and_the_store_stays_usable(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path)
    store.append(ep("one", 1))
    store.close()
    assert store.forget() == 1
    assert not (tmp_path / "memory" / LOG_NAME).exists()
    store.append(ep("two", 0))
    assert [e.query for e in store.recent(0)] == ["two"]


def test_read_only_never_writes(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path)
    store.append(ep("one", 1))
    store.close()
    (tmp_path / "memory" / INDEX_NAME).unlink()
    ro, _ = open_store(tmp_path, read_only=True)
    assert len(ro) == 1 and not (tmp_path / "memory" / INDEX_NAME).exists()
    with pytest.raises(StoreError):
        ro.append(ep("two", 0))
    assert ro.prune(1, 1) == 0


def test_in_memory_store(tmp_path: Path) -> None:
    store = EpisodeStore(None, WarningLog(), now=Clock())
    a, _ = store.append(ep("in memory parser fix", 1))
    assert store.in_memory and store.get(a.id) == a and store.all() == [a]
    assert [h.entry.id for h in store.recall(RecallQuery("parser"), NOW)] == [a.id]
    assert store.flush() is False
    assert list(tmp_path.iterdir()) == []


ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 15), st.integers(0, 400)),
        st.tuples(st.just("reopen"), st.just(0), st.just(0)),
        st.tuples(st.just("prune"), st.integers(-1, 6), st.integers(-1, 250)),
    ),
    max_size=25,
)


@settings(derandomize=True, max_examples=40, deadline=None)
@given(ops)
def test_store_matches_a_model_across_appends_reopens_and_prunes(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int, int]]
) -> None:
    root = tmp_path_factory.mktemp("model")
    store, _ = open_store(root, cap=0)
    model: dict[str, float] = {}
    for op, a, b in steps:
        if op == "append":
            stored, added = store.append(ep(f"task {a}", b / 10))
            assert added == (stored.id not in model)
            model.setdefault(stored.id, stored.at)
        elif op == "reopen":
            store, _ = open_store(root, cap=0)
        else:
            store.prune(a, b)
            ordered = sorted(model.items(), key=lambda kv: kv[1])
            if b != -1:
                cutoff = NOW - (b or 180) * DAY
                ordered = [kv for kv in ordered if kv[1] >= cutoff]
            if a != -1:
                ordered = ordered[-(a or 300):]
            model = dict(ordered)
        assert {e.id for e in store.recent(0)} == set(model)
    for episode_id in model:
        assert store.get(episode_id) is not None


def test_rm_rf_of_the_store_while_open_empties_memory_and_appends_recreate(
    tmp_path: Path,
) -> None:
    import shutil

    store, warnings = open_store(tmp_path)
    store.append(ep("remember the parser fix", 1))
    store.flush()
    shutil.rmtree(tmp_path / "memory")
    assert store.recall(RecallQuery("parser fix"), NOW) == []
    assert "episodes.jsonl was removed; episodic memory starts empty" in warnings.texts()
    assert store.flush() is False and not (tmp_path / "memory").exists()  # nothing re-created
    fresh, added = store.append(ep("after the reset", 0))
    assert added and [e.id for e in store.recent(0)] == [fresh.id]
    assert len((tmp_path / "memory" / LOG_NAME).read_text().splitlines()) == 1


def test_a_line_appended_by_another_writer_is_picked_up(tmp_path: Path) -> None:
    store, warnings = open_store(tmp_path)
    store.append(ep("ours", 1))
    other = Episode(id="ep_other", query="written by the go harness", at=NOW).to_dict()
    with (tmp_path / "memory" / LOG_NAME).open("a") as handle:
        handle.write(json.dumps(other) + "\n")
    hits = store.recall(RecallQuery("go harness"), NOW)
    assert [h.entry.id for h in hits] == ["ep_other"]
    assert STALE_WARNING in warnings.texts()


def test_close_survives_an_index_that_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, warnings = open_store(tmp_path)
    kept, _ = store.append(ep("keep me", 1))

    def fail(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.replace", fail)
    store.close()  # does not raise
    monkeypatch.undo()
    assert any("episode index not written at close" in t for t in warnings.texts())
    again, _ = open_store(tmp_path)  # the log is the truth: rebuilt from it
    assert again.get(kept.id) == kept


def test_the_backstop_prune_copies_the_kept_lines_as_written(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path, cap=3)
    for i in range(6):
        store.append(ep(f"task {i}", 10 - i))
    log = tmp_path / "memory" / LOG_NAME
    lines = log.read_bytes().splitlines(keepends=True)
    store.append(ep("task 6", 4))  # 7 > 2 × 3: pruned to the newest 3
    after = log.read_bytes().splitlines(keepends=True)
    assert after[:2] == lines[4:]  # tasks 4 and 5, byte for byte
    assert len(after) == 3 and json.loads(after[2])["query"] == "task 6"
    assert [e.query for e in store.recent(0)] == ["task 6", "task 5", "task 4"]
    assert all(store.get(e.id) is not None for e in store.recent(0))  # the offsets are the new ones


def test_a_prune_of_a_log_rewritten_behind_the_store_keeps_the_right_episodes(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path, cap=2)
    kept = [store.append(ep(f"task {i}", 10 - i))[0] for i in range(4)]
    log = tmp_path / "memory" / LOG_NAME
    # The same records, re-encoded with spaces by hand: every offset the index holds is stale.
    records = [json.loads(line) for line in log.read_text().splitlines()]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert store.prune(2, -1) == 2
    assert [e.id for e in store.recent(0)] == [kept[3].id, kept[2].id]
    assert all(store.get(e.id) is not None for e in store.recent(0))
