"""The actor base class: what an actor is, how it is addressed, and what it may do.

Lifecycle (driven by `ActorCell`, restarted by the `Supervisor`):

    ====================  =========================================================
    hook                  when
    ====================  =========================================================
    ``on_start()``        before the first message; load stores here
    handlers              one message at a time, in mailbox order (no locks needed)
    ``on_events(batch)``  the events-inbox actor only: a drained batch of tells
    ``on_stop()``         after the mailbox was drained on shutdown; flush here
    ====================  =========================================================

Failure semantics (after pykka): an exception in an **ask** handler becomes an error reply and
the actor keeps running; an exception in a **tell** handler crashes the actor and the supervisor
restarts it (a fresh instance, `on_start` again). Background jobs started with `spawn` record
their errors without crashing the actor.

Waits between actors: a handler that awaits `self.ask(...)` holds its mailbox until the answer
comes. If the other actor is (directly or through others) waiting for this one, neither would
ever answer: `ask` sees that cycle in the router's table of who waits for whom and fails at once
with UNAVAILABLE instead of waiting out the ask timeout. A handler whose asks may go "up" to an
actor that asks it (e.g. a fan-out such as `memory.forget`) returns `self.later(work)`: the
mailbox goes on serving while `work` runs, and its result becomes the reply (docs/ACTORS.md).
"""

from __future__ import annotations

import contextvars
import inspect
import itertools
import os
import stat
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import anyio
import anyio.abc
import anyio.to_thread
from anyio.streams.memory import MemoryObjectSendStream

from slmactor.config import Settings
from slmactor.protocol import ErrorCode, Message, RequestError, codec
from slmactor.protocol.messages import DebugCrash, Ping
from slmactor.stores.base.errors import RecordNotSerializable, RecordTooLarge, StoreError
from slmactor.stores.base.project_lock import (
    ProjectLocked,
    UnsafeProjectStore,
    claim_project_store,
)
from slmactor.stores.base.warnings import STORE_DIR, WarningLog, project_in

from .projects import project_problem, real_root
from .router import Router, make_route
from .stats import ActorStats

HandlerT = TypeVar("HandlerT", bound=Callable[..., Awaitable[Any]])
T = TypeVar("T")

_HANDLES_ATTR = "__slmactor_handles__"

#: The actor whose mailbox handler is running in this task ("" in background jobs and `later`
#: work, which do not hold the mailbox).
IN_HANDLER: contextvars.ContextVar[str] = contextvars.ContextVar("slmactor_in_handler", default="")
#: True while the handler running in this task serves a message of the prompt lane: its own asks
#: of PROMPT_KINDS take the lane too (`router.PROMPT_KINDS`).
IN_PROMPT: contextvars.ContextVar[bool] = contextvars.ContextVar("slmactor_in_prompt", default=False)



def store_failure(exc: BaseException, prefix: str = "") -> RequestError:
    """The error reply for a store that refused a write: TOO_LARGE for a record over the store's
    size limit and BAD_FIELD for one JSON cannot hold (both the sender's to fix, nothing was
    written), STORE_ERROR for everything else (disk full, read-only, permissions)."""
    if isinstance(exc, RecordTooLarge):
        code = ErrorCode.TOO_LARGE
    elif isinstance(exc, RecordNotSerializable):
        code = ErrorCode.BAD_FIELD
    else:
        code = ErrorCode.STORE_ERROR
    return RequestError(code, f"{prefix}{exc}")

class Later:
    """A handler's answer that is not ready yet: the cell runs `work` beside the mailbox and
    replies with its result (or its error) when it is done."""

    __slots__ = ("work",)

    def __init__(self, work: Coroutine[Any, Any, Any]) -> None:
        self.work = work


def handles(*messages: type[Message]) -> Callable[[HandlerT], HandlerT]:
    """Mark an async method as the handler of these message classes."""

    def mark(fn: HandlerT) -> HandlerT:
        setattr(fn, _HANDLES_ATTR, messages)
        return fn

    return mark


@dataclass(slots=True)
class ActorContext:
    """What the runtime gives every actor."""

    settings: Settings
    router: Router
    stats: ActorStats
    #: Wall clock (epoch seconds); tests can pass a fake one.
    clock: Callable[[], float]
    #: Store warnings shown by `status` (actor name, text, project).
    warn: Callable[[str, str, str], None]
    #: Daemon-wide facts for the control actor (pid, endpoints, stop hook); opaque to others.
    daemon: Any = None


class ActorDead(Exception):
    """An ask to another actor could not be answered (it stopped, or the reply timed out)."""


