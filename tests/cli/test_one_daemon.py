"""One daemon, whoever starts it.

There is no systemd PID 1 here, so: the decision logic (when an autostart goes through the
service manager), `serve` naming the runtime dir of the daemon that holds the store,
`serve --replace` taking over from it, and the whole story — autostart, then the unit started,
then an autostart with the unit installed — against a `systemctl` stand-in that does what
`systemctl --user start` does with our unit: runs its ExecStart with its environment. The unit
file itself is checked by the real `systemd-analyze verify` in tests/integration/test_deploy.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from slmactor.cli.autostart import service_runtime_dir, service_start_commands, use_service
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

HOME = Path("/home/u")
RUN = Path("/run/user/1000")


def _use(**kw: Any) -> bool:
    args: dict[str, Any] = {"manager": "systemd", "unit_installed": True,
                            "tool": "/usr/bin/systemctl", "runtime_dir": RUN / "slmactor",
                            "env": {"XDG_RUNTIME_DIR": str(RUN)}, "home": HOME, "uid": 1000}
    return use_service(**{**args, **kw})


def test_autostart_goes_through_the_service_only_when_it_serves_this_daemon() -> None:
    assert _use()
    assert not _use(unit_installed=False)
    assert not _use(tool=None)                                   # no systemctl on PATH
    assert not _use(runtime_dir=Path("/tmp/other"))              # --runtime-dir elsewhere
    # A parent stripped XDG_RUNTIME_DIR (Codex's MCP servers, CI hooks): the user manager still
    # gives the unit /run/user/<uid>, so the unit's daemon is still the one this command wants.
    assert _use(env={})
    assert not _use(env={"XDG_RUNTIME_DIR": str(RUN), "SLMACTOR_HOME": "/tmp/store"})
    assert _use(env={"XDG_RUNTIME_DIR": str(RUN), "SLMACTOR_HOME": str(HOME / ".slmcode")})
    assert _use(manager="launchd", tool="/bin/launchctl", runtime_dir=Path("/tmp/slmactor-1000"),
                env={})
    assert service_runtime_dir("launchd", {}, 501) == Path("/tmp/slmactor-501")


def test_the_service_is_started_by_its_manager() -> None:
    assert service_start_commands("systemd", Path("/u"), 1000) == [
        ["systemctl", "--user", "start", "slmactor.service"]]
    plist = Path("/Users/u/Library/LaunchAgents/dev.slmactor.plist")
    assert service_start_commands("launchd", plist, 501) == [
        ["launchctl", "kickstart", "gui/501/dev.slmactor"],
        ["launchctl", "bootstrap", "gui/501", str(plist)]]


def test_serve_says_which_runtime_dir_the_running_daemon_serves(daemon: DaemonProcess,
                                                                tmp_path: Path) -> None:
    other = tmp_path / "rt"
    env = dict(daemon.env, SLMACTOR_RUNTIME_DIR=str(other))
    env.pop("NOTIFY_SOCKET", None)
    done = subprocess.run([sys.executable, "-m", "slmactor", "serve"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert (f"slmactor is already running as pid {daemon.pid}, serving {daemon.runtime_dir}"
            in done.stderr)


def test_serve_replace_takes_over_from_the_running_daemon(tmp_path: Path) -> None:
    first = spawn_daemon(base=tmp_path / "a")
    try:
        second = spawn_daemon(base=tmp_path / "b", home=first.home, extra_args=["--replace"])
    except BaseException:
        stop_quietly(first)
        raise
    try:
        assert first.wait(timeout=30) == 0  # drained and flushed, as on SIGTERM
        with second.client() as client:
            assert client.status()["pid"] == second.pid
        assert "asking it to stop so that this daemon takes over" in second.log()
    finally:
        stop_quietly(second)


# ------------------------------------------------------------------ the whole story

FAKE_SYSTEMCTL = '''#!{python}
"""Stand-in for `systemctl --user` (no systemd PID 1 here): `start` does what systemd does with
the installed slmactor.service — run its ExecStart with its Environment= (%t = the runtime dir)
and the XDG_RUNTIME_DIR the user manager gives every service."""
import os, subprocess, sys
log = os.environ["FAKE_SYSTEMCTL_LOG"]
with open(log, "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
if sys.argv[1:3] == ["--user", "start"]:
    unit = os.path.join(os.environ["XDG_CONFIG_HOME"], "systemd", "user", sys.argv[3])
    env = dict(os.environ)
    argv = None
    for line in open(unit):
        key, _, value = line.strip().partition("=")
        if key == "ExecStart":
            argv = value.split()
        elif key == "Environment":
            name, _, val = value.partition("=")
            env[name] = val.replace("%t", os.environ["XDG_RUNTIME_DIR"])
    with open(log + ".daemon", "ab") as out:
        subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                         start_new_session=True)
'''


@pytest.fixture
def user_session(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A user's environment with its own home, config, state and runtime dirs."""
    base = Path(os.environ.get("TMPDIR", "/tmp")) / f"od-{os.getpid()}-{time.monotonic_ns()}"
    run = base / "run"  # short: ipc socket paths have a length limit
    run.mkdir(parents=True, mode=0o700)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "systemctl"
    fake.write_text(FAKE_SYSTEMCTL.replace("{python}", sys.executable))
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLMACTOR_", "XDG_", "NOTIFY_SOCKET"))}
    env.update(SLMACTOR_TEST_ROOT=str(base / "root"),  # no login session, nobody else's /tmp
               HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_STATE_HOME=str(tmp_path / "state"), XDG_RUNTIME_DIR=str(run),
               PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
               FAKE_SYSTEMCTL_LOG=str(tmp_path / "systemctl.log"), PROJECT=str(tmp_path / "proj"))
    (tmp_path / "home").mkdir()
    (tmp_path / "proj").mkdir()
    try:
        yield env
    finally:
        subprocess.run([sys.executable, "-m", "slmactor", "stop"], env=env, cwd=env["PROJECT"],
                       capture_output=True, timeout=60, check=False)
        subprocess.run(["rm", "-rf", str(base)], check=False)


