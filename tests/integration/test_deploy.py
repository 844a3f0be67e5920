"""`slmactor service` and the deploy units: what a user installing the daemon as a service gets.

The systemd unit is checked with the real `systemd-analyze verify` (which exits 0 even for unknown
keys and bad values, so the test also requires empty output); the launchd plist by a plistlib round
trip. `systemctl`/`launchctl` are never run for real here: `--enable` is exercised against stand-in
executables on PATH that record how they were called.
"""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from slmactor.cli import service

REPO = Path(__file__).resolve().parents[2]
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
needs_systemd_analyze = pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed")


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"}}
    env.update(HOME=str(home), **extra)
    return env


def _cli(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", *args], capture_output=True, text=True, timeout=60,
        env=env or _env(home), stdin=subprocess.DEVNULL, check=False,
    )


def _verify(unit: Path, runtime_dir: Path) -> subprocess.CompletedProcess[str]:
    assert SYSTEMD_ANALYZE is not None
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime_dir))
    return subprocess.run([SYSTEMD_ANALYZE, "--user", "verify", str(unit)], capture_output=True,
                          text=True, timeout=60, env=env, check=False)


def _unit_settings(text: str) -> dict[str, dict[str, list[str]]]:
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, _, value = line.partition("=")
        current.setdefault(key, []).append(value)
    return sections


