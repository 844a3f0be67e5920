"""Shared fixtures: the asyncio backend for anyio tests, and a real daemon per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly


@pytest.fixture
def anyio_backend() -> str:
    # zmq.asyncio works on asyncio only, so the daemon and these tests pin it.
    return "asyncio"


@pytest.fixture
def daemon() -> Iterator[DaemonProcess]:
    """A real daemon (debug hooks on) on ipc sockets in a private temp dir."""
    proc = spawn_daemon()
    try:
        yield proc
    finally:
        stop_quietly(proc)
