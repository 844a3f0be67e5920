"""`slmactor hook <format> [Event]`: the command a harness's hook configuration runs.

Reads the harness's hook JSON on stdin, turns it into one normalised event
(`slmactor.hooks.dialects`), does what the event's action needs, and prints the harness's JSON.

Fail-open, always: whatever the argv, stdin or the daemon's state, it prints valid JSON (the
harness's neutral output — `{}`, or what its room says changes nothing — when there is nothing to add) and
exits 0 within its deadline (`--timeout`, at most `HOOK_TIMEOUT` seconds, stdin included). What
went wrong goes to stderr in one line. A harness reads exit 2 as "block", so a usage error must
never surface as argparse's exit 2: this path parses its own argv (`parse_argv`), before and
without argparse, and accepts the options anywhere on the line (`hook claude UserPromptSubmit
--no-autostart`); unknown options are reported and ignored.

Cheap: one Python process per event. It imports only what the event needs — an event with
nothing to do (`events.has_work`: a turn's end where a session end reports, a pre-tool event of a
harness that cannot take a rewritten input, ...) never loads
json, typing, the client or zmq — and skips the daemon at once while the breaker
(`slmactor.hooks.breaker`) is open after a timeout (not after a refused connect). A runtime
directory or a listener that is another user's is refused (`slmactor.peer`): nothing is sent,
one line goes to stderr, the harness gets its neutral output.

When a hook starts the daemon, explicitly: only a context event at a session start, only when
nothing listens in the runtime dir (`slmactor.locate`: the same one from any environment), never
with `--no-autostart`, and never after `slmactor stop` until `slmactor start` (its marker). Tool
events never wait for a start.

What an event does: `slmactor.hooks.loop.handle` (records tool calls with advice on failures,
pre-flight repair, the session ledger and its `run.finish`), given `HookRun.ask` — the one
fail-open, deadline-keeping, breaker-driving way to the daemon; then `HANDLERS` by action for
what the loop leaves to the caller (the memory block of a context event).

`slmactor hook install|uninstall|config` are ordinary commands (argparse, `--json`): see
`slmactor/cli/hook/install.py`.
"""

from __future__ import annotations

import os
import sys
import time

# Nothing heavier at module level: `typing`, `json`, `pathlib` are loaded only by the paths
# that need them (see `main`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from slmactor.logic.memory.block_items import BlockItem

#: Longest hook payload read from stdin (a tool response can be large; the rest is ignored).
MAX_STDIN = 4 << 20
#: Seconds a hook may take at most, stdin and daemon included (`--timeout` lowers it); the
#: environment variable raises it up to `MAX_HOOK_TIMEOUT` (a machine whose load is 10 — a CI
#: box, a shared test host — answers later; the harness's own hook timeout is longer still).
HOOK_TIMEOUT_ENV = "SLMACTOR_HOOK_TIMEOUT"
MAX_HOOK_TIMEOUT = 60.0


def _hook_timeout() -> float:
    try:
        return min(max(float(os.environ.get(HOOK_TIMEOUT_ENV, "") or 2.0), 0.05), MAX_HOOK_TIMEOUT)
    except ValueError:
        return 2.0


HOOK_TIMEOUT = _hook_timeout()
#: `hook` subcommands that are ordinary commands, not a harness event.
SUBCOMMANDS = frozenset({"install", "uninstall", "config", "package", "entry-point"})
_VALUED = frozenset({"--project", "--runtime-dir", "--timeout", "--role", "--budget", "--breaker"})
_FLAGS = frozenset({"--json", "--no-autostart", "--background"})
_HELP = frozenset({"-h", "--help", "--version"})


