"""`memory.block` is served while the distiller's writes are slow, against the real daemon.

A debug hook holds every store write of the distiller (the facts flush, the polar lessons) until
released, the way a slow or busy disk would. Writes still answer only once written (acknowledged
= written), but they wait beside the mailbox: a block asked meanwhile is answered at once, and it
already shows the fact being written.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from slmactor.client import AsyncClient
from slmactor.protocol.messages import DebugCrash, FactObserve, LessonsImport, MemoryBlock
from slmactor.stores.base.layout import ProjectLayout
from slmactor.testing import DaemonProcess

pytestmark = pytest.mark.anyio

RELEASE = DebugCrash(actor="distiller.writes", how="release")


async def test_a_block_is_answered_while_the_write_before_it_waits_for_the_disk(
    daemon: DaemonProcess,
) -> None:
    facts_file = ProjectLayout(daemon.project).memory_dir / "facts.json"
    async with AsyncClient(daemon.runtime_dir, project=daemon.project, timeout=20) as c:
        await c.ask(FactObserve(kind="command", subject="lint", text="Run make lint first"))
        await c.ask(DebugCrash(actor="distiller", how="hold_writes"))
        observe = asyncio.create_task(c.ask(FactObserve(
            kind="command", subject="tests", text="Run pytest -q from the repository root")))
        lesson = asyncio.create_task(c.ask(LessonsImport(lines=[json.dumps({
            "trigger": "flaky upload test", "polarity": "dont",
            "fix": "Do not retry the upload test in a loop; fix its fixture"})])))
        blocks = await asyncio.gather(*(c.ask(MemoryBlock(role="worker", query=q))
                                        for q in ("run the tests", "lint", "pytest")))
        assert all("pytest -q" in b["text"] for b in blocks)  # in memory before it is on disk
        assert not observe.done() and not lesson.done()  # not acknowledged before it is written
        assert "pytest -q" not in facts_file.read_text()
        await c.ask(RELEASE)
        recorded, imported = await asyncio.gather(observe, lesson)
        assert recorded["recorded"] is True and imported["added"] == 1
        assert "pytest -q" in facts_file.read_text()
        block = await c.ask(MemoryBlock(role="worker", query="flaky upload test"))
        assert "fix its fixture" in block["text"]
