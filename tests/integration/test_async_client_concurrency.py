"""Many asks at once on one `AsyncClient`, against the real daemon: each gets its own reply.

What a harness does when it runs tool calls in parallel (an MCP server, an agent framework with
`asyncio.gather`): asks overlap on one client. Each must get the reply to its own request, an
ask cancelled or timed out must not disturb the others or the socket, a daemon that dies must
turn every waiting ask into DaemonUnavailable (never CancelledError, never a hang), and closing
the client must end the asks still waiting.

A debug `stall` holds one actor's mailbox (the metrics actor) so asks to it wait for as long as a
test needs, deterministically; the other actors keep answering.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from slmactor.client import AsyncClient, DaemonUnavailable
from slmactor.protocol.messages import DebugCrash, MetricsShow, WorkingSnapshot
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

pytestmark = pytest.mark.anyio

#: Ceiling for a whole scenario: a hang guard, not a timing assertion.
HANG_GUARD_S = 30.0


async def _until(check: Callable[[], Awaitable[bool]], what: str, rounds: int = 2000) -> None:
    """Ask until `check` holds (each round is a round trip to the daemon, no sleeping)."""
    for _ in range(rounds):
        if await check():
            return
    raise AssertionError(f"never saw {what}")


async def _processed(c: AsyncClient, actor: str) -> int:
    rows = (await c.status())["actors"]
    row = rows[actor] if isinstance(rows, dict) else next(r for r in rows if r["name"] == actor)
    return int(row["processed"])


async def _stall_metrics(c: AsyncClient) -> asyncio.Task[Any]:
    """Hold the metrics actor's mailbox; returns the stall ask (answered on release)."""
    before = await _processed(c, "metrics")
    stall = asyncio.create_task(c.ask(DebugCrash(actor="metrics", how="stall"), timeout=60, retries=1))

    async def stalled() -> bool:
        return await _processed(c, "metrics") > before

    await _until(stalled, "the metrics actor stalled")
    return stall


async def _release_metrics(c: AsyncClient, stall: asyncio.Task[Any]) -> None:
    await c.ask(DebugCrash(actor="metrics", how="release"))
    assert await stall == {"stalled": "metrics"}


async def _actor_names(c: AsyncClient) -> list[str]:
    rows = (await c.status())["actors"]
    names = list(rows) if isinstance(rows, dict) else [r["name"] for r in rows]
    return [n for n in names if n != "control"]


async def _mixed_asks(c: AsyncClient, count: int, runs: int) -> list[tuple[str, str]]:
    """`count` overlapping asks (snapshots of different runs, pings of different actors), as
    (what the ask should say, what it said)."""
    actors = await _actor_names(c)

    async def snapshot(i: int) -> tuple[str, str]:
        reply = await c.ask(WorkingSnapshot(run_id=f"run-{i % runs}"))
        return f"task number {i % runs}", reply["snapshot"]["task"]

    async def ping(i: int) -> tuple[str, str]:
        name = actors[i % len(actors)]
        return name, (await c.ping(name))["actor"]

    return await asyncio.gather(*(snapshot(i) if i % 2 else ping(i) for i in range(count)))


async def test_a_hundred_concurrent_asks_each_get_their_own_reply(daemon: DaemonProcess) -> None:
    async with AsyncClient(daemon.runtime_dir, project=daemon.project) as c:
        started = await asyncio.gather(*(c.run_start(f"run-{i}", task=f"task number {i}")
                                         for i in range(50)))
        assert [r["run_id"] for r in started] == [f"run-{i}" for i in range(50)]
        for _ in range(3):
            answers = await asyncio.wait_for(_mixed_asks(c, 100, 50), HANG_GUARD_S)
            assert [got for _, got in answers] == [want for want, _ in answers]
        assert c._dealer.waiting == 0 and c._dealer.resets == 0


async def test_cancelled_and_timed_out_asks_leave_the_others_and_the_socket_working(
    daemon: DaemonProcess,
) -> None:
    async with AsyncClient(daemon.runtime_dir) as staller, \
            AsyncClient(daemon.runtime_dir, project=daemon.project) as c:
        await asyncio.gather(*(c.run_start(f"run-{i}", task=f"task number {i}") for i in range(10)))
        stall = await _stall_metrics(staller)
        # Asks that wait behind the stall: ten cancelled as tasks, one by wait_for, one timing
        # out on its own deadline — while a hundred others run beside them.
        doomed = [asyncio.create_task(c.ask(MetricsShow())) for _ in range(10)]
        expiring = asyncio.create_task(asyncio.wait_for(c.ask(MetricsShow()), 0.2))
        timing_out = asyncio.create_task(c.ask(MetricsShow(), timeout=0.3, retries=2))
        others = asyncio.create_task(_mixed_asks(c, 100, 10))
        for task in doomed:
            task.cancel()
        answers = await asyncio.wait_for(others, HANG_GUARD_S)
        assert [got for _, got in answers] == [want for want, _ in answers]
        for task in doomed:
            with pytest.raises(asyncio.CancelledError):
                await task
        with pytest.raises(TimeoutError):
            await expiring
        with pytest.raises(DaemonUnavailable, match="no reply within 0.3s"):
            await timing_out
        # The queued metrics asks are answered after the release, to nobody: dropped.
        await _release_metrics(staller, stall)
        assert (await c.ask(MetricsShow()))["runs"] == []
        answers = await _mixed_asks(c, 40, 10)
        assert [got for _, got in answers] == [want for want, _ in answers]
        assert c._dealer.waiting == 0