def _fake_tools(bin_dir: Path, log: Path, fail: str = "", said: str = "", watch: str = "") -> None:
    """`systemctl`, `launchctl` stand-ins that append their argv to `log` (and fail if told,
    saying `said`); with `watch`, each call also logs whether that file exists at the time."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in ("systemctl", "launchctl"):
        script = bin_dir / name
        code = 1 if name == fail else 0
        check = (f'if [ -e "{watch}" ]; then echo "  unit present" >> "{log}"; '
                 f'else echo "  unit gone" >> "{log}"; fi\n') if watch else ""
        script.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\n{check}'
                          f'echo "{said or name + " said hello"}"\nexit {code}\n')
        script.chmod(0o755)


# ---------------------------------------------------------------- the rendered units


def test_deploy_templates_are_the_units_the_cli_writes() -> None:
    # deploy/ is documentation for packagers; the CLI carries the same templates (deploy/ is not
    # installed), so the two must not drift.
    systemd = (REPO / "deploy" / "systemd" / "slmactor.service").read_text()
    assert systemd == service.render_systemd(["@SLMACTOR@"])
    plist = (REPO / "deploy" / "launchd" / "dev.slmactor.plist").read_text()
    assert plist == service.render_launchd(["@SLMACTOR@"], "@LOG_DIR@")


def test_systemd_unit_has_the_required_settings(tmp_path: Path) -> None:
    result = _cli(tmp_path, "service", "print", "--manager", "systemd")
    assert result.returncode == 0, result.stderr
    units = _unit_settings(result.stdout)
    svc = units["Service"]
    exe = service.slmactor_command()
    # --replace: the unit takes over from a daemon autostarted before it (one daemon, not two).
    assert svc["ExecStart"] == [" ".join([*exe, "serve", "--replace"])]
    assert os.path.isabs(exe[0]) and os.access(exe[0], os.X_OK)
    expected = {
        "Type": "notify", "NotifyAccess": "main", "WatchdogSec": "30", "Restart": "on-failure",
        "RestartSec": "2", "RuntimeDirectory": "slmactor", "RuntimeDirectoryMode": "0700",
        # `slmactor stop` leaves its marker there: removing the directory at stop would forget it.
        "RuntimeDirectoryPreserve": "yes",
        "RestartPreventExitStatus": "2", "NoNewPrivileges": "true", "RestrictNamespaces": "true",
        "SystemCallErrorNumber": "EPERM",
    }
    for key, value in expected.items():
        assert svc[key] == [value], key
    assert svc["SystemCallFilter"] == ["@system-service", "~@privileged"]
    assert svc["Environment"] == ["PYTHONUNBUFFERED=1"]
    # No runtime dir of its own: the daemon finds it as every client does (slmactor.locate).
    assert not any("SLMACTOR_RUNTIME_DIR" in value for value in svc["Environment"])
    assert units["Install"]["WantedBy"] == ["default.target"]
    # Nothing that needs a mount namespace (would break writing ~/.slmcode or project dirs, or
    # fail outright where unprivileged user namespaces are off).
    for key in ("ProtectSystem", "ProtectHome", "PrivateTmp", "ReadOnlyPaths", "PrivateUsers"):
        assert key not in svc


@needs_systemd_analyze
def test_systemd_analyze_verifies_the_rendered_unit_cleanly(tmp_path: Path) -> None:
    unit = tmp_path / "slmactor.service"
    unit.write_text(service.render_systemd(service.slmactor_command()))
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    result = _verify(unit, runtime)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "" and result.stdout == ""


def _exposure(unit: Path, runtime_dir: Path) -> tuple[float, str]:
    """`systemd-analyze security --offline` of a unit file: its overall exposure, and the table."""
    assert SYSTEMD_ANALYZE is not None
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime_dir))
    done = subprocess.run([SYSTEMD_ANALYZE, "security", "--offline=yes", "--user", str(unit)],
                          capture_output=True, text=True, timeout=60, env=env, check=False)
    last = [line for line in done.stdout.splitlines() if "Overall exposure level" in line]
    assert last, done.stdout + done.stderr
    return float(last[0].split(":")[1].split()[0]), done.stdout


@needs_systemd_analyze
def test_the_user_unit_is_hardened_as_far_as_systemd_analyze_can_tell(tmp_path: Path) -> None:
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    text = service.render_systemd(["/bin/true"])
    unit = tmp_path / "hardened" / "slmactor.service"
    unit.parent.mkdir()
    unit.write_text(text)
    # The floor, in the same run: the unit with only the settings it had before the seccomp ones.
    seccomp = ("RestrictNamespaces", "KeyringMode", "RestrictAddressFamilies", "SystemCallFilter",
               "SystemCallErrorNumber")
    light = tmp_path / "light" / "slmactor.service"
    light.parent.mkdir()
    light.write_text("\n".join(line for line in text.splitlines() if not line.startswith(seccomp)) + "\n")
    hardened, table = _exposure(unit, runtime)
    floor, _ = _exposure(light, runtime)
    assert hardened < floor - 2.0, (hardened, floor)
    for check in ("RestrictNamespaces=~user", "SystemCallFilter=~@privileged", "SystemCallFilter=~@mount",
                  "RestrictAddressFamilies=~AF_PACKET", "NoNewPrivileges=", "UMask="):
        rows = [line for line in table.splitlines() if check in line]
        assert rows and rows[0].lstrip().startswith("✓"), (check, rows)


@needs_systemd_analyze
def test_systemd_analyze_catches_what_an_exit_code_alone_would_not(tmp_path: Path) -> None:
    # The control for the test above: verify exits 0 for an unknown key and a bad value and only
    # says so on stderr — which is why the clean check requires empty output.
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    good = service.render_systemd(service.slmactor_command())
    broken = tmp_path / "slmactor.service"
    broken.write_text(good.replace("Type=notify", "Type=notfy").replace("[Install]", "FooBar=1\n[Install]"))
    result = _verify(broken, runtime)
    assert "notfy" in result.stderr and "FooBar" in result.stderr
    missing = tmp_path / "missing" / "slmactor.service"
    missing.parent.mkdir()
    missing.write_text(service.render_systemd(["/nonexistent/bin/slmactor"]))
    assert _verify(missing, runtime).returncode != 0


@needs_systemd_analyze
def test_exec_start_with_spaces_and_percent_is_escaped(tmp_path: Path) -> None:
    odd = tmp_path / "my tools" / "100%"
    odd.mkdir(parents=True)
    exe = odd / "slmactor"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    text = service.render_systemd([str(exe)])
    assert f'ExecStart="{str(exe).replace("%", "%%")}" serve' in text
    unit = tmp_path / "slmactor.service"
    unit.write_text(text)
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    result = _verify(unit, runtime)
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_launchd_plist_round_trips_with_the_required_keys(tmp_path: Path) -> None:
    result = _cli(tmp_path, "--json", "service", "print", "--manager", "launchd")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["path"] == str(tmp_path / "Library" / "LaunchAgents" / "dev.slmactor.plist")
    plist: dict[str, Any] = plistlib.loads(data["content"].encode())
    assert plistlib.loads(plistlib.dumps(plist, fmt=plistlib.FMT_XML)) == plist
    assert plist["Label"] == "dev.slmactor"
    assert plist["ProgramArguments"] == [*service.slmactor_command(), "serve", "--replace"]
    assert os.path.isabs(plist["ProgramArguments"][0])
    assert plist["RunAtLoad"] is True
    assert plist["KeepAlive"] == {"SuccessfulExit": False}
    log = str(tmp_path / "Library" / "Logs" / "slmactor" / "slmactor.log")
    assert plist["StandardOutPath"] == log and plist["StandardErrorPath"] == log
    assert plist["EnvironmentVariables"] == {"PYTHONUNBUFFERED": "1"}  # no runtime dir of its own
    # Hooks wait on this daemon: not a job launchd throttles (launchd.plist(5), ProcessType:
    # Background and unspecified/Standard get CPU and I/O limits, Interactive none).
    assert plist["ProcessType"] == "Interactive"


# ---------------------------------------------------------------- install / uninstall


def test_install_writes_the_unit_and_only_prints_the_commands(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    _fake_tools(tmp_path / "bin", log)
    env = _env(tmp_path, PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = _cli(tmp_path, "service", "install", "--manager", "systemd", env=env)
    assert result.returncode == 0, result.stderr
    unit = tmp_path / ".config" / "systemd" / "user" / "slmactor.service"
    assert unit.read_text() == service.render_systemd(service.slmactor_command())
    assert stat.S_IMODE(unit.stat().st_mode) == 0o644
    assert "systemctl --user enable --now slmactor.service" in result.stdout
    assert "journalctl --user -u slmactor -f" in result.stdout
    assert not log.exists()  # nothing was run without --enable
    again = _cli(tmp_path, "--json", "service", "install", "--manager", "systemd", env=env)
    assert json.loads(again.stdout)["changed"] is False
    assert not list(unit.parent.glob(".*.tmp"))


def test_install_honours_xdg_config_home_and_unit_dir(tmp_path: Path) -> None:
    env = _env(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    result = _cli(tmp_path, "--json", "service", "install", "--manager", "systemd", env=env)
    assert json.loads(result.stdout)["path"] == str(tmp_path / "cfg" / "systemd" / "user" / "slmactor.service")
    result = _cli(tmp_path, "--json", "service", "install", "--manager", "systemd",
                  "--unit-dir", str(tmp_path / "elsewhere"))
    assert (tmp_path / "elsewhere" / "slmactor.service").is_file(), result.stderr


def test_install_enable_runs_systemctl_and_reports_it(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    _fake_tools(tmp_path / "bin", log)
    env = _env(tmp_path, PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = _cli(tmp_path, "--json", "service", "install", "--manager", "systemd", "--enable", env=env)
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == [
        "systemctl --user daemon-reload",
        "systemctl --user enable --now slmactor.service",
    ]
    data = json.loads(result.stdout)
    assert data["enabled"] is True and [r["returncode"] for r in data["ran"]] == [0, 0]


def test_install_enable_failure_is_reported_and_exits_1(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    _fake_tools(tmp_path / "bin", log, fail="systemctl")
    env = _env(tmp_path, PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = _cli(tmp_path, "service", "install", "--manager", "systemd", "--enable", env=env)
    assert result.returncode == 1
    assert "exit 1" in result.stdout and "could not start the service" in result.stdout
    assert log.read_text().splitlines() == ["systemctl --user daemon-reload"]  # stopped at the failure
    assert (tmp_path / ".config" / "systemd" / "user" / "slmactor.service").is_file()


def test_launchd_install_enable_bootstraps_the_agent(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    _fake_tools(tmp_path / "bin", log)
    env = _env(tmp_path, PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = _cli(tmp_path, "service", "install", "--manager", "launchd", "--enable", env=env)
    assert result.returncode == 0, result.stderr
    plist = tmp_path / "Library" / "LaunchAgents" / "dev.slmactor.plist"
    assert plistlib.loads(plist.read_bytes())["Label"] == "dev.slmactor"
    assert log.read_text().splitlines() == [f"launchctl bootstrap gui/{os.getuid()} {plist}"]
    assert (tmp_path / "Library" / "Logs" / "slmactor").is_dir()  # launchd does not create it


def test_uninstall_removes_the_unit_and_its_enable_link(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    _fake_tools(tmp_path / "bin", log)
    env = _env(tmp_path, PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert _cli(tmp_path, "service", "install", env=env).returncode == 0
    unit = tmp_path / ".config" / "systemd" / "user" / "slmactor.service"
    wants = unit.parent / "default.target.wants"
    wants.mkdir()
    (wants / "slmactor.service").symlink_to(unit)  # what `systemctl --user enable` leaves
    result = _cli(tmp_path, "service", "uninstall", "--manager", "systemd", env=env)
    assert result.returncode == 0, result.stderr
    assert not unit.exists() and not (wants / "slmactor.service").is_symlink()
    assert log.read_text().splitlines() == [
        "systemctl --user disable --now slmactor.service", "systemctl --user daemon-reload"]
    again = _cli(tmp_path, "--json", "service", "uninstall", "--manager", "systemd", env=env)
    assert again.returncode == 0 and json.loads(again.stdout)["removed"] is False


@pytest.mark.parametrize("flags", [[], ["--disable"]], ids=["plain", "old --disable flag"])
def test_uninstall_stops_and_disables_before_removing(tmp_path: Path, flags: list[str]) -> None:
    log = tmp_path / "calls.log"
    unit = tmp_path / ".config" / "systemd" / "user" / "slmactor.service"
    _fake_tools(tmp_path / "bin", log, watch=str(unit))
    env = _env(tmp_path, PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert _cli(tmp_path, "service", "install", env=env).returncode == 0
    result = _cli(tmp_path, "service", "uninstall", "--manager", "systemd", *flags, env=env)
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == [
        "systemctl --user disable --now slmactor.service", "  unit present",  # stopped first
        "systemctl --user daemon-reload", "  unit gone",                       # then forgotten
    ]


def test_uninstall_keeps_the_unit_when_it_cannot_be_stopped(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    _fake_tools(tmp_path / "bin", log, fail="systemctl", said="Failed to stop slmactor.service: "
                "Access denied")
    env = _env(tmp_path, PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert _cli(tmp_path, "service", "install", env=env).returncode == 0
    result = _cli(tmp_path, "service", "uninstall", "--manager", "systemd", env=env)
    assert result.returncode == 1 and "could not stop the service" in result.stdout
    assert (tmp_path / ".config" / "systemd" / "user" / "slmactor.service").is_file()


@pytest.mark.parametrize("manager,said", [
    ("systemd", "Failed to connect to bus: No medium found"),   # no user manager here
    ("launchd", "Boot-out failed: 3: No such process"),          # the agent is not loaded
])
def test_uninstall_without_anything_running_removes_the_unit(tmp_path: Path, manager: str,
                                                              said: str) -> None:
    log = tmp_path / "calls.log"
    _fake_tools(tmp_path / "bin", log, fail="systemctl" if manager == "systemd" else "launchctl",
                said=said)
    env = _env(tmp_path, PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert _cli(tmp_path, "service", "install", "--manager", manager, env=env).returncode == 0
    result = _cli(tmp_path, "--json", "service", "uninstall", "--manager", manager, env=env)
    assert result.returncode == 0, result.stdout
    assert json.loads(result.stdout)["removed"] is True


def test_service_without_an_action_prints_usage(tmp_path: Path) -> None:
    result = _cli(tmp_path, "service")
    assert result.returncode == 2 and "usage" in result.stderr


# ---------------------------------------------------------------- what the unit relies on


def test_daemon_speaks_the_notify_protocol_the_unit_expects(tmp_path: Path) -> None:
    # Type=notify + WatchdogSec: READY=1 once serving, WATCHDOG=1 at half the watchdog period,
    # STOPPING=1 on SIGTERM, then exit 0 (so Restart=on-failure leaves it stopped).
    import signal
    import socket
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="sad-", dir="/tmp"))
    notify_path = base / "notify.sock"
    env = {
        **os.environ,
        "SLMACTOR_RUNTIME_DIR": str(base / "rt"),
        "SLMACTOR_HOME": str(base / "home"),
        "NOTIFY_SOCKET": str(notify_path),
        "WATCHDOG_USEC": "1000000",  # → a WATCHDOG=1 every 0.5 s
        "HOME": str(tmp_path),
    }
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(str(notify_path))
        notify.settimeout(20)
        proc = subprocess.Popen([*service.slmactor_command(), "serve"], env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            seen: list[str] = []
            while not any("READY=1" in m for m in seen):
                seen.append(notify.recv(4096).decode())
            ready_at = len(seen)
            while not any("WATCHDOG=1" in m for m in seen[ready_at:]):  # a ping after READY: periodic
                seen.append(notify.recv(4096).decode())
            proc.send_signal(signal.SIGTERM)
            while not any("STOPPING=1" in m for m in seen):
                seen.append(notify.recv(4096).decode())
            assert proc.wait(20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            shutil.rmtree(base, ignore_errors=True)
    ready = next(m for m in seen if "READY=1" in m)
    assert "STATUS=serving on ipc://" in ready