class Actor:
    """Base class of every actor. Subclasses set `name` and mark handlers with `@handles`."""

    #: The actor's address, shown by `status`.
    name: ClassVar[str] = ""
    #: True for the one actor that owns `events.sock` (the hot path).
    EVENTS_INBOX: ClassVar[bool] = False
    #: kind → method name, built from the `@handles` marks.
    HANDLERS: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[str, str] = {}
        for klass in reversed(cls.__mro__):
            for attr, value in vars(klass).items():
                for message in getattr(value, _HANDLES_ATTR, ()):
                    table[str(message.KIND)] = attr
        cls.HANDLERS = table

    def __init__(self, ctx: ActorContext) -> None:
        self.ctx = ctx
        self._task_group: anyio.abc.TaskGroup | None = None
        self._pending: dict[bytes, MemoryObjectSendStream[list[bytes]]] = {}
        self._ask_ids = itertools.count(1)

    # ---------------------------------------------------------------- hooks

    async def on_start(self) -> None:
        """Load state. The actor counts as running only after this returns."""

    async def on_stop(self) -> None:
        """Flush state; runs under a shielded scope with the stop deadline."""

    def on_events(self, batch: list[list[bytes]]) -> None:
        """Handle a drained batch of `[kind, body]` tells (events-inbox actor only)."""
        self.ctx.stats.extra["events_unrouted"] = self.ctx.stats.extra.get(
            "events_unrouted", 0
        ) + len(batch)

    def on_events_refused(self, count: int, reason: str) -> None:
        """`count` tells were dropped unread by the events loop (events-inbox actor only)."""
        extra = self.ctx.stats.extra
        extra["events_refused"] = extra.get("events_refused", 0) + count

    def loops(self) -> list[Callable[[], Coroutine[Any, Any, None]]]:
        """Extra long-running tasks (timers, ...) run beside the mailbox."""
        return []

    # ---------------------------------------------------------------- every actor answers these

    @handles(Ping)
    async def _on_ping(self, msg: Ping) -> dict[str, Any]:
        return {"actor": self.name, "pong": True, "state": str(self.ctx.stats.state)}

    @handles(DebugCrash)
    async def _on_debug_crash(self, msg: DebugCrash) -> Any:
        # Only reachable when the daemon runs with debug hooks (the front door checks).
        if msg.how == "stall":
            # Hold the mailbox until `how="release"` (answered by the front door) or 60 s, so a
            # test can fill this actor's inbox deterministically.
            with anyio.move_on_after(60.0):
                await self.ctx.daemon.stall_event(self.name).wait()
            self.ctx.daemon.stalls.pop(self.name, None)  # the next stall waits for its own release
            return {"stalled": self.name}
        raise RuntimeError(f"debug crash requested ({msg.how})")

    # ---------------------------------------------------------------- services

    def now(self) -> float:
        return self.ctx.clock()

    def warn(self, text: str, project: str | None = None) -> None:
        """Surface a store warning in `status` (corrupt file moved aside, index rebuilt, ...),
        with the project it is about (`project`, else the store path its text names)."""
        if project is None:
            project = project_in(text)
        if project and os.path.join(project, STORE_DIR) == os.fspath(self.ctx.settings.home):
            project = ""  # the user store (`~/.slmcode`) is nobody's project
        self.ctx.warn(self.name, text, project)

    def store_warnings(self) -> WarningLog:
        """A `WarningLog` for this actor's stores whose warnings also reach `status`."""
        return WarningLog(on_warn_in=self.warn)

    @staticmethod
    def project_root(msg: Message) -> Path:
        """The request's project directory, checked. Raises RequestError(BAD_PROJECT)."""
        problem = project_problem(msg.project)
        if problem:
            raise RequestError(ErrorCode.BAD_PROJECT, problem)
        root = real_root(msg.project)
        # One writer per project store, and never a store a repository points elsewhere.
        try:
            claim_project_store(root)
        except (ProjectLocked, UnsafeProjectStore) as exc:
            raise RequestError(ErrorCode.BAD_PROJECT, str(exc)) from None
        except StoreError as exc:
            raise store_failure(exc) from None
        return root

    async def ask(self, msg: Message, timeout: float | None = None) -> Any:  # noqa: ASYNC109
        """Ask the actor that owns `msg`'s kind and wait for its result.

        Raises RequestError with the other actor's error code, or ActorDead.
        """
        router = self.ctx.router
        owner = router.owners.get(str(msg.KIND))
        if owner is None:
            raise ActorDead(f"no actor handles {msg.KIND}")
        holding = IN_HANDLER.get() == self.name  # this wait holds our mailbox
        if holding:
            cycle = router.wait_cycle(self.name, owner)
            if cycle:
                self.ctx.stats.extra["waits_refused"] = self.ctx.stats.extra.get("waits_refused", 0) + 1
                raise RequestError(ErrorCode.UNAVAILABLE, f"{msg.KIND}: {' → '.join(cycle)} would wait "
                                   "in a cycle (each holds its mailbox for the other); refused")
            router.waiting[self.name] = owner
        try:
            return await self._ask(owner, msg, timeout)
        finally:
            if holding:
                router.waiting.pop(self.name, None)

    async def _ask(self, owner: str, msg: Message, timeout: float | None) -> Any:  # noqa: ASYNC109
        token = f"{next(self._ask_ids)}".encode()
        send, receive = anyio.create_memory_object_stream[list[bytes]](1)
        self._pending[token] = send
        try:
            kind, body = codec.dump(msg)
            if not self.ctx.router.deliver(owner, make_route(self.name, token), kind, body,
                                           prompt=IN_PROMPT.get()):
                raise RequestError(ErrorCode.BUSY, f"{owner} inbox is full")
            with anyio.fail_after(timeout or self.ctx.settings.internal_ask_timeout):
                frames = await receive.receive()
        except TimeoutError:
            raise ActorDead(f"{owner} did not answer {msg.KIND} in time") from None
        finally:
            self._pending.pop(token, None)
            send.close()
            receive.close()
        reply = codec.load_reply(frames)
        if not reply.ok:
            code = ErrorCode(reply.code) if reply.code in ErrorCode._value2member_map_ else ErrorCode.INTERNAL
            raise RequestError(code, f"{owner}: {reply.reason}")
        return reply.result

    def tell(self, msg: Message) -> bool:
        """Send `msg` to its owner without waiting; False when the owner's inbox is full."""
        owner = self.ctx.router.owners.get(str(msg.KIND))
        if owner is None:
            return False
        kind, body = codec.dump(msg)
        return self.ctx.router.deliver(owner, b"", kind, body)

    def spawn(self, job: Callable[[], Awaitable[None]], what: str) -> None:
        """Run `job` in the background; a failure is counted and shown, the actor keeps going."""
        if self._task_group is None:
            raise RuntimeError("spawn() before the actor started")

        async def guarded() -> None:
            IN_HANDLER.set("")  # a background job does not hold the mailbox
            IN_PROMPT.set(False)  # nor does a prompt wait on it
            try:
                await job()
            except Exception as exc:  # noqa: BLE001 - a failed background job must not kill the actor
                self.ctx.stats.record_error(f"{what}: {type(exc).__name__}: {exc}")

        self._task_group.start_soon(guarded, name=f"{self.name}:{what}")

    def spawn_reply(self, work: Coroutine[Any, Any, None], what: str) -> None:
        """Run the cell's reply for a `later` answer beside the mailbox (the runtime's use)."""
        if self._task_group is None:  # pragma: no cover - handlers run only once started
            work.close()
            raise RuntimeError("spawn_reply() before the actor started")

        async def run() -> None:
            IN_HANDLER.set("")  # `later` work does not hold the mailbox
            await work

        self._task_group.start_soon(run, name=f"{self.name}:{what}")

    def later(self, work: Coroutine[Any, Any, Any]) -> Later:
        """Return this from an ask handler to answer with `work`'s result once it is done, while
        the mailbox keeps serving (use it when `work` asks an actor that may ask this one)."""
        return Later(work)

    async def run_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking or CPU-heavy `fn` in a worker thread (slow work off the actor's loop)."""
        return await anyio.to_thread.run_sync(fn, *args)

    # ---------------------------------------------------------------- runtime side

    def _attach(self, task_group: anyio.abc.TaskGroup) -> None:
        self._task_group = task_group

    def _deliver_reply(self, token: bytes, frames: list[bytes]) -> None:
        send = self._pending.get(token)
        if send is not None:
            try:
                send.send_nowait(frames)
            except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass

    def handler_for(self, kind: str) -> Callable[[Message], Awaitable[Any]] | None:
        attr = self.HANDLERS.get(kind)
        if attr is None:
            return None
        method = getattr(self, attr)
        if not inspect.iscoroutinefunction(method):  # pragma: no cover - programming error
            raise TypeError(f"{type(self).__name__}.{attr} must be async")
        return method  # type: ignore[no-any-return]


# ---------------------------------------------------------------- files read on the loop
# A file an actor reads while it runs on the event loop (a configuration at start, a small
# document) is read through aiofiles (the design card's choice): off the loop, bounded, and only
# if it is a regular file (a FIFO or a device named by a setting must not hang the daemon).
# Stores' multi-step writes (an atomic replace with fsync, a JSONL append) run in a worker thread
# (`Actor.run_sync`) instead.

#: Opened without following a final symlink's target's special file semantics: non-blocking, so
#: opening a FIFO returns at once (and is then refused as no regular file).
_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _opener(path: str, flags: int) -> int:
    return os.open(path, _FLAGS)


async def read_text(path: Path, limit: int = 1 << 20) -> str | None:
    """The text of the regular file at `path` (UTF-8), None when there is none; ValueError when
    it is no regular file, larger than `limit` bytes or not UTF-8; OSError otherwise."""
    import aiofiles

    try:
        async with aiofiles.open(path, "rb", opener=_opener) as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ValueError(f"{path} is not a regular file")
            data = await handle.read(limit + 1)
    except FileNotFoundError:
        return None
    if len(data) > limit:
        raise ValueError(f"{path} is larger than {limit} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text: {exc}") from exc
