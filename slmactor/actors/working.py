"""The working actor: the working memory of every live run (SPEC S-1, S-7.6).

Owns: one `WorkingMemory` per (project, run id) in a bounded `WorkingRuns` table (LRU of live
runs, idle runs expire), and each project's `memory/WORKING.md` mirror.
Consumes: the tells `record_tool`, `focus`, `fail`, `resolve`, `decide`, `summarize` and
`client.dropped` — as drained batches from `events.sock` (the hot path, `on_events`) or one at a
time from the mailbox when a client sent them on `ctl.sock`; the asks `run.start`, `run.reset`,
`working.render`, `working.snapshot`, `working.mirror`.
Emits: nothing.

The hot path: `on_events` gets a drained batch of `[kind, body]` frames (up to the cell's
`EVENTS_BATCH`, 256, then the loop gives asks a few turns) and, per event, decodes the body,
type-checks it inline against the wire caps and does the bounded appends of
`WorkingMemory.record_tool`. No I/O, no regex, no token counting, no await (a project path is
canonicalised once per distinct string, then memoised). A bad event (not msgpack, wrong version,
a missing run id or tool, a field of the wrong type or over its cap) is dropped and counted in
`status` (`events_invalid`, beside `events_received` and the clients' own `client_dropped`); it
never raises, so it never crashes the actor.

Read-your-writes across the two sockets: every tell carries (client, seq); the actor remembers
the highest seq applied per client, and an ask that names (client, seq) waits — at most
`WAIT_APPLIED_SECONDS` — until that tell was applied. The answer says whether it was
(`caught_up`), so a client whose tell was dropped gets a prompt answer, not a hang. The wait is
short on purpose (20 ms, and none at all for a client more than 2000 tells behind): the mailbox
handles one ask at a time, so a client that queued a large backlog of tells must not hold up
everyone else's asks; it gets `caught_up: false` and may ask again.

`WORKING.md` is written off the hot path: on `working.mirror`, for runs evicted from or expiring
out of the table (by the housekeeping timer), and for the latest run of each project at shutdown.
Text is redacted by `write_markdown`.

Tool-name classes (which tools read, edit, run commands) default to slmcode's names and every
harness room's (`slmactor.harnesses.tool_classes`); a `tool_classes.toml` beside
the config file (or `$SLMACTOR_TOOL_CLASSES`) extends or replaces them.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import msgpack

from slmactor.config import default_config_path
from slmactor.harnesses import tool_classes as harness_tool_classes
from slmactor.logic.text.safecut import cut_chars
from slmactor.logic.text.strings import count_tokens_chars
from slmactor.logic.working.checkpoint import memory_state, restore_memory
from slmactor.logic.working.memory import WorkingMemory, working_markdown
from slmactor.logic.working.runs import RunKey, WorkingRuns
from slmactor.logic.working.toolclasses import (
    ToolClasses,
    ToolClassesConfigError,
)
from slmactor.protocol import PROTOCOL_VERSION, ErrorCode, ProtocolError, RequestError, codec
from slmactor.protocol.messages import (
    ClientDropped,
    Decide,
    Fail,
    Focus,
    Kind,
    RecordTool,
    Resolve,
    RunReset,
    RunStart,
    Summarize,
    Tell,
    WorkingApplied,
    WorkingMirror,
    WorkingRender,
    WorkingSnapshot,
)
from slmactor.runtime.actor import Actor, ActorContext, handles
from slmactor.runtime.projects import project_problem
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.layout import ProjectLayout, UserLayout
from slmactor.stores.base.markdown import write_markdown
from slmactor.stores.base.project_lock import claim_project_store
from slmactor.stores.working_checkpoint import WorkingCheckpoint

#: Environment variable naming a TOML file of tool-name classes (`read`, `edit`, `shell` lists,
#: `modes` table, `replace_defaults`), see `slmactor.logic.working.toolclasses`.
ENV_TOOL_CLASSES = "SLMACTOR_TOOL_CLASSES"
#: Longest an ask waits for its own client's tells to be applied (the mailbox waits with it).
WAIT_APPLIED_SECONDS = 0.02
#: An ask whose client is more tells behind than this is answered at once (caught_up false):
#: at ~100k events/s the wait could not close the gap, it would only hold up other asks.
MAX_WAIT_GAP = 2000
#: Clients whose last applied seq is remembered (oldest forgotten first).
MAX_CLIENTS = 4096
#: Distinct project strings whose canonical path is remembered.
MAX_PROJECT_NAMES = 1024
#: How often idle runs are expired and pending mirrors written.
HOUSEKEEPING_SECONDS = 30.0
#: Runs whose checkpoint state is built between two event-loop turns.
CHECKPOINT_SLICE = 32
#: Mirrors waiting to be written (one per project; the newest wins).
MAX_PENDING_MIRRORS = 64

#: Event times at or past this (year 5138) are taken as garbage and replaced by "now".
_FAR_FUTURE = 1e11
_RECORD_TOOL = Kind.RECORD_TOOL.value.encode("ascii")
_CAPS = {
    name: RecordTool.CAPS.get(name, codec.MAX_TEXT)
    for name in ("project", "run_id", "tool", "path", "args", "command", "error", "key", "client")
}
_CAPS["project"] = 4096  # the codec's limit for a project path
_OTHER_TELLS: dict[str, type[Tell]] = {
    str(cls.KIND): cls for cls in (Focus, Fail, Resolve, Decide, Summarize, ClientDropped)
}


class _BadEvent(Exception):
    """An event that is dropped and counted; the reason goes to `status` warnings (sampled)."""


#: msgpack ≥ 1.0 defaults are the codec's rules (str keys only, raw=False, lists) and bound every
#: container by the body's own length (≤ MAXMSGSIZE); keyword arguments cost ~0.4 µs per call, a
#: third of the decode. An ext value can only land in a field whose type check then fails, or in
#: an unknown field that is ignored.
_unpackb = msgpack.unpackb
#: Bodies up to this many bytes cannot hold a string over any record_tool cap.
_SMALL_BODY = min(_CAPS.values())


def _check_caps(raw: bytes, fields: dict[str, Any]) -> None:
    if len(raw) > codec.MAX_MESSAGE_BYTES:
        raise _BadEvent(f"record_tool: body of {len(raw)} bytes is too large")
    for name, cap in _CAPS.items():
        value = fields.get(name)
        if type(value) is str and len(value) > cap:
            raise _BadEvent(f"record_tool: field {name!r} is over its cap of {cap} characters")


def _write_mirrors(batch: list[tuple[str, Path, str]]) -> tuple[int, list[str]]:
    """(written, errors) of writing each (project, WORKING.md path, text); runs in a thread."""
    written = 0
    errors: list[str] = []
    for project, path, text in batch:
        if not Path(project).is_dir():
            continue  # the project is gone: nothing to mirror into
        try:
            claim_project_store(Path(project))  # one writer per project, no symlinked store
            write_markdown(path, text)
            written += 1
        except (StoreError, OSError) as exc:
            errors.append(str(exc))
    return written, errors


class WorkingActor(Actor):
    """Working memory per run; the owner of `events.sock`."""

    name = "working"
    EVENTS_INBOX = True

    def __init__(self, ctx: ActorContext) -> None:
        super().__init__(ctx)
        self._classes = harness_tool_classes()
        self.runs = WorkingRuns(classes=self._classes)
        self._applied: dict[str, int] = {}
        self._progress = anyio.Event()
        self._waiters = 0
        self._bad_seen = 0
        self._pending_mirrors: dict[str, tuple[Path, str]] = {}
        self._projects: dict[str, str] = {}
        self._latest_per_project: dict[str, RunKey] = {}
        self._checkpoint = WorkingCheckpoint(
            UserLayout(ctx.settings.home).memory_dir / "working.checkpoint.json",
            self.store_warnings(), now=self.now,
        )
        #: (processed, live runs) at the last checkpoint: nothing changed → nothing written.
        self._checkpointed: tuple[int, int] = (-1, -1)
        extra = self.ctx.stats.extra
        for counter in (
            "events_received",
            "events_invalid",
            "client_dropped",
            "mirrors_written",
            "mirror_errors",
            "checkpoints",
            "checkpoint_errors",
        ):
            extra.setdefault(counter, 0)
        self._publish_runs()

    async def on_start(self) -> None:
        settings = self.ctx.settings
        self._classes = await self._load_tool_classes() or harness_tool_classes()
        self.runs = WorkingRuns(max(settings.working_runs, 1), classes=self._classes)
        restored = 0
        for project, run_id, touched, state in await self.run_sync(self._checkpoint.load):
            memory = restore_memory(state, classes=self._classes)
            if memory is not None and self.runs.adopt(project, run_id, memory, touched):
                self._latest_per_project[project] = (project, run_id)
                restored += 1
        extra = self.ctx.stats.extra
        extra["runs_restored"] = restored
        self._publish_runs()

    async def _load_tool_classes(self) -> ToolClasses | None:
        """Tool-name classes from `$SLMACTOR_TOOL_CLASSES`, else `tool_classes.toml` beside the
        config file; None (the built-in defaults) when there is none or it is broken (warned).
        Read through aiofiles: the actor starts on the event loop."""
        from slmactor.runtime.actor import read_text

        override = os.environ.get(ENV_TOOL_CLASSES)
        path = Path(override) if override else default_config_path().parent / "tool_classes.toml"
        try:
            text = await read_text(path)
            if text is None:
                return None
            return ToolClasses.from_config(tomllib.loads(text), harness_tool_classes())
        except (OSError, ValueError, tomllib.TOMLDecodeError, ToolClassesConfigError) as exc:
            self.warn(f"{path}: tool classes not loaded, using the defaults: {exc}")
            return None

    # ---------------------------------------------------------------- the hot path

    def on_events(self, batch: list[list[bytes]]) -> None:
        now = self.now()
        memories: dict[RunKey, WorkingMemory] = {}
        seen: dict[Any, Any] = {}
        good = 0
        bad = 0
        for frames in batch:
            try:
                if len(frames) != 2 or frames[0] != _RECORD_TOOL:
                    self._apply_other(frames, now)
                    good += 1
                    continue
                raw = frames[1]
                try:
                    fields = _unpackb(raw)
                except Exception:  # noqa: BLE001 - msgpack raises several unrelated types
                    raise _BadEvent("body is not valid msgpack") from None
                if type(fields) is not dict:
                    raise _BadEvent("body is not a msgpack map")
                get = fields.get
                # One client's PUSH stream arrives in order, so the last seq seen per client is its
                # highest; types are checked once per client in _mark_applied, not per event.
                seen[get("client")] = get("seq")
                if get("v") != PROTOCOL_VERSION:
                    raise _BadEvent(f"protocol version {get('v')!r} not supported")
                project = get("project", "")
                run_id = get("run_id", "")
                tool = get("tool", "")
                path = get("path", "")
                args = get("args", "")
                command = get("command", "")
                error = get("error", "")
                key = get("key", "")
                ok = get("ok", True)
                at = get("at", 0.0)
                if not (
                    type(project) is str
                    and type(run_id) is str
                    and type(tool) is str
                    and type(path) is str
                    and type(args) is str
                    and type(command) is str
                    and type(error) is str
                    and type(key) is str
                    and type(ok) is bool
                ):
                    raise _BadEvent("record_tool: a field has the wrong type")
                if type(at) is not float:
                    if type(at) is not int:
                        raise _BadEvent("record_tool: 'at' must be a number")
                    at = float(at)
                # No field can be over its cap (all ≥ _SMALL_BODY characters) in a small body.
                if len(raw) > _SMALL_BODY:
                    _check_caps(raw, fields)
                if not run_id:
                    raise _BadEvent("record_tool: missing run_id")
                # A NUL is text a call carried (a test's output): replaced, as the codec does,
                # never a reason to drop the call (memchr-fast checks).
                if "\x00" in error or "\x00" in args or "\x00" in command or "\x00" in path \
                        or "\x00" in tool or "\x00" in key or "\x00" in run_id:
                    run_id, tool, path, args, command, error, key = (
                        codec.without_nul(s) for s in (run_id, tool, path, args, command, error, key))
                run_key = (project, run_id)
                memory = memories.get(run_key)
                if memory is None:
                    if "\x00" in project:  # once per run per batch: no directory has a NUL
                        raise _BadEvent("record_tool: a NUL byte in project")
                    evicted_before = self.runs.evicted
                    memory = self._ensure(self._canonical(project), run_id, now)
                    if self.runs.evicted != evicted_before:
                        memories.clear()  # a run cached in this batch may have just left
                    memories[run_key] = memory
                if not 0 < at < _FAR_FUTURE:  # also rejects nan and inf
                    at = now
                if not memory.record_tool(tool, path, args, command, ok, error, key, at):
                    raise _BadEvent("record_tool: missing tool")
                good += 1
            except _BadEvent as exc:
                bad += 1
                self._count_bad(str(exc))
            except Exception as exc:  # noqa: BLE001 - one bad event must never crash the hot path
                bad += 1
                self._count_bad(f"{type(exc).__name__}: {exc}")
        if seen:
            self._mark_applied(seen)
        extra = self.ctx.stats.extra
        extra["events_received"] += good + bad
        if bad:
            extra["events_invalid"] += bad
        if self._waiters:
            self._wake()

    def on_events_refused(self, count: int, reason: str) -> None:
        """Tells too large to read (dropped by the events loop): received, invalid, and why."""
        extra = self.ctx.stats.extra
        extra["events_received"] += count
        extra["events_invalid"] += count
        for _ in range(count):
            self._count_bad(reason)

    def _mark_applied(self, seen: dict[Any, Any]) -> None:
        applied = self._applied
        for client, seq in seen.items():
            if type(client) is not str or not client or type(seq) is not int:
                continue
            if seq > applied.get(client, 0):
                if client not in applied and len(applied) >= MAX_CLIENTS:
                    del applied[next(iter(applied))]
                applied[client] = seq

    def _apply_other(self, frames: list[bytes], now: float) -> None:
        """A tell other than record_tool arriving on events.sock (rare: fully validated)."""
        try:
            cls, fields = codec.load_fields(frames)
        except ProtocolError as exc:
            raise _BadEvent(exc.reason) from None
        tell_cls = _OTHER_TELLS.get(str(cls.KIND))
        if tell_cls is None:
            raise _BadEvent(f"{cls.KIND} is not a working-memory tell")
        self._apply_tell(tell_cls(**fields), now)

    def _canonical(self, project: str) -> str:
        """A tell's project root as other actors name it (`realpath`), memoised: one filesystem
        look-up per distinct project string, not per event.

        The project rule (clients/PROTOCOL.md §3) holds for tells as for asks: a tell without a
        project, or naming one that is not an existing absolute directory, is dropped and
        counted — filed under it, it would sit where no project-scoped read ever looks."""
        known = self._projects.get(project)
        if known is not None:
            return known
        problem = project_problem(project)
        if problem:
            raise _BadEvent(problem)
        canonical = os.path.realpath(project)
        if len(self._projects) >= MAX_PROJECT_NAMES:
            self._projects.clear()
        self._projects[project] = canonical
        return canonical

    def _ensure(self, project: str, run_id: str, now: float) -> WorkingMemory:
        """The run's memory; `project` is canonical (`_canonical` or `project_root`)."""
        memory, evicted = self.runs.ensure(project, run_id, now)
        self._latest_per_project[project] = (project, run_id)
        if evicted:
            for key, old in evicted:
                self._queue_mirror(key[0], old, now)
                if self._latest_per_project.get(key[0]) == key:
                    del self._latest_per_project[key[0]]
            self._publish_runs()
        elif self.runs.created != self.ctx.stats.extra.get("runs_created"):
            self._publish_runs()
        return memory

    def _count_bad(self, reason: str) -> None:
        self._bad_seen += 1
        total = self._bad_seen
        # Sample the reasons (1st, 10th, 100th, ... bad event) so a flood cannot flood warnings.
        if str(total).rstrip("0") == "1":
            self.warn(f"dropped bad event #{total}: {cut_chars(reason, 200)}")

    def _wake(self) -> None:
        self._progress.set()
        self._progress = anyio.Event()

    # ---------------------------------------------------------------- other tells

    def _apply_tell(self, msg: Tell, now: float) -> None:
        if msg.client:
            self._mark_applied({msg.client: msg.seq})
        if isinstance(msg, ClientDropped):
            if msg.count > 0:
                self.ctx.stats.extra["client_dropped"] += msg.count
            return
        run_id = getattr(msg, "run_id", "")
        if not run_id:
            raise _BadEvent(f"{msg.KIND}: missing run_id")
        memory = self._ensure(self._canonical(msg.project), run_id, now)
        if isinstance(msg, RecordTool):
            at = msg.at if 0 < msg.at < _FAR_FUTURE else now
            if not memory.record_tool(
                msg.tool, msg.path, msg.args, msg.command, msg.ok, msg.error, msg.key, at
            ):
                raise _BadEvent("record_tool: missing tool")
        elif isinstance(msg, Focus):
            memory.focus(msg.paths, now)
        elif isinstance(msg, Fail):
            memory.fail(msg.key, msg.tool, msg.path, msg.message, now)
        elif isinstance(msg, Resolve):
            memory.resolve(msg.key, msg.resolution, msg.resolved_by, now)
        elif isinstance(msg, Decide):
            memory.decide(msg.text, now)
        elif isinstance(msg, Summarize):
            memory.summarize(msg.text, now)

    @handles(RecordTool, Focus, Fail, Resolve, Decide, Summarize, ClientDropped)
    async def _on_tell(self, msg: Tell) -> None:
        """The same tells sent on ctl.sock (one at a time, acknowledged by the front door)."""
        extra = self.ctx.stats.extra
        extra["events_received"] += 1
        try:
            self._apply_tell(msg, self.now())
        except _BadEvent as exc:
            extra["events_invalid"] += 1
            self._count_bad(str(exc))
        if self._waiters:
            self._wake()

    # ---------------------------------------------------------------- asks

    async def _caught_up(self, client: str, seq: int) -> bool:
        """Wait (bounded) until `client`'s tells up to `seq` were applied; whether they were."""
        if not client or seq <= 0:
            return True
        if seq - self._applied.get(client, 0) > MAX_WAIT_GAP:
            return False  # a backlog this long cannot be applied within the wait: answer now
        with anyio.move_on_after(WAIT_APPLIED_SECONDS):
            while self._applied.get(client, 0) < seq:
                self._waiters += 1
                try:
                    await self._progress.wait()
                finally:
                    self._waiters -= 1
        return self._applied.get(client, 0) >= seq

    @staticmethod
    def _run_id(msg: RunStart | RunReset | WorkingRender | WorkingSnapshot | WorkingMirror) -> str:
        run_id = msg.run_id.strip()
        if not run_id:
            raise RequestError(ErrorCode.BAD_FIELD, f"{msg.KIND} needs a run_id")
        return run_id

    @handles(RunStart)
    async def _on_run_start(self, msg: RunStart) -> dict[str, Any]:
        run_id = self._run_id(msg)
        now = self.now()
        memory = self._ensure(str(self.project_root(msg)), run_id, now)
        restarted = not memory.is_blank()
        if not msg.keep:
            memory.reset()  # a re-sent run.start is a new run: nothing of the old one counts
        memory.start(run_id, msg.task, msg.role, now)
        return {"run_id": run_id, "restarted": restarted and not msg.keep,
                "counters": memory.counters().to_dict()}

    @handles(RunReset)
    async def _on_run_reset(self, msg: RunReset) -> dict[str, Any]:
        """Forget one run, or with run_id "*" every run of the project (forget scope project)."""
        project = str(self.project_root(msg))
        run_id = self._run_id(msg)
        if run_id == "*":
            count = self.runs.drop_project(project)
        else:
            count = 1 if self.runs.drop(project, run_id) is not None else 0
        if run_id in ("*", self._latest_per_project.get(project, ("", ""))[1]):
            self._latest_per_project.pop(project, None)  # nothing of it to mirror at shutdown
        self._publish_runs()
        if count:
            await self._save_checkpoint(force=True)  # a forgotten run must not come back after a crash
        return {"reset": count > 0, "runs": count}

    @handles(WorkingRender)
    async def _on_render(self, msg: WorkingRender) -> dict[str, Any]:
        run_id = self._run_id(msg)
        if msg.budget < 0:
            raise RequestError(ErrorCode.BAD_FIELD, "budget must be 0 (default) or positive")
        root = str(self.project_root(msg))
        caught_up = await self._caught_up(msg.client, msg.seq)
        memory = self.runs.get(root, run_id)
        text = memory.render(msg.budget) if memory is not None else ""
        return {
            "run_id": run_id,
            "text": text,
            "tokens": count_tokens_chars(text),
            "budget": msg.budget or (memory.caps.default_budget if memory else 700),
            "live": memory is not None,
            "caught_up": caught_up,
            "counters": (memory.counters().to_dict() if memory else {"calls": 0, "errors": 0, "redundant": 0}),
        }

    @handles(WorkingSnapshot)
    async def _on_snapshot(self, msg: WorkingSnapshot) -> dict[str, Any]:
        run_id = self._run_id(msg)
        root = str(self.project_root(msg))
        caught_up = await self._caught_up(msg.client, msg.seq)
        memory = self.runs.get(root, run_id)
        snap = memory.snapshot().to_dict() if memory is not None else {}
        return {"run_id": run_id, "live": memory is not None, "caught_up": caught_up, "snapshot": snap}

    @handles(WorkingApplied)
    async def _on_applied(self, msg: WorkingApplied) -> dict[str, Any]:
        caught_up = await self._caught_up(msg.client, msg.seq)
        return {"applied": self._applied.get(msg.client, 0), "caught_up": caught_up}

    @handles(WorkingMirror)
    async def _on_mirror(self, msg: WorkingMirror) -> dict[str, Any]:
        run_id = self._run_id(msg)
        root = self.project_root(msg)
        await self._caught_up(msg.client, msg.seq)
        memory = self.runs.get(str(root), run_id)
        path = ProjectLayout(root).working_md
        text = working_markdown(memory, self.now()) if memory is not None else ""
        if not text:  # not live (finished long ago, reset, expired) or nothing known: no file
            return {"written": False, "live": memory is not None, "path": str(path), "bytes": 0}
        try:
            await self.run_sync(write_markdown, path, text)
        except StoreError as exc:
            self.ctx.stats.extra["mirror_errors"] += 1
            raise RequestError(ErrorCode.STORE_ERROR, str(exc)) from None
        self.ctx.stats.extra["mirrors_written"] += 1
        return {"written": True, "live": True, "path": str(path), "bytes": len(text.encode("utf-8"))}

    # ---------------------------------------------------------------- mirrors and housekeeping

    def _queue_mirror(self, project: str, memory: WorkingMemory, now: float) -> None:
        """Remember the mirror of a run that is leaving the table (written by housekeeping)."""
        if not project or not os.path.isabs(project):
            return
        text = working_markdown(memory, now)
        if not text:
            return
        self._pending_mirrors.pop(project, None)
        if len(self._pending_mirrors) >= MAX_PENDING_MIRRORS:
            del self._pending_mirrors[next(iter(self._pending_mirrors))]
        self._pending_mirrors[project] = (ProjectLayout(Path(project)).working_md, text)

    async def _flush_mirrors(self) -> None:
        """Write the queued mirrors in a worker thread; failures are counted and warned, never
        raised. The queue is taken here, on the actor's loop, so the thread shares no state."""
        if not self._pending_mirrors:
            return
        batch = [(project, path, text) for project, (path, text) in self._pending_mirrors.items()]
        self._pending_mirrors.clear()
        written, errors = await self.run_sync(_write_mirrors, batch)
        extra = self.ctx.stats.extra
        extra["mirrors_written"] += written
        extra["mirror_errors"] += len(errors)
        for error in errors:
            self.warn(f"WORKING.md not written: {error}")

    async def _housekeeping(self) -> None:
        while True:
            await anyio.sleep(HOUSEKEEPING_SECONDS)
            now = self.now()
            for key, memory in self.runs.expire(now):
                self._queue_mirror(key[0], memory, now)
                if self._latest_per_project.get(key[0]) == key:
                    del self._latest_per_project[key[0]]
            self._publish_runs()
            await self._flush_mirrors()

    async def _checkpointing(self) -> None:
        interval = max(self.ctx.settings.working_checkpoint_seconds, 0.05)
        while True:
            await anyio.sleep(interval)
            await self._save_checkpoint()

    async def _save_checkpoint(self, force: bool = False) -> None:
        """Write the live runs' working memory when anything changed since the last checkpoint.

        The states are built here, a slice of runs at a time between event-loop turns (a run takes
        tens of microseconds); redaction and the atomic write happen in a worker thread."""
        stats = self.ctx.stats
        mark = (stats.processed, len(self.runs))
        if mark == self._checkpointed and not force:
            return
        saved = []
        for i, (key, memory, touched) in enumerate(self.runs.entries()):
            if i and i % CHECKPOINT_SLICE == 0:
                await anyio.lowlevel.checkpoint()
            saved.append((key[0], key[1], touched, memory_state(memory)))
        try:
            await self.run_sync(self._checkpoint.save, saved)
        except (StoreError, OSError) as exc:
            stats.extra["checkpoint_errors"] += 1
            self.warn(f"working memory checkpoint not written: {exc}")
            return
        self._checkpointed = mark
        stats.extra["checkpoints"] += 1
        stats.extra["checkpoint_processed"] = mark[0]

    def loops(self) -> list[Any]:
        return [self._housekeeping, self._checkpointing]

    async def on_stop(self) -> None:
        """Mirror the latest run of each project, then anything still queued; checkpoint."""
        now = self.now()
        for project, key in list(self._latest_per_project.items()):
            memory = self.runs.get(*key)
            if memory is not None and project not in self._pending_mirrors:
                self._queue_mirror(project, memory, now)
        await self._flush_mirrors()
        await self._save_checkpoint(force=True)

    def _publish_runs(self) -> None:
        extra = self.ctx.stats.extra
        for name, value in self.runs.stats().items():
            extra[f"runs_{name}"] = value
