"""Starting the daemon in the background for a command or hook that needs it (autostart).

Its own module so that `context` (every command) and `daemon_cmds` (`start`) both use it
without importing each other.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

#: How long `start` waits for the new daemon to answer.
START_TIMEOUT = 10.0


class AutostartFailed(RuntimeError):
    """The daemon could not be started; the message is the reason, in one line."""


def _reason(log_path: Path, offset: int) -> str:
    """The last error the daemon logged since `offset` (its own words: "already running as …")."""
    try:
        with open(log_path, "rb") as log:
            log.seek(offset)
            tail = log.read(64 * 1024).decode("utf-8", "replace")
    except OSError:
        return ""
    for line in reversed(tail.splitlines()):
        if " ERROR " in f" {line} " or line.startswith("slmactor: "):
            return line.split(": ", 1)[-1].strip()
    return ""


def start_daemon(runtime_dir: Path, *, quiet: bool = False) -> int:
    """Spawn `slmactor serve` detached and wait until it answers; returns its pid."""
    import subprocess

    from slmactor.client import Client, DaemonUnavailable
    from slmactor.config import default_log_dir

    log_dir = default_log_dir()
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / "daemon.log"
    env = dict(os.environ, SLMACTOR_RUNTIME_DIR=str(runtime_dir))
    with open(log_path, "ab") as log:
        offset = log.tell()
        proc = subprocess.Popen(
            [sys.executable, "-m", "slmactor", "serve"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    deadline = time.monotonic() + START_TIMEOUT
    with Client(runtime_dir, timeout=0.5, retries=1) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                reason = _reason(log_path, offset) or f"the daemon exited with status {proc.returncode}"
                raise AutostartFailed(f"{reason} (log: {log_path})")
            try:
                status = client.status()
                return int(status["pid"])
            except DaemonUnavailable:
                time.sleep(0.05)
    raise AutostartFailed(f"the daemon did not answer within {START_TIMEOUT:g}s; see {log_path}")
