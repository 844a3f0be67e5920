"""A second local account cannot read or write this user's memory through any configuration the
docs allow (docs/REMOTE.md): the private ipc sockets, tcp with CURVE on loopback (which every
local account can reach), and the stores on disk — tested for real with another uid.

The victim's daemon runs with its home and project world-traversable (0755, as many systems make
home directories and as repository checkouts are), serving ipc and CURVE tcp on 127.0.0.1, with
a fact and an episode learned. A throwaway account (`useradd`) then runs a probe under its own
uid (`setpriv`), with the system Python and this checkout's packages: it tries every way the docs
describe to read or plant memory — the ipc sockets with the real client and a bare connect, tcp
without CURVE, tcp with a key pair of its own, and the store files and directories themselves.
Nothing is answered, nothing is read, nothing lands. `tcp_curve = false` no longer starts at all
(`test_remote.py`). Skipped unless run as root with a system Python 3.11 that loads the
checkout's compiled packages.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from slmactor.protocol.messages import EpisodeRecent, FactList, FactObserve, RunFinish, Status
from slmactor.stores.keys import create
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

OTHER = "slmactor-probe"
SECRET_FACT = "the staging database password rotates on Mondays"
PLANTED = "planted by another account"
SYSTEM_PYTHON = Path("/usr/bin/python3.11")

PROBE = r'''
import json, os, socket, sys
import zmq
from slmactor.client import Client
from slmactor.protocol import codec
from slmactor.protocol.messages import FactList, FactObserve, Status
from slmactor.stores.keys import create, keys_dir, load_pair

args = json.loads(sys.argv[1])
out = {"uid": os.getuid(), "read": [], "listed": [], "wrote": [], "answers": []}
for path in args["files"]:
    try:
        with open(path, "rb") as f:
            f.read(64)
        out["read"].append(path)
    except OSError:
        pass
for path in args["dirs"]:
    try:
        os.listdir(path)
        out["listed"].append(path)
    except OSError:
        pass
    try:
        with open(os.path.join(path, "planted.json"), "w") as f:
            f.write("{}")
        out["wrote"].append(path)
    except OSError:
        pass
try:  # the real client on the victim's ipc sockets
    with Client(args["runtime"], project=args["project"], timeout=2.0, retries=0) as c:
        out["answers"].append(["ipc client", str(c.ask(FactList()))[:200]])
except Exception as exc:
    out["ipc_client_error"] = type(exc).__name__
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(os.path.join(args["runtime"], "ctl.sock"))
    out["answers"].append(["ipc connect", "connected"])
except OSError as exc:
    out["ipc_connect_error"] = exc.strerror
finally:
    s.close()

def ask(endpoint, curve, message):
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    if curve:
        sock.curve_serverkey, sock.curve_publickey, sock.curve_secretkey = curve
    sock.connect(endpoint)
    try:
        sock.send_multipart(codec.dump(message))
        return sock.recv_multipart() if sock.poll(2000, zmq.POLLIN) else None
    finally:
        sock.close(linger=0)
        ctx.term()

def tell(endpoint, curve, message):
    ctx = zmq.Context()
    sock = ctx.socket(zmq.PUSH)
    sock.setsockopt(zmq.LINGER, 500)
    if curve:
        sock.curve_serverkey, sock.curve_publickey, sock.curve_secretkey = curve
    sock.connect(endpoint)
    sock.send_multipart(codec.dump(message))
    sock.close(linger=500)
    ctx.term()

home = os.path.join(args["scratch"], "home")
create(home, "client")
public, secret = load_pair(os.path.join(keys_dir(home), "client.key_secret"))
own = (args["server"].encode(), public, secret)
plant = FactObserve(project=args["project"], kind="gotcha", subject="deploy", text=args["planted"])
for curve, name in ((None, "tcp without CURVE"), (own, "tcp with its own key")):
    for message in (FactList(project=args["project"]), Status(), plant):
        reply = ask(args["ctl"], curve, message)
        if reply is not None:
            out["answers"].append([name, repr(reply)[:200]])
    tell(args["events"], curve, plant)
print(json.dumps(out))
'''


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _other_account() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(OTHER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        OTHER], check=True, capture_output=True)
        return pwd.getpwnam(OTHER)


def _probe_python() -> list[str]:
    """How the other account runs Python with this checkout's packages (or skip)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create and become a second account")
    if shutil.which("setpriv") is None or shutil.which("useradd") is None:
        pytest.skip("setpriv/useradd not installed")
    if not SYSTEM_PYTHON.exists() or sys.version_info[:2] != (3, 11):
        pytest.skip("no system Python matching this interpreter's compiled packages")
    return [str(SYSTEM_PYTHON)]


