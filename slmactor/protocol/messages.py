"""Every message of the slmactor wire protocol, as one typed record each.

A message travels as two ZeroMQ frames, `[kind, body]`: `kind` is the ASCII name below and `body`
is a msgpack map holding `v` (the protocol version), `id` (the request id, for asks), `project`
(the absolute project root, where relevant) and the message's own fields. Fields left at their
default are omitted on the wire. `TELL = True` marks fire-and-forget messages sent on
`events.sock`; all others are asks on `ctl.sock` and get exactly one reply.

Messages are records: build one, send it, read it — never change one in place. (They are not
`frozen` dataclasses only because freezing ~70 classes costs ~16 ms of daemon start-up.)

Field types are limited to str, int, float, bool, lists of str, and maps/lists of plain values, so
every language decodes them the same (see `clients/PROTOCOL.md`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar

from .version import PROTOCOL_VERSION as PROTOCOL_VERSION  # noqa: PLC0414 - re-exported (mypy --strict)


class Kind(StrEnum):
    """The name of every message kind (the first frame)."""

    # control
    PING = "ping"
    STATUS = "status"
    DAEMON_STOP = "daemon.stop"
    DEBUG_CRASH = "debug.crash"
    # working memory
    RUN_START = "run.start"
    RUN_RESET = "run.reset"
    RECORD_TOOL = "record_tool"
    FOCUS = "focus"
    FAIL = "fail"
    RESOLVE = "resolve"
    DECIDE = "decide"
    SUMMARIZE = "summarize"
    CLIENT_DROPPED = "client.dropped"
    WORKING_RENDER = "working.render"
    WORKING_SNAPSHOT = "working.snapshot"
    WORKING_MIRROR = "working.mirror"
    WORKING_APPLIED = "working.applied"
    # episodic memory and recall
    EPISODE_APPEND = "episode.append"
    EPISODE_GET = "episode.get"
    EPISODE_RECENT = "episode.recent"
    EPISODE_PRUNE = "episode.prune"
    EPISODE_FORGET = "episode.forget"
    EPISODE_DROP = "episode.drop"
    EPISODE_TRUST = "episode.trust"
    MEMORY_RECALL = "memory.recall"
    # semantic, procedural, lessons, the prompt block
    MEMORY_BLOCK = "memory.block"
    FACT_OBSERVE = "fact.observe"
    FACT_REFUTE = "fact.refute"
    FACT_LIST = "fact.list"
    FACT_TRUST = "fact.trust"
    LESSON_ADD = "lesson.add"
    LESSONS_RENDER = "lessons.render"
    LESSONS_PARSE_REFLECTION = "lessons.parse_reflection"
    LESSONS_RECALL = "lessons.recall"
    LESSONS_FORMAT = "lessons.format"
    LESSONS_BOOST = "lessons.boost"
    LESSONS_PENALIZE = "lessons.penalize"
    LESSONS_IMPORT = "lessons.import"
    LESSONS_META = "lessons.meta"
    BUDGETS_RECORD = "budgets.record"
    BUDGETS_COMPUTE = "budgets.compute"
    PROCEDURE_OBSERVE = "procedure.observe"
    PROCEDURE_BEST = "procedure.best"
    LATENCY_OBSERVE = "latency.observe"
    LATENCY_SEED = "latency.seed"
    MEMORY_DISTILL = "memory.distill"
    MEMORY_PRUNE = "memory.prune"
    MEMORY_FORGET = "memory.forget"
    MEMORY_LINES = "memory.lines"
    MEMORY_RETIRE = "memory.retire"
    MEMORY_PROJECTS = "memory.projects"
    MEMORY_AUDIT = "memory.audit"
    # failures and repair rules
    EVOLVE_FINGERPRINT = "evolve.fingerprint"
    EVOLVE_ON_FAILURE = "evolve.on_failure"
    EVOLVE_RESOLVED = "evolve.resolved"
    EVOLVE_OBSERVE = "evolve.observe"
    EVOLVE_RULES = "evolve.rules"
    EVOLVE_LEARN = "evolve.learn"
    EVOLVE_FORGET = "evolve.forget"
    EVOLVE_RETIRE = "evolve.retire"
    EVOLVE_TRUST = "evolve.trust"
    EVOLVE_PREFLIGHT = "evolve.preflight"
    # policy learning and calibration
    POLICY_CHOOSE = "policy.choose"
    POLICY_UPDATE = "policy.update"
    POLICY_WHY = "policy.why"
    POLICY_FORGET = "policy.forget"
    CALIBRATION_REPORT = "calibration.report"
    CALIBRATION_GET = "calibration.get"
    # the loop: reflection, regressions, metrics
    RUN_FINISH = "run.finish"
    EVOLVE_REGRESSIONS = "evolve.regressions"
    REGRESSIONS_TRUST = "regressions.trust"
    EVOLVE_RESET = "evolve.reset"
    METRICS_RECORD = "metrics.record"
    METRICS_SHOW = "metrics.show"
    METRICS_COMPARE = "metrics.compare"
    # knowledge graph
    GRAPH_STATS = "graph.stats"
    GRAPH_FILE = "graph.file"
    GRAPH_NEIGHBORS = "graph.neighbors"
    GRAPH_WALK = "graph.walk"
    GRAPH_BACKFILL = "graph.backfill"
    GRAPH_PRUNE = "graph.prune"
    GRAPH_FORGET = "graph.forget"


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class Message:
    """Fields every message carries."""

    KIND: ClassVar[Kind]
    #: True for fire-and-forget messages sent on `events.sock`.
    TELL: ClassVar[bool] = False
    #: Per-field caps (characters for str, items for lists) overriding the codec defaults.
    CAPS: ClassVar[dict[str, int]] = {}
    #: Map fields that carry one tool call (`CALL_FIELDS`: checked field by field by the codec).
    CALLS: ClassVar[frozenset[str]] = frozenset()

    #: Request id chosen by the client; echoed in the reply. Empty for tells.
    id: str = ""
    #: Absolute path of the project root the message is about ("" = none).
    project: str = ""

    # One `__eq__` and `__repr__` for every message instead of a generated pair per class: the
    # dataclass code generation of ~60 classes was 12 of the module's 25 ms of import, which every
    # daemon start and every CLI call pays. Same results as the generated ones.
    __hash__ = None  # type: ignore[assignment]  # mutable records, as with eq=True

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in fields(self))

    def __repr__(self) -> str:
        args = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
        return f"{self.__class__.__qualname__}({args})"


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class Tell(Message):
    """A fire-and-forget event. `client` + `seq` let a later ask wait until it was applied."""

    TELL: ClassVar[bool] = True
    #: Identifies one client instance (random, per process).
    client: str = ""
    #: That client's tell counter, 1-based.
    seq: int = 0


# ---------------------------------------------------------------- control


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class Ping(Message):
    """Is this actor alive? Answered by the named actor itself."""

    KIND: ClassVar[Kind] = Kind.PING
    actor: str = "control"


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class Status(Message):
    """Daemon health: version, pid, uptime, endpoints, stores, one row per actor."""

    KIND: ClassVar[Kind] = Kind.STATUS


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class DaemonStop(Message):
    """Drain, flush and exit (same as SIGTERM)."""

    KIND: ClassVar[Kind] = Kind.DAEMON_STOP


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class DebugCrash(Message):
    """Test hook (daemon started with debug hooks only): make `actor` fail.

    `how="tell"` delivers a failing tell (the actor crashes and is restarted);
    `how="ask"` a failing ask (an error reply; the actor keeps running);
    `how="stall"` an ask that holds the actor's mailbox until `how="release"` (answered by the
    front door itself) or 60 s, so a test can fill an inbox.
    """

    KIND: ClassVar[Kind] = Kind.DEBUG_CRASH
    actor: str = ""
    how: str = "tell"


# ---------------------------------------------------------------- working memory (S-1)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class RunStart(Message):
    """Start a run's working memory; a run id already live starts over (counters, files and
    failures cleared) unless `keep` (a new task within the same run, S-1.6)."""

    KIND: ClassVar[Kind] = Kind.RUN_START
    run_id: str = ""
    task: str = ""
    role: str = ""
    keep: bool = False


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class RunReset(Message):
    """Clear a run's working memory, counters included; `run_id="*"` clears every run of the
    project. Answers `{"reset": bool, "runs": n}`."""

    KIND: ClassVar[Kind] = Kind.RUN_RESET
    run_id: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class RecordTool(Tell):
    """One tool call and its outcome — the hot path (S-1.3)."""

    KIND: ClassVar[Kind] = Kind.RECORD_TOOL
    CAPS: ClassVar[dict[str, int]] = {"args": 16_384, "error": 16_384, "command": 4_096}
    run_id: str = ""
    tool: str = ""
    path: str = ""
    args: str = ""
    command: str = ""
    ok: bool = True
    error: str = ""
    key: str = ""
    #: Epoch seconds of the call (0 = when the daemon applies it).
    at: float = 0.0


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class Focus(Tell):
    """Put paths at the front of the run's focus files."""

    KIND: ClassVar[Kind] = Kind.FOCUS
    CAPS: ClassVar[dict[str, int]] = {"paths": 64}
    run_id: str = ""
    paths: list[str] = field(default_factory=list)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class Fail(Tell):
    """Open (or re-count) a failure in working memory (S-1.4)."""

    KIND: ClassVar[Kind] = Kind.FAIL
    run_id: str = ""
    key: str = ""
    tool: str = ""
    path: str = ""
    message: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class Resolve(Tell):
    """Move an open failure to resolved (S-1.5)."""

    KIND: ClassVar[Kind] = Kind.RESOLVE
    run_id: str = ""
    key: str = ""
    resolution: str = ""
    resolved_by: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class Decide(Tell):
    """Record a decision taken during the run."""

    KIND: ClassVar[Kind] = Kind.DECIDE
    run_id: str = ""
    text: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class Summarize(Tell):
    """Replace the run's rolling summary."""

    KIND: ClassVar[Kind] = Kind.SUMMARIZE
    run_id: str = ""
    text: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class ClientDropped(Tell):
    """A client reports tells it had to drop (daemon down or queue full) since its last report."""

    KIND: ClassVar[Kind] = Kind.CLIENT_DROPPED
    count: int = 0


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class WorkingRender(Message):
    """The run's working-memory block within `budget` tokens (0 = default 700).

    With `client` and `seq`, waits (bounded) until that client's tells up to `seq` were applied.
    """

    KIND: ClassVar[Kind] = Kind.WORKING_RENDER
    run_id: str = ""
    budget: int = 0
    client: str = ""
    seq: int = 0


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class WorkingSnapshot(Message):
    """A copy of every field of the run's working memory, counters included."""

    KIND: ClassVar[Kind] = Kind.WORKING_SNAPSHOT
    run_id: str = ""
    client: str = ""
    seq: int = 0


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class WorkingApplied(Message):
    """How far a client's tells were applied: waits (bounded) for `seq`, then answers the highest
    applied seq. `Client.close()` asks it so tells still queued are confirmed, or counted."""

    KIND: ClassVar[Kind] = Kind.WORKING_APPLIED
    client: str = ""
    seq: int = 0


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class WorkingMirror(Message):
    """Write `WORKING.md` for the run now (off the hot path).

    With `client` and `seq`, waits (bounded) until that client's tells up to `seq` were applied.
    """

    KIND: ClassVar[Kind] = Kind.WORKING_MIRROR
    run_id: str = ""
    client: str = ""
    seq: int = 0


