"""`slmactor serve | start | stop | status`: run the daemon and see whether it is healthy."""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from typing import Any

from slmactor import __version__
from slmactor.cli.autostart import start_daemon
from slmactor.cli.context import (
    EXIT_CODES_HELP,
    EXIT_DEGRADED,
    EXIT_OK,
    EXIT_UNREACHABLE,
    CliContext,
)


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the daemon in the foreground (what the service runs)")
    p.add_argument("--debug-hooks", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--replace", action="store_true",
                   help="stop a daemon already serving this user store and take over "
                        "(what the service unit runs)")
    p.set_defaults(func=cmd_serve)
    p = sub.add_parser("start", help="start the daemon in the background (also after `stop`)")
    p.set_defaults(func=cmd_start)
    p = sub.add_parser("stop", help="stop the daemon (drains and flushes first); it stays stopped",
                       description="Stop the daemon (it drains its inboxes and flushes its stores "
                       "first). It stays stopped: commands, hooks and `slmactor mcp` do not start it "
                       "again until `slmactor start`, `slmactor serve` or the service starts it.")
    p.set_defaults(func=cmd_stop)
    p = sub.add_parser("status", help="daemon health; exit 0 healthy, 1 unreachable, 150 degraded",
                       epilog=EXIT_CODES_HELP)
    p.set_defaults(func=cmd_status)


def _setup_logging() -> None:
    import logging  # here, not at the top: `slmactor status` never logs

    # Under systemd, journald stamps every line itself.
    fmt = "%(levelname)s %(name)s: %(message)s"
    if not os.environ.get("JOURNAL_STREAM"):
        fmt = "%(asctime)s " + fmt
    logging.basicConfig(level=os.environ.get("SLMACTOR_LOG_LEVEL", "INFO"), format=fmt)


def cmd_serve(ctx: CliContext) -> int:
    import functools

    import anyio

    from slmactor.actors import all_actors
    from slmactor.config import load_settings
    from slmactor.runtime.daemon import serve

    _setup_logging()
    try:
        settings = load_settings(
            runtime_dir=ctx.args.runtime_dir, debug_hooks=ctx.args.debug_hooks or None
        )
    except ValueError as exc:
        return ctx.fail(str(exc))
    def warm_up_after_ready(_info: object) -> None:
        import threading

        from slmactor.actors import warm_up

        threading.Thread(target=warm_up, name="warm-up", daemon=True).start()

    run = functools.partial(serve, replace=ctx.args.replace, on_ready=warm_up_after_ready)
    return anyio.run(run, settings, all_actors(), backend="asyncio")


def cmd_start(ctx: CliContext) -> int:
    from slmactor.client import Client, DaemonUnavailable

    with Client(ctx.runtime_dir, timeout=1.0, retries=1) as client:
        try:
            pid = client.status()["pid"]
            from slmactor import locate

            locate.clear_stopped_everywhere(os.environ, str(ctx.runtime_dir))  # running: not stopped
            ctx.emit({"running": True, "pid": pid, "started": False}, f"already running as pid {pid}")
            return EXIT_OK
        except DaemonUnavailable:
            pass
    from slmactor import locate

    # Read before the start: the new daemon's lock names its own dir, no longer the stopped one's.
    marked = locate.marker_dirs(os.environ, str(ctx.runtime_dir))
    try:
        pid = start_daemon(ctx.runtime_dir, by_user=True)
    except RuntimeError as exc:
        return ctx.fail(str(exc), EXIT_UNREACHABLE)
    for each in marked:  # started: autostart is back, from every environment
        with contextlib.suppress(OSError):
            locate.clear_stopped(each)
    ctx.emit({"running": True, "pid": pid, "started": True}, f"started slmactor (pid {pid})")
    return EXIT_OK


