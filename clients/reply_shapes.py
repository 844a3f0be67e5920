"""Generate the reply-shape table of `clients/PROTOCOL.md` (§10) from a real daemon's answers.

    .venv/bin/python clients/reply_shapes.py           # rewrite the table in place
    .venv/bin/python clients/reply_shapes.py --check   # exit 1 if the documented keys drifted

A private daemon (`slmactor.testing.spawn_daemon`) is asked every kind once, in an order that
gives each one something to answer about (a run, an episode, a rule, ...); the shape of each
result — its keys, and one level of nesting — goes between `<!-- replies:begin -->` and
`<!-- replies:end -->`. `tests/protocol/test_reply_shapes.py` asks the same requests and checks
each documented kind's top-level keys. `daemon.stop` and `debug.crash` are documented by hand
(asking them would stop or crash the daemon).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from slmactor.client import Client, RequestFailed
from slmactor.protocol.messages import MESSAGES
from slmactor.testing import spawn_daemon, stop_quietly

DOC = Path(__file__).resolve().parent / "PROTOCOL.md"
_BLOCK = re.compile(r"(<!-- replies:begin -->\n)(.*?)(<!-- replies:end -->)", re.DOTALL)
GUTTER = '{"path": "app.py", "old_str": "  7|     x = 1", "new_str": "  7|     x = 2"}'
FIXED = '{"path": "app.py", "old_str": "    x = 1", "new_str": "    x = 2"}'
#: Answered without asking (asking would stop or crash the daemon).
BY_HAND = {
    "daemon.stop": "`{stopping: bool}` — then the daemon drains and exits",
    "debug.crash": "`{crashing: str}` (debug hooks only, else `FORBIDDEN`); the actor then fails",
}

Sample = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]

#: (kind, request fields) in the order they are asked; a callable gets the answers so far.
SAMPLES: list[tuple[str, Sample]] = [
    ("ping", {}),
    ("status", {}),
    ("run.start", {"run_id": "r1", "task": "fix the parser"}),
    ("record_tool", {"run_id": "r1", "tool": "Edit", "path": "parser.py"}),
    ("focus", {"run_id": "r1", "paths": ["parser.py"]}),
    ("fail", {"run_id": "r1", "key": "k1", "tool": "Bash", "message": "boom"}),
    ("resolve", {"run_id": "r1", "key": "k1", "resolution": "re-ran", "resolved_by": "retry"}),
    ("decide", {"run_id": "r1", "text": "keep the old API"}),
    ("summarize", {"run_id": "r1", "text": "parser fixed, tests next"}),
    ("client.dropped", {"count": 1}),
    ("working.render", {"run_id": "r1"}),
    ("working.snapshot", {"run_id": "r1"}),
    ("working.mirror", {"run_id": "r1"}),
    ("episode.append", {"episode": {"query": "fix the parser", "success": True,
                                    "files": ["parser.py"]}}),
    ("episode.get", lambda seen: {"episode_id": seen["episode.append"]["id"]}),
    ("episode.recent", {"n": 5}),
    ("memory.recall", {"query": "parser", "explain": True}),
    ("memory.block", {"query": "fix the parser", "run_id": "r1", "role": "worker"}),
    ("fact.observe", {"kind": "command", "subject": "tests", "text": "run pytest -q"}),
    ("fact.refute", {"kind": "command", "subject": "tests"}),
    ("fact.list", {}),
    ("lesson.add", {"lessons": [{"task_id": "t1", "kind": "pitfall", "text": "run ruff first"}]}),
    ("lessons.render", {"query": "ruff"}),
    ("procedure.observe", {"topic": "edit_format", "option": "diff", "model": "qwen2.5-coder:7b",
                           "language": "python", "ok": True}),
    ("procedure.best", {"topic": "edit_format", "model": "qwen2.5-coder:7b",
                        "language": "python"}),
    ("latency.observe", {"role": "worker", "model": "qwen2.5-coder:7b", "ms": 850.0}),
    ("latency.seed", {"model": "llama3:8b", "seeds": {"worker": 900.0}}),
    ("evolve.fingerprint", {"tool": "Edit", "message": "old_str not found in app.py"}),
    ("evolve.on_failure", {"run_id": "r1", "tool": "Edit", "message": "old_str not found in app.py",
                           "args": GUTTER}),
    ("evolve.resolved", {"run_id": "r1", "tool": "Edit", "message": "old_str not found in app.py",
                         "failed_args": GUTTER, "fixed_args": FIXED}),
    ("evolve.observe", lambda seen: {"rule_id": seen["evolve.resolved"]["learned"]["id"],
                                     "ok": True}),
    ("evolve.rules", {}),
    ("evolve.learn", {"candidates": []}),
    ("policy.choose", {"decision": "edit_format", "arms": ["diff", "whole"]}),
    ("policy.update", {"decision": "edit_format", "arm": "diff", "outcome": {"applied": True}}),
    ("policy.why", {"decision": "edit_format"}),
    ("calibration.report", {"profile": {"model": "qwen2.5-coder:7b", "endpoint": "local",
                                        "p50_ms": 800.0, "p95_ms": 1500.0, "decode_tps": 40.0,
                                        "context_window": 32768},
                            "roles": {"worker": 400}}),
    ("calibration.get", {}),
    ("budgets.record", {"phase": "build", "rounds": 3, "n_files": 2, "task": "fix the parser"}),
    ("run.finish", {"report": {"run_id": "r1", "planned_tasks": 1, "completed_tasks": 1},
                    "run_id": "r1", "wait": True}),
    ("evolve.regressions", {}),
    ("metrics.record", {"run": {"run_id": "m1", "tasks": 1, "tasks_passed": 1}}),
    ("metrics.show", {"last": 5}),
    ("metrics.compare", {"n": 1}),
    ("graph.stats", {}),
    ("graph.file", {"path": "app.py"}),
    ("graph.neighbors", {"node": "file:app.py"}),
    ("graph.walk", {"node": "file:app.py"}),
    ("graph.backfill", {}),
    ("graph.prune", {}),
    ("memory.distill", {"wait": True}),
    ("memory.prune", {}),
    ("episode.prune", {}),
    ("graph.forget", {}),
    ("policy.forget", {}),
    ("evolve.forget", {}),
    ("episode.forget", {}),
    ("memory.forget", {"scope": "working"}),
    ("run.reset", {"run_id": "r1"}),
    ("evolve.reset", {}),
]


def shape(value: Any, depth: int = 0) -> str:
    """A compact type sketch: maps show their keys (two levels), lists their first item."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if value is None:
        return "nil"
    if isinstance(value, list):
        return f"[{shape(value[0], depth + 1)}]" if value else "[…]"
    if isinstance(value, dict):
        if depth >= 2 or not value:
            return "{…}" if value else "{}"
        return "{" + ", ".join(f"{k}: {shape(v, depth + 1)}" for k, v in value.items()) + "}"
    return type(value).__name__


