"""A runtime directory another local user created first gets nothing from us: the client, the
hook and the daemon refuse it with one line saying why, and nothing reaches the impostor.

Tests run as root here; the other user is uid 65534 (`nobody`): its listener is a real process
that drops to that uid (`os.setuid`) before it binds, or a socket bound by root whose listen(2)
ran after `os.setuid` — `SO_PEERCRED` reports the credentials of the listen.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from slmactor.client import AsyncClient, Client, DaemonNotRunning, UntrustedDaemon
from slmactor.hooks import breaker
from slmactor.testing import slack, spawn_daemon, stop_quietly, wait_for

OTHER = 65534
pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to act as another uid"),
]

#: An impostor daemon of another uid (it drops root after loading Python and zmq, which live
#: where that uid cannot read): ZeroMQ sockets at both paths; prints every message it is sent.
_IMPOSTOR_ZMQ = """
import os, sys, zmq
ctx = zmq.Context()
os.setgid(int(sys.argv[2]))
os.setuid(int(sys.argv[2]))
ctl, events = ctx.socket(zmq.ROUTER), ctx.socket(zmq.PULL)
ctl.bind("ipc://" + sys.argv[1] + "/ctl.sock")
events.bind("ipc://" + sys.argv[1] + "/events.sock")
print("bound", flush=True)
poller = zmq.Poller()
poller.register(ctl, zmq.POLLIN)
poller.register(events, zmq.POLLIN)
while True:
    for sock, _ in poller.poll():
        print("got", len(sock.recv_multipart()), flush=True)
"""

#: A listener bound by root in root's directory whose listen(2) runs as another uid; prints the
#: bytes each connection sent.
_IMPOSTOR_LISTEN = """
import os, socket, sys
socks = []
for name in ("ctl.sock", "events.sock"):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(os.path.join(sys.argv[1], name))
    socks.append(s)
os.setuid(int(sys.argv[2]))
for s in socks:
    s.listen(8)
    s.setblocking(False)
print("bound", flush=True)
import select
while True:
    for s in select.select(socks, [], [])[0]:
        conn, _ = s.accept()
        conn.settimeout(0.5)
        data = b""
        try:
            while chunk := conn.recv(65536):
                data += chunk
        except OSError:
            pass
        print("bytes", len(data), flush=True)
