"""One daemon per user store: take its locks, say who holds them, or take over (`--replace`).

Two locks, taken in this order: the runtime dir's `daemon.lock` (a second ipc bind would
silently steal the sockets) and the user store's `.lock` (one writer per store). Each records
the holder's pid and the runtime dir it serves, so a second `serve` can say "already running as
pid 1234, serving /run/user/1000/slmactor" — also when that daemon serves another socket dir
(autostarted with another `$SLMACTOR_RUNTIME_DIR`, or before the service was installed).

`replace=True` is what the service manager's unit runs: a daemon started by a CLI command or a
hook before the unit was enabled is asked to stop (SIGTERM: it drains and flushes like on
`systemctl stop`), and this one starts once the locks are free. Every start thus converges on
the one daemon the service manager owns, instead of the unit failing on the lock.
"""

from __future__ import annotations

import logging
import os
import signal
import time

from slmactor.config import Settings
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.lock import AlreadyRunning, StoreLock, acquire_store_lock, read_lock_note

log = logging.getLogger("slmactor.daemon")

#: How long a replacing daemon waits for the old one to drain, flush and let go.
REPLACE_TIMEOUT = 20.0
POLL_SECONDS = 0.05


class StartupError(Exception):
    """The daemon cannot start; the message is for the user."""


def _take(settings: Settings) -> list[StoreLock]:
    note = str(settings.runtime_dir)
    locks: list[StoreLock] = []
    try:
        locks.append(acquire_store_lock(settings.runtime_dir / "daemon.lock", note))
        settings.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        locks.append(acquire_store_lock(settings.home / ".lock", note))
    except BaseException:
        for lock in locks:
            lock.release()
        raise
    return locks


def describe(exc: AlreadyRunning) -> str:
    """`slmactor is already running as pid N, serving DIR` (what a user needs to find it)."""
    who = f"pid {exc.pid}" if exc.pid is not None else "another process"
    serving = read_lock_note(exc.lock_path)
    return f"slmactor is already running as {who}" + (f", serving {serving}" if serving else "")


def is_slmactor(pid: int) -> bool:
    """Whether `pid` is a running `slmactor` process (never signal a recycled pid)."""
    import psutil

    try:
        cmdline = psutil.Process(pid).cmdline()
    except (psutil.Error, OSError):
        return False
    return any("slmactor" in part for part in cmdline)


def take_locks(settings: Settings, *, replace: bool = False,
               timeout: float = REPLACE_TIMEOUT) -> list[StoreLock]:
    """The daemon's locks; StartupError when another daemon holds them and `replace` is off."""
    try:
        return _take(settings)
    except AlreadyRunning as exc:
        if not replace:
            raise StartupError(describe(exc)) from None
        holder = exc.pid
        if holder is None or holder == os.getpid() or not is_slmactor(holder):
            raise StartupError(f"{describe(exc)}; not replacing a process that is not a "
                               "slmactor daemon") from None
        log.warning("%s; asking it to stop so that this daemon takes over", describe(exc))
        try:
            os.kill(holder, signal.SIGTERM)
        except ProcessLookupError:
            pass  # it stopped on its own meanwhile
        except OSError as err:
            raise StartupError(f"{describe(exc)}; cannot stop it: {err.strerror}") from None
    except (OSError, StoreError) as exc:
        raise StartupError(f"cannot lock the store: {exc}") from None
    deadline = time.monotonic() + timeout
    while True:
        try:
            return _take(settings)
        except AlreadyRunning as exc:
            if time.monotonic() > deadline:
                raise StartupError(f"{describe(exc)}; it did not stop within {timeout:g}s") from None
        except (OSError, StoreError) as exc:
            raise StartupError(f"cannot lock the store: {exc}") from None
        time.sleep(POLL_SECONDS)  # waiting for another process to let go of a flock
