"""`slmactor service install [--dry-run] | uninstall | print`: run the daemon under the user's
service manager.

Writes a systemd user unit (`~/.config/systemd/user/slmactor.service`, honouring
`$XDG_CONFIG_HOME`) or a launchd LaunchAgent (`~/Library/LaunchAgents/dev.slmactor.plist`) whose
command is the absolute path of *this* installation's `slmactor` (the one next to the running
interpreter, so a venv install keeps using its venv), then prints the commands that load it. It
never starts the service unless asked with `--enable`: writing a unit is safe anywhere,
starting one is the user's call. `uninstall` always stops and disables the service first (a
daemon left running from a removed unit would be managed by nobody), then removes the file.

The unit and plist templates live here, not in `deploy/`, because `deploy/` is not part of an
installed package; `deploy/systemd/slmactor.service` and `deploy/launchd/dev.slmactor.plist` are
these templates rendered with placeholders, and a test keeps them identical.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from slmactor.cli.autostart import (
    LAUNCHD_LABEL,
    MANAGERS,
    UNIT_NAME,
    default_manager,
    unit_path,
)
from slmactor.cli.context import (
    EXIT_OK,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    CliContext,
    write_text_atomically,
)

SYSTEMD_TEMPLATE = """\
# slmactor: memory and self-improvement daemon for coding-agent harnesses (systemd user unit).
# Written by `slmactor service install`; see deploy/README.md in the source tree.
[Unit]
Description=slmactor memory daemon for coding-agent harnesses
# An actor that keeps crashing makes the daemon exit 3; after 5 restarts in 60 s, stop trying.
StartLimitIntervalSec=60
StartLimitBurst=5

[Service]
# READY=1 once every actor runs; WATCHDOG=1 from the event loop, so a wedged loop is restarted.
Type=notify
NotifyAccess=main
WatchdogSec=30
# --replace: a daemon a CLI command or hook started before the unit did is stopped and this
# one takes over, so the unit owns the one daemon instead of failing on the store lock.
ExecStart=@EXEC_START@ serve --replace
Restart=on-failure
RestartSec=2
# Exit 2 = cannot start (unsafe runtime dir, bad config, a lock held by a non-slmactor
# process): restarting won't help.
RestartPreventExitStatus=2
# SIGTERM drains inboxes and flushes stores within 5 s.
TimeoutStopSec=15
# The daemon finds its socket dir as every client does (slmactor.locate: /run/user/<uid>/slmactor
# where logind made /run/user/<uid>, which is %t here), so no SLMACTOR_RUNTIME_DIR is set and a
# client started with a stripped environment still looks in the same place. RuntimeDirectory
# makes it private before start; Preserve keeps the marker `slmactor stop` leaves in it (a
# stopped daemon stays stopped) instead of deleting the directory at every stop.
RuntimeDirectory=slmactor
RuntimeDirectoryMode=0700
RuntimeDirectoryPreserve=yes
Environment=PYTHONUNBUFFERED=1
# Hardening a user unit can have: only what the kernel enforces for an unprivileged process
# (prctl, seccomp), nothing that needs a mount namespace, so ~/.slmcode and project dirs stay
# writable and the unit works where unprivileged user namespaces are off.
UMask=0077
NoNewPrivileges=true
LockPersonality=true
RestrictRealtime=true
RestrictSUIDSGID=true
RestrictNamespaces=true
KeyringMode=private
SystemCallArchitectures=native
# The daemon binds unix sockets (and tcp for remote endpoints); glibc may ask netlink about
# interfaces. Nothing else.
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK
# The system calls of an ordinary service; a call outside them fails with EPERM instead of
# killing the daemon that hooks wait on.
SystemCallFilter=@system-service
SystemCallFilter=~@privileged
SystemCallErrorNumber=EPERM
# Not MemoryDenyWriteExecute: a libffi closure (ctypes, cffi) needs a writable and executable
# mapping, and a refused mmap would crash the daemon rather than fail one call.