def cmd_stop(ctx: CliContext) -> int:
    """Stop the daemon and leave the marker that keeps every autostart off until `start`.

    The marker is written first, so a hook racing with the stop cannot start a new daemon in
    the moment between the old one's exit and the marker.
    """
    from slmactor import locate, peer
    from slmactor.client import Client, DaemonUnavailable
    from slmactor.protocol.messages import DaemonStop

    runtime = str(ctx.runtime_dir)
    problem = peer.runtime_dir_problem(runtime)
    if problem:
        return ctx.fail(problem, EXIT_UNREACHABLE)
    try:
        locate.mark_stopped_everywhere(os.environ, runtime, f"stopped by `slmactor stop` (pid {os.getpid()}) at "
                                     f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
    except OSError as exc:
        return ctx.fail(f"cannot write the stop marker in {runtime}: {exc.strerror or exc}",
                        EXIT_UNREACHABLE)
    after = "it stays stopped: commands, hooks and mcp will not start it until `slmactor start`"
    with Client(ctx.runtime_dir, timeout=2.0, retries=1) as client:
        try:
            result = client.ask(DaemonStop())
        except DaemonUnavailable:
            ctx.emit({"running": False, "stopped": False, "autostart": False},
                     f"slmactor is not running; {after}")
            return EXIT_OK
    sock = ctx.runtime_dir / "ctl.sock"
    deadline = time.monotonic() + 15.0
    while sock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if sock.exists():
        return ctx.fail(f"daemon pid {result['pid']} did not stop within 15s", EXIT_UNREACHABLE)
    ctx.emit({"running": False, "stopped": True, "pid": result["pid"], "autostart": False},
             f"stopped slmactor (pid {result['pid']}); {after}")
    return EXIT_OK


def _age(seconds: float) -> str:
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours}h"
    if hours:
        return f"{hours}h{minutes}m"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


def render_status(status: dict[str, Any]) -> str:
    lines = []
    mismatch = status.get("version") != __version__
    version = f"slmactor {status.get('version')}"
    if mismatch:
        version += f" (client {__version__}: VERSION MISMATCH)"
    lines.append(
        f"{version} — {status['health']} — pid {status['pid']}, up {_age(status['uptime_s'])}, "
        f"rss {status['rss_bytes'] // (1 << 20)} MiB"
    )
    for name, endpoint in status["endpoints"].items():
        lines.append(f"  {name:<8} {endpoint}")
    for name, path in status["stores"].items():
        lines.append(f"  {name + ' store' if name == 'user' else name:<8} {path}")
    lines.append("")
    header = f"{'ACTOR':<10} {'STATE':<9} {'INBOX':>5} {'PROCESSED':>10} {'ERRORS':>6} {'RESTARTS':>8}  LAST ERROR"
    lines.append(header)
    for row in status["actors"]:
        last = row["last_error"] or "-"
        if row["last_error"]:
            last = f"{time.strftime('%H:%M:%S', time.localtime(row['last_error_at']))} {last}"
        lines.append(
            f"{row['name']:<10} {row['state']:<9} {row['inbox_depth']:>5} {row['processed']:>10} "
            f"{row['errors']:>6} {row['restarts']:>8}  {last[:100]}"
        )
    ev = status["events"]
    lines.append("")
    lines.append(
        f"events: {ev['received']} received, {ev['invalid']} invalid (dropped), "
        f"{ev['dropped_by_clients']} dropped by clients"
    )
    for fault in status.get("store_faults", []):
        where = f" (project {fault['project']})" if fault.get("project") else ""
        what = fault.get("dir") or fault.get("file") or ""
        lines.append(f"store fault{where}: {what}: {fault.get('reason', '')}")
    for w in status.get("warnings", [])[-5:]:
        where = f" (project {w['project']})" if w.get("project") else ""
        lines.append(f"warning [{w['actor']}]{where}: {w['text']}")
    return "\n".join(lines)


def cmd_status(ctx: CliContext) -> int:
    from slmactor.client import Client, DaemonUnavailable, RequestFailed, UntrustedDaemon

    with Client(ctx.runtime_dir, timeout=min(ctx.args.timeout, 2.0), retries=1) as client:
        try:
            status = client.status()
        except UntrustedDaemon as exc:  # another user's directory or listener: not "not running"
            ctx.emit({"running": False, "health": "untrusted", "error": str(exc)}, f"slmactor: {exc}")
            return EXIT_UNREACHABLE
        except DaemonUnavailable as exc:
            from slmactor import locate

            stopped = locate.stopped_for(os.environ, str(ctx.runtime_dir))
            why = "; stopped with `slmactor stop`: `slmactor start` starts it" if stopped else ""
            ctx.emit({"running": False, "health": "unreachable", "error": str(exc), "stopped": stopped},
                     f"slmactor is not running ({exc}){why}")
            return EXIT_UNREACHABLE
        except RequestFailed as exc:
            return ctx.fail(str(exc), EXIT_UNREACHABLE)
    status["running"] = True
    status["client_version"] = __version__
    status["version_mismatch"] = status.get("version") != __version__
    ctx.emit(status, render_status(status))
    healthy = status["health"] == "healthy" and not status["version_mismatch"]
    return EXIT_OK if healthy else EXIT_DEGRADED
