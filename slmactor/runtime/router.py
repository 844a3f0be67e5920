"""Mailboxes and routes: which actor owns which kind, and how frames reach it.

Every actor has a mailbox (`inproc://mailbox.<name>`, a PULL socket), a prompt lane beside it
(`inproc://prompt.<name>`, for the kinds in PROMPT_KINDS: what a model's prompt waits on, taken
before the writes queued in the mailbox) and a reply sink (`inproc://replies.<name>`). The front
door has a reply sink too. Mailbox frames are
`[route, kind, body]`: the protocol frames plus where the reply goes (empty for a tell).
Because mailboxes carry protocol frames over ZeroMQ, an actor can later run in another process
by giving it an ipc:// endpoint instead of inproc://.
"""

from __future__ import annotations

import contextlib

import zmq
import zmq.asyncio

from .stats import ActorStats

FRONT = "front"
#: Bytes of message bodies all mailboxes together may hold; past it a delivery is refused (BUSY)
#: even when the actor's inbox has room, so a flood of large asks cannot grow the process without
#: bound (1,000 queued 1 MiB asks per actor would be gigabytes).
MAILBOX_BUDGET_BYTES = 64 << 20
_SEP = b"\x00"
#: The asks a prompt waits on, and the ones they make on the way (the memory block asks the
#: working actor for the run's section and the recall actor for similar episodes). Each actor
#: serves its prompt lane before its mailbox: under 50 writing clients a block waited behind a
#: queue of episode appends in the recall mailbox (p99 33 ms of a 2 ms block). The lane has its
#: own bound (the inbox size), so a flood of them is refused BUSY like any other. Who sends
#: decides (`deliver(prompt=...)`): the front door, for a client with no other ask in flight (so
#: a write it sent before stays before), and an actor, for the asks of a handler serving a
#: message that came by the lane.
PROMPT_KINDS = frozenset(
    {"memory.block", "memory.recall", "working.render", "working.snapshot"})
PROMPT_KIND_BYTES = frozenset(kind.encode("ascii") for kind in PROMPT_KINDS)
#: Put in an actor's mailbox after a message in its prompt lane, so a cell waiting on its
#: mailbox alone wakes up for it (one frame: no real message has fewer than three).
WAKE_UP = [b"wake"]


def mailbox_endpoint(name: str) -> str:
    return f"inproc://mailbox.{name}"


def prompt_endpoint(name: str) -> str:
    return f"inproc://prompt.{name}"


def replies_endpoint(name: str) -> str:
    return f"inproc://replies.{name}"


def make_route(destination: str, token: bytes) -> bytes:
    """A reply address: the reply sink's owner and a token it understands."""
    return destination.encode("ascii") + _SEP + token


def split_route(route: bytes) -> tuple[str, bytes]:
    destination, _, token = route.partition(_SEP)
    return destination.decode("ascii", "replace"), token