def _cli(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    # Run from the session's project, so the default project is not this checkout.
    return subprocess.run([sys.executable, "-m", "slmactor", *argv], env=env,
                          cwd=env["PROJECT"], capture_output=True, text=True, timeout=60,
                          check=False)


def _status_pid(env: dict[str, str]) -> int | None:
    done = _cli(env, "--json", "status")
    return int(json.loads(done.stdout)["pid"]) if done.returncode in (0, 150) else None


def _until(predicate: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
    return value


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_every_start_ends_with_the_one_daemon_the_unit_owns(user_session: dict[str, str],
                                                             tmp_path: Path) -> None:
    env = user_session
    calls = tmp_path / "systemctl.log"
    # 1. No service yet: a command autostarts a detached daemon.
    assert _cli(env, "memory", "facts").returncode == 0
    spawned = _status_pid(env)
    assert spawned is not None and not calls.exists()
    # 2. The user installs the unit and starts it: the unit's daemon takes over.
    assert _cli(env, "service", "install").returncode == 0
    subprocess.run(["systemctl", "--user", "start", "slmactor.service"], env=env, check=True,
                   timeout=60)
    unit_daemon = _until(lambda: (pid := _status_pid(env)) not in (None, spawned) and pid,
                         "the unit's daemon to answer")
    assert _until(lambda: _gone(spawned), "the autostarted daemon to stop")
    assert "--replace" in psutil.Process(unit_daemon).cmdline()
    # 3. Stopped, it stays stopped: the next command does not start it (nor the service).
    assert _cli(env, "stop").returncode == 0
    refused = _cli(env, "memory", "facts")
    assert refused.returncode == 1 and "stopped with `slmactor stop`" in refused.stderr
    assert calls.read_text().splitlines() == ["--user start slmactor.service"]
    # 4. `slmactor start` starts it again, through the service manager.
    assert _cli(env, "start").returncode == 0
    assert _cli(env, "memory", "facts").returncode == 0
    assert calls.read_text().splitlines() == ["--user start slmactor.service"] * 2
    again = _status_pid(env)
    assert again is not None and "--replace" in psutil.Process(again).cmdline()
    serving = [p for p in psutil.process_iter(["cmdline"])
               if any("slmactor" in part for part in (p.info["cmdline"] or []))
               and "serve" in (p.info["cmdline"] or []) and p.status() != psutil.STATUS_ZOMBIE
               and p.environ().get("XDG_RUNTIME_DIR") == env["XDG_RUNTIME_DIR"]]
    assert [p.pid for p in serving] == [again]