class Options:
    """The hook command line, parsed without argparse (a plain class: no `dataclasses`)."""

    __slots__ = ("autostart", "background", "breaker", "budget", "event", "format", "problems",
                 "project", "role", "runtime_dir", "timeout")

    def __init__(self) -> None:
        self.format = ""
        self.event = ""
        self.project = ""
        self.runtime_dir = ""
        self.timeout = HOOK_TIMEOUT
        self.role = "worker"
        self.budget = 0
        self.breaker: float | None = None
        self.autostart = True
        self.background = False
        self.problems: list[str] = []


def _positionals(argv: Sequence[str]) -> list[str]:
    out, skip = [], False
    for token in argv:
        if skip:
            skip = False
        elif token in _VALUED:
            skip = True
        elif not token.startswith("-"):
            out.append(token)
    return out


def is_hook_event_call(argv: Sequence[str]) -> bool:
    """True for `[options] hook <format> [Event] [options]` (not install/config, not --help)."""
    words = _positionals(argv)
    return (len(words) >= 2 and words[0] == "hook" and words[1] not in SUBCOMMANDS
            and not any(t in _HELP for t in argv))


def parse_argv(argv: Sequence[str]) -> Options:
    """Options from anywhere on the line; anything odd is noted in `problems`, never raised."""
    opts = Options()
    words: list[str] = []
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        name, eq, inline = token.partition("=")
        if name in _VALUED:
            if eq:
                value = inline
            elif i < len(tokens):
                value, i = tokens[i], i + 1
            else:
                opts.problems.append(f"{name} needs a value")
                continue
            _set(opts, name, value)
        elif token in _FLAGS:
            if token == "--no-autostart":
                opts.autostart = False
            elif token == "--background":
                opts.background = True
        elif token.startswith("-") and token != "-":
            opts.problems.append(f"ignored unknown option {token}")
        else:
            words.append(token)
    words = words[1:] if words[:1] == ["hook"] else words
    opts.format = words[0] if words else ""
    opts.event = words[1] if len(words) > 1 else ""
    if len(words) > 2:
        opts.problems.append(f"ignored extra arguments {' '.join(words[2:])}")
    return opts


def _set(opts: Options, name: str, value: str) -> None:
    try:
        if name == "--timeout":
            opts.timeout = min(max(float(value), 0.05), HOOK_TIMEOUT)
        elif name == "--budget":
            opts.budget = max(int(value), 0)
        elif name == "--breaker":
            opts.breaker = max(float(value), 0.0)
        elif name == "--project":
            opts.project = value
        elif name == "--runtime-dir":
            opts.runtime_dir = value
        elif name == "--role":
            opts.role = value
    except ValueError:
        opts.problems.append(f"ignored {name} {value!r} (not a number)")


def runtime_dir(opts: Options, env: Any) -> str:
    """`--runtime-dir`, else where this user's daemon is (`slmactor.locate.locate`, the function
    every client uses; stdlib only, unlike `slmactor.config`, which would cost a hook ~9 ms)."""
    if opts.runtime_dir:
        return opts.runtime_dir
    from slmactor import locate

    return locate.locate(env)


def read_stdin(deadline: float) -> bytes:
    """The payload: up to MAX_STDIN bytes, until EOF or the deadline (a harness that never
    closes stdin must not hold the hook)."""
    stream = sys.stdin
    if stream is None:
        return b""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by an in-memory stream
        return bytes(stream.buffer.read(MAX_STDIN))
    if os.isatty(fd):
        return b""
    import select

    chunks: list[bytes] = []
    total = 0
    while total < MAX_STDIN:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        data = os.read(fd, min(1 << 16, MAX_STDIN - total))
        if not data:
            break
        chunks.append(data)
        total += len(data)
    return b"".join(chunks)


def _payload(raw: bytes) -> dict[str, Any]:
    import json

    try:
        data = json.loads(raw.decode("utf-8", errors="replace")) if raw.strip() else {}
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _say(data: dict[str, Any]) -> None:
    import json

    _say_text(json.dumps(data, ensure_ascii=False))


