"""A harness in its own network namespace (as a container is) records a session into the host's
daemon over tcp with CurveZMQ keys, under a container path mapped to the host's project.

Needs root and `ip netns` (Linux); skipped elsewhere. The namespace reaches the host only through
a veth pair on a private /30, so the daemon listens on that link's address: a non-loopback
endpoint, which it opens only with CURVE and the allow-list.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from slmactor.protocol.messages import Status
from slmactor.stores.keys import allow, create, keys_dir
from slmactor.testing import spawn_daemon, stop_quietly, wait_for

HARNESS = """
import json, sys
import slmactor

with slmactor.session("/workspace", "fix the flaky upload test", model="qwen2.5-coder:7b",
                      timeout=10.0) as run:
    run.record_tool("Bash", command="pytest -q tests/test_upload.py", ok=False,
                    error="FAILED tests/test_upload.py::test_retry - TimeoutError")
    run.record_tool("Edit", path="/workspace/src/upload.py", ok=True)
    run.record_tool("Bash", command="pytest -q tests/test_upload.py", ok=True)
    print(json.dumps({"run_id": run.run_id}))
"""

#: A client whose key is not on the allow-list: exit 7 when it gets no answer.
STRANGER = """
import sys
import slmactor.client as c
try:
    c.Client(timeout=1.0, retries=1).status()
except c.DaemonUnavailable:
    sys.exit(7)