# ---------------------------------------------------------------- episodic memory (S-2, S-3)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EpisodeAppend(Message):
    """Append one completed task to the project's episode log (S-2.6)."""

    KIND: ClassVar[Kind] = Kind.EPISODE_APPEND
    episode: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EpisodeGet(Message):
    """One episode by id."""

    KIND: ClassVar[Kind] = Kind.EPISODE_GET
    episode_id: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EpisodeRecent(Message):
    """The newest `n` episodes, newest first (n ≤ 0 = all); with `ids_only`, only their ids."""

    KIND: ClassVar[Kind] = Kind.EPISODE_RECENT
    n: int = 10
    ids_only: bool = False


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EpisodePrune(Message):
    """Prune the episode log (S-7.8); 0 = defaults, negative = unlimited."""

    KIND: ClassVar[Kind] = Kind.EPISODE_PRUNE
    cap: int = 0
    max_age_days: float = 0.0


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EpisodeForget(Message):
    """Delete the project's episode log and index."""

    KIND: ClassVar[Kind] = Kind.EPISODE_FORGET


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EpisodeDrop(Message):
    """Delete the episodes named in `ids` (an episode id, or the run / session id it came from);
    the others stay."""

    KIND: ClassVar[Kind] = Kind.EPISODE_DROP
    CAPS: ClassVar[dict[str, int]] = {"ids": 1024}
    ids: list[str] = field(default_factory=list)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EpisodeTrust(Message):
    """Episodes a project's log holds without this user's signature (a committed store a
    repository brought); `adopt` signs the ones named in `ids` (every one with `every`)."""

    KIND: ClassVar[Kind] = Kind.EPISODE_TRUST
    CAPS: ClassVar[dict[str, int]] = {"ids": 1024}
    ids: list[str] = field(default_factory=list)
    every: bool = False
    adopt: bool = False


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class MemoryRecall(Message):
    """Rank past episodes against a task (S-3); `explain` adds why each one was recalled."""

    KIND: ClassVar[Kind] = Kind.MEMORY_RECALL
    query: str = ""
    files: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    language: str = ""
    model: str = ""
    success_only: bool = False
    failures_only: bool = False
    #: RFC 3339 lower bound on the episode time ("" = none).
    since: str = ""
    n: int = 3
    min_coverage: float = 0.0
    min_score: float = 0.0
    explain: bool = False


