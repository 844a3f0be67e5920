"""`slmactor demo`: watch the loop learn, on any machine, with no configuration.

Creates a temporary project and user store, starts a private daemon on a temporary runtime dir
(your own daemon and memory are never touched), and replays the bundled trajectories — recorded
small-model runs in several languages with recurring edit, format, JSON, line-number and
whitespace failures, and some that no rule can fix — through the real client, twice: pass 1
learns, pass 2 repairs from memory. Then it prints the compare table with its verdict, the rules
it learned, `evolve why edit_format`, and the memory block a worker would now receive. Everything
is removed afterwards (`--keep` leaves the directory for inspection).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

from slmactor.cli.context import EXIT_OK, EXIT_UNREACHABLE, CliContext

RULE_LIMIT = 12


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="replay bundled runs twice and show what the loop learned")
    p.add_argument("--keep", action="store_true", help="keep the temporary project and store")
    p.set_defaults(func=cmd_demo)


def bundled_trajectories() -> Path:
    return Path(str(resources.files("slmactor") / "demo_data" / "trajectories"))


def _rules_text(rules: Any) -> tuple[list[dict[str, Any]], str]:
    items = rules.get("rules", rules) if isinstance(rules, dict) else rules
    learned = [r for r in items or [] if isinstance(r, dict) and not r.get("seeded")]
    if not learned:
        return [], "  (no new rules)"
    lines = []
    for rule in learned[:RULE_LIMIT]:
        trig = rule.get("trigger") or {}
        repair = rule.get("repair") or {}
        what = repair.get("transform") or repair.get("action") or repair.get("kind", "")
        where = "/".join(x for x in (trig.get("class", ""), trig.get("tool", ""),
                                     trig.get("language", "")) if x)
        conf = rule.get("confidence")
        conf_text = f"{conf * 100:.0f}%" if isinstance(conf, (int, float)) else "?"
        origin = rule.get("origin")
        carried = f", carried over from {origin}" if isinstance(origin, str) and origin else ""
        lines.append(f"  {rule.get('id', '?')}  {where:<44} → {repair.get('kind', '')}: "
                     f"{what}  (confidence {conf_text}, {rule.get('successes', 0)} ok / "
                     f"{rule.get('failures', 0)} failed{carried})")
    if len(learned) > RULE_LIMIT:
        lines.append(f"  …and {len(learned) - RULE_LIMIT} more")
    return learned, "\n".join(lines)


def _text(result: Any, *keys: str) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        for key in keys:
            value = result.get(key)
            if isinstance(value, str) and value.strip():
                return value
    return ""


def _optional(client: Any, message: Any) -> Any:
    """An answer for the closing sections; a missing one is shown, not fatal."""
    from slmactor.client import RequestFailed

    try:
        return client.ask(message)
    except RequestFailed as exc:
        return f"(unavailable: {exc})"


def cmd_demo(ctx: CliContext) -> int:
    from slmactor.client import DaemonUnavailable, RequestFailed
    from slmactor.stores.trajectories import load_trajectories
    from slmactor.testing import DaemonFailedToStart, spawn_daemon, stop_quietly

    started = time.monotonic()
    trajectories, _skipped = load_trajectories(bundled_trajectories())
    base = Path(tempfile.mkdtemp(prefix="slmactor-demo-", dir="/tmp"))
    say = (lambda *_a: None) if ctx.json else print
    try:
        daemon = spawn_daemon(base=base, debug_hooks=False)
    except DaemonFailedToStart as exc:
        shutil.rmtree(base, ignore_errors=True)
        return ctx.fail(f"demo: the private daemon did not start: {exc}", EXIT_UNREACHABLE)
    try:
        return _run(ctx, daemon, trajectories, say, started)
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


def _run(ctx: CliContext, daemon: Any, trajectories: list[Any], say: Any,
         started: float) -> int:
    from slmactor.cli.loop.replay_driver import learning_replay
    from slmactor.protocol.messages import (
        EvolveRules,
        MemoryBlock,
        MemoryDistill,
        MetricsCompare,
        PolicyWhy,
    )

    say(f"slmactor demo — private daemon pid {daemon.pid}, project {daemon.project}\n")
    with daemon.client(timeout=30.0, retries=1) as client:
        say(f"Pass 1: replaying {len(trajectories)} recorded runs with the loop on (learning)…")
        first = learning_replay(client, trajectories, "pass-1")
        say(first.render())
        say("Pass 2: the same runs again — repairs now come from memory…")
        second = learning_replay(client, trajectories, "pass-2")
        say(second.render())
        cmp = client.ask(MetricsCompare(baseline_label="pass-1", current_label="pass-2"))
        last = trajectories[-1] if trajectories else None
        model, language = (last.model, last.language) if last else ("", "")
        rules = _optional(client, EvolveRules())
        why = _optional(client, PolicyWhy(decision="edit_format", model=model,
                                          language=language))
        # Distil every episode of both passes first (passes run in the background at most every
        # 2 s): the block shown is then what the whole replay taught, however fast it ran.
        _optional(client, MemoryDistill(wait=True))
        block = _optional(client, MemoryBlock(role="worker", query=last.query if last else "",
                                              budget=600, language=language, model=model))
    learned, rules_text = _rules_text(rules)
    block_text = _text(block, "text", "block") or "(empty)"
    why_text = _text(why, "text", "why")
    seconds = time.monotonic() - started
    say(cmp["text"])
    say("Rules learned (pass 1 taught them; pass 2 applied them):")
    say(rules_text + "\n")
    say("$ slmactor evolve why edit_format")
    say(why_text.rstrip() + "\n")
    say("The memory block a worker now receives:")
    say(block_text.rstrip() + "\n")
    say(f"Pass 2: {second.tally.memory} failure(s) fixed from memory, "
        f"{second.tally.wrong_repairs} wrong repair(s), {seconds:.1f}s in all.")
    if ctx.json:
        ctx.emit({
            "verdict": cmp.get("verdict"), "improved": cmp.get("improved"),
            "pass_1": first.to_dict(), "pass_2": second.to_dict(), "compare": cmp,
            "learned_rules": learned, "why_edit_format": why_text,
            "memory_block": block_text, "seconds": round(seconds, 2),
            # With --keep: where the runs stay (a daemon on this home and project reads them).
            **({"home": str(daemon.home), "project": str(daemon.project)} if ctx.args.keep else {}),
        })
    return EXIT_OK