async def test_an_unanswered_ask_alone_gets_a_fresh_socket_and_the_client_recovers(
    daemon: DaemonProcess,
) -> None:
    async with AsyncClient(daemon.runtime_dir) as staller, \
            AsyncClient(daemon.runtime_dir, project=daemon.project) as c:
        stall = await _stall_metrics(staller)
        with pytest.raises(DaemonUnavailable):
            await c.ask(MetricsShow(), timeout=0.2, retries=2)
        assert c._dealer.resets >= 1  # nothing at all came back: Lazy Pirate replaced the socket
        await _release_metrics(staller, stall)
        assert (await c.ping("metrics"))["actor"] == "metrics"
        assert (await c.ask(MetricsShow()))["runs"] == []


async def test_asks_waiting_on_a_replaced_socket_are_resent_on_the_new_one(
    daemon: DaemonProcess,
) -> None:
    async with AsyncClient(daemon.runtime_dir) as staller, \
            AsyncClient(daemon.runtime_dir, project=daemon.project) as c:
        await c.run_start("run-0", task="task number 0")
        stall = await _stall_metrics(staller)
        # One ask with a short deadline times out while nothing else answers: the socket is
        # replaced. The patient asks sent on the old socket must still be answered.
        patient = [asyncio.create_task(c.ask(MetricsShow(), timeout=20, retries=1)) for _ in range(5)]
        with pytest.raises(DaemonUnavailable):
            await c.ask(MetricsShow(), timeout=0.2, retries=1)
        assert c._dealer.resets == 1
        await _release_metrics(staller, stall)
        replies = await asyncio.wait_for(asyncio.gather(*patient), HANG_GUARD_S)
        assert [r["runs"] for r in replies] == [[]] * 5


async def test_a_daemon_killed_under_waiting_asks_makes_them_unavailable_and_a_new_one_serves(
    tmp_path: Path,
) -> None:
    daemon = spawn_daemon()
    try:
        c = AsyncClient(daemon.runtime_dir, project=daemon.project, timeout=0.5, retries=2)
        stall = await _stall_metrics(c)
        waiting = [asyncio.create_task(c.ask(MetricsShow())) for _ in range(30)]
        await _until(lambda: _has_waiters(c, 31), "the asks sent")
        daemon.proc.send_signal(signal.SIGKILL)
        daemon.proc.wait()
        outcomes = await asyncio.wait_for(
            asyncio.gather(*waiting, stall, return_exceptions=True), HANG_GUARD_S)
        assert all(isinstance(o, DaemonUnavailable) for o in outcomes), outcomes
        # Restarted on the same runtime directory: the same client object serves again.
        (daemon.base / "notify.sock").unlink()  # the readiness socket of the first start
        again = spawn_daemon(base=daemon.base, runtime_dir=daemon.runtime_dir,
                             home=daemon.home, project=daemon.project)
        try:
            assert (await c.ping())["pong"] is True
            names = await asyncio.gather(*(c.ping(a) for a in ("recall", "distiller", "working")))
            assert [n["actor"] for n in names] == ["recall", "distiller", "working"]
        finally:
            await c.aclose()
            stop_quietly(again)
    finally:
        stop_quietly(daemon)


async def _has_waiters(c: AsyncClient, n: int) -> bool:
    await asyncio.sleep(0)  # a yield (not a timed wait): lets the created tasks send
    return c._dealer.waiting >= n


async def test_concurrent_asks_without_a_daemon_all_fail_as_unavailable(tmp_path: Path) -> None:
    nowhere = tmp_path / "rt"
    nowhere.mkdir()
    async with AsyncClient(nowhere, project=tmp_path, timeout=0.2) as c:
        outcomes = await asyncio.gather(*(c.ping() for _ in range(100)), return_exceptions=True)
    assert all(isinstance(o, DaemonUnavailable) for o in outcomes)


async def test_closing_with_asks_waiting_ends_them_as_unavailable(daemon: DaemonProcess) -> None:
    c = AsyncClient(daemon.runtime_dir, project=daemon.project)
    stall = await _stall_metrics(c)
    waiting = [asyncio.create_task(c.ask(MetricsShow(), timeout=30)) for _ in range(20)]
    await _until(lambda: _has_waiters(c, 21), "the asks sent")
    c.close()
    outcomes = await asyncio.wait_for(
        asyncio.gather(*waiting, stall, return_exceptions=True), HANG_GUARD_S)
    assert all(isinstance(o, DaemonUnavailable) and "closed" in str(o) for o in outcomes), outcomes
    with pytest.raises(DaemonUnavailable, match="closed"):
        await c.ping()
    async with AsyncClient(daemon.runtime_dir) as other:  # the daemon was not disturbed
        await other.ask(DebugCrash(actor="metrics", how="release"))
        assert (await other.ping("metrics"))["actor"] == "metrics"
