"""`slmactor demo`: what memory would have done for one project, from its real histories.

Four sessions of one project (`slmactor/demo_data/histories/`: Claude Code 2.1.328 transcripts, a
Codex CLI 0.169.0 rollout and a Gemini CLI 0.61.0 chat record, written in those harnesses' own
formats; its README names them) hold the failures real sessions have: the wrong interpreter, a
server that never returns, a read over the harness's limit, a missing path, an edit whose text
carries the read's line-number gutter. The demo

1. imports them into a private daemon (a temporary runtime dir, home and project: your own daemon
   and memory are never touched) through the same loop as `slmactor import sessions`;
2. replays them in time order with learning on — the engine of `slmactor metrics replay PATH…
   --learn` — and prints, at each failure memory answered, what it would have rewritten before
   the call or told the model, against the call that got the session past it;
3. prints the per-harness figures and the verdict.

Everything is removed afterwards (`--keep` leaves the directory for inspection).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from slmactor.cli.context import EXIT_OK, EXIT_UNREACHABLE, CliContext

#: The longest advice text shown in full (longer: cut, marked with …).
SHOWN = 420


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="import and replay a project's real histories: what memory "
                                    "would have repaired before the call and told")
    p.add_argument("--keep", action="store_true", help="keep the temporary project and store")
    p.set_defaults(func=cmd_demo)


def bundled_histories() -> Path:
    return Path(str(resources.files("slmactor") / "demo_data" / "histories"))


def cmd_demo(ctx: CliContext) -> int:
    from slmactor.client import DaemonUnavailable, RequestFailed
    from slmactor.testing import DaemonFailedToStart, spawn_daemon, stop_quietly

    started = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix="slmactor-demo-", dir="/tmp"))
    say = (lambda *_a: None) if ctx.json else print
    try:
        daemon = spawn_daemon(base=base, debug_hooks=False)
    except DaemonFailedToStart as exc:
        shutil.rmtree(base, ignore_errors=True)
        return ctx.fail(f"demo: the private daemon did not start: {exc}", EXIT_UNREACHABLE)
    try:
        return _run(ctx, daemon, base, say, started)
    except (DaemonUnavailable, RequestFailed) as exc:
        return ctx.fail(f"demo: the private daemon failed: {exc}\n{daemon.log()[-2000:]}",
                        EXIT_UNREACHABLE)
    finally:
        if ctx.args.keep:
            daemon.stop()
            say(f"kept {base}")
        else:
            stop_quietly(daemon)
            shutil.rmtree(base, ignore_errors=True)


def _import(daemon: Any, base: Path, histories: Path) -> Any:
    """The histories into the private daemon's project, by `import sessions`' own loop (its
    state file in the demo's directory, never the user's)."""
    from slmactor import harnesses
    from slmactor.cli.sessions.files import collect
    from slmactor.cli.sessions.places import Places
    from slmactor.cli.sessions.run import Options, Refused, Tally, import_sessions
    from slmactor.cli.sessions.state import STATE_NAME, ImportState
    from slmactor.client import RequestFailed
    from slmactor.protocol.messages import RunFinish

    tally = Tally()
    items = collect([histories], tally.skip_file)
    state = ImportState(base / STATE_NAME, write=True)
    project = str(daemon.project)
    # The sessions ran in 2026: kept whatever today's date (no episode age limit here).
    opts = Options(project=project, max_age_days=None, keep_old=True, now=time.time())
    with daemon.client(timeout=60.0, retries=1) as client:
        def send(report: dict[str, Any], where: str) -> dict[str, Any]:
            try:
                reply = client.ask(RunFinish(report=report, project=where, wait=True))
            except RequestFailed as exc:
                raise Refused(str(exc)) from None
            return reply if isinstance(reply, dict) else {}

        return import_sessions(items, list(harnesses.every()), state, opts, send=send,
                               places=Places(), tally=tally)


def _title(harness: str) -> str:
    """What people call a harness (its room's title)."""
    from slmactor import harnesses

    room = harnesses.find(harness)
    return room.title if room is not None else harness


def _day(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d") if at else "?"


def _call_words(call: Any) -> str:
    """A call as the demo shows it: its command, or its tool and file; the settings it was
    sent with; an edit's text to replace (the part a gutter spoils)."""
    import json

    from slmactor.logic.evolve import typed_repairs as tr
    from slmactor.logic.failures import call as words

    # The replay's calls speak the shared words (`logic/failures/call.SHARED`).
    quiet = {"description", "yield_time_ms", words.PATH, words.COMMAND, words.NEW, words.OLD,
             words.REPLACE_ALL}
    settings = ", ".join(f"{k}: {json.dumps(v)}" for k, v in call.args.items() if k not in quiet)
    if call.command:
        shown = f"`{tr.norm_command(call.command)}`"
    else:
        where = call.path.rsplit("/shop/", 1)[-1] if call.path else ""
        shown = f"{call.tool} {where}".strip()
    old = call.args.get(words.OLD)
    if isinstance(old, str):
        shown += f" replacing {json.dumps(old if len(old) <= 48 else old[:47] + '…')}"
    return shown + (f" ({settings})" if settings else "")


def _first_line(text: str) -> str:
    from slmactor.logic.failures.fingerprint import salient_line
    from slmactor.logic.failures.unwrap import unwrap

    line = salient_line(unwrap(text).text).strip()
    return line if len(line) <= 110 else line[:109] + "…"


def failure_lines(failure: Any) -> list[str]:
    """What the demo says of one failure: the call, and what memory would have done."""
    from slmactor.logic.loop.histories.engine import ADVICE, BEFORE, ON_FAILURE

    kind = "again" if failure.repeat else "first time"
    head = (f"  call {failure.index + 1}: {_call_words(failure.call)} failed ({kind}): "
            f"{_first_line(failure.error)}")
    fixed = (f"the session then ran {_call_words(failure.fix)}" if failure.fix is not None
             else "the session never got past it")
    mark = "✓" if failure.right else "✗" if failure.wrong else "–"
    if failure.answer == BEFORE and failure.rewritten is not None:
        said = f"    memory: rewritten before it ran → {_call_words(failure.rewritten)}  {mark} ({fixed})"
        return [head, said]
    if failure.answer == ON_FAILURE and failure.rewritten is not None:
        said = (f"    memory: the repaired call, no model turn → {_call_words(failure.rewritten)}  {mark} "
                f"({fixed})")
        return [head, said]
    if failure.answer == ADVICE:
        text = " ".join(failure.text.split())
        text = text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"
        verdict = "names the fix" if failure.right else "does not name the fix"
        return [head, f"    memory told: \"{text}\"", f"    {mark} {verdict} ({fixed})"]
    return [head, f"    memory: nothing to say yet ({fixed})"]


def _run(ctx: CliContext, daemon: Any, base: Path, shown: Any, started: float) -> int:
    from slmactor.cli.loop.histories import ProductMemory, read
    from slmactor.logic.loop.histories.engine import replay
    from slmactor.logic.loop.histories.report import ALL, figures, render, to_dict

    histories = bundled_histories()
    printed: list[str] = []

    def say(*parts: Any) -> None:
        line = " ".join(str(p) for p in parts)
        printed.extend(line.split("\n"))
        shown(line)

    say(f"slmactor demo — private daemon pid {daemon.pid}, project {daemon.project}\n")
    found, _tally = read([histories])
    order = sorted(found, key=lambda h: (h.started, h.session))
    say(f"The histories: {len(order)} sessions of one project, in the formats the harnesses write "
        f"({histories}):")
    for h in order:
        failed = sum(1 for s in h.steps if not s.ok)
        say(f"  {_day(h.started)}  {_title(h.harness):<12} session {h.session[:8]}  "
            f"{len(h.steps)} calls, {failed} failed")
    imported = _import(daemon, base, histories)
    say(f"\nImported into the private daemon (`slmactor import sessions`): {imported.new} sessions, "
        f"{imported.calls} calls, {imported.failed_calls} failed.\n")
    result = replay(found, ProductMemory())
    say("Replayed in time order with learning on (`slmactor metrics replay PATH --learn`), "
        "what memory would have done at each failure:")
    for h in order:
        mine = [f for f in result.failures if f.session == h.session]
        if not mine:
            continue
        say(f"\n{_day(h.started)}  {_title(h.harness)}, session {h.session[:8]}")
        for failure in mine:
            for line in failure_lines(failure):
                say(line)
    total = figures(result)[ALL]
    verdict = ("memory would have helped" if total.derivable_right and not total.wrong_rewrites
               else "memory rewrote a call wrongly" if total.wrong_rewrites
               else "memory would not have helped")
    seconds = time.monotonic() - started
    say("\n" + render(result))
    say(f"\nVerdict: {verdict} — {total.repaired_before} failed call(s) rewritten before they ran, "
        f"{total.repaired_on_failure} repaired without a model turn, {total.advice_naming_fix} "
        f"told the fix; {total.wrong_rewrites} wrong rewrite(s). {seconds:.1f}s in all.")
    if ctx.json:
        data = {"verdict": verdict, "lines": printed, "histories": str(histories),
                "sessions": [{"harness": h.harness, "session": h.session, "started": h.started,
                              "calls": len(h.steps), "failed": sum(1 for s in h.steps if not s.ok)}
                             for h in order],
                "imported": {"sessions": imported.new, "calls": imported.calls,
                             "failed_calls": imported.failed_calls},
                "replay": to_dict(result), "seconds": round(seconds, 2),
                **({"home": str(daemon.home), "project": str(daemon.project)} if ctx.args.keep else {})}
        ctx.emit(data)
    return EXIT_OK
