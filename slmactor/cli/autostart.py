"""Starting the daemon in the background for a command or hook that needs it (autostart).

One daemon, whoever starts it: when the user installed the service (`slmactor service
install`: a systemd user unit or a launchd agent) and this command talks to the daemon that
service would run (same runtime dir, same user store), the start goes through the service
manager (`systemctl --user start slmactor.service`, `launchctl kickstart`), so the daemon has
the manager's watchdog, restarts and journal. Otherwise — no service, another runtime dir or
store, or a manager that cannot be reached (no user session bus) — `slmactor serve` is spawned
detached. Should both ever happen, the unit runs `serve --replace`, which takes over from the
spawned daemon instead of failing on its lock: every path ends with one daemon.

Its own module so that `context` (every command) and `daemon_cmds` (`start`) both use it
without importing each other.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

#: How long `start` waits for the new daemon to answer.
START_TIMEOUT = 10.0

# Where the user service lives (`slmactor service` writes it; autostart asks whether it is there).
UNIT_NAME = "slmactor.service"
LAUNCHD_LABEL = "dev.slmactor"
MANAGERS = ("systemd", "launchd")


def default_manager() -> str:
    return "launchd" if sys.platform == "darwin" else "systemd"


def unit_path(manager: str, unit_dir: str | None = None) -> Path:
    """The unit file (systemd) or LaunchAgent plist (launchd) of the user service."""
    if unit_dir:
        base = Path(unit_dir).expanduser()
    elif manager == "systemd":
        config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        base = Path(config) / "systemd" / "user"
    else:
        base = Path.home() / "Library" / "LaunchAgents"
    name = UNIT_NAME if manager == "systemd" else f"{LAUNCHD_LABEL}.plist"
    return base.absolute() / name


class AutostartFailed(RuntimeError):
    """The daemon could not be started; the message is the reason, in one line."""


class StoppedByUser(AutostartFailed):
    """`slmactor stop` left its marker: no autostart until the user starts the daemon again."""


STOPPED_MESSAGE = ("the daemon was stopped with `slmactor stop` and stays stopped until "
                   "`slmactor start` (or the service is started)")


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


def service_runtime_dir(manager: str, env: Mapping[str, str], uid: int) -> Path | None:
    """The runtime dir the installed service's daemon serves: what `slmactor.locate.preferred`
    answers in the service manager's environment (the units set no runtime dir of their own).

    systemd's user manager gives its services `XDG_RUNTIME_DIR=/run/user/<uid>`
    (systemd.exec(5), "Environment variables in spawned processes"), whatever this process's
    parent stripped; a LaunchAgent gets no `XDG_RUNTIME_DIR` (and macOS has no /run/user).
    """
    from slmactor import locate

    managed: dict[str, str] = {}
    if locate.ENV_TEST_ROOT in env:  # tests only
        managed[locate.ENV_TEST_ROOT] = env[locate.ENV_TEST_ROOT]
    if manager == "systemd":
        managed["XDG_RUNTIME_DIR"] = env.get("XDG_RUNTIME_DIR") or f"{locate.run_user_root(env)}/{uid}"
    return Path(locate.preferred(managed, uid))


def use_service(*, manager: str, unit_installed: bool, tool: str | None, runtime_dir: Path,
                env: Mapping[str, str], home: Path, uid: int) -> bool:
    """Whether an autostart goes through the service manager (else: spawn `serve`).

    Only when the service is installed, its tool is on PATH, and the daemon it runs is the one
    this command wants: the same runtime dir and the user store at its default place (the
    unit sets neither `$SLMACTOR_HOME` nor another socket dir).
    """
    if not unit_installed or tool is None:
        return False
    if env.get("SLMACTOR_HOME") and Path(env["SLMACTOR_HOME"]).absolute() != home / ".slmcode":
        return False
    target = service_runtime_dir(manager, env, uid)
    return target is not None and target.absolute() == runtime_dir.absolute()


def service_start_commands(manager: str, unit: Path, uid: int) -> list[list[str]]:
    """What starts the installed service, in order of preference (the first that works wins)."""
    if manager == "systemd":
        return [["systemctl", "--user", "start", UNIT_NAME]]
    # kickstart needs the agent loaded; bootstrap loads it, and RunAtLoad starts it.
    return [["launchctl", "kickstart", f"gui/{uid}/{LAUNCHD_LABEL}"],
            ["launchctl", "bootstrap", f"gui/{uid}", str(unit)]]


def _start_service(runtime_dir: Path) -> str:
    """Start the installed service when it serves `runtime_dir`; "" when it was started, else
    why not (the caller spawns the daemon itself)."""
    import shutil
    import subprocess

    manager = default_manager()
    unit = unit_path(manager)
    tool = shutil.which("systemctl" if manager == "systemd" else "launchctl")
    if not use_service(manager=manager, unit_installed=unit.is_file(), tool=tool,
                       runtime_dir=runtime_dir, env=os.environ, home=Path.home(),
                       uid=os.getuid()):
        return "no service installed for this runtime dir"
    why = ""
    for argv in service_start_commands(manager, unit, os.getuid()):
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=START_TIMEOUT,
                                  check=False, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            why = str(exc)
            continue
        if done.returncode == 0:
            return ""
        said = (done.stderr or done.stdout).strip().splitlines()
        why = f"{' '.join(argv)}: {said[-1] if said else f'exit {done.returncode}'}"
    return why or "the service manager did not start it"


def _wait_for_service(runtime_dir: Path) -> int:
    from slmactor.client import Client, DaemonUnavailable

    deadline = time.monotonic() + START_TIMEOUT
    with Client(runtime_dir, timeout=0.5, retries=1) as client:
        while time.monotonic() < deadline:
            try:
                return int(client.status()["pid"])
            except DaemonUnavailable:
                time.sleep(0.05)  # polling a process we do not own; nothing to wait on
    raise AutostartFailed(f"the service started but its daemon did not answer within "
                          f"{START_TIMEOUT:g}s at {runtime_dir}; see `slmactor service print` "
                          "and the service manager's log")


def start_daemon(runtime_dir: Path, *, quiet: bool = False, by_user: bool = False) -> int:
    """Start the daemon (through the service when installed, see above) and wait until it
    answers; returns its pid. Raises AutostartFailed with the reason in one line.

    An autostart (a command, a hook, `slmactor mcp`) refuses with StoppedByUser while the marker
    of `slmactor stop` is there; `by_user` (`slmactor start`) starts it anyway, and the daemon
    removes the marker once it runs (so a start that fails leaves it).
    """
    from slmactor import locate

    if not by_user and locate.stopped_for(os.environ, str(runtime_dir)):
        raise StoppedByUser(STOPPED_MESSAGE)
    if not _start_service(runtime_dir):
        return _wait_for_service(runtime_dir)
    return spawn_daemon(runtime_dir)


def open_private_log(path: Path) -> IO[bytes]:
    """`path` opened for appending, mode 0600 — also an existing log made readable by others
    (a log can quote paths and errors that are nobody else's business)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except OSError:
        pass  # not ours to change (another owner): it is still written
    return os.fdopen(fd, "ab")


def spawn_daemon(runtime_dir: Path) -> int:
    """Spawn `slmactor serve` detached and wait until it answers; returns its pid."""
    import subprocess

    from slmactor.client import Client, DaemonUnavailable
    from slmactor.config import default_log_dir

    log_dir = default_log_dir()
    log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    log_path = log_dir / "daemon.log"
    env = dict(os.environ, SLMACTOR_RUNTIME_DIR=str(runtime_dir))
    with open_private_log(log_path) as log:
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
