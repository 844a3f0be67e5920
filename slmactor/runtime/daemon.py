"""The daemon process: runtime dir, single-instance locks, sockets, actors, signals, shutdown.

    start:  check runtime dir → lock runtime dir and user store → bind mailboxes, ctl.sock
            (a ROUTER read by the daemon itself, `runtime.zmtp`) and events.sock (PULL) under
            umask 077 → start every actor (each one is "running" only after its on_start) →
            READY=1
    stop:   SIGTERM/SIGINT/daemon.stop → STOPPING=1 → front door refuses new asks → each actor
            drains its inbox and flushes (deadline) → sockets closed and unlinked → exit 0
    fatal:  an actor past its restart budget → the same shutdown, exit 3
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import zmq
import zmq.asyncio

from slmactor import locate
from slmactor.config import Settings
from slmactor.protocol import MAX_MESSAGE_BYTES, MAX_TELL_BYTES
from slmactor.stores.base.lock import StoreLock
from slmactor.stores.base.project_lock import PROJECT_LOCKS

from . import heap, logfilter, sdnotify
from .actor import Actor, ActorContext
from .cell import ActorCell
from .control import ROUTED_BY_FIELD, ControlActor, DaemonInfo
from .frontdoor import REQUEST_BYTES, REQUEST_FRAMES, ZmtpDoor
from .instance import StartupError, take_locks
from .remote import IO_THREADS, LOCAL_IO_AFFINITY, RemoteEndpoints, RemoteRefused
from .router import Router
from .rundir import RuntimeDirError, bind_private, ensure_runtime_dir
from .supervisor import EXIT_ACTOR_FAILED, Supervisor
from .zmtp import ZmtpRouter

log = logging.getLogger("slmactor.daemon")

#: Seconds a thread may hold the GIL before another thread is let in (CPython default 0.005).
SWITCH_INTERVAL = 0.001
#: Allocations between first-generation collections (CPython default 700).
GC_GEN0_THRESHOLD = 10_000
#: High-water marks of ctl.sock per client, both ways: asks waiting for the front door and
#: replies waiting for the client to read them. The door drains asks at once (into a mailbox or a
#: BUSY answer), so the receive side stays short; a client that sends a burst of asks gets its
#: burst of answers (a reply past the mark is dropped and counted as `replies_dropped`).
CTL_HWM = 1000
#: Unread reply bytes a client may hold on ctl.sock before further replies to it are dropped.
CTL_OUT_BYTES = 16 * MAX_MESSAGE_BYTES
#: Largest frame libzmq reads on each socket (larger: the sender is disconnected, nothing read):
#: an ask body and its envelope on ctl.sock; a tell body a little over its limit on events.sock,
#: so a tell just over MAX_TELL_BYTES is still read, refused and counted.
CTL_FRAME_BYTES = MAX_MESSAGE_BYTES + 4096
EVENTS_FRAME_BYTES = MAX_TELL_BYTES + 4096
#: Exit status for a start-up problem (already running, unsafe runtime dir, ...).
EXIT_STARTUP = 2


def _bind_private(sock: zmq.asyncio.Socket, path: Path) -> None:
    bind_private(path, lambda: sock.bind(f"ipc://{path}"))


def _socket(zctx: zmq.asyncio.Context, kind: int, hwm: int, max_frame: int) -> zmq.asyncio.Socket:
    sock = zctx.socket(kind)
    sock.setsockopt(zmq.LINGER, 0)
    # A peer sending a frame larger than this is disconnected by libzmq as soon as it has read
    # the frame's header, before anything is allocated. ZeroMQ has no bound on the frames of one
    # message: it queues a multipart message whole before we see its first frame, so this per-frame
    # bound is what keeps a many-framed flood from being assembled (docs/DOOR.md).
    sock.setsockopt(zmq.MAXMSGSIZE, max_frame)
    sock.setsockopt(zmq.RCVHWM, hwm)
    sock.setsockopt(zmq.SNDHWM, hwm)
    return sock


async def serve(
    settings: Settings,
    actor_classes: Sequence[type[Actor]],
    *,
    on_ready: Callable[[DaemonInfo], None] | None = None,
    replace: bool = False,
) -> int:
    """Run the daemon until stopped; returns the process exit status.

    `replace`: another daemon holding this user store is stopped and this one takes over
    (what the service unit runs, so a daemon autostarted earlier does not make it fail).
    """
    started = time.monotonic()
    # Slow work runs in worker threads; with CPython's default 5 ms switch interval a busy
    # worker holds the GIL long enough to put 5 ms on the tail of every ask. 1 ms keeps the
    # event loop's share of the GIL close to what it gets on an idle daemon.
    sys.setswitchinterval(SWITCH_INTERVAL)
    heap.pin_mmap_threshold()  # large frames go back to the system when freed (runtime/heap.py)
    logfilter.install()  # nothing logged from here on carries a secret (C-20)
    try:
        # Remote endpoints are checked before anything is locked or bound: an unsafe one
        # (non-loopback tcp without CURVE, no server key) refuses the start.
        remote = RemoteEndpoints(settings) if settings.tcp_ctl or settings.tcp_events else None
        ensure_runtime_dir(settings.runtime_dir)
        locks = take_locks(settings, replace=replace)
    except (RuntimeDirError, StartupError, RemoteRefused) as exc:
        log.error("%s", exc)
        return EXIT_STARTUP
    # Running again: `slmactor stop`'s marker (autostarts refuse while it is there) is over.
    try:
        if locate.clear_stopped_everywhere(os.environ, str(settings.runtime_dir)):
            log.info("started after `slmactor stop`: autostart is on again")
    except OSError as exc:
        log.warning("cannot remove the marker of `slmactor stop` (autostarts still refuse): %s", exc)

    # With tcp endpoints, a second I/O thread carries them (and their CURVE crypto): a remote
    # flood then never queues the local ipc sockets' I/O behind its own.
    zctx = zmq.asyncio.Context(io_threads=IO_THREADS if remote is not None else 1)
    router = Router(zctx, settings.inbox_size)
    stop = anyio.Event()
    exit_code = 0

    def fatal(actor: str, reason: str) -> None:
        nonlocal exit_code
        exit_code = EXIT_ACTOR_FAILED
        log.error("shutting down: actor %s exhausted its restart budget (%s)", actor, reason)
        stop.set()

    info = DaemonInfo(
        router=router,
        endpoints={"ctl": settings.ctl_endpoint, "events": settings.events_endpoint},
        stores={"user": str(settings.home), "runtime": str(settings.runtime_dir)},
        request_stop=stop.set,
        restart_window=settings.restart_window,
    )
    # ctl.sock is read by the daemon itself (ZMTP, `runtime.zmtp`): a request's whole-message
    # bounds apply as it arrives, which libzmq's ROUTER cannot do (docs/DOOR.md).
    ctl = ZmtpRouter(max_frames=REQUEST_FRAMES, max_bytes=REQUEST_BYTES, max_frame=CTL_FRAME_BYTES,
                     hwm=CTL_HWM, out_bytes=CTL_OUT_BYTES)
    events = _socket(zctx, zmq.PULL, settings.events_hwm, EVENTS_FRAME_BYTES)
    if remote is not None:
        events.setsockopt(zmq.AFFINITY, LOCAL_IO_AFFINITY)
    cells: list[ActorCell] = []
    # A project lock reclaimed from a foreign `.lock` is a warning in status, naming the project.
    PROJECT_LOCKS.warn = lambda text, project: info.warn("store", text, project)
    try:
        all_classes: list[type[Actor]] = [ControlActor, *actor_classes]
        for cls in all_classes:
            kinds = [k for k in cls.HANDLERS if k not in ROUTED_BY_FIELD]
            stats = router.add_actor(cls.name, kinds)
            ctx = ActorContext(settings, router, stats, time.time, info.warn, info)
            cells.append(ActorCell(cls, ctx, events if cls.EVENTS_INBOX else None))
        front = ZmtpDoor(router, settings, ctl, info)
        info.connections = ctl.counts
        ctl.listen(settings.ctl_path)
        _bind_private(events, settings.events_path)
        if remote is not None:
            # The tcp sockets get the ipc ones' frame bounds: asks on the ROUTER, tells on the PULL.
            remote.bind(zctx, router, info, lambda kind, hwm: _socket(
                zctx, kind, hwm, CTL_FRAME_BYTES if kind == zmq.ROUTER else EVENTS_FRAME_BYTES),
                ctl_frame=CTL_FRAME_BYTES, ctl_hwm=CTL_HWM, ctl_out_bytes=CTL_OUT_BYTES)
            info.remote = remote.status
    except (OSError, zmq.ZMQError, ValueError) as exc:
        log.error("cannot start: %s", exc)
        if remote is not None:
            remote.close()
        ctl.close()
        _close(zctx, router, [events], settings, locks)
        return EXIT_STARTUP

    supervisor = Supervisor(settings.max_restarts, settings.restart_window, fatal)
    try:
        async with anyio.create_task_group() as outer:
            outer.start_soon(ctl.serve)
            outer.start_soon(front.serve_requests)
            outer.start_soon(front.serve_replies)
            outer.start_soon(_watch_signals, stop)
            outer.start_soon(heap.trim_after_bursts, router)
            for task in remote.tasks() if remote is not None else []:
                outer.start_soon(task)
            interval = sdnotify.watchdog_interval()
            if interval:
                outer.start_soon(_watchdog, interval)
            async with anyio.create_task_group() as actors:
                for cell in cells:
                    await actors.start(supervisor.supervise, cell)
                tune_gc()
                sdnotify.notify(f"READY=1\nSTATUS=serving on {settings.ctl_endpoint}")
                log.info("ready in %.0f ms (pid %d, %s)", (time.monotonic() - started) * 1000,
                         os.getpid(), settings.ctl_endpoint)
                if on_ready is not None:
                    on_ready(info)
                await stop.wait()
                sdnotify.notify("STOPPING=1")
                log.info("stopping: draining inboxes and flushing stores")
                front.accepting = False
                if remote is not None and remote.door is not None:
                    remote.door.accepting = False
                for cell in cells:
                    cell.request_stop()
            outer.cancel_scope.cancel()
    finally:
        if remote is not None:
            remote.close()
        ctl.close()
        _close(zctx, router, [events], settings, locks)
    log.info("stopped (exit %d)", exit_code)
    return exit_code


def tune_gc() -> None:
    # Modules, classes and start-up state live as long as the process: freezing them keeps
    # every later collection from re-scanning them (full collections measured 20-60 ms).
    # A larger first generation means fewer collections while the event inbox churns through
    # short-lived batches, and fewer of those objects promoted to older generations.
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0_THRESHOLD, gen1, gen2)


async def _watch_signals(stop: anyio.Event) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("received %s", signal.Signals(signum).name)
            stop.set()


async def _watchdog(interval: float) -> None:
    # Sent from the event loop itself: a wedged loop stops the pings and systemd restarts us.
    while True:
        sdnotify.notify("WATCHDOG=1")
        await anyio.sleep(interval)


def _close(
    zctx: zmq.asyncio.Context,
    router: Router,
    sockets: list[zmq.asyncio.Socket],
    settings: Settings,
    locks: list[StoreLock],
) -> None:
    for sock in sockets:
        sock.close(linger=0)
    router.close()
    zctx.term()
    for path in (settings.ctl_path, settings.events_path):
        try:
            path.unlink()
        except OSError:
            pass
    for lock in reversed(locks):
        lock.release()