def warn(text: str) -> None:
    try:
        print(f"slmactor hook: {text}", file=sys.stderr)
    except (OSError, ValueError):
        pass


class HookRun:
    """One hook invocation in progress: what a handler needs, all fail-open."""

    def __init__(self, opts: Options, hook: Any, runtime_dir: str, deadline: float) -> None:
        self.opts = opts
        self.hook = hook
        self.runtime_dir = runtime_dir
        self.deadline = deadline
        self._project: str | None = None
        self._client: Any = None
        #: Ask the daemon even while the breaker is open.
        self.force = False

    @property
    def project(self) -> str:
        """The project root: `--project`, else the git root of the harness's project dir."""
        if self._project is None:
            from pathlib import Path

            from ..context import find_project_root

            given = self.opts.project
            self._project = str(Path(given).resolve() if given else find_project_root(Path(self.hook.project_dir)))
        return self._project

    def start_daemon(self) -> bool:
        """Start the daemon when nothing listens on its socket (context events at a session start)."""
        from pathlib import Path

        from slmactor.remote import remote_configured

        if remote_configured():
            return True  # a daemon over tcp is not ours to start
        from slmactor import peer

        problem = peer.runtime_dir_problem(self.runtime_dir)
        if problem:  # another user's directory: our daemon would refuse it, and nothing is sent
            warn(problem)
            return False
        ctl = os.path.join(self.runtime_dir, "ctl.sock")
        uid = peer.listener_uid(ctl)
        if uid != peer.NOBODY:
            problem = peer.peer_problem(ctl, uid)
            if problem:
                warn(problem)
            return not problem
        if not self.opts.autostart:
            warn(f"slmactor daemon not reachable at {self.runtime_dir}: not running (and --no-autostart)")
            return False
        from slmactor import locate

        if locate.stopped_for(os.environ, self.runtime_dir):
            warn("slmactor daemon not running: stopped with `slmactor stop`; not starting it "
                 "(`slmactor start` turns autostart on again)")
            return False
        from ..autostart import start_daemon

        try:
            start_daemon(Path(self.runtime_dir), quiet=True)
        except (RuntimeError, OSError) as exc:
            warn(str(exc))
            return False
        return True

    def ask(self, kind: str, fields: dict[str, Any]) -> Any:
        """The daemon's reply to one raw ask, or None (daemon down, breaker open, timeout, error);
        never raises. Every ask ends by the hook's deadline; the event's asks share one client.
        A timeout opens the breaker, a reply closes it.
        """
        from slmactor.hooks import breaker

        if not self.force and breaker.holds(self.runtime_dir, time.time()):
            warn("breaker open after a daemon timeout; not waiting (rm the hook-breaker file to retry now)")
            return None
        from slmactor.remote import remote_configured

        if not os.path.exists(os.path.join(self.runtime_dir, "ctl.sock")) and not remote_configured():
            warn(f"slmactor daemon not reachable at {self.runtime_dir}: no socket (is the daemon running?)")
            return None
        left = self.deadline - time.monotonic()
        if left <= 0.01:
            warn(f"no time left before the hook deadline for {kind}")
            return None
        from slmactor.client import (
            Client,
            DaemonNotRunning,
            DaemonUnavailable,
            RequestFailed,
            UntrustedDaemon,
        )

        try:
            if self._client is None:
                self._client = Client(self.runtime_dir, project=self.project, timeout=left, retries=1)
            result = self._client.ask_raw(kind, fields, timeout=left, retries=1)
        except DaemonUnavailable as exc:
            # Only a timeout (a wedged daemon) opens the breaker: a refused connect or a refused
            # impostor is known at once and costs the next hook nothing.
            if not isinstance(exc, (DaemonNotRunning, UntrustedDaemon)):
                breaker.trip(self.runtime_dir, time.time(), breaker.open_seconds(self.opts.breaker, os.environ),
                             str(exc))
            warn(str(exc))
            return None
        except RequestFailed as exc:
            breaker.clear(self.runtime_dir)
            warn(str(exc))
            return None
        breaker.clear(self.runtime_dir)
        return result

    def once(self, items: list[BlockItem]) -> str:
        """The block's items this session was not given yet (their keys are kept in its
        ledger), rendered for the harness and noted as given: the session start gets the
        block, a later prompt only what is new."""
        from pathlib import Path

        from slmactor.hooks import session
        from slmactor.logic.memory.block_items import render, untold

        ledger = session.ledger_path(Path(self.runtime_dir), self.project, self.hook.run_id)
        told = session.told_keys(session.read_ledger(ledger))
        new = untold(items, told, session.key_digest) if told else items
        text = render(new)
        if text:
            try:
                # The records the lines rest on go with them: `memory audit` checks them.
                evidence = list(dict.fromkeys(e for i in new for e in i.evidence))
                session.append(ledger, session.told_entry(text, time.time(),
                                                          keys=[i.key for i in new if i.key],
                                                          evidence=evidence))
            except OSError as exc:
                warn(f"session ledger: {exc}")
        return text

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


