"""Floors of the block-under-load bench: two processes of their own, measured beside the daemon.

`echo`: a raw pyzmq REQ/REP echo. What one round trip to an idle process costs while the writers
run: the machine's own tail (scheduling on busy cores), which nothing we serve can undercut.

`replica`: the store sections of a `memory.block` without a run (semantic — facts and do/don't
lessons —, episodic, procedural), computed in a separate process from the project's files, read
only, the way a read replica of the daemon would serve them: no actor hops, no write work in the
process, the episode log followed by reading its new lines. It is not part of slmactor (no working
section, no run context, nothing fed back); it measures what taking the block out of the daemon's
process would buy, and the bench checks that it answers the daemon's text before timing it.

    python -m bench.block_floors echo ENDPOINT
    python -m bench.block_floors replica ENDPOINT PROJECT HOME
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import msgpack
import zmq

from slmactor.logic.memory import block as block_logic
from slmactor.logic.memory.block_items import BlockItem
from slmactor.logic.memory.lesson_recall import items_within
from slmactor.logic.memory.lesson_recall import recall as recall_lessons
from slmactor.logic.recall.episode import Episode, IndexEntry
from slmactor.logic.recall.index import RecallQuery
from slmactor.runtime.daemon import tune_gc
from slmactor.stores.base.layout import ProjectLayout, UserLayout
from slmactor.stores.base.signing import load_signing_key
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.episodes import EpisodeStore
from slmactor.stores.facts import FactStore
from slmactor.stores.polar_lessons import PolarLessonStore
from slmactor.stores.procedures import ProcedureStore

#: The daemon's numbers for the same sections (`actors.distiller_block`, `actors.distiller_lessons`,
#: `actors.recall`): the replica must render what the daemon renders.
BLOCK_SHARE = 0.5
BLOCK_LESSONS = 8
HYDRATE_HITS = 20
STOP = b"stop"


class FollowingEpisodes(EpisodeStore):
    """A read-only episode store that indexes the lines appended to the log since it last looked
    (the daemon's own store rebuilds its whole index when the log grew behind its back: right for
    the one writer, a full re-read per block for a follower)."""

    def _sync_with_disk(self) -> None:
        if self._log is None:
            return
        state = self._log_state()
        seen = self._disk
        if state == seen:
            return
        if state is not None and seen is not None and state[:2] == seen[:2] and state[2] > seen[2]:
            if not _ends_a_line(self._log.path, state[2]):
                return  # a line is being written: read it whole next time
            new: list[IndexEntry] = []
            for offset, record in self._log.scan(seen[2]):
                episode = Episode.from_dict(record)
                if episode.id and self._index.get(episode.id) is None:
                    new.append(IndexEntry.of(episode, offset))
            self._index.add_many(new)
        else:
            self._rebuild_locked()
        self._disk = state


def _ends_a_line(path: Path, size: int) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return os.pread(fd, 1, size - 1) == b"\n"
    finally:
        os.close(fd)


class Replica:
    """The project's stores, read only, and the block's store sections rendered from them."""

    def __init__(self, project: Path, home: Path) -> None:
        warnings = WarningLog()
        layout = ProjectLayout(project)
        key = load_signing_key(home)
        self.facts = FactStore.for_project(layout, warnings, read_only=True, key=key)
        self.lessons = PolarLessonStore(layout.lessons, warnings, key=key)
        self.episodes = FollowingEpisodes(layout.memory_dir, warnings, read_only=True)
        self.procedures = ProcedureStore.for_user(UserLayout(home), warnings, read_only=True)

    def block(self, role: str, query: str, budget: int) -> str:
        now = time.time()
        builder = block_logic.BlockBuilder(role, budget)
        builder.add("working", "")
        self.facts.sync()
        if self.lessons.stale():
            self.lessons.sync()
        allowance = builder.allowance("semantic")
        hits = recall_lessons(list(self.lessons.book.lessons), query, now, BLOCK_LESSONS)
        lessons: list[BlockItem] = []
        if hits and int(allowance * BLOCK_SHARE) > 0:
            lessons, _ = items_within([s.lesson for s in hits], int(allowance * BLOCK_SHARE))
        semantic = block_logic.semantic_section(
            lambda tokens: self.facts.book.items_for(query, tokens, now), lessons, allowance)
        builder.add("semantic", semantic)
        episodic: list[BlockItem] = []
        if query.strip() and builder.allowance("episodic") > 0:
            found = self.episodes.recall(
                RecallQuery(text=query, n=block_logic.RECALL_CANDIDATES), now)
            full = [self.episodes.get_dict(hit.entry.id) for hit in found[:HYDRATE_HITS]]
            reply: dict[str, Any] = {"hits": [
                {"id": hit.entry.id, "score": hit.score,
                 **({"episode": full[rank]} if rank < len(full) and full[rank] is not None else {})}
                for rank, hit in enumerate(found)]}
            episodic = block_logic.episodic_items(
                block_logic.episodes_of(reply), builder.allowance("episodic"), shown=semantic)
        builder.add("episodic", episodic)
        self.procedures.sync()
        allowance = builder.allowance("procedural")
        builder.add("procedural", self.procedures.book.render_items("", "", allowance)
                    if allowance else [])
        return block_logic.render(block_logic.said_once(builder.items()))


def _serve(endpoint: str, answer: Any) -> None:
    tune_gc()  # the daemon's collector settings: no collections the daemon does not make
    with zmq.Context() as ctx, ctx.socket(zmq.REP) as sock:
        sock.setsockopt(zmq.LINGER, 0)
        sock.bind(endpoint)
        while True:
            request = sock.recv()
            if request == STOP:
                sock.send(STOP)
                return
            sock.send(answer(request))


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "echo":
        _serve(argv[1], lambda request: request)
        return 0
    if len(argv) >= 4 and argv[0] == "replica":
        replica = Replica(Path(argv[2]), Path(argv[3]))

        def answer(request: bytes) -> bytes:
            role, query, budget = msgpack.unpackb(request)
            return replica.block(role, query, budget).encode()

        _serve(argv[1], answer)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
