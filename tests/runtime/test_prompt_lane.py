"""What a prompt waits on is served before the writes queued ahead of it in the same actor.

An actor is held (the debug `stall`), writes queue in its mailbox, then the ask a prompt waits
on arrives. Released, the actor answers that ask first: it does not contain what the queued
writes add, and the writes are all acknowledged after it. On a single FIFO mailbox the ask was
answered last, with every queued write in it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import zmq
import zmq.asyncio

from slmactor.client import Client
from slmactor.protocol import codec
from slmactor.runtime.router import WAKE_UP, Router
from slmactor.testing import DaemonProcess, raw_ask, spawn_daemon, stop_quietly, wait_for

pytestmark = pytest.mark.timeout(120)

QUEUED = 20


@pytest.fixture
def held() -> Iterator[tuple[DaemonProcess, Any, Client]]:
    daemon = spawn_daemon()
    ctx: zmq.Context[Any] = zmq.Context()
    socks: list[zmq.Socket[Any]] = []

    def ask(message_kind: str, /, **fields: Any) -> zmq.Socket[Any]:
        sock: zmq.Socket[Any] = raw_ask(ctx, daemon, message_kind, **fields)
        socks.append(sock)
        return sock

    client = daemon.client()
    try:
        yield daemon, ask, client
    finally:
        client.close()
        for sock in socks:
            sock.close(linger=0)
        ctx.term()
        stop_quietly(daemon)


def _answer(sock: zmq.Socket[Any]) -> Any:
    assert sock.poll(50_000), "no answer"
    reply = codec.load_reply(sock.recv_multipart())
    assert reply.ok, reply.reason
    return reply.result


def _hold(client: Client, ask: Any, actor: str) -> tuple[Any, Any]:
    def depth() -> int:
        return int({row["name"]: row for row in client.status()["actors"]}[actor]["inbox_depth"])

    stall = ask("debug.crash", actor=actor, how="stall")
    wait_for(lambda: depth() == 0, f"the {actor} actor held")
    return stall, depth


def test_a_recall_is_answered_before_the_appends_queued_ahead_of_it(held: Any) -> None:
    _daemon, ask, client = held
    _answer(ask("episode.append", episode={"query": "fix the upload retry", "summary": "seed"}))
    stall, depth = _hold(client, ask, "recall")
    appends = [ask("episode.append", episode={"query": f"fix the upload retry {n}",
                                              "summary": f"queued {n}"}) for n in range(QUEUED)]
    wait_for(lambda: depth() == QUEUED, "the appends queued")
    recall = ask("memory.recall", query="upload retry", n=50)
    wait_for(lambda: depth() == QUEUED + 1, "the recall queued behind them")
    ask("debug.crash", actor="recall", how="release")
    _answer(stall)
    first = _answer(recall)
    assert first["episodes"] == 1 and len(first["hits"]) == 1
    assert all(_answer(sock)["added"] for sock in appends)
    again = _answer(ask("memory.recall", query="upload retry", n=50))
    assert again["episodes"] == QUEUED + 1 and len(again["hits"]) == QUEUED + 1


def test_a_memory_block_is_answered_before_the_facts_queued_ahead_of_it(held: Any) -> None:
    _daemon, ask, client = held
    _answer(ask("fact.observe", kind="command", subject="make lint",
                text="Run make lint before pushing"))
    stall, depth = _hold(client, ask, "distiller")
    observes = [ask("fact.observe", kind="command", subject=f"make step{n}",
                    text=f"Run make step{n} before pushing") for n in range(QUEUED)]
    wait_for(lambda: depth() == QUEUED, "the observations queued")
    block = ask("memory.block", role="worker", query="before pushing")
    wait_for(lambda: depth() == QUEUED + 1, "the block queued behind them")
    ask("debug.crash", actor="distiller", how="release")
    _answer(stall)
    text = _answer(block)["text"]
    assert "make lint" in text and "make step" not in text
    for sock in observes:
        _answer(sock)
    assert "make step" in _answer(ask("memory.block", role="worker", query="before pushing"))["text"]


def _writes_that_fit(prompts: int) -> tuple[int, list[list[bytes]]]:
    """Writes a recall mailbox takes after `prompts` prompt asks, and what it then holds."""
    zctx = zmq.asyncio.Context()
    router = Router(zctx, inbox_size=8)
    try:
        router.add_actor("recall", ["memory.recall", "episode.append"])
        for n in range(prompts):
            assert router.deliver("recall", b"r", b"memory.recall", b"%d" % n, prompt=True)
        fit = 0
        while router.deliver("recall", b"r", b"episode.append", b"w"):
            fit += 1
        mailbox: zmq.Socket[bytes] = zmq.Socket.shadow(router.mailboxes["recall"].underlying)
        held = []
        while mailbox.poll(200):
            held.append(mailbox.recv_multipart())
        return fit, held
    finally:
        router.close()
        zctx.term()


def test_a_flood_of_prompts_puts_one_wake_up_in_the_mailbox_not_one_each() -> None:
    alone, _ = _writes_that_fit(0)
    after_flood, held = _writes_that_fit(5)
    assert alone - after_flood == 1  # one slot for the wake-up, not five
    assert held[0] == WAKE_UP and all(frames[1] == b"episode.append" for frames in held[1:])


def test_the_next_prompt_after_the_lane_drained_wakes_the_cell_again() -> None:
    zctx = zmq.asyncio.Context()
    router = Router(zctx, inbox_size=8)
    try:
        router.add_actor("recall", ["memory.recall", "episode.append"])
        mailbox: zmq.Socket[bytes] = zmq.Socket.shadow(router.mailboxes["recall"].underlying)
        lane: zmq.Socket[bytes] = zmq.Socket.shadow(router.prompt_lanes["recall"].underlying)
        for _ in range(2):
            assert router.deliver("recall", b"r", b"memory.recall", b"q", prompt=True)
            assert mailbox.poll(1000) and mailbox.recv_multipart() == WAKE_UP
            assert lane.poll(1000) and lane.recv_multipart()[1] == b"memory.recall"
            router.taken_from_lane("recall")
        # Not a prompt (a client with an ask in flight), or not a prompt's kind: the mailbox.
        assert router.deliver("recall", b"r", b"memory.recall", b"x")
        assert router.deliver("recall", b"r", b"episode.append", b"y", prompt=True)
        assert [mailbox.recv_multipart()[1] for _ in range(2)] == [b"memory.recall",
                                                                   b"episode.append"]
        assert not lane.poll(50)
    finally:
        router.close()
        zctx.term()