#: Longest a detached session-end reporter waits for the harness to exit and its transcript to
#: stop growing (seconds).
TRANSCRIPT_SETTLE_S = 1.0

#: The defaults of `MemoryBlock` for the fields a hook sends (a test keeps them equal to the
#: message class: building the classes would cost a hook more than its ask).
MEMORY_BLOCK_DEFAULTS: dict[str, Any] = {"role": "", "budget": 0, "query": "", "run_id": ""}


def without_defaults(fields: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """Drop the fields equal to their default, as `codec.dump` does."""
    return {k: v for k, v in fields.items() if not (type(v) is type(defaults[k]) and v == defaults[k])}


def context(run: HookRun) -> dict[str, Any]:
    """A session start or a prompt → the memory block, as the harness's additional context."""
    from slmactor import harnesses

    if run.hook.event in harnesses.get(run.hook.harness).start_events and not run.start_daemon():
        return {}
    result = run.ask("memory.block", without_defaults({
        "role": run.opts.role, "budget": run.opts.budget, "query": run.hook.query,
        "run_id": run.hook.run_id,
    }, MEMORY_BLOCK_DEFAULTS))
    text = result.get("text", "") if isinstance(result, dict) else ""
    if not isinstance(text, str) or not text:
        return {}
    from slmactor.logic.memory import block_items

    raw = result.get("items")
    items = [i for i in (block_items.BlockItem.from_dict(d) for d in raw) if i is not None] \
        if isinstance(raw, list) else []
    # A daemon of before items answers text only: its lines are the items.
    told = run.once(items or block_items.lines_as_items("", text))
    return {"context": told} if told else {}


#: action → handler. A handler returns `{"context": str, "updated_input": dict}` (either may be
#: missing); the dialect turns that into the harness's output.
HANDLERS: dict[str, Callable[[HookRun], dict[str, Any]]] = {"context": context}


def _say_text(text: str) -> None:
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str]) -> int:
    """Run one hook event. Always returns 0 after printing one JSON document."""
    started = time.monotonic()
    harness = ""
    try:
        opts = parse_argv(argv)
        harness = opts.format
        for problem in opts.problems:
            warn(problem)
        deadline = started + opts.timeout
        raw = read_stdin(deadline)
        if b"<private" in raw.lower():
            from slmactor.logic.text.private import strip_private_json_bytes

            # The door: a `<private>` span never reaches the spool, a ledger or the daemon.
            raw = strip_private_json_bytes(raw)
        from slmactor.hooks import events

        if not events.is_format(harness):
            warn(f"unknown hook format {harness!r} (one of {', '.join(events.formats())})")
            _say_text("{}")
            return 0
        # Decided before the payload is parsed (no json, no dialects, no typing): an event with
        # nothing to do, or a breaker left open by a timeout.
        if opts.event and not events.has_work(harness, opts.event):
            _say_text(events.neutral_json(harness))
            return 0
        detached, pid = False, 0
        if opts.background and events.is_end(harness, opts.event):
            from slmactor.hooks.session import harness_pid

            pid = harness_pid()  # before the fork: the child is re-parented
            where = _answered_detached(events.neutral_json(harness))
            if where == "parent":
                return 0
            detached = where == "child"
        rt = runtime_dir(opts, os.environ)
        from slmactor import peer

        problem = peer.runtime_dir_problem(rt)
        if problem:  # another user's directory: no ledger written there, nothing sent
            warn(problem)
            _say_text(events.neutral_json(harness))
            return 0
        from slmactor.hooks import breaker

        # While the breaker is open the daemon is skipped, never the session's ledger (local,
        # cheap): the calls and the session's end are still written down, for the report a
        # later event sends. A pre-tool event has nothing to write: it answers at once.
        if breaker.holds(rt, time.time()) and not events.is_end(harness, opts.event):
            warn("breaker open after a daemon timeout; not waiting (rm the hook-breaker file to retry now)")
            if not events.is_pre_tool(harness, opts.event) and not _names_excluded_raw(opts, raw):
                _spool(harness, opts, rt, raw)
            _say_text(events.neutral_json(harness))
            return 0
        from slmactor.hooks import dialects

        payload = _payload(raw)
        event = dialects.event_name(harness, opts.event, payload)
        hook = dialects.parse(harness, event, payload, os.environ, os.getcwd())
        if not events.has_work(harness, event):
            _say(dialects.neutral(harness))
            return 0
        run = HookRun(opts, hook, rt, deadline)
        from slmactor import privacy

        excluder = privacy.excluder_for(run.project)
        if excluder and privacy.names_excluded(payload, excluder):
            # A call on a path the project excludes is not recorded at all (what it read or
            # printed is that file); any other event goes on with the path replaced.
            if hook.action in (events.RECORD, events.PREFLIGHT):
                _say(dialects.neutral(harness))
                return 0
            payload = privacy.scrub(payload, excluder)
            hook = dialects.parse(harness, event, payload, os.environ, os.getcwd())
            run.hook = hook
        # A session's end is tried even while the breaker is open: once per session, and the
        # reply that closes the breaker lets it report the sessions that ended meanwhile.
        run.force = hook.action == events.END
        try:
            from pathlib import Path

            from slmactor.hooks import loop

            # Events spooled while the breaker was open go into their sessions' ledgers first.
            loop.replay_spool(Path(rt), _project_root)
            # Pre-flight repair, the session ledger, advice on failures, the session's end.
            # Nobody waits for a detached reporter: it lets the harness exit and its transcript
            # settle first, and keeps half a second of the deadline for its two asks.
            settle_until = time.monotonic() + max(0.0, min(TRANSCRIPT_SETTLE_S, deadline
                                                           - time.monotonic() - 0.5)) \
                if detached else 0.0
            out = loop.handle(hook, payload, Path(run.project), Path(rt), run.ask,
                              settle_until=settle_until, harness_pid=pid)
            if out is None:
                handler = HANDLERS.get(hook.action)
                answer = handler(run) if handler is not None else {}
                out = dialects.output(harness, event, answer.get("context", ""), answer.get("updated_input"))
        finally:
            run.close()
        _say(out or dialects.neutral(harness))
    except BaseException as exc:  # noqa: BLE001 - fail open, even on ^C: the harness must never be blocked
        warn(f"{type(exc).__name__}: {exc}")
        _say_text(_neutral_after_error(harness))
    return 0


