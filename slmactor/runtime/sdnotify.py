"""sd_notify by hand: READY / STOPPING / WATCHDOG / STATUS datagrams to `$NOTIFY_SOCKET`.

A few lines of stdlib instead of a dependency (systemd-python has no wheels). A no-op when the
daemon was not started by systemd.
"""

from __future__ import annotations

import os
import socket


def notify(state: str) -> bool:
    """Send `state` (e.g. "READY=1") to the service manager; False when there is none."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]  # abstract namespace
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(state.encode())
    except OSError:
        return False
    return True


def watchdog_interval() -> float | None:
    """Seconds between WATCHDOG=1 pings (half the manager's timeout), or None if not asked for."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return max(int(usec) / 2_000_000, 0.5)
    except ValueError:
        return None