class Router:
    """Binds every mailbox and reply sink, and sends frames to them (one asyncio thread).

    The sending sockets are plain (synchronous) sockets on the same context: a NOBLOCK send on
    an asyncio socket reports EAGAIN through a future nobody awaits, so a full inbox looked
    like a delivered message (the ask went unanswered and the future's error went to the log).
    A plain send raises at once, and the caller answers BUSY.
    """

    def __init__(self, zctx: zmq.asyncio.Context, inbox_size: int) -> None:
        self._zctx = zctx
        self._sync: zmq.Context[zmq.Socket[bytes]] = zmq.Context.shadow(zctx.underlying)
        self._inbox_size = inbox_size
        #: Body bytes in all mailboxes now (added on delivery, taken off when a cell dequeues).
        self.queued_bytes = 0
        self.budget_bytes = MAILBOX_BUDGET_BYTES
        #: actor → the actor whose answer its running handler awaits (the mailbox is held).
        self.waiting: dict[str, str] = {}
        self.stats: dict[str, ActorStats] = {}
        #: kind name → owning actor name.
        self.owners: dict[str, str] = {}
        self.mailboxes: dict[str, zmq.asyncio.Socket] = {}
        self.prompt_lanes: dict[str, zmq.asyncio.Socket] = {}
        #: Messages in each actor's prompt lane not yet taken by its cell.
        self.lane_queued: dict[str, int] = {}
        self._to_prompt: dict[str, zmq.Socket[bytes]] = {}
        self.reply_sinks: dict[str, zmq.asyncio.Socket] = {}
        self._to_mailbox: dict[str, zmq.Socket[bytes]] = {}
        self._to_replies: dict[str, zmq.Socket[bytes]] = {}

    def add_actor(self, name: str, kinds: list[str]) -> ActorStats:
        """Register an actor, bind its mailbox and reply sink, and claim its kinds."""
        if name in self.stats:
            raise ValueError(f"actor {name!r} registered twice")
        for kind in kinds:
            if kind in self.owners:
                raise ValueError(f"kind {kind!r} claimed by {self.owners[kind]!r} and {name!r}")
            self.owners[kind] = name
        self.mailboxes[name], self._to_mailbox[name] = self._inbox(mailbox_endpoint(name))
        self.prompt_lanes[name], self._to_prompt[name] = self._inbox(prompt_endpoint(name))
        self.lane_queued[name] = 0
        self._add_reply_sink(name)
        self.stats[name] = ActorStats(name)
        return self.stats[name]

    def _inbox(self, endpoint: str) -> tuple[zmq.asyncio.Socket, zmq.Socket[bytes]]:
        """A bounded PULL socket bound at `endpoint`, and the PUSH socket that delivers to it."""
        pull = self._zctx.socket(zmq.PULL)
        pull.setsockopt(zmq.LINGER, 0)
        pull.setsockopt(zmq.RCVHWM, self._inbox_size)
        pull.bind(endpoint)
        push = self._sync.socket(zmq.PUSH)
        push.setsockopt(zmq.LINGER, 0)
        push.setsockopt(zmq.SNDHWM, self._inbox_size)
        push.connect(endpoint)
        return pull, push

    def add_front(self, name: str = FRONT) -> zmq.asyncio.Socket:
        return self._add_reply_sink(name)

    def _add_reply_sink(self, name: str) -> zmq.asyncio.Socket:
        sink = self._zctx.socket(zmq.PULL)
        sink.setsockopt(zmq.LINGER, 0)
        sink.setsockopt(zmq.RCVHWM, 0)  # replies are never refused: the asker is waiting
        sink.bind(replies_endpoint(name))
        self.reply_sinks[name] = sink
        push = self._sync.socket(zmq.PUSH)
        push.setsockopt(zmq.LINGER, 0)
        push.setsockopt(zmq.SNDHWM, 0)
        push.connect(replies_endpoint(name))
        self._to_replies[name] = push
        return sink

    def deliver(self, actor: str, route: bytes, kind: bytes, body: bytes, *,
                prompt: bool = False) -> bool:
        """Put a message in an actor's mailbox, or with `prompt` (a kind of PROMPT_KINDS) in its
        prompt lane; False when that inbox is full (caller says BUSY)."""
        lane = prompt and kind in PROMPT_KIND_BYTES
        push = (self._to_prompt if lane else self._to_mailbox)[actor]
        size = len(body)
        if self.queued_bytes + size > self.budget_bytes:
            self.stats[actor].busy += 1
            return False
        try:
            push.send_multipart([route, kind, body], flags=zmq.NOBLOCK, copy=False)
        except zmq.Again:
            self.stats[actor].busy += 1
            return False
        self.queued_bytes += size
        self.stats[actor].enqueued += 1
        if lane:
            self.lane_queued[actor] += 1
            if self.lane_queued[actor] == 1:
                # One wake-up per lane that was empty: a flood of prompts puts one frame in the
                # mailbox, not one each. A full mailbox needs none: its cell is busy, and takes
                # the lane before its next message anyway.
                with contextlib.suppress(zmq.Again):
                    self._to_mailbox[actor].send_multipart(WAKE_UP, flags=zmq.NOBLOCK)
        return True

    def taken_from_lane(self, actor: str) -> None:
        """A cell took a message out of its prompt lane."""
        self.lane_queued[actor] = max(self.lane_queued[actor] - 1, 0)

    def wait_cycle(self, asker: str, owner: str) -> list[str]:
        """The chain asker → owner → … → asker if `asker` waiting for `owner` closes a cycle of
        held mailboxes (nobody in it could ever answer), else []."""
        chain = [asker, owner]
        current = owner
        while current != asker:
            current = self.waiting.get(current, "")
            if not current or current in chain[1:]:
                return []
            chain.append(current)
        return chain

    def dequeued(self, body: bytes) -> None:
        """A cell took a message out of its mailbox: its bytes leave the budget."""
        self.queued_bytes = max(self.queued_bytes - len(body), 0)

    def reply(self, route: bytes, frames: list[bytes]) -> None:
        """Send reply frames back along `route`; unknown destinations are dropped."""
        destination, token = split_route(route)
        push = self._to_replies.get(destination)
        if push is None:
            return
        try:
            push.send_multipart([token, *frames], flags=zmq.NOBLOCK, copy=False)
        except zmq.Again:  # pragma: no cover - reply sinks have no HWM
            pass

    def close(self) -> None:
        for sock in [
            *self._to_mailbox.values(),
            *self._to_prompt.values(),
            *self._to_replies.values(),
            *self.mailboxes.values(),
            *self.prompt_lanes.values(),
            *self.reply_sinks.values(),
        ]:
            sock.close(linger=0)
