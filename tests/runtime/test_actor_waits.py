"""No two actors wait on each other: `graph.backfill` asks the distiller for facts
while `memory.forget` (distiller) asks the graph to forget. Before, both held their mailbox for
the other and both answered only after the internal ask timeout (10 s), forget reporting failure.
"""

from __future__ import annotations

from typing import Any

import pytest
import zmq

from slmactor.protocol import codec
from slmactor.runtime.router import Router
from slmactor.testing import raw_ask, spawn_daemon, stop_quietly, wait_for

pytestmark = pytest.mark.timeout(120)


def test_backfill_and_forget_both_finish_and_forget_succeeds() -> None:
    # A long internal timeout: on the old code the test then fails on forget's answer, not on time.
    daemon = spawn_daemon(env={"SLMACTOR_INTERNAL_ASK_TIMEOUT": "60"})
    ctx: zmq.Context[Any] = zmq.Context()
    socks: list[zmq.Socket[Any]] = []

    def ask(kind: str, **fields: Any) -> zmq.Socket[Any]:
        sock: zmq.Socket[Any] = raw_ask(ctx, daemon, kind, **fields)
        socks.append(sock)
        return sock

    def answer(sock: zmq.Socket[Any]) -> Any:
        assert sock.poll(50_000), "no answer"
        reply = codec.load_reply(sock.recv_multipart())
        assert reply.ok, reply.reason
        return reply.result

    try:
        with daemon.client() as client:
            def depth(name: str) -> int:
                rows = {row["name"]: row for row in client.status()["actors"]}
                return int(rows[name]["inbox_depth"])

            # Order the race so it cannot be missed: the distiller is held, forget queues in its
            # inbox, then the backfill (holding the graph's mailbox) queues fact.list behind it.
            stall = ask("debug.crash", actor="distiller", how="stall")
            wait_for(lambda: depth("distiller") == 0, "the distiller stalled")
            forget = ask("memory.forget", scope="project")
            wait_for(lambda: depth("distiller") == 1, "forget queued")
            backfill = ask("graph.backfill")
            wait_for(lambda: depth("distiller") == 2, "the backfill's fact.list queued")
            ask("debug.crash", actor="distiller", how="release")
            answer(stall)
            forgot = answer(forget)
            assert forgot["ok"] is True, forgot
            assert forgot["errors"] == {}
            assert {"working", "episodic", "graph", "semantic"} <= set(forgot["forgotten"])
            assert answer(backfill)["facts"] == 0
            warnings = [w["text"] for w in client.status()["warnings"]]
            assert not [w for w in warnings if "fact.list failed" in w], warnings
    finally:
        for sock in socks:
            sock.close(linger=0)
        ctx.term()
        stop_quietly(daemon)


def test_a_wait_that_would_close_a_cycle_is_found() -> None:
    router = Router.__new__(Router)
    router.waiting = {"graph": "distiller", "distiller": "recall"}
    assert router.wait_cycle("recall", "graph") == ["recall", "graph", "distiller", "recall"]
    assert router.wait_cycle("distiller", "graph") == ["distiller", "graph", "distiller"]
    assert router.wait_cycle("reflector", "graph") == []
    router.waiting = {"a": "b", "b": "a"}  # a cycle not involving the asker ends the walk
    assert router.wait_cycle("c", "a") == []