[Install]
WantedBy=default.target
"""


#: What the unit runs after the command (the systemd template spells the same words).
SERVE_ARGS = ("serve", "--replace")


def unit_command() -> list[str]:
    """The whole command line the unit runs, as `install` prints it."""
    return [*slmactor_command(), *SERVE_ARGS]


def slmactor_command() -> list[str]:
    """This installation's `slmactor`, as absolute argv (the console script, else `python -m`)."""
    # abspath, not resolve(): a venv's python is a symlink, and resolving it leaves the venv.
    python = os.path.abspath(sys.executable)
    script = Path(python).parent / "slmactor"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [python, "-m", "slmactor"]


def _systemd_word(word: str) -> str:
    """One ExecStart word: specifiers and variables escaped, quoted when it has spaces or quotes."""
    word = word.replace("%", "%%").replace("$", "$$")
    if any(c.isspace() for c in word) or any(c in word for c in "\"'\\;"):
        word = '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return word


def render_systemd(command: list[str]) -> str:
    return SYSTEMD_TEMPLATE.replace("@EXEC_START@", " ".join(_systemd_word(w) for w in command))


def launchd_log_dir(home: Path) -> Path:
    return home / "Library" / "Logs" / "slmactor"


def launchd_plist(command: list[str], log_dir: str) -> dict[str, Any]:
    return {
        "Label": LAUNCHD_LABEL,
        # --replace: take over from a daemon autostarted before the agent was loaded.
        "ProgramArguments": [*command, *SERVE_ARGS],
        "RunAtLoad": True,
        # Restart after a crash or a non-zero exit, not after `slmactor stop` (exit 0).
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 5,
        # Not Background (nor Standard, the default), which launchd throttles in CPU and I/O:
        # hooks wait on this daemon within their deadline while the user waits on the agent.
        # Interactive = "the same resource limitations as apps, that is to say, none", for
        # jobs a responsive user experience depends on; Adaptive would need XPC connections,
        # and clients speak ZeroMQ over unix sockets (launchd.plist(5), ProcessType).
        "ProcessType": "Interactive",
        "EnvironmentVariables": {"PYTHONUNBUFFERED": "1"},
        "StandardOutPath": f"{log_dir}/slmactor.log",
        "StandardErrorPath": f"{log_dir}/slmactor.log",
    }


def render_launchd(command: list[str], log_dir: str) -> str:
    import plistlib

    data = plistlib.dumps(launchd_plist(command, log_dir), fmt=plistlib.FMT_XML, sort_keys=False)
    return data.decode("utf-8")


def render(manager: str) -> str:
    if manager == "systemd":
        return render_systemd(slmactor_command())
    return render_launchd(slmactor_command(), str(launchd_log_dir(Path.home())))


def enable_commands(manager: str, path: Path) -> list[list[str]]:
    if manager == "systemd":
        return [
            ["systemctl", "--user", "daemon-reload"],
            ["systemctl", "--user", "enable", "--now", UNIT_NAME],
        ]
    return [["launchctl", "bootstrap", f"gui/{os.getuid()}", str(path)]]


def disable_commands(manager: str, path: Path) -> list[list[str]]:
    """Stop and unload (run before the unit file is removed)."""
    if manager == "systemd":
        return [["systemctl", "--user", "disable", "--now", UNIT_NAME]]
    return [["launchctl", "bootout", f"gui/{os.getuid()}/{LAUNCHD_LABEL}"]]


def stop_commands(manager: str) -> list[list[str]]:
    """Stop a unit whose file is already gone, and make the manager forget it."""
    if manager == "systemd":
        return [["systemctl", "--user", "stop", UNIT_NAME], ["systemctl", "--user", "daemon-reload"]]
    return [["launchctl", "bootout", f"gui/{os.getuid()}/{LAUNCHD_LABEL}"]]


def follow_commands(manager: str) -> list[list[str]]:
    if manager == "systemd":
        return [["systemctl", "--user", "status", UNIT_NAME], ["journalctl", "--user", "-u", "slmactor", "-f"]]
    log = launchd_log_dir(Path.home()) / "slmactor.log"
    return [["launchctl", "print", f"gui/{os.getuid()}/{LAUNCHD_LABEL}"], ["tail", "-f", str(log)]]


