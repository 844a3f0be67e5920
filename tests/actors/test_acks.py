"""`FlushAcks`: an ask waits until a flush covering its change wrote the store, and is
answered STORE_ERROR when that flush failed; failed stores are listed for the retries."""

from __future__ import annotations

import anyio
import pytest

from slmactor.actors.acks import FlushAcks
from slmactor.protocol import ErrorCode, RequestError

pytestmark = pytest.mark.anyio


class Store:
    """A stand-in store object: only its identity matters to the acks under test."""


async def test_a_waiter_returns_only_after_a_covering_write() -> None:
    acks, store = FlushAcks(), Store()
    first = acks.changed(store, "root")
    covered = acks.generation(store)  # a snapshot taken now covers the first change
    second = acks.changed(store)
    done: list[int] = []

    async def wait(ticket: int) -> None:
        await acks.wait(store, ticket)
        done.append(ticket)

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait, first)
        tg.start_soon(wait, second)
        await anyio.wait_all_tasks_blocked()
        assert done == []
        acks.wrote(store, covered)
        await anyio.wait_all_tasks_blocked()
        assert done == [first]
        acks.wrote(store, acks.generation(store))
    assert done == [first, second]


async def test_a_failed_flush_answers_store_error_and_is_retried() -> None:
    acks, store = FlushAcks(), Store()
    ticket = acks.changed(store, "root")
    acks.failed(store, "could not write facts.json: ENOSPC")
    with pytest.raises(RequestError) as failed:
        await acks.wait(store, ticket)
    assert failed.value.code == ErrorCode.STORE_ERROR and "ENOSPC" in failed.value.reason
    assert acks.retry_due() == [(store, "root")]
    acks.wrote(store, acks.generation(store))  # the retry wrote it
    assert acks.retry_due() == []
    await acks.wait(store, ticket)  # now acknowledged