def _names_excluded_raw(opts: Options, raw: bytes) -> bool:
    """Whether a payload to spool names a path its project excludes (then it is not spooled)."""
    # The breaker's fast path: os.path only (no pathlib, no CLI context) until an exclude list
    # is found — the project is `--project`, else the git root above the working directory.
    project = os.path.abspath(opts.project) if opts.project else os.getcwd()
    if not opts.project:
        here = project
        while not os.path.exists(os.path.join(here, ".git")) and os.path.dirname(here) != here:
            here = os.path.dirname(here)
        project = here if os.path.exists(os.path.join(here, ".git")) else project
    if not os.path.exists(os.path.join(project, ".slmcode", "exclude")):
        return False
    from slmactor import privacy

    excluder = privacy.excluder_for(project)
    return bool(excluder) and excluder.mentions(raw.decode("utf-8", "replace"))


def _answered_detached(neutral: str) -> str:
    """For an end event the harness only waits on (`--background`): answer `neutral` now and
    let a detached child report the session. "parent" in the parent (it is done), "child" in
    the child, and "here" wherever no child can be made (this process reports, as usual).

    The child leaves the harness's process group and session (a harness that kills its hooks'
    group at exit does not reach it) and holds none of its pipes (the harness reads the
    answer's end of stdout as the hook's end), at a lower priority than the harness; it keeps the
    hook's deadline."""
    if not hasattr(os, "fork"):
        return "here"
    try:
        pid = os.fork()
    except OSError:
        return "here"
    if pid:
        _say_text(neutral)
        return "parent"
    try:
        os.setsid()
        # Background work: the harness's own exit, which it no longer waits for, goes first.
        os.nice(10)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        if null > 2:
            os.close(null)
    except OSError:
        os._exit(0)  # a child that cannot detach must not answer the harness a second time
    return "child"