# ---------------------------------------------------------------- semantic / procedural / lessons


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class MemoryBlock(Message):
    """The memory block a role receives in its prompt (S-7.4), within `budget` tokens."""

    KIND: ClassVar[Kind] = Kind.MEMORY_BLOCK
    role: str = ""
    budget: int = 0
    query: str = ""
    files: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    run_id: str = ""
    language: str = ""
    model: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class FactObserve(Message):
    """Observe a fact about the project (S-4.4)."""

    KIND: ClassVar[Kind] = Kind.FACT_OBSERVE
    kind: str = ""
    subject: str = ""
    text: str = ""
    sources: list[str] = field(default_factory=list)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class FactRefute(Message):
    """Count evidence against a fact (S-4.6)."""

    KIND: ClassVar[Kind] = Kind.FACT_REFUTE
    kind: str = ""
    subject: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class FactList(Message):
    """Facts ranked by score, optionally of one kind (S-4.8)."""

    KIND: ClassVar[Kind] = Kind.FACT_LIST
    kind: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class FactTrust(Message):
    """Facts, do/don't lessons and `MEMORY.md` lines a project store brought unsigned;
    `adopt` as in `evolve.trust`."""

    KIND: ClassVar[Kind] = Kind.FACT_TRUST
    CAPS: ClassVar[dict[str, int]] = {"ids": 1024}
    ids: list[str] = field(default_factory=list)
    every: bool = False
    adopt: bool = False


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class LessonAdd(Message):
    """Add lessons ({task_id, kind, text, at}) to MEMORY.md and the facts (S-8)."""

    KIND: ClassVar[Kind] = Kind.LESSON_ADD
    CAPS: ClassVar[dict[str, int]] = {"lessons": 256}
    lessons: list[dict[str, Any]] = field(default_factory=list)
    #: "project" or "global".
    scope: str = "project"
    run_id: str = ""
    #: The run's task: the source task of the polar (do/don't) twins of project lessons.
    task: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class LessonsRender(Message):
    """The lesson lines a worker sees for `query` (S-8.10)."""

    KIND: ClassVar[Kind] = Kind.LESSONS_RENDER
    query: str = ""
    max_bytes: int = 0


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class LessonsParseReflection(Message):
    """Polar lessons from `TYPE | TRIGGER | FIX` lines (ANTI = a don't) (C-15); kept unless
    `save` is false. Tags are inferred from each line unless given."""

    KIND: ClassVar[Kind] = Kind.LESSONS_PARSE_REFLECTION
    text: str = ""
    tags: list[str] = field(default_factory=list)
    source_task: str = ""
    save: bool = True


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class LessonsRecall(Message):
    """The polar lessons for `task`, best first (C-10); `limit` 0 = 10. With `run_id` they count
    as shown to that run (outcome feedback at run.finish). `tags` keeps lessons carrying all."""

    KIND: ClassVar[Kind] = Kind.LESSONS_RECALL
    task: str = ""
    limit: int = 0
    tags: list[str] = field(default_factory=list)
    run_id: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class LessonsFormat(Message):
    """The prompt text (C-11) for `lessons` as given, or else for those recalled for `task`."""

    KIND: ClassVar[Kind] = Kind.LESSONS_FORMAT
    CAPS: ClassVar[dict[str, int]] = {"lessons": 256}
    lessons: list[dict[str, Any]] = field(default_factory=list)
    task: str = ""
    limit: int = 0
    run_id: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class LessonsBoost(Message):
    """+0.1 confidence and one more use for these triggers (C-12); with `run_id` and no
    triggers: the lessons shown to that run, except those it penalized."""

    KIND: ClassVar[Kind] = Kind.LESSONS_BOOST
    triggers: list[str] = field(default_factory=list)
    run_id: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class LessonsPenalize(Message):
    """−0.1 (floor 0.1) for those of these triggers (or of the lessons shown to `run_id`) whose
    words make up more than half of a trigger found in `error_text` (C-13)."""

    KIND: ClassVar[Kind] = Kind.LESSONS_PENALIZE
    triggers: list[str] = field(default_factory=list)
    run_id: str = ""
    error_text: str = ""
    #: 0 = 0.1.
    max_penalty: float = 0.0


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class LessonsImport(Message):
    """Lines of a lesson corpus in the seed's JSONL format; bad lines are counted, not fatal."""

    KIND: ClassVar[Kind] = Kind.LESSONS_IMPORT
    lines: list[str] = field(default_factory=list)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class LessonsMeta(Message):
    """An improvement cycle's result: a meta-lesson when `delta` ≥ 0.05 (C-17)."""

    KIND: ClassVar[Kind] = Kind.LESSONS_META
    weakness_id: str = ""
    target_file: str = ""
    delta: float = 0.0
    iteration: int = 0
    commit: str = ""
    reason: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class BudgetsRecord(Message):
    """One finished phase: how many rounds it took (C-18); tags from `task` unless given."""

    KIND: ClassVar[Kind] = Kind.BUDGETS_RECORD
    phase: str = ""
    rounds: int = 0
    n_files: int = 0
    tags: list[str] = field(default_factory=list)
    task: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class BudgetsCompute(Message):
    """Round budgets per phase: max(default, p90 · 1.2 of tag-matching history) (C-18).
    `defaults` maps phase → rounds (empty = the seed's DEFAULT_BUDGETS)."""

    KIND: ClassVar[Kind] = Kind.BUDGETS_COMPUTE
    task: str = ""
    tags: list[str] = field(default_factory=list)
    defaults: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class ProcedureObserve(Message):
    """Record whether an option worked for a model and language (S-6)."""

    KIND: ClassVar[Kind] = Kind.PROCEDURE_OBSERVE
    topic: str = ""
    option: str = ""
    model: str = ""
    language: str = ""
    ok: bool = False
    note: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class ProcedureBest(Message):
    """The best-known option for a topic, model and language (S-6.3)."""

    KIND: ClassVar[Kind] = Kind.PROCEDURE_BEST
    topic: str = ""
    model: str = ""
    language: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class LatencyObserve(Message):
    """Record a role's call latency for a model (S-6.7)."""

    KIND: ClassVar[Kind] = Kind.LATENCY_OBSERVE
    role: str = ""
    model: str = ""
    ms: float = 0.0


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class LatencySeed(Message):
    """Calibration's latency estimates (role → ms) for a model; stored only for roles with no
    observations yet (S-12.4), never over real measurements."""

    KIND: ClassVar[Kind] = Kind.LATENCY_SEED
    model: str = ""
    seeds: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class MemoryDistill(Message):
    """Distil facts from recent episodes now (S-5); runs in the background.

    `wait: true` replies only when the pass is done, with its counts (tests, CLI); the distiller
    answers nothing else meanwhile, so harnesses leave it false.
    """

    KIND: ClassVar[Kind] = Kind.MEMORY_DISTILL
    wait: bool = False


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class MemoryPrune(Message):
    """Prune every memory store with the default policy (S-7.8)."""

    KIND: ClassVar[Kind] = Kind.MEMORY_PRUNE


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class MemoryForget(Message):
    """Forget a scope: working, episodic, semantic, procedural, project or all (S-7.7)."""

    KIND: ClassVar[Kind] = Kind.MEMORY_FORGET
    scope: str = ""
    run_id: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class MemoryLines(MemoryBlock):
    """The memory block of `memory.block` (the same fields) as lines: each with its id, section,
    text and the records behind it; plus the lines retired from the project's blocks."""

    KIND: ClassVar[Kind] = Kind.MEMORY_LINES


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class MemoryRetire(Message):
    """Retire block lines by id (from `memory.lines`), or lines whose text is in `texts`: no
    block of the project says them again; `undo` takes them back."""

    KIND: ClassVar[Kind] = Kind.MEMORY_RETIRE
    CAPS: ClassVar[dict[str, int]] = {"ids": 1024, "texts": 256}
    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    undo: bool = False


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class MemoryAudit(Message):
    """Every claim the project's memory holds (facts, `MEMORY.md` bullets), each with the
    records it rests on and its verdict now (true, stale, contradicted, unverified); with
    `fix`, what fails is retired, each with the reason."""

    KIND: ClassVar[Kind] = Kind.MEMORY_AUDIT
    fix: bool = False


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class MemoryProjects(Message):
    """The projects whose memory this daemon has open (used recently), by root."""

    KIND: ClassVar[Kind] = Kind.MEMORY_PROJECTS