# ---------------------------------------------------------------- the commands


def register(sub: Any) -> None:
    p = sub.add_parser("service", help="install the daemon as a systemd/launchd user service")
    ssub = p.add_subparsers(dest="service_command", metavar="ACTION")
    p.set_defaults(func=lambda ctx: _usage(p))
    for name, func, helptext in (
        ("install", cmd_install, "write the user unit (prints the commands that start it)"),
        ("uninstall", cmd_uninstall, "stop and disable the service, then remove the unit"),
        ("print", cmd_print, "print the unit that install would write"),
    ):
        sp = ssub.add_parser(name, help=helptext)
        sp.add_argument("--manager", choices=MANAGERS, default=None,
                        help=f"service manager (default here: {default_manager()})")
        if name != "print":
            sp.add_argument("--unit-dir", metavar="DIR",
                            help="write the unit here instead of the manager's user directory")
        if name == "install":
            sp.add_argument("--enable", action="store_true",
                            help="also run the commands that load and start it")
            sp.add_argument("--dry-run", action="store_true",
                            help="say what would be written where, and the commands, and write "
                                 "nothing")
        if name == "uninstall":
            # Stopping first is what uninstall always does now; the flag is kept for scripts.
            sp.add_argument("--disable", action="store_true", help=argparse.SUPPRESS)
        sp.set_defaults(func=func)


def _usage(parser: Any) -> int:
    parser.print_usage(sys.stderr)
    return EXIT_USAGE


def shell_join(argv: list[str]) -> str:
    import shlex

    return " ".join(shlex.quote(a) for a in argv)


def _run(commands: list[list[str]]) -> tuple[list[dict[str, Any]], bool]:
    """Run each command in turn (stopping at the first failure); returns the results and success."""
    import subprocess

    results: list[dict[str, Any]] = []
    for argv in commands:
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
            results.append({"command": shell_join(argv), "returncode": proc.returncode,
                            "output": (proc.stdout + proc.stderr).strip()[-2000:]})
        except (OSError, subprocess.TimeoutExpired) as exc:
            results.append({"command": shell_join(argv), "returncode": None, "output": str(exc)})
        if results[-1]["returncode"] != 0:
            return results, False
    return results, True


def _manager(ctx: CliContext) -> str:
    return str(ctx.args.manager or default_manager())


def cmd_print(ctx: CliContext) -> int:
    manager = _manager(ctx)
    text = render(manager)
    if ctx.json:
        ctx.emit({"manager": manager, "path": str(unit_path(manager)), "command": slmactor_command(),
                  "content": text})
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _report(ctx: CliContext, data: dict[str, Any], lines: list[str]) -> None:
    ctx.emit(data, "\n".join(lines))