def _spool(harness: str, opts: Options, rt: str, raw: bytes) -> None:
    """Write the event down for the next hook that reaches the daemon (`hooks/spool.py`)."""
    from slmactor import harnesses
    from slmactor.hooks import spool

    room = harnesses.get(harness)
    project_env = os.environ.get(room.project_env, "") if room.project_env else ""
    if not spool.append(rt, harness, opts.event, os.getcwd(), project_env, opts.project, raw, time.time()):
        warn("the hook spool is full or cannot be written; this event is not recorded")


def _project_root(given: str, directory: str) -> Any:
    """The project root of a spooled event: its `--project`, else the git root of its dir."""
    from pathlib import Path

    from ..context import find_project_root

    return Path(given).resolve() if given else find_project_root(Path(directory or "/"))


def _neutral_after_error(harness: str) -> str:
    """The neutral answer when something failed: the room's, or `{}` if even that fails."""
    try:
        from slmactor.hooks import events

        return events.neutral_json(harness)
    except BaseException:  # noqa: BLE001 - fail open: the harness must get valid JSON
        return "{}"


def register(sub: Any) -> None:
    """`hook <format>` parsers exist for `--help` only (the event path never reaches argparse);
    install / uninstall / config are in `install`."""
    from slmactor import harnesses
    from slmactor.hooks.events import formats

    from . import install as hook_install
    from . import package as hook_package

    for harness in formats():
        p = sub.add_parser(harness, help=f"handle a {harness} hook event (JSON on stdin, JSON on stdout)",
                           description=f"Events: {', '.join(harnesses.get(harness).events)}. Options may come anywhere "
                           "on the line; a hook always exits 0 with valid JSON.")
        p.add_argument("event", nargs="?", help="the hook event (default: read from the payload)")
        p.add_argument("--role", default="worker", help="memory block role (default: worker)")
        p.add_argument("--budget", type=int, default=0, help="memory block tokens (0 = daemon default)")
        p.add_argument("--breaker", type=float, metavar="S",
                       help="seconds to skip the daemon after a timeout (default 30, $SLMACTOR_HOOK_BREAKER_S)")
        p.set_defaults(func=lambda ctx: main(sys.argv[1:]))
    hook_install.register(sub)
    hook_package.register(sub)
