"""Helpers for tests — ours and harness authors': a real daemon in a private temp dir.

`spawn_daemon()` starts `python -m slmactor serve` as a child process with its own runtime dir,
user store and project, and returns once the daemon has said READY=1 on a notify socket (the
same handshake systemd uses) — no sleeping, no polling.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slmactor.client import Client


class DaemonFailedToStart(RuntimeError):
    """The child exited or stayed silent before READY=1; the message holds its log."""


@dataclass
class DaemonProcess:
    """A running daemon child and the directories it owns."""

    proc: subprocess.Popen[bytes]
    base: Path
    runtime_dir: Path
    home: Path
    project: Path
    log_path: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def client(self, **kwargs: Any) -> Client:
        kwargs.setdefault("project", self.project)
        return Client(self.runtime_dir, **kwargs)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        """Signal the daemon and wait for it; returns its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise

    def wait(self, timeout: float = 15.0) -> int:
        return self.proc.wait(timeout)

    def cleanup(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.base, ignore_errors=True)


def _short_tempdir() -> Path:
    # ipc paths must stay under ~107 bytes; pytest's tmp_path is often longer.
    return Path(tempfile.mkdtemp(prefix="sa-", dir="/tmp"))


def spawn_daemon(
    *,
    base: Path | None = None,
    runtime_dir: Path | None = None,
    home: Path | None = None,
    project: Path | None = None,
    debug_hooks: bool = True,
    env: dict[str, str] | None = None,
    ready_timeout: float = 20.0,
    extra_args: list[str] | None = None,
) -> DaemonProcess:
    """Start a daemon child and wait for READY=1. Raises DaemonFailedToStart."""
    base = base or _short_tempdir()
    base.mkdir(parents=True, exist_ok=True)
    runtime_dir = runtime_dir or base / "rt"
    home = home or base / "home"
    project = project or base / "project"
    project.mkdir(parents=True, exist_ok=True)
    log_path = base / "daemon.log"
    notify_path = base / "notify.sock"
    child_env = {
        **os.environ,
        "SLMACTOR_RUNTIME_DIR": str(runtime_dir),
        "SLMACTOR_HOME": str(home),
        "NOTIFY_SOCKET": str(notify_path),
        "PYTHONUNBUFFERED": "1",
        # A hook's 2 s deadline is a quiet machine's: the hooks a test runs with this env get
        # `slack` of it (the fail-open tests lower it with `--timeout`).
        "SLMACTOR_HOOK_TIMEOUT": os.environ.get("SLMACTOR_HOOK_TIMEOUT", "") or str(slack(2.0)),
        **(env or {}),
    }
    args = [sys.executable, "-m", "slmactor", "serve"]
    if debug_hooks:
        args.append("--debug-hooks")
    args.extend(extra_args or [])
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(str(notify_path))
        notify.settimeout(ready_timeout)
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=child_env
            )
        daemon = DaemonProcess(proc, base, runtime_dir, home, project, log_path, child_env)
        try:
            while True:
                message = notify.recv(4096).decode(errors="replace")
                if "READY=1" in message:
                    return daemon
        except TimeoutError:
            pass
        except OSError:
            pass
    status = proc.poll()
    if status is None:
        proc.kill()
        proc.wait()
    raise DaemonFailedToStart(f"daemon did not become ready (exit {status}):\n{daemon.log()}")


def stop_quietly(daemon: DaemonProcess) -> None:
    """Terminate (SIGTERM, then SIGKILL) and remove the daemon's directories."""
    try:
        if daemon.proc.poll() is None:
            daemon.stop(signal.SIGTERM, timeout=10)
    except subprocess.TimeoutExpired:
        pass
    finally:
        daemon.cleanup()


def run_hook(daemon: DaemonProcess, harness: str, event: str, payload: Any) -> dict[str, Any]:
    """Run `slmactor hook HARNESS EVENT` against `daemon` as a harness would (the payload as JSON
    on stdin) and return the JSON it printed; a hook that exits non-zero fails the caller."""
    import json

    proc = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "hook",
         harness, event], input=json.dumps(payload).encode(), capture_output=True,
        timeout=slack(6), env=daemon.env, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"hook {harness} {event} exited {proc.returncode}: "
                             f"{proc.stderr.decode(errors='replace')}")
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


#: How much slower than a quiet machine a test may find this one: the load of a CI box or of
#: several test runs sharing two cores. A test bounds what it waits for (a deadline honoured, a
#: process that returns rather than hangs) by `slack(seconds)`; how fast is `bench/`'s.
TIME_SCALE = float(os.environ.get("SLMACTOR_TEST_TIME_SCALE", "10") or 10)


def slack(seconds: float) -> float:
    """`seconds` as a test's bound on a machine whose load is 10 (`TIME_SCALE`)."""
    return seconds * TIME_SCALE


def wait_for(predicate: Callable[[], Any], what: str, timeout: float = 20.0, pause: float = 0.0) -> Any:
    # (`timeout` is a quiet machine's; a loaded one gets `slack` of it.)
    """Poll an observable condition (a query to the daemon, a file it writes) until it holds;
    return its value, or fail naming `what` after `timeout` seconds. `pause` spaces the polls
    of conditions that cost no round trip."""
    deadline = time.monotonic() + slack(timeout)
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        if pause:
            time.sleep(pause)


def actor_row(client: Client, name: str) -> dict[str, Any]:
    """The `status` row of one actor."""
    row: dict[str, Any] = {r["name"]: r for r in client.status()["actors"]}[name]
    return row


def raw_ask(zctx: Any, daemon: DaemonProcess, kind: str, /, **fields: Any) -> Any:
    """Send one ask (`id` = its kind, the daemon's project) on a DEALER connection of its own,
    without waiting: the socket its reply comes back on, for the caller to read and close.
    Several of them queue asks behind an actor held by the debug `stall`."""
    import msgpack
    import zmq

    from slmactor.protocol import PROTOCOL_VERSION

    sock = zctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(f"ipc://{daemon.runtime_dir / 'ctl.sock'}")
    body = {"v": PROTOCOL_VERSION, "id": kind, "project": str(daemon.project), **fields}
    sock.send_multipart([kind.encode(), msgpack.packb(body)])
    return sock