def ask_all(client: Client) -> Iterator[tuple[str, Any]]:
    """(kind, result or RequestFailed) for every sample, then every kind without one."""
    seen: dict[str, Any] = {}
    asked = {kind for kind, _ in SAMPLES} | set(BY_HAND)
    extra: list[tuple[str, Sample]] = [(k, {}) for k in sorted(MESSAGES) if k not in asked]
    for kind, sample in [*SAMPLES, *extra]:
        fields = sample(seen) if callable(sample) else dict(sample)
        try:
            result: Any = client.ask_raw(kind, fields, timeout=30.0, retries=1)
        except RequestFailed as exc:
            result = exc
        seen[kind] = result
        yield kind, result


def render(answers: list[tuple[str, Any]]) -> str:
    lines = ["| kind | result |", "|---|---|"]
    rows = {kind: f"`{shape(result)}`" if not isinstance(result, RequestFailed)
            else f"error `{result}`"[:300] for kind, result in answers}
    rows.update(BY_HAND)
    order = sorted(rows, key=lambda k: (list(MESSAGES).index(k) if k in MESSAGES else 999))
    lines.extend(f"| `{kind}` | {rows[kind].replace('|', '/')} |" for kind in order)
    return "\n".join(lines) + "\n"


def top_keys(doc: str) -> dict[str, list[str]]:
    """Each documented kind's top-level result keys (the test compares these)."""
    block = _BLOCK.search(doc)
    if block is None:
        raise ValueError("PROTOCOL.md lacks the replies block")
    out: dict[str, list[str]] = {}
    for match in re.finditer(r"^\| `([\w.]+)` \| `\{(.*)\}` \|$", block.group(2), re.MULTILINE):
        depth, key, keys = 0, "", []
        for ch in match.group(2):
            if ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
            if depth == 0 and ch == ",":
                keys.append(key.split(":")[0].strip())
                key = ""
            else:
                key += ch
        if key.strip():
            keys.append(key.split(":")[0].strip())
        out[match.group(1)] = keys
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail if documented keys drifted")
    args = parser.parse_args(argv)
    daemon = spawn_daemon()
    try:
        with daemon.client(timeout=30.0) as client:
            answers = list(ask_all(client))
    finally:
        stop_quietly(daemon)
    current = DOC.read_text(encoding="utf-8")
    table = render(answers)
    if args.check:
        fresh = top_keys(f"<!-- replies:begin -->\n{table}<!-- replies:end -->")
        if top_keys(current) != {k: v for k, v in fresh.items() if k in top_keys(current)}:
            print(f"{DOC}: reply shapes drifted: run python clients/reply_shapes.py",
                  file=sys.stderr)
            return 1
        return 0
    updated = _BLOCK.sub(lambda m: m.group(1) + table + m.group(3), current)
    if updated != current:
        DOC.write_text(updated, encoding="utf-8")
        print(f"updated {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
