"""Working memory: the short-term, run-scoped memory of one run (SPEC S-1, seed "Working memory").

It holds the current task and role, focus files, the last tool calls with their outcomes, open and
resolved failures, decisions and a rolling summary, plus three counters (calls, errors,
redundant). `record_tool` runs after every tool call of every harness, so it does only bounded
appends: no I/O, no regex, no token counting, no SHA-256 unless a failure comes without a key.
Clipping uses the exact fast paths of `fastclip`. Tokens are counted only in `render`.

Caps (S-1.1): 24 events, 12 files read, 12 files edited, 5 commands, 8 open and 8 resolved
failures, 5 decisions, 16 focus files, 128 redundancy signatures; every bounded list keeps the
newest, focus keeps the first 16 (most recent first).

Deliberate differences from the seed, each a fix of behaviour a user would notice:

* H-S-3 fixed: once the redundancy window holds 128 signatures the **oldest** is evicted, so calls
  past the 128th distinct one are still counted (the seed's map froze).
* Re-reading a file, re-editing it or re-counting an open failure makes it the newest entry (LRU),
  so the file the agent works on right now is never the one evicted at the cap; the seed's
  push-unique kept the first position, evicting a file read a second ago.
* Render shows the **newest** three open failures (the ones the agent is fighting now).
* A failure line with no tool or no message leaves out the dangling `: ` instead of printing it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from slmactor.logic.text.safecut import cut_chars
from slmactor.logic.text.strings import (
    BYTES_PER_TOKEN,
    TokenCounter,
    clip,
    count_tokens_chars,
    dedupe,
    first_line,
    fit_to_tokens,
    hash_id,
)
from slmactor.logic.text.timefmt import to_rfc3339
from slmactor.logic.working.digest import (
    ALREADY_FIXED,
    DIGEST_FAILURES,
    Digest,
    fixed_line,
    render_digest,
)
from slmactor.logic.working.fastclip import clip_fast, first_line_fast
from slmactor.logic.working.records import (
    CommandRun,
    Counters,
    FailureNote,
    ToolEvent,
    WorkingSnapshot,
)
from slmactor.logic.working.toolclasses import (
    DEFAULT_TOOL_CLASSES,
    EDIT,
    MODE,
    READ,
    SHELL,
    ToolClasses,
)


@dataclass(frozen=True, slots=True)
class WorkingCaps:
    """The bounds of S-1.1 and the clip lengths of S-1.3 to S-1.9 (bytes)."""

    events: int = 24
    files_read: int = 12
    files_edited: int = 12
    commands: int = 5
    open_failures: int = 8
    resolved_failures: int = 8
    decisions: int = 5
    focus: int = 16
    signatures: int = 128
    default_budget: int = 700
    args_bytes: int = 200
    error_bytes: int = 160
    command_bytes: int = 120
    message_bytes: int = 200
    key_message_bytes: int = 120
    resolution_bytes: int = 200
    decision_bytes: int = 160
    summary_bytes: int = 600
    task_line_bytes: int = 200
    #: Bounds that keep memory small where the seed stores text unclipped (task, role, paths).
    task_bytes: int = 4000
    role_bytes: int = 100
    path_chars: int = 1024
    key_chars: int = 200
    event_command_chars: int = 1024


SEED_CAPS = WorkingCaps()

class _OpenFailure:
    """Mutable while open; becomes a `FailureNote` when snapshotted or resolved."""

    __slots__ = ("attempts", "first_at", "key", "last_at", "message", "path", "tool")

    def __init__(self, key: str, tool: str, path: str, message: str, at: float) -> None:
        self.key = key
        self.tool = tool
        self.path = path
        self.message = message
        self.attempts = 1
        self.first_at = at
        self.last_at = at

    def note(self, resolution: str = "", resolved_by: str = "") -> FailureNote:
        return FailureNote(
            key=self.key,
            tool=self.tool,
            path=self.path,
            message=self.message,
            attempts=self.attempts,
            first_at=self.first_at,
            last_at=self.last_at,
            resolution=resolution,
            resolved_by=resolved_by,
        )


_Event = tuple[str, str, str, str, bool, str, str, float]


class WorkingMemory:
    """One run's working memory. Not thread-safe: exactly one actor owns each instance."""

    __slots__ = (
        "_classes",
        "_commands",
        "_decisions",
        "_edited",
        "_events",
        "_focus",
        "_key_memo",
        "_open",
        "_read",
        "_resolved",
        "_sig_order",
        "_sigs",
        "_tool_memo",
        "calls",
        "caps",
        "errors",
        "last_at",
        "redundant",
        "role",
        "run_id",
        "summary",
        "task",
    )

    def __init__(
        self,
        run_id: str = "",
        *,
        classes: ToolClasses = DEFAULT_TOOL_CLASSES,
        caps: WorkingCaps = SEED_CAPS,
    ) -> None:
        self.caps = caps
        self._classes = classes
        self.run_id = run_id.strip()
        #: The tool-class memo, read directly on the hot path (a miss asks `classify`).
        self._tool_memo = classes.memo
        self._key_memo: dict[tuple[str, str], str] = {}
        self._clear()

    def _clear(self) -> None:
        caps = self.caps
        self.task = ""
        self.role = ""
        self.summary = ""
        self._focus: list[str] = []
        self._events: deque[_Event] = deque(maxlen=caps.events)
        self._read: dict[str, None] = {}
        self._edited: dict[str, None] = {}
        self._commands: deque[tuple[str, bool]] = deque(maxlen=caps.commands)
        self._open: dict[str, _OpenFailure] = {}
        self._resolved: dict[str, FailureNote] = {}
        self._decisions: deque[str] = deque(maxlen=caps.decisions)
        self._sigs: dict[tuple[str, str, str, str], int] = {}
        #: Signatures in insertion order: evicting the oldest is a popleft, not a dict scan.
        self._sig_order: deque[tuple[str, str, str, str]] = deque()
        self.calls = 0
        self.errors = 0
        self.redundant = 0
        self.last_at = 0.0

    # ------------------------------------------------------------------ lifecycle (S-1.6)

    def start(self, run_id: str = "", task: str = "", role: str = "", now: float = 0.0) -> None:
        """Begin a (new) task: set run id (only if given), task and role; clear focus,
        decisions and events; keep counters, files, commands, failures and the summary."""
        run_id = run_id.strip()
        if run_id:
            self.run_id = run_id
        self.task = clip(task, self.caps.task_bytes)
        self.role = clip(role, self.caps.role_bytes)
        self._focus = []
        self._decisions.clear()
        self._events.clear()
        self._touch(now)

    def reset(self) -> None:
        """Forget everything, counters and run id included."""
        self.run_id = ""
        self._clear()

    # ------------------------------------------------------------------ the hot path (S-1.3)

    def record_tool(
        self,
        tool: str,
        path: str = "",
        args: str = "",
        command: str = "",
        ok: bool = True,
        error: str = "",
        key: str = "",
        at: float = 0.0,
    ) -> bool:
        """Record one tool call; False (and nothing recorded) for a blank tool name.

        `at` is the call's time in epoch seconds; the caller substitutes "now" for 0.
        """
        hit = self._tool_memo.get(tool)
        name, cls = hit if hit is not None else self._classes.classify(tool)
        if not name:
            return False
        caps = self.caps
        if path:
            path = path.strip()
            if len(path) > caps.path_chars:
                path = cut_chars(path, caps.path_chars).strip()
        if args:
            # Inlined fast path of clip_fast: a trimmed string of ≤ n/4 characters fits n bytes.
            args = args.strip()
            if len(args) > caps.args_bytes >> 2:
                args = clip_fast(args, caps.args_bytes)
        if error:
            error = first_line_fast(error, caps.error_bytes)
        if command and len(command) > caps.event_command_chars:
            command = cut_chars(command, caps.event_command_chars)
        if key:
            key = cut_chars(key, caps.key_chars).strip()
        self.calls += 1
        self._events.append((name, path, args, command, ok, error, key, at))
        if at > self.last_at:  # noqa: PLR1730 - a compare is cheaper than max() on the hot path
            self.last_at = at

        sigs = self._sigs
        sig = (name, path, args, command)
        seen = sigs.get(sig)
        if seen is None:
            order = self._sig_order
            if len(order) >= caps.signatures:
                del sigs[order.popleft()]
            order.append(sig)
            sigs[sig] = 1
        else:
            sigs[sig] = seen + 1
            self.redundant += 1

        if cls is MODE:
            cls = self._classes.mode_class(name, command, args)
        if cls is READ:
            if path:
                files = self._read
                if path in files:
                    del files[path]
                elif len(files) >= caps.files_read:
                    del files[next(iter(files))]
                files[path] = None
        elif cls is EDIT:
            if path and ok:
                files = self._edited
                if path in files:
                    del files[path]
                elif len(files) >= caps.files_edited:
                    del files[next(iter(files))]
                files[path] = None
        elif cls is SHELL:
            line = command or args
            if line:
                self._commands.append((first_line_fast(line, caps.command_bytes), ok))

        if not ok:
            self.errors += 1
            self._open_failure(key, name, path, error, at)
        return True

    # ------------------------------------------------------------------ failures (S-1.4, S-1.5)

    def fail(
        self, key: str = "", tool: str = "", path: str = "", message: str = "", now: float = 0.0
    ) -> str:
        """Open a failure, or count another attempt of the open one with the same key.

        Returns the failure's key ("" when key, tool and message are all blank: nothing to
        remember). An empty key becomes `hash_id("wf_", tool, clip(message, 120))`, lower-cased.
        """
        caps = self.caps
        message = first_line_fast(message, caps.message_bytes) if message else ""
        tool = tool.strip().lower()
        key = cut_chars(key, caps.key_chars).strip()
        if not (key or tool or message):
            return ""
        return self._open_failure(key, tool, cut_chars(path, caps.path_chars).strip(), message, now)

    def _open_failure(self, key: str, tool: str, path: str, message: str, at: float) -> str:
        if not key:
            memo_key = (tool, message)
            key = self._key_memo.get(memo_key, "")
            if not key:
                short = clip_fast(message, self.caps.key_message_bytes).lower()
                key = hash_id("wf_", tool.lower(), short)
                if len(self._key_memo) >= 256:
                    self._key_memo.clear()
                self._key_memo[memo_key] = key
        opened = self._open.pop(key, None)
        if opened is not None:
            opened.attempts += 1
            opened.last_at = max(opened.last_at, at)
            if message:
                opened.message = message
            if not opened.tool:
                opened.tool = tool
            if not opened.path:
                opened.path = path
        else:
            if len(self._open) >= self.caps.open_failures:
                del self._open[next(iter(self._open))]
            opened = _OpenFailure(key, tool, path, message, at)
        self._open[key] = opened
        self._touch(at)
        return key

    def resolve(self, key: str, resolution: str = "", resolved_by: str = "", now: float = 0.0) -> bool:
        """Move the open failure `key` to resolved; False for an empty or unknown key."""
        key = key.strip()
        opened = self._open.pop(key, None) if key else None
        if opened is None:
            return False
        opened.last_at = max(opened.last_at, now)
        note = opened.note(
            resolution=clip(resolution, self.caps.resolution_bytes),
            resolved_by=clip(resolved_by, self.caps.resolution_bytes),
        )
        self._resolved.pop(key, None)
        if len(self._resolved) >= self.caps.resolved_failures:
            del self._resolved[next(iter(self._resolved))]
        self._resolved[key] = note
        self._touch(now)
        return True

    # ------------------------------------------------------------------ focus, decisions, summary

    def focus(self, paths: list[str] | tuple[str, ...], now: float = 0.0) -> None:
        """Put `paths` (in their order) in front of the focus files; dedupe; keep 16."""
        caps = self.caps
        fresh = [cut_chars(p, caps.path_chars) for p in paths]
        self._focus = dedupe(fresh + self._focus, caps.focus)
        self._touch(now)

    def decide(self, text: str, now: float = 0.0) -> bool:
        """Record a decision (its first line ≤ 160 bytes; the last 5 are kept)."""
        line = first_line_fast(text, self.caps.decision_bytes)
        if not line:
            return False
        self._decisions.append(line)
        self._touch(now)
        return True

    def summarize(self, text: str, now: float = 0.0) -> None:
        """Replace the rolling summary (clipped to 600 bytes; blank clears it)."""
        self.summary = clip(text, self.caps.summary_bytes)
        self._touch(now)

    def _touch(self, now: float) -> None:
        self.last_at = max(self.last_at, now)

    # ------------------------------------------------------------------ reading (S-1.7 to S-1.10)

    def counters(self) -> Counters:
        return Counters(calls=self.calls, errors=self.errors, redundant=self.redundant)

    def digest(self) -> Digest:
        """The MustPreserve projection (S-1.7): newest 3 open failures, resolved ones as extra."""
        failures = [f.note() for f in list(self._open.values())[-DIGEST_FAILURES:]]
        extra = {ALREADY_FIXED: [fixed_line(f) for f in self._resolved.values()]} if self._resolved else {}
        return Digest(
            files_read=list(self._read),
            files_edited=list(self._edited),
            commands=[CommandRun(c, ok) for c, ok in self._commands],
            failures=failures,
            decisions=list(self._decisions),
            extra=extra,
        )

    def render(self, budget: int = 0, counter: TokenCounter = count_tokens_chars) -> str:
        """The working-memory block within `budget` tokens as counted by `counter` (S-1.9).

        `budget` ≤ 0 means the configured default (700). Returns "" when nothing is known.
        """
        if budget <= 0:
            budget = self.caps.default_budget
        head: list[str] = []
        task_line = first_line(self.task, self.caps.task_line_bytes) if self.task else ""
        if task_line:
            head.append(f"Current task: {task_line}\n")
        if self.role:
            head.append(f"Role: {self.role}\n")
        if self._focus:
            head.append(f"Focus files: {', '.join(self._focus)}\n")
        if self.summary:
            head.append(f"\nSo far: {self.summary}\n")
        digest = render_digest(self.digest(), budget * BYTES_PER_TOKEN)
        if not head and not digest:
            return ""
        parts = ["## Working memory (this run)\n", *head]
        if digest:
            parts.append("\n")
            parts.append(digest)
        return fit_to_tokens("".join(parts).rstrip() + "\n", budget, counter)

    def snapshot(self) -> WorkingSnapshot:
        """A copy of every field (S-1.10)."""
        return WorkingSnapshot(
            run_id=self.run_id,
            task=self.task,
            role=self.role,
            summary=self.summary,
            focus=list(self._focus),
            events=[ToolEvent(*e) for e in self._events],
            files_read=list(self._read),
            files_edited=list(self._edited),
            commands=[CommandRun(c, ok) for c, ok in self._commands],
            open_failures=[f.note() for f in self._open.values()],
            resolved_failures=list(self._resolved.values()),
            decisions=list(self._decisions),
            counters=self.counters(),
            last_at=self.last_at,
        )

    def is_blank(self) -> bool:
        """True when render would return "" and no call was ever counted."""
        return not (
            self.task
            or self.role
            or self.summary
            or self._focus
            or self._events
            or self._read
            or self._edited
            or self._commands
            or self._open
            or self._resolved
            or self._decisions
            or self.calls
        )


#: Token budget of the `WORKING.md` mirror (S-7.6).
MIRROR_BUDGET = 4000


def working_markdown(memory: WorkingMemory, now: float, counter: TokenCounter = count_tokens_chars) -> str:
    """The `WORKING.md` debug mirror of a run (S-7.6); "" when there is nothing to show.

    The seed's heading and snapshot line, a line naming the run and its counters (several runs
    share one project, so the reader needs to know which one this is), then `render(4000)`.
    """
    block = memory.render(MIRROR_BUDGET, counter)
    if not block:
        return ""
    c = memory.counters()
    return (
        "# Working memory\n\n"
        f"_Snapshot from {to_rfc3339(now)}. Regenerated every run; safe to delete._\n\n"
        f"_Run `{memory.run_id or '-'}`: {c.calls} tool calls, {c.errors} failed, "
        f"{c.redundant} redundant._\n\n"
        f"{block}"
    )