# ---------------------------------------------------------------- failures and repair rules


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EvolveFingerprint(Message):
    """Fingerprint a failure message (S-9)."""

    KIND: ClassVar[Kind] = Kind.EVOLVE_FINGERPRINT
    CALLS: ClassVar[frozenset[str]] = frozenset({"call"})
    #: The failed call (`CALL_FIELDS`); when given, `tool` and `message` are not read.
    call: dict[str, Any] = field(default_factory=dict)
    tool: str = ""
    message: str = ""
    language: str = ""
    model: str = ""


#: The map one tool call crosses the wire as (`slmactor.logic.failures.call.ToolCall.to_wire`):
#: field → (type, cap: characters for a string, items for a list or map). `args` is the call's
#: arguments as the harness spelled them (a map of plain values, at most `MAX_CALL_ARGS`
#: characters of text in all); `words` says which of its keys carry the shared words (`path`,
#: `old_str`, `new_str`, `replace_all`, `expected`, `content`, `command`, `patch`).
CALL_FIELDS: dict[str, tuple[type, int]] = {
    "tool": (str, 200), "family": (str, 32), "kind": (str, 32), "args": (dict, 10_000),
    "words": (dict, 16), "command": (str, 4_096), "paths": (list, 64), "ok": (bool, 0),
    "error": (str, 16_384), "exit_code": (int, 0), "call_id": (str, 256),
    "unparsed": (str, 16_384),
}
#: Characters of text a call's `args` may hold in all (its keys and string values).
MAX_CALL_ARGS = 64 * 1024


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EvolveOnFailure(Message):
    """A tool call failed: fingerprint it, open it in working memory, return the best repair."""

    KIND: ClassVar[Kind] = Kind.EVOLVE_ON_FAILURE
    CALLS: ClassVar[frozenset[str]] = frozenset({"call"})
    run_id: str = ""
    #: The failed call (`CALL_FIELDS`), as the harness's room built it; its `error` is the
    #: failure. When given, `tool`, `message` and `args` are not read.
    call: dict[str, Any] = field(default_factory=dict)
    tool: str = ""
    message: str = ""
    language: str = ""
    model: str = ""
    #: The failed call's arguments as JSON text (clients that send no `call`).
    args: str = ""
    #: False for a failure foreseen before the call ran (pre-flight): the repair is looked up,
    #: nothing is opened in working memory — the call may still run and fail on its own terms.
    open: bool = True


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EvolveResolved(Message):
    """A failure was fixed; learn from how (S-11.3)."""

    KIND: ClassVar[Kind] = Kind.EVOLVE_RESOLVED
    CALLS: ClassVar[frozenset[str]] = frozenset({"failed", "fixed"})
    run_id: str = ""
    fingerprint: str = ""
    rule_id: str = ""
    resolution: str = ""
    #: The failed call and the call that got past it (`CALL_FIELDS`); when given, `tool`,
    #: `message`, `failed_args`, `fixed_args` and `fixed_tool` are not read.
    failed: dict[str, Any] = field(default_factory=dict)
    fixed: dict[str, Any] = field(default_factory=dict)
    tool: str = ""
    message: str = ""
    language: str = ""
    model: str = ""
    failed_args: str = ""
    fixed_args: str = ""
    #: The tool of the call that got past the failure, when it is not `tool` ("" = the same).
    fixed_tool: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EvolvePreflight(Message):
    """A call about to run: its rewrite by a learned repair that always worked, if any."""

    KIND: ClassVar[Kind] = Kind.EVOLVE_PREFLIGHT
    CALLS: ClassVar[frozenset[str]] = frozenset({"call"})
    run_id: str = ""
    #: The call about to run (`CALL_FIELDS`); when given, `tool` and `args` are not read.
    call: dict[str, Any] = field(default_factory=dict)
    tool: str = ""
    #: The call's arguments as JSON text (clients that send no `call`).
    args: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EvolveObserve(Message):
    """Record whether applying a rule worked (S-10.9)."""

    KIND: ClassVar[Kind] = Kind.EVOLVE_OBSERVE
    rule_id: str = ""
    ok: bool = False


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EvolveRules(Message):
    """List repair rules; `include_all` adds unused seeds and retired rules."""

    KIND: ClassVar[Kind] = Kind.EVOLVE_RULES
    include_all: bool = False


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EvolveLearn(Message):
    """Candidate rules synthesized by reflection (S-14.3)."""

    KIND: ClassVar[Kind] = Kind.EVOLVE_LEARN
    CAPS: ClassVar[dict[str, int]] = {"candidates": 64}
    candidates: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EvolveForget(Message):
    """Delete learned rules (project and user files); seeds are restored."""

    KIND: ClassVar[Kind] = Kind.EVOLVE_FORGET


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EvolveRetire(Message):
    """Retire the repair rules named in `ids`: never applied or advised again (their record
    stays, marked retired, until pruned)."""

    KIND: ClassVar[Kind] = Kind.EVOLVE_RETIRE
    CAPS: ClassVar[dict[str, int]] = {"ids": 1024}
    ids: list[str] = field(default_factory=list)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EvolveTrust(Message):
    """Rules a project file brought without this user's signature (unverified repository
    content); `adopt` signs the ones named in `ids` (every one with `every`)."""

    KIND: ClassVar[Kind] = Kind.EVOLVE_TRUST
    CAPS: ClassVar[dict[str, int]] = {"ids": 1024}
    ids: list[str] = field(default_factory=list)
    every: bool = False
    adopt: bool = False


