"""The read-only follower of the block-under-load bench's replica experiment, on real files: it
must see what the writing store appended (without re-reading the log) and what a prune rewrote."""

from __future__ import annotations

from pathlib import Path

from bench.block_floors import FollowingEpisodes
from slmactor.logic.recall.episode import Episode
from slmactor.logic.recall.index import RecallQuery
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.episodes import STALE_WARNING, EpisodeStore

NOW = 1_800_000_000.0


def _episode(i: int) -> Episode:
    return Episode(id=f"run-{i}", query=f"fix the upload handling number{i}", at=NOW + i)


def _found(store: EpisodeStore, word: str) -> list[str]:
    return [hit.entry.id for hit in store.recall(RecallQuery(text=word, n=5), NOW + 1000)]


def test_the_follower_indexes_new_lines_and_rereads_a_rewritten_log(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    writer = EpisodeStore(directory, WarningLog(), now=lambda: NOW, cap=3)
    for i in range(3):
        writer.append(_episode(i))
    warnings = WarningLog()
    follower = FollowingEpisodes(directory, warnings, now=lambda: NOW, read_only=True)
    assert _found(follower, "number1") == ["run-1"]

    writer.append(_episode(3))  # appended behind the follower's back: read as a new line
    assert _found(follower, "number3") == ["run-3"]
    assert STALE_WARNING not in warnings.texts()  # the writer's store would rebuild (and say so)

    for i in range(4, 7):  # past twice the cap: the writer prunes, the log is a new file
        writer.append(_episode(i))
    assert len(writer) == 3
    assert _found(follower, "number1") == []
    assert _found(follower, "number6") == ["run-6"]
    assert len(follower) == 3


def test_the_follower_waits_for_a_line_being_written(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    writer = EpisodeStore(directory, WarningLog(), now=lambda: NOW)
    writer.append(_episode(0))
    follower = FollowingEpisodes(directory, WarningLog(), now=lambda: NOW, read_only=True)
    other = EpisodeStore(tmp_path / "other", WarningLog(), now=lambda: NOW)
    other.append(_episode(1))
    line = (tmp_path / "other" / "episodes.jsonl").read_bytes()
    log = directory / "episodes.jsonl"
    with log.open("ab") as out:
        out.write(line[: len(line) // 2])  # another process's append, half done
    assert _found(follower, "number1") == []
    with log.open("ab") as out:
        out.write(line[len(line) // 2 :])
    assert _found(follower, "number1") == ["run-1"]