def cmd_install(ctx: CliContext) -> int:
    manager = _manager(ctx)
    path = unit_path(manager, ctx.args.unit_dir)
    text = render(manager)
    if ctx.args.dry_run:
        if ctx.args.enable:
            return ctx.fail("service install: --dry-run runs nothing; drop --enable")
        start = enable_commands(manager, path)
        ctx.emit({"manager": manager, "path": str(path), "command": slmactor_command(),
                  "runs": shell_join(unit_command()), "content": text, "dry_run": True,
                  "commands": [shell_join(c) for c in start]},
                 "\n".join([f"would write {path} (nothing written):", "", text.rstrip("\n"), "",
                            f"  runs: {shell_join(unit_command())}",
                            "then, to start it now and at every login:",
                            *[f"  {shell_join(c)}" for c in start]]))
        return EXIT_OK
    try:
        previous = path.read_text(encoding="utf-8") if path.exists() else None
        if previous != text:
            write_text_atomically(path, text, mode=0o644)
        if manager == "launchd":
            launchd_log_dir(Path.home()).mkdir(parents=True, exist_ok=True)  # launchd won't
    except OSError as exc:
        return ctx.fail(f"cannot write {path}: {exc.strerror or exc}", EXIT_UNREACHABLE)
    start = enable_commands(manager, path)
    data: dict[str, Any] = {
        "manager": manager, "path": str(path), "command": slmactor_command(),
        "runs": shell_join(unit_command()),
        "changed": previous != text, "commands": [shell_join(c) for c in start],
        "follow": [shell_join(c) for c in follow_commands(manager)],
    }
    verb = "wrote" if previous != text else "unchanged:"
    lines = [f"{verb} {path}", f"  runs: {shell_join(unit_command())}"]
    if not ctx.args.enable:
        lines += ["", "To start it now and at every login, run:"]
        lines += [f"  {c}" for c in data["commands"]]
        lines += ["", "Then check it with:"] + [f"  {c}" for c in data["follow"]]
        _report(ctx, data, lines)
        return EXIT_OK
    results, ok = _run(start)
    data["ran"] = results
    data["enabled"] = ok
    for result in results:
        lines.append(f"$ {result['command']}  → exit {result['returncode']}")
        if result["output"]:
            lines.extend(f"  {line}" for line in result["output"].splitlines()[-10:])
    if not ok:
        lines.append("could not start the service; the unit file is in place — see the output above")
    _report(ctx, data, lines)
    return EXIT_OK if ok else EXIT_UNREACHABLE


def _wants_link(path: Path) -> Path:
    """Where `systemctl --user enable` puts its symlink to the unit."""
    return path.parent / "default.target.wants" / UNIT_NAME


#: What a stop command says when there is nothing to stop: no user manager (a container, an
#: ssh session without lingering), or the unit / agent is not loaded. Then removing is safe.
NOTHING_TO_STOP = ("failed to connect to bus", "no such process", "not loaded", "does not exist",
                   "could not find", "no medium found", "not found")


def _nothing_to_stop(results: list[dict[str, Any]]) -> bool:
    last = results[-1] if results else {}
    return last.get("returncode") is None or any(
        marker in str(last.get("output", "")).lower() for marker in NOTHING_TO_STOP)


def cmd_uninstall(ctx: CliContext) -> int:
    """Stop and disable the service, then remove its file (and make the manager forget it)."""
    import shutil

    manager = _manager(ctx)
    path = unit_path(manager, ctx.args.unit_dir)
    data: dict[str, Any] = {"manager": manager, "path": str(path), "ran": []}
    lines: list[str] = []
    tool = shutil.which("systemctl" if manager == "systemd" else "launchctl")
    if path.exists() and tool is not None:
        # First: a daemon left running from a deleted unit is one nobody manages any more.
        results, stopped = _run(disable_commands(manager, path))
        data["ran"] = results
        lines += [f"$ {r['command']}  → exit {r['returncode']}" for r in results]
        if not stopped and not _nothing_to_stop(results):
            lines.append(f"could not stop the service, so {path} stays; see the output above")
            lines.extend(f"  {line}" for r in results for line in str(r["output"]).splitlines()[-5:])
            data["removed"] = False
            _report(ctx, data, lines)
            return EXIT_UNREACHABLE
    existed = path.exists()
    try:
        if existed:
            path.unlink()
        link = _wants_link(path)
        # What `systemctl disable` would remove; left behind it would dangle.
        if manager == "systemd" and link.is_symlink() and os.readlink(link) in (str(path), path.name):
            link.unlink()
            lines.append(f"removed {link}")
    except OSError as exc:
        return ctx.fail(f"cannot remove {path}: {exc.strerror or exc}", EXIT_UNREACHABLE)
    data["removed"] = existed
    lines.append(f"removed {path}" if existed else f"nothing to remove at {path}")
    if existed and manager == "systemd" and tool is not None:
        results, _ = _run(stop_commands(manager)[1:])  # daemon-reload, now that the file is gone
        data["ran"].extend(results)
        lines += [f"$ {r['command']}  → exit {r['returncode']}" for r in results]
    _report(ctx, data, lines)
    return EXIT_OK