# ---------------------------------------------------------------- policy learning and calibration


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class PolicyChoose(Message):
    """Choose an arm for a decision (S-13.5); the reply says why."""

    KIND: ClassVar[Kind] = Kind.POLICY_CHOOSE
    CAPS: ClassVar[dict[str, int]] = {"arms": 64, "decision": 200, "model": 200, "language": 64}
    decision: str = ""
    arms: list[str] = field(default_factory=list)
    model: str = ""
    language: str = ""
    deterministic: bool = False
    #: Non-zero: the choice is reproducible (the same seed, key and pull count give the same arm).
    seed: int = 0
    #: "user" (default, ~/.slmcode/evolve/policy.json) or "project" (<project>/.slmcode/evolve/).
    scope: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class PolicyUpdate(Message):
    """Reward an arm with an outcome (S-13.6, S-13.8)."""

    KIND: ClassVar[Kind] = Kind.POLICY_UPDATE
    CAPS: ClassVar[dict[str, int]] = {"decision": 200, "arm": 200, "model": 200, "language": 64}
    decision: str = ""
    arm: str = ""
    model: str = ""
    language: str = ""
    outcome: dict[str, Any] = field(default_factory=dict)
    #: "user" (default) or "project".
    scope: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class PolicyWhy(Message):
    """The posterior table behind a decision (S-13.7)."""

    KIND: ClassVar[Kind] = Kind.POLICY_WHY
    decision: str = ""
    model: str = ""
    language: str = ""
    #: Explain the deterministic mode (also implied by the daemon's `deterministic` setting).
    deterministic: bool = False
    #: "user" (default) or "project".
    scope: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class PolicyForget(Message):
    """Delete the learned policy; the shipped priors apply again."""

    KIND: ClassVar[Kind] = Kind.POLICY_FORGET
    #: "user", "project", or "" = both (the user policy and this project's, as `evolve reset`).
    scope: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class CalibrationReport(Message):
    """A harness reports the probe results for a model endpoint (S-12)."""

    KIND: ClassVar[Kind] = Kind.CALIBRATION_REPORT
    #: model, endpoint, efficiency {level: wall(1)/wall(n)} (or wall_ms {level: ms}), p50_ms,
    #: p95_ms, decode_tps, context_window, measured_at?, calibrator_version?
    profile: dict[str, Any] = field(default_factory=dict)
    #: Seeds wanted: role → expected output tokens per call.
    roles: dict[str, Any] = field(default_factory=dict)
    #: Observations the harness's latency memory already has per role (those get no seed).
    observed: dict[str, Any] = field(default_factory=dict)
    #: Cap for a latency seed (0 = none).
    task_timeout_ms: float = 0.0


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class CalibrationGet(Message):
    """Stored calibration profiles ("" model = all)."""

    KIND: ClassVar[Kind] = Kind.CALIBRATION_GET
    model: str = ""
    endpoint: str = ""
    #: The harness's calibrator version and current context window (staleness checks, S-12.2).
    calibrator_version: int = 0
    context_window: int = 0
    #: As in calibration.report: seeds for roles with no observations.
    roles: dict[str, Any] = field(default_factory=dict)
    observed: dict[str, Any] = field(default_factory=dict)
    task_timeout_ms: float = 0.0


