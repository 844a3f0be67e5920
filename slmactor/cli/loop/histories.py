"""Real histories into the replay engine (`logic/loop/histories`), answered by the product.

Reads the same files `import sessions` reads, through the same rooms (`cli/sessions/run.
read_records`: every harness's transcript, rollout, chat record, task history and trajectory
formats; `--git`: the transcripts a repository holds), and gives each session to the engine as
a `History`: its calls as the room read them, in time order, in its project. A session a file
holds several copies of (a checkpointed transcript, the versions of a committed copy) is replayed
once: the copy with the most calls.

Which project a session belongs to: the repository a committed history came from; else the last
part of the directory the session ran in (a project moved, cloned or checked out as a worktree
keeps its name), within the PATH it was found under (so two PATHs are never mixed); a session
that names no directory belongs to the PATH itself.

`ProductMemory` answers the engine with the functions the daemon and the hooks use: the rules
actor's fingerprint, `evolve.preflight` and `evolve.on_failure` answers and `evolve.resolved`
learning (`logic/evolve/answer.py`, on a rule book of the project's own that starts with the
shipped rules), worded for the harness's model as the hook words it (`hooks/advice.advice_text`),
with where a missing path probably is (`path_hints`, over the paths the project's successful
calls named so far: the hook reads them from the disk, which a replay does not have).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from slmactor.logic.evolve import typed_repairs as tr
from slmactor.logic.evolve.rules import RuleBook
from slmactor.logic.failures.call import ToolCall
from slmactor.logic.failures.fingerprint import Fingerprint
from slmactor.logic.loop.histories.engine import History, Step, Told, steps_of

_PATHLIKE = re.compile(r"^[~\w.\-/\\:@+]+$")
_EXTENSION = re.compile(r"\.[A-Za-z]\w{0,5}$")


def parse_args(entry: dict[str, Any]) -> dict[str, Any]:
    """A ledger call's arguments as a map (a shell action a trajectory spelled as text: its
    command)."""
    raw = entry.get("args")
    if isinstance(raw, str) and raw.startswith("{"):
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    command = entry.get("command")
    if isinstance(command, str) and command:
        return {"command": command}
    return {}


def call_of(tool: str, args: dict[str, Any]) -> tr.Call:
    """A call as its harness's room reads it, in the shared words (a ledger's arguments are in
    them already; a trajectory's are in its harness's keys)."""
    return tr.Call.of(room_call(tool, args)) if tool else tr.Call(tool, args, "")


def room_call(tool: str, args: Any, *, ok: bool = True, error: str = "") -> ToolCall:
    """The `ToolCall` the room that has `tool` builds of `args` (the one record the rules
    actor's answers read)."""
    from slmactor import harnesses

    return harnesses.tool_call(tool, dict(args), ok=ok, error=error)


def told_call(call: ToolCall, reply: dict[str, Any]) -> tr.Call | None:
    """The rewritten call of an answer (`new_input`, in the harness's keys; `new_tool`), in the
    shared words the replay compares calls in; None when the answer rewrites nothing."""
    from slmactor import harnesses

    args = reply.get("new_input")
    if not isinstance(args, dict):
        return None
    tool = str(reply.get("new_tool") or call.tool)
    return tr.Call(tool, call.with_input(args).shared(), harnesses.tool_family(tool) or tool.lower())


def root_name(cwd: str) -> str:
    """The last part of a directory, whichever separator it was written with."""
    parts = [p for p in re.split(r"[\\/]+", cwd.strip()) if p and p not in (".", "..")]
    return parts[-1] if parts else ""


def project_of(cwd: str, where: str, git_project: str) -> str:
    if git_project:
        path = Path(git_project)
        # A bare mirror (`…/<name>/repo`, `<name>.git`) is named by its folder.
        name = path.parent.name if path.name in ("repo", ".git") else path.name.removesuffix(".git")
        return name or git_project
    root = root_name(cwd)
    return f"{where}/{root}" if root else where


def histories_of(found: Iterable[tuple[Any, Any, str, str]]) -> list[History]:
    """(room, record, where, git project) of every session read → one history per session (the
    copy with the most calls)."""
    best: dict[tuple[str, str, str], tuple[int, History]] = {}
    for room, record, where, git_project in found:
        stats = record.stats
        steps = steps_of(stats.calls, lambda e: call_of(str(e.get("tool") or ""), parse_args(e)))
        started = stats.started_at or min((s.at for s in steps if s.at), default=0.0)
        project = project_of(record.cwd if isinstance(record.cwd, str) else "", where, git_project)
        history = History(room.name, project, str(record.session_id), float(started), steps)
        key = (room.name, project, history.session)
        if key not in best or len(steps) > best[key][0]:
            best[key] = (len(steps), history)
    return [h for _, h in best.values()]


def read(paths: Sequence[Path], git: Sequence[str] = (), cwd: Path | None = None, *,
         progress: Callable[[int, int], None] | None = None) -> tuple[list[History], Any]:
    """Every session under `paths` (files or folders) and in the `git` repositories, as
    histories; and the reading's tally (files read, skipped and why)."""
    from slmactor import harnesses
    from slmactor.cli.sessions import gitsource
    from slmactor.cli.sessions.files import collect
    from slmactor.cli.sessions.run import Tally

    rooms = list(harnesses.every())
    tally = Tally()
    found: list[tuple[Any, Any, str, str]] = []
    own_histories: list[History] = []
    jobs: list[tuple[Any, str]] = []
    for path in paths:
        where = path.name or str(path)
        jobs.extend((item, where) for item in collect([path], lambda p, why: tally.skip_file(p, why)))
    for spec in git:
        blobs, repository = gitsource.items(spec, cwd or Path.cwd(), rooms)
        # A team's committed sessions are one project: the repository's, whoever's machine
        # (and directory) each ran on.
        jobs.extend((blob, str(repository)) for blob in blobs)
    for n, (item, where) in enumerate(jobs, start=1):
        got = _claimed(item, rooms, tally)
        if got is None:
            trajectory = _trajectory_file(item, where)
            if isinstance(trajectory, History):
                tally.files += 1
                own_histories.append(trajectory)
            elif trajectory is not None:
                tally.files += 1
                got = (trajectory[0], [trajectory[1]])
            else:
                tally.skip_file(item.label, "not a session")
        if got is not None:
            room, records = got
            found.extend((room, record, where, where if isinstance(item, gitsource.Blob) else "")
                         for record in records)
        if progress is not None:
            progress(n, len(jobs))
    return histories_of(found) + own_histories, tally


#: A trajectory file no room claims by its name is read whole up to this size.
MAX_TRAJECTORY = 4 << 20


def _trajectory_file(item: Any, where: str) -> Any:
    """A trajectory file no harness room claims by its name, read by its content as `metrics
    replay` always read trajectories (`harnesses.read_trajectory`): slmactor's own format (SPEC
    S-17.1) as a history — its tool steps, and after a failed step whose `fixed_args` no later step
    took, the call with them (the format's record of the arguments that eventually worked) — and
    a harness's format as that room's session record, `(room, record)`. None: neither."""
    from slmactor import harnesses
    from slmactor.harnesses.base import trajectory_record
    from slmactor.logic.loop.importers import UnknownTrajectoryFormat, trajectory_format

    if not item.name.endswith((".json", ".jsonl", ".traj")) or item.size > MAX_TRAJECTORY:
        return None
    try:
        text = item.data().decode("utf-8", errors="replace")
        data = ([json.loads(line) for line in text.splitlines() if line.strip()]
                if item.name.endswith(".jsonl") else json.loads(text))
    except (OSError, ValueError):
        return None
    stem = item.name
    for suffix in (".traj.json", ".traj", ".jsonl", ".json"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    if not trajectory_format(data):
        room = next((h for h in harnesses.every() if h.trajectory_format(data)), None)
        if room is None:
            return None
        try:
            return room, trajectory_record(room, room.trajectory(data, stem), "")
        except (UnknownTrajectoryFormat, ValueError):
            return None
    trajectory = harnesses.read_trajectory(data, stem)
    steps: list[Step] = []
    tools = [s for s in trajectory.steps if s.kind == "tool" and s.tool]
    for i, step in enumerate(tools):
        args = _loads(step.args) or ({"command": step.args} if step.args else {})
        steps.append(Step(call_of(step.tool, args), step.ok, step.error))
        fixed = _loads(step.fixed_args)
        if not step.ok and fixed is not None and fixed != args and not any(
                later.ok and _loads(later.args) == fixed for later in tools[i + 1:]):
            steps.append(Step(call_of(step.tool, fixed), True))
    return History("slmactor", where, trajectory.id, 0.0, tuple(steps))


def _claimed(item: Any, rooms: list[Any], tally: Any) -> tuple[Any, list[Any]] | None:
    """What a room reads of `item` (as `import sessions` reads it); None, with nothing counted,
    for a file no room claims (a trajectory may still be read by its content)."""
    from slmactor.cli.sessions.run import Tally, read_records

    mine = Tally()
    got = read_records(item, rooms, mine)
    if got is None and set(mine.skipped_files) <= {"not a session"}:
        return None
    tally.files += mine.files
    tally.bytes += mine.bytes
    tally.companions += mine.companions
    for reason, count in mine.skipped_files.items():
        tally.skipped_files[reason] = tally.skipped_files.get(reason, 0) + count
    tally.skips.extend(mine.skips)
    for reason, count in mine.skipped_lines.items():
        tally.skipped_lines[reason] = tally.skipped_lines.get(reason, 0) + count
    return got


def named_paths(call: tr.Call) -> list[str]:
    """The paths a call named: its path argument, and the path-like words of its command."""
    out = [call.path] if call.path else []
    for word in tr._words(call.command):
        if word.startswith("-") or "://" in word or not _PATHLIKE.match(word):
            continue
        if "/" in word or "\\" in word or _EXTENSION.search(word):
            out.append(word)
    return out


class Project:
    """One project's memory in a replay: its rule book (the shipped rules to begin with) and
    its environment facts."""

    def __init__(self, book: RuleBook, facts: Any) -> None:
        self.book, self.facts = book, facts


#: `Told.by` of an environment fact's answer (a rule's is its id).
FACT = "fact:"


class ProductMemory:
    """The engine's `Memory`: the rules actor's answers and the hook's words (module docstring).

    The project's environment facts (`logic/evolve/environment.py`) answer first, as the bench
    has consulted them: a call one of them may rewrite before it runs is
    rewritten; after a failure, a fact that speaks of the call names its fix; then the rules."""

    def __init__(self) -> None:
        from slmactor import harnesses

        self._classes = harnesses.tool_classes()

    def start(self) -> Project:
        from slmactor.logic.evolve import environment as env
        from slmactor.logic.evolve.rule_seeds import seed_rules

        book = RuleBook()
        for rule in seed_rules():
            book.add(rule)
        return Project(book, env.EnvBook())

    def fingerprint(self, step: Step) -> Fingerprint:
        from slmactor.actors.rules import analyze_call

        if step.record is not None:  # as `import sessions` reads the session's record
            return analyze_call(step.record)
        return analyze_call(room_call(step.call.tool, step.call.args, ok=False, error=step.error))

    def before(self, state: Project, harness: str, call: tr.Call) -> Told | None:
        from slmactor.logic.evolve.answer import preflight

        if call.command:
            pre = state.facts.preflight(_env_call(call))
            if pre is not None:
                return Told(call_of(call.tool, {**pre.args, tr.COMMAND_KEY: pre.command}),
                            by=FACT + pre.fact.id, learned=True)
        asked = room_call(call.tool, call.args)
        reply = preflight(state.book, asked)
        rule = state.book.get(str(reply.get("rule_id") or "")) if reply.get("found") else None
        rewrite = told_call(asked, reply)
        if rule is None or rewrite is None:
            return None
        return Told(rewrite, by=rule.id, learned=not rule.seeded)

    def after(self, state: Project, harness: str, fp: Fingerprint, step: Step,
              known_paths: Sequence[str], now: float) -> Told:
        from slmactor import harnesses
        from slmactor.actors.rules import read_tool_of
        from slmactor.hooks.advice import advice_text
        from slmactor.logic.evolve import environment as env
        from slmactor.logic.evolve import path_hints
        from slmactor.logic.evolve.answer import on_failure
        from slmactor.logic.failures.fingerprint import salient_line
        from slmactor.logic.failures.unwrap import unwrap

        call = step.call
        if call.command:
            relevant = state.facts.relevant(fp.cls, _env_call(call, step.error))
            if relevant:
                said = salient_line(unwrap(step.error).text)
                return Told(text=env.advice(relevant[0], _env_call(call, step.error), said),
                            by=FACT + relevant[0].id, learned=True)
        asked = room_call(call.tool, call.args, ok=False, error=step.error)
        answered = on_failure(state.book, fp, asked, now, classes=self._classes,
                              family=harnesses.tool_family, read_tool=read_tool_of(call.tool))
        advice = answered.advice
        text = advice_text(harness, call.tool, advice)
        rewrite = told_call(asked, advice) if advice.get("apply") is True else None
        if rewrite is None and fp.cls in path_hints.MISSING_CLASSES and known_paths:
            missing = path_hints.missing_path(step.error, call.path)
            found = path_hints.hint(missing, known_paths) if missing else ""
            if found:
                text = f"{text}\n{found}" if text else f"slmactor: {found}"
        rule = answered.rule
        return Told(rewrite, text, rule.id if rule is not None else "",
                    learned=rule is not None and not rule.seeded)

    def observe(self, state: Project, told: Told, ok: bool, now: float) -> None:
        if told.by.startswith(FACT):
            state.facts.observe(told.by[len(FACT):], ok, now)
        elif told.by:
            state.book.observe(told.by, ok, now)

    def learn(self, state: Project, fp: Fingerprint, failed: Step, fix: Step | None, now: float,
              run: str) -> tuple[str, ...]:
        from slmactor.logic.evolve.answer import learn_resolved

        if fix is None:
            # What a session that never got past a failure teaches: a do-not-retry (a quota
            # that is gone, a user who said no), as reflection learns it from the report.
            rule = tr.learn(state.book, fp, failed.call, None, now, run=run)
            return (rule.id,) if rule is not None else ()
        fact = state.facts.learn(fp.cls, _env_call(failed.call, failed.error), _env_call(fix.call), now)
        _name, rule = learn_resolved(
            state.book, fp, room_call(failed.call.tool, failed.call.args, ok=False, error=failed.error),
            room_call(fix.call.tool, fix.call.args), now, run)
        return tuple(x for x in (rule.id if rule is not None else "",
                                 FACT + fact.id if fact is not None else "") if x)

    def read_tools(self, tool: str) -> list[str]:
        from slmactor import harnesses

        names = [t for t, f in harnesses.room_of(tool).families.items() if f == "read"]
        return names or ["ws_read"]  # a tool no room has: slmcode's read tool, as trajectories name it

    def shipped_transform(self, failed: tr.Call, fix: tr.Call) -> str:
        from slmactor.logic.evolve.transforms import infer_between

        if failed.tool != fix.tool or not failed.args or not fix.args:
            return ""
        return infer_between(dict(failed.args), dict(fix.args)) or ""  # both in the shared words

    def named_paths(self, call: tr.Call) -> list[str]:
        return named_paths(call)


def _env_call(call: tr.Call, error: str = "") -> Any:
    from slmactor.logic.evolve import environment as env

    return env.Call(call.tool, call.command, dict(call.args), error=error)


def _loads(text: Any) -> dict[str, Any] | None:
    """JSON text of a call's arguments as an object (None when it is none)."""
    return tr.parse_args(text) if isinstance(text, str) else None