"""


@pytest.fixture
def base() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sa-trust-", dir="/tmp"))
    path.chmod(0o755)  # the other uid must reach its directory inside
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _start(argv: list[str], **kwargs: object) -> subprocess.Popen[str]:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, **kwargs)  # type: ignore[call-overload]
    assert proc.stdout is not None and proc.stdout.readline() == "bound\n"
    return proc  # type: ignore[no-any-return]


def _stop(proc: subprocess.Popen[str]) -> list[str]:
    proc.kill()
    out, _ = proc.communicate(timeout=10)
    return out.splitlines()


def _hook(runtime: Path, event: str, payload: Mapping[str, object], env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(runtime), "hook", "claude", event],
                          input=json.dumps(payload), capture_output=True, text=True, timeout=60,
                          env=env or dict(os.environ), check=False)


def test_a_runtime_dir_squatted_by_another_user_gets_nothing(base: Path) -> None:
    runtime = base / "rt"
    runtime.mkdir(mode=0o700)
    os.chown(runtime, OTHER, OTHER)
    impostor = _start([sys.executable, "-c", _IMPOSTOR_ZMQ, str(runtime), str(OTHER)])
    try:
        with Client(runtime, project=base, timeout=1, retries=1) as client:
            with pytest.raises(UntrustedDaemon, match=f"owned by uid {OTHER}"):
                client.status()
            assert client.record_tool("run-1", "Bash", command="echo secret-prompt") is False
            assert client.dropped == 1

        async def async_status() -> None:
            async with AsyncClient(runtime, project=base, timeout=1, retries=1) as aclient:
                await aclient.status()

        with pytest.raises(UntrustedDaemon, match=f"owned by uid {OTHER}"):
            asyncio.run(async_status())
        hook = _hook(runtime, "UserPromptSubmit", {"prompt": "secret-prompt", "cwd": str(base),
                                                    "session_id": "s", "hook_event_name": "UserPromptSubmit"})
        assert (hook.returncode, hook.stdout.strip()) == (0, "{}")
        assert f"owned by uid {OTHER}" in hook.stderr and len(hook.stderr.strip().splitlines()) == 1
        assert not (runtime / breaker.FILE).exists()  # a refusal is not a timeout
        status = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(runtime), "--json",
                                 "status"], capture_output=True, text=True, timeout=60, check=False)
        shown = json.loads(status.stdout)
        assert (status.returncode, shown["running"], shown["health"]) == (1, False, "untrusted")
        assert f"owned by uid {OTHER}" in shown["error"]
        assert sorted(p.name for p in runtime.iterdir()) == ["ctl.sock", "events.sock"]  # no ledger either
        # Our daemon refuses the directory too, in one line, and exits.
        serve = subprocess.run([sys.executable, "-m", "slmactor", "serve"], capture_output=True, text=True,
                               timeout=60, check=False, env={**os.environ, "SLMACTOR_RUNTIME_DIR": str(runtime),
                                                             "SLMACTOR_HOME": str(base / "home")})
        assert serve.returncode == 2
        lines = serve.stderr.strip().splitlines()
        assert len(lines) == 1 and f"owned by uid {OTHER}" in lines[0] and "SLMACTOR_RUNTIME_DIR" in lines[0]
    finally:
        received = _stop(impostor)
    assert received == []  # not one frame reached the impostor


def test_a_listener_of_another_uid_is_refused_before_zeromq_sends_anything(base: Path) -> None:
    runtime = base / "rt"
    runtime.mkdir(mode=0o700)  # ours and private: only the listener is foreign
    impostor = _start([sys.executable, "-c", _IMPOSTOR_LISTEN, str(runtime), str(OTHER)])
    try:
        with Client(runtime, project=base, timeout=1, retries=1) as client:
            with pytest.raises(UntrustedDaemon, match=f"process of uid {OTHER}"):
                client.status()
            assert client.record_tool("run-1", "Bash", command="echo secret") is False
        hook = _hook(runtime, "UserPromptSubmit", {"prompt": "secret", "cwd": str(base), "session_id": "s",
                                                    "hook_event_name": "UserPromptSubmit"})
        assert (hook.returncode, hook.stdout.strip()) == (0, "{}")
        assert f"process of uid {OTHER}" in hook.stderr
    finally:
        received = _stop(impostor)
    # Each check connected once and sent nothing; ZeroMQ never connected.
    assert received and all(line == "bytes 0" for line in received), received


def test_our_own_daemon_still_passes_every_check() -> None:
    daemon = spawn_daemon()
    try:
        with daemon.client() as client:
            assert client.status()["pid"] == daemon.pid
            assert client.record_tool("run-1", "Read", path="a.py") is True
            wait_for(lambda: client.status()["events"]["received"] >= 1, "the tell arrived")
    finally:
        stop_quietly(daemon)


def test_a_refused_connect_after_a_crash_does_not_open_the_breaker(base: Path) -> None:
    env = {**os.environ, "HOME": str(base), "SLMACTOR_HOME": str(base / "store"),
           "XDG_STATE_HOME": str(base / "state")}
    env.pop("NOTIFY_SOCKET", None)
    daemon = spawn_daemon(base=base / "d", home=base / "store")
    runtime = daemon.runtime_dir
    project = base / "repo"
    project.mkdir()
    os.kill(daemon.pid, signal.SIGKILL)
    daemon.proc.wait(timeout=30)
    assert (runtime / "ctl.sock").exists()  # stale: left by the crash
    with Client(runtime, timeout=1, retries=1) as client, pytest.raises(DaemonNotRunning):
        client.status()
    tool = {"session_id": "s", "cwd": str(project), "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "ls"}, "tool_response": {"stdout": "", "stderr": "", "interrupted": False}}
    started = time.monotonic()
    done = _hook(runtime, "PostToolUse", tool, env)
    assert done.returncode == 0 and time.monotonic() - started < slack(30)
    assert not (runtime / breaker.FILE).exists()
    # A breaker left open by an earlier timeout does not hold a dead daemon's socket either.
    breaker.trip(str(runtime), time.time(), 30, "an earlier timeout")
    start = {"session_id": "s", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    try:
        done = _hook(runtime, "SessionStart", start, env)
        assert done.returncode == 0, done.stderr
        assert "breaker open" not in done.stderr
        with Client(runtime, timeout=5, retries=1) as client:
            assert client.status()["pid"] != daemon.pid  # a new daemon answers
    finally:
        subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(runtime), "stop"],
                       capture_output=True, text=True, timeout=60, env=env, check=False)
        stop_quietly(daemon)