# ---------------------------------------------------------------- the loop


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class RunFinish(Message):
    """A run ended: its report (S-14.1, optional) merged with what the daemon saw of the run."""

    KIND: ClassVar[Kind] = Kind.RUN_FINISH
    report: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    #: Reply only after the whole finish pipeline ran (replays, tests); default: reply once the
    #: report is reflected and persisted, and run the pipeline in the background.
    wait: bool = False
    #: The run whose working memory completes the report (default: the report's `run_id`).
    run_id: str = ""
    #: With `client` and `seq`: that client's tells up to `seq` are applied before the merge.
    client: str = ""
    seq: int = 0


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EvolveRegressions(Message):
    """List regression checks; `run` evaluates the offline (file) checks now (S-15)."""

    KIND: ClassVar[Kind] = Kind.EVOLVE_REGRESSIONS
    run: bool = False


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class RegressionsTrust(Message):
    """Regression checks a project file brought unsigned; `adopt` as in `evolve.trust`."""

    KIND: ClassVar[Kind] = Kind.REGRESSIONS_TRUST
    CAPS: ClassVar[dict[str, int]] = {"ids": 1024}
    ids: list[str] = field(default_factory=list)
    every: bool = False
    adopt: bool = False


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class EvolveReset(Message):
    """Forget rules, policy, regressions and project memory (S-11.6)."""

    KIND: ClassVar[Kind] = Kind.EVOLVE_RESET


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class MetricsRecord(Message):
    """Append one run's metrics record (S-16.1)."""

    KIND: ClassVar[Kind] = Kind.METRICS_RECORD
    run: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class MetricsShow(Message):
    """The latest run, plus an aggregate over the last `last` runs."""

    KIND: ClassVar[Kind] = Kind.METRICS_SHOW
    #: How many of the newest runs to return and pool (≤ 0 = all).
    last: int = 1
    #: Only runs with this label ("" = any).
    label: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class MetricsCompare(Message):
    """The newest `n` runs against the `n` before them (S-16.6)."""

    KIND: ClassVar[Kind] = Kind.METRICS_COMPARE
    n: int = 5
    #: Compare every run labelled `baseline_label` with every run labelled `current_label`
    #: instead of splitting the newest runs (both must be set).
    baseline_label: str = ""
    current_label: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class GraphStats(Message):
    """Edges by type, node count and file size of the knowledge graph."""

    KIND: ClassVar[Kind] = Kind.GRAPH_STATS


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class GraphFile(Message):
    """What the graph knows about one repo-relative file: failure classes seen there and the
    rules that fixed them (S-21.8)."""

    KIND: ClassVar[Kind] = Kind.GRAPH_FILE
    path: str = ""


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class GraphNeighbors(Message):
    """One hop from a node: `direction` in / out / either, optionally only edges of `types`."""

    KIND: ClassVar[Kind] = Kind.GRAPH_NEIGHBORS
    node: str = ""
    direction: str = "either"
    types: list[str] = field(default_factory=list)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class GraphWalk(Message):
    """A bounded traversal from a node (S-21.7): depth ≤ 0 → 3, clamped to 6; max_nodes ≤ 0 →
    200, clamped to 2000; direction "" → out."""

    KIND: ClassVar[Kind] = Kind.GRAPH_WALK
    node: str = ""
    depth: int = 0
    max_nodes: int = 0
    direction: str = ""
    types: list[str] = field(default_factory=list)


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class GraphBackfill(Message):
    """Materialise the edges implied by episodes, facts and rules (idempotent, S-21.9)."""

    KIND: ClassVar[Kind] = Kind.GRAPH_BACKFILL


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class GraphPrune(Message):
    """Bound the graph (S-21.10): 0 → defaults (20000 edges, 180 days), negative → unlimited."""

    KIND: ClassVar[Kind] = Kind.GRAPH_PRUNE
    max_edges: int = 0
    max_age_days: float = 0.0


@dataclass(slots=True, kw_only=True, eq=False, repr=False)
class GraphForget(Message):
    """Delete the project's graph (both files); a backfill rebuilds it."""

    KIND: ClassVar[Kind] = Kind.GRAPH_FORGET


def _collect() -> dict[str, type[Message]]:
    # Read the module namespace, not Message.__subclasses__(): `slots=True` makes dataclass
    # build a second class object, and the discarded first one may linger as a subclass.
    registry: dict[str, type[Message]] = {}
    for value in list(globals().values()):
        if isinstance(value, type) and issubclass(value, Message) and "KIND" in vars(value):
            registry[str(value.KIND)] = value
    missing = {str(k) for k in Kind} - registry.keys()
    if missing:  # pragma: no cover - caught by the protocol tests at import time
        raise RuntimeError(f"kinds without a message class: {sorted(missing)}")
    return registry


#: Message class for every kind name.
MESSAGES: dict[str, type[Message]] = _collect()