"""


def _episodes_of(project: Path, run_id: str) -> list[dict[str, object]]:
    """The run's episodes in the host's project, once written (a session's end is told: the
    episode is stored after its report is taken)."""
    log = project / ".slmcode/memory/episodes.jsonl"

    def mine() -> list[dict[str, object]]:
        if not log.is_file():
            return []
        return [e for e in map(json.loads, log.read_text().splitlines()) if e.get("run_id") == run_id]

    found: list[dict[str, object]] = wait_for(mine, "the session's episode in the host's project")
    return found


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def _netns_usable() -> bool:
    if os.geteuid() != 0 or shutil.which("ip") is None or not sys.platform.startswith("linux"):
        return False
    name = f"slmprobe{os.getpid() % 100000}"
    try:
        _ip("netns", "add", name)
    except (subprocess.CalledProcessError, OSError, subprocess.TimeoutExpired):
        return False
    subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30, check=False)
    return True


pytestmark = pytest.mark.skipif(not _netns_usable(), reason="needs root and `ip netns`")


@pytest.fixture
def netns() -> Iterator[tuple[str, str, str]]:
    """(namespace, host address, namespace address) joined by a veth pair."""
    tag = os.getpid() % 100000
    name, host_if, ns_if = f"slm{tag}", f"slm{tag}h", f"slm{tag}c"
    subnet = f"10.231.{tag % 250}"
    host_ip, ns_ip = f"{subnet}.1", f"{subnet}.2"
    _ip("netns", "add", name)
    try:
        _ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        _ip("link", "set", ns_if, "netns", name)
        _ip("addr", "add", f"{host_ip}/30", "dev", host_if)
        _ip("link", "set", host_if, "up")
        _ip("netns", "exec", name, "ip", "addr", "add", f"{ns_ip}/30", "dev", ns_if)
        _ip("netns", "exec", name, "ip", "link", "set", ns_if, "up")
        _ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        yield name, host_ip, ns_ip
    finally:
        subprocess.run(["ip", "link", "del", host_if], capture_output=True, timeout=30,
                       check=False)
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30,
                       check=False)


def test_a_harness_in_another_network_namespace_records_into_the_hosts_project(
    netns: tuple[str, str, str], tmp_path: Path,
) -> None:
    name, host_ip, _ns_ip = netns
    base = tmp_path / "d"
    home = base / "home"
    server = create(home, "server")
    box_home = tmp_path / "box"  # the container's own user store: its key pair lives there
    create(box_home, "client")
    allow(home, str(keys_dir(box_home) / "client.key"), name="box")
    ctl, events = f"tcp://{host_ip}:7461", f"tcp://{host_ip}:7462"
    daemon = spawn_daemon(base=base, home=home,
                          env={"SLMACTOR_TCP_CTL": ctl, "SLMACTOR_TCP_EVENTS": events})
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLMACTOR_")}
        env.update({
            "SLMACTOR_HOME": str(box_home),
            # No daemon of its own: an ipc directory that does not exist.
            "SLMACTOR_RUNTIME_DIR": str(tmp_path / "no-daemon-here"),
            "SLMACTOR_CONFIG": str(tmp_path / "no-config.toml"),
            "SLMACTOR_CONNECT_CTL": ctl, "SLMACTOR_CONNECT_EVENTS": events,
            "SLMACTOR_SERVER_KEY": server.public,
            "SLMACTOR_PATH_MAP": f"/workspace={daemon.project}",
        })
        done = subprocess.run(["ip", "netns", "exec", name, sys.executable, "-c", HARNESS],
                              capture_output=True, text=True, env=env, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        run_id = json.loads(done.stdout.strip().splitlines()[-1])["run_id"]
        with daemon.client() as local:
            remote = local.ask(Status())["remote"]
        assert remote["asks"]["box"]["admitted"] >= 2  # run.start and run.finish, over tcp
        assert remote["events"]["forwarded"] >= 3
        mine = _episodes_of(daemon.project, run_id)
        # The edited file is named in the host's view, like the project.
        assert mine[0]["files_changed"] == [f"{daemon.project}/src/upload.py"]
        # Without its key the same process gets nothing from the same endpoint.
        env["SLMACTOR_HOME"] = str(tmp_path / "stranger")
        create(tmp_path / "stranger", "client")
        refused = subprocess.run(["ip", "netns", "exec", name, sys.executable, "-c", STRANGER],
                                 capture_output=True, text=True, env=env, timeout=60, check=False)
        assert refused.returncode == 7, refused.stdout + refused.stderr
    finally:
        stop_quietly(daemon)


def _unshare_usable() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"],
                           capture_output=True, timeout=30, check=False)
    return probe.returncode == 0


@pytest.mark.skipif(not _unshare_usable(), reason="needs root and `unshare --mount`")
def test_a_harness_with_the_ipc_directory_bind_mounted_records_into_the_hosts_project(
    tmp_path: Path,
) -> None:
    # What `docker run -v $XDG_RUNTIME_DIR/slmactor:/run/slmactor -v ~/src/app:/workspace` gives
    # a container: its own mount namespace, the daemon's socket directory and the project at
    # other paths. Here the two mount points are directories under tmp_path.
    daemon = spawn_daemon(base=tmp_path / "d")
    try:
        ctr_run, ctr_workspace = tmp_path / "ctr-run", tmp_path / "ctr-workspace"
        ctr_run.mkdir()
        ctr_workspace.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLMACTOR_")}
        env.update({"SLMACTOR_RUNTIME_DIR": str(ctr_run),
                    "SLMACTOR_CONFIG": str(tmp_path / "no-config.toml"),
                    "SLMACTOR_HOME": str(tmp_path / "ctr-home"),
                    "SLMACTOR_PATH_MAP": f"{ctr_workspace}={daemon.project}"})
        harness = HARNESS.replace('"/workspace"', repr(str(ctr_workspace))).replace(
            "/workspace/src/upload.py", f"{ctr_workspace}/src/upload.py")
        script = (f"mount --bind {daemon.runtime_dir} {ctr_run} && "
                  f"mount --bind {daemon.project} {ctr_workspace} && "
                  f'exec "$0" -c "$1"')
        done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                               script, sys.executable, harness], capture_output=True, text=True,
                              env=env, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        run_id = json.loads(done.stdout.strip().splitlines()[-1])["run_id"]
        assert not any(ctr_run.iterdir())  # the bind mounts were the namespace's only
        mine = _episodes_of(daemon.project, run_id)
        assert mine[0]["files_changed"] == [f"{daemon.project}/src/upload.py"]
    finally:
        stop_quietly(daemon)
