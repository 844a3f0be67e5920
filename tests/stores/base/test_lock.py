"""The single-instance store lock: exclusive across processes, released when the holder dies."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from slmactor.stores import AlreadyRunning, acquire_store_lock
from slmactor.stores.base.lock import read_lock_pid

REPO = Path(__file__).resolve().parents[3]
HOLDER = textwrap.dedent(
    """
    import sys
    from slmactor.stores import acquire_store_lock
    lock = acquire_store_lock(sys.argv[1])
    print("locked", flush=True)
    sys.stdin.read()  # hold until the parent closes stdin or kills us
    """
)


def start_holder(lock_path: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "locked"
    return child


def test_lock_writes_our_pid_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / "home" / ".lock"
    with acquire_store_lock(path) as lock:
        held_inside = lock.held
        assert read_lock_pid(path) == os.getpid()
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert (held_inside, lock.held) == (True, False)
    lock.release()  # idempotent


def test_second_acquire_in_the_same_process_is_refused(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    first = acquire_store_lock(path)
    with pytest.raises(AlreadyRunning) as refused:
        acquire_store_lock(path)
    assert refused.value.pid == os.getpid()
    assert f"already running as pid {os.getpid()}" in str(refused.value)
    first.release()
    acquire_store_lock(path).release()


def test_other_process_holds_the_lock_until_it_dies(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    child = start_holder(path)
    try:
        with pytest.raises(AlreadyRunning) as refused:
            acquire_store_lock(path)
        assert refused.value.pid == child.pid
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        if child.stdin is not None:
            child.stdin.close()
        if child.stdout is not None:
            child.stdout.close()
    # SIGKILL closed the holder's descriptor, so the kernel released the flock: no stale pidfile.
    with acquire_store_lock(path):
        assert read_lock_pid(path) == os.getpid()


def test_pid_is_unknown_when_the_file_holds_garbage(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    path.write_text("not a pid")
    assert read_lock_pid(path) is None
    assert read_lock_pid(tmp_path / "missing") is None
    assert "another process" in str(AlreadyRunning(path, None))


def test_symlinked_lock_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    link = tmp_path / ".lock"
    link.symlink_to(target)
    with pytest.raises(Exception, match="cannot open the store lock"):
        acquire_store_lock(link)
    assert target.read_text() == "keep"