def _run_as(account: pwd.struct_passwd, argv: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run(
        ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--clear-groups",
         "--reset-env", "--", "env", *(f"{k}={v}" for k, v in env.items()), *argv],
        capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def victim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DaemonProcess, dict[str, str]]]:
    _probe_python()
    base = Path(tmp_path_factory.mktemp("victim", numbered=True))
    for folder in (base, base / "home", base / "project"):
        folder.mkdir(exist_ok=True)
        folder.chmod(0o755)  # world-traversable, as many homes and every checkout are
    server = create(base / "home", "server")
    ctl, events = f"tcp://127.0.0.1:{_free_port()}", f"tcp://127.0.0.1:{_free_port()}"
    daemon = spawn_daemon(base=base, home=base / "home", project=base / "project",
                          runtime_dir=Path(f"/tmp/sa-rt-{os.getpid()}-{_free_port()}"),
                          env={"SLMACTOR_TCP_CTL": ctl, "SLMACTOR_TCP_EVENTS": events})
    try:
        with daemon.client(timeout=30) as client:
            client.ask(FactObserve(kind="gotcha", subject="staging", text=SECRET_FACT))
            client.ask(RunFinish(report={"run_id": "victim-1", "query": "rotate the keys",
                                         "summary": SECRET_FACT}, wait=True))
        yield daemon, {"ctl": ctl, "events": events, "server": server.public}
    finally:
        stop_quietly(daemon)
        shutil.rmtree(daemon.runtime_dir, ignore_errors=True)


def test_a_second_account_can_neither_read_nor_plant_memory(
        victim: tuple[DaemonProcess, dict[str, str]]) -> None:
    daemon, info = victim
    account = _other_account()
    stores = [daemon.home, daemon.project / ".slmcode"]
    files = [str(p) for root in stores for p in root.rglob("*") if p.is_file()]
    dirs = [str(root) for root in stores] + [str(p) for root in stores for p in root.rglob("*")
                                             if p.is_dir()]
    assert any(f.endswith("facts.json") for f in files) and any("episodes" in f for f in files)
    scratch = Path(f"/tmp/sa-probe-{os.getpid()}")
    scratch.mkdir(mode=0o755, exist_ok=True)
    shutil.chown(scratch, account.pw_uid, account.pw_gid)
    repo = Path(__file__).resolve().parents[2]
    env = {"PYTHONPATH": f"{sysconfig.get_paths()['purelib']}:{repo}", "HOME": str(scratch),
           "PATH": "/usr/bin:/bin", "SLMACTOR_HOME": str(scratch / "home"),
           "SLMACTOR_CONFIG": "/nonexistent"}
    args = {"files": files, "dirs": dirs, "runtime": str(daemon.runtime_dir),
            "project": str(daemon.project), "scratch": str(scratch), **info,
            "planted": PLANTED}
    try:
        out = json.loads(_run_as(account, [*_probe_python(), "-c", PROBE, json.dumps(args)], env))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert out["uid"] == account.pw_uid != 0
    assert out["read"] == [], out["read"]
    assert out["listed"] == [] and out["wrote"] == [], out
    assert out["answers"] == [], out["answers"]
    assert out.get("ipc_client_error") and out.get("ipc_connect_error"), out
    with daemon.client(timeout=30) as client:
        facts = json.dumps(client.ask(FactList()))
        episodes = client.ask(EpisodeRecent(n=10))
        remote = client.ask(Status())["remote"]
    assert PLANTED not in facts and SECRET_FACT in facts
    assert [e["id"] for e in episodes["episodes"]] and remote["events"]["forwarded"] == 0
    assert remote["handshakes_ok"] == 0
    assert remote["refused"]["unknown_key"] >= 1, remote  # its own key: refused by name
