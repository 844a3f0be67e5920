"""Shared fixtures: the asyncio backend for anyio tests, and a real daemon per test; and the
Hypothesis profile every property test runs under."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from slmactor import locate
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

# No wall-clock bound on a property test's example (Hypothesis' 200 ms deadline fails a test on a
# busy machine, not a slow parser: speed is measured in bench/), and the health check that
# times data generation likewise.
settings.register_profile("slmactor", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("slmactor")

# The runtime dir comes from /run/user/<uid> before any variable, and a client finds a daemon of
# its uid in /tmp/slmactor-<uid> too (slmactor.locate): a test that sets no SLMACTOR_RUNTIME_DIR
# would otherwise find the developer's daemon, or another test run's. Every test (and every
# process it starts) gets a stand-in root of its own, empty unless the test fills it.
if not os.environ.get(locate.ENV_TEST_ROOT):
    _ROOT = tempfile.mkdtemp(prefix="sa-root-", dir="/tmp")  # short: ipc paths have a limit
    os.environ[locate.ENV_TEST_ROOT] = _ROOT
    atexit.register(shutil.rmtree, _ROOT, ignore_errors=True)


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
