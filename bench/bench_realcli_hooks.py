"""What our hooks cost inside the real Claude Code CLI: whole `claude -p` sessions of 8 and of 30
tool calls against an instant scripted model (tests/realcli), with our hooks installed by
`slmactor hook install`, against the floor measured in the same run — the same hook entries (same
events, matchers, async flags) running `cat >/dev/null`, which is Claude Code's own cost of
spawning a hook — and, for scale, no hooks at all.

The project holds a pre-flight table with trigger words none of the session's calls names
(`pnpm`, `python3`): the realistic case of a project where something was learned, and a call no
rule speaks of — the gate then reads the table and answers neutrally, without Python.

Rows (medians over interleaved rounds: per round, each session size, each kind once):
* per-session wall time with our hooks / with the floor hooks, for 8 and for 30 calls
  (target ≤ 1.2×);
* per tool call: the extra of our hooks over no hooks, and of the floor over no hooks;
* the session-end delay: from the CLI's final `result` event to its exit, ours vs the floor;
* `PreToolUse` on a Bash call no rule matches: the whole hook process as Claude Code starts it
  (`sh -c <the installed command>`, the payload on stdin), ours vs `cat >/dev/null`, p50
  difference (target ≤ 5 ms), measured interleaved outside the CLI.

Needs the pinned CLI (`tests/realcli/install.sh`); without it the rows say so and are skipped.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

Row = dict[str, Any]
MODEL = "claude-sonnet-4-5"
SIZES = (8, 30)
#: Words no call of the sessions names: a table is there, no row matches.
UNMATCHED_KEYS = "pnpm\npython3\n"
GATE_ROUNDS = 41


def _scenario(calc: str, calls: int) -> list[Any]:
    from tests.realcli.models import Call, Turn

    turns: list[Any] = [Turn(calls=(Call("Read", {"file_path": calc}),))]
    turns += [Turn(calls=(Call("Bash", {"command": f"echo step {n}", "description": "a step"}),))
              for n in range(calls - 1)]
    return turns


def _floor_settings(ours: dict[str, Any]) -> dict[str, Any]:
    """Our settings with every hook command replaced by `cat >/dev/null`."""
    doc: dict[str, Any] = json.loads(json.dumps(ours))
    for groups in doc.get("hooks", {}).values():
        for group in groups:
            for handler in group.get("hooks", []):
                handler["command"] = "cat >/dev/null"
    return doc


def _session(world: Any, claude: Path, settings: dict[str, Any] | None,
             calls: int) -> tuple[float, float]:
    """(wall seconds, seconds from the `result` event to exit) of one session."""
    from tests.realcli.models import serving

    path = world.project / ".claude" / "settings.json"
    if settings is None:
        path.unlink(missing_ok=True)
    else:
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(settings))
    with serving("anthropic", _scenario(str(world.project / "calc.py"), calls), MODEL) as server:
        env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-scripted-offline",
               "CLAUDE_CONFIG_DIR": str(world.home / ".claude"), "DISABLE_TELEMETRY": "1",
               "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "IS_SANDBOX": "1"}
        started = time.monotonic()
        done = world.run([str(claude), "-p", "take the steps", "--model", MODEL, "--output-format",
                          "stream-json", "--verbose", "--dangerously-skip-permissions"],
                         extra_env=env, timeout=180)
        ended = time.monotonic()
        if done.returncode != 0 or server.scenario.consumed != calls:
            raise RuntimeError(f"claude session failed ({done.returncode}): {done.stderr[-500:]}")
    # stream-json carries the session's duration as the CLI measured it up to its result.
    result = [json.loads(line) for line in done.stdout.splitlines() if '"type":"result"' in line]
    inside = float(result[-1].get("duration_ms", 0)) / 1000 if result else 0.0
    wall = ended - started
    return wall, max(wall - inside, 0.0)


def _bash_pre_command(settings: dict[str, Any]) -> str | None:
    """The command our settings run for `PreToolUse` on a Bash call (None: none matches Bash)."""
    import re

    for group in settings.get("hooks", {}).get("PreToolUse", []):
        matcher = str(group.get("matcher", ""))
        if matcher in ("", "*") or re.fullmatch(matcher, "Bash"):
            for handler in group.get("hooks", []):
                return str(handler.get("command", ""))
    return None


def _hook_process_ms(command: str, payload: bytes, cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(["/bin/sh", "-c", command], input=payload, cwd=cwd, env=env,
                   capture_output=True, check=False, timeout=30)
    return (time.perf_counter() - started) * 1000


def _gate_rows(world: Any, ours: dict[str, Any], rounds: int) -> list[Row]:
    command = _bash_pre_command(ours)
    if command is None:
        return [{"name": "PreToolUse on a Bash call: no hook of ours matches Bash", "value": None,
                 "unit": "", "floor": None, "ratio": None, "target": "≤ 5 ms over cat"}]
    payload = json.dumps({
        "session_id": "bench", "transcript_path": None, "cwd": str(world.project),
        "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_use_id": "t1",
        "tool_input": {"command": "echo step 1", "description": "a step"}}).encode()
    env = {**world.env, "CLAUDE_PROJECT_DIR": str(world.project)}
    ours_ms: list[float] = []
    cat_ms: list[float] = []
    for _ in range(rounds):
        ours_ms.append(_hook_process_ms(command, payload, world.project, env))
        cat_ms.append(_hook_process_ms("cat >/dev/null", payload, world.project, env))
    p50, floor = statistics.median(ours_ms), statistics.median(cat_ms)
    return [{"name": "PreToolUse, a Bash call no rule matches: our hook process p50", "value": p50,
             "unit": "ms", "floor": floor, "floor_name": "cat >/dev/null p50", "ratio": p50 / floor,
             "target": "≤ 5 ms over cat"},
            {"name": "PreToolUse over the cat hook (p50 difference)", "value": p50 - floor,
             "unit": "ms", "floor": None, "ratio": None, "target": "≤ 5 ms"}]


def run(quick: bool) -> list[Row]:
    import pytest

    try:
        from tests.realcli.harness import binary, private_world, write_calc
        claude = binary("claude")
    except (ImportError, pytest.skip.Exception) as exc:
        return [{"name": f"real Claude Code CLI not available: {exc}", "value": None, "unit": "",
                 "floor": None, "ratio": None, "target": "skipped"}]
    rounds = 3 if quick else 7
    # The hook processes import slmactor as an install does: from bytecode (pip compiles it at
    # install). A checkout run with PYTHONDONTWRITEBYTECODE=1 never writes it, and every hook
    # would compile the modules changed since from source.
    import compileall

    import slmactor

    compileall.compile_dir(str(Path(slmactor.__file__).parent), quiet=1)
    kinds = ("ours", "floor", "none")
    samples: dict[tuple[int, str], list[tuple[float, float]]] = {
        (n, k): [] for n in SIZES for k in kinds}
    with private_world() as world:
        write_calc(world.project)
        keys = world.project / ".slmcode" / "evolve" / "preflight.keys"
        keys.parent.mkdir(parents=True, exist_ok=True)
        keys.write_text(UNMATCHED_KEYS)
        world.install_hooks("claude")
        ours = json.loads((world.project / ".claude" / "settings.json").read_text())
        floor = _floor_settings(ours)
        (world.home / ".claude").mkdir(exist_ok=True)
        _session(world, claude, ours, SIZES[0])  # warm caches (bytecode, the CLI's own)
        for _ in range(rounds):
            for n in SIZES:
                for name, settings in (("ours", ours), ("floor", floor), ("none", None)):
                    samples[(n, name)].append(_session(world, claude, settings, n))
        gate = _gate_rows(world, ours, 11 if quick else GATE_ROUNDS)
    rows: list[Row] = []
    for n in SIZES:
        wall = {k: statistics.median(w for w, _ in samples[(n, k)]) for k in kinds}
        tail = {k: statistics.median(t for _, t in samples[(n, k)]) for k in kinds}
        per_call = {k: (wall[k] - wall["none"]) / n * 1000 for k in ("ours", "floor")}
        rows += [
            {"name": f"claude -p, {n} tool calls: wall with our hooks", "value": wall["ours"] * 1000,
             "unit": "ms", "floor": wall["floor"] * 1000,
             "floor_name": "same hooks running cat >/dev/null",
             "ratio": wall["ours"] / wall["floor"], "target": "≤ 1.2×"},
            {"name": f"{n} calls, per tool call: our hooks over no hooks", "value": per_call["ours"],
             "unit": "ms", "floor": per_call["floor"], "floor_name": "cat hooks over no hooks",
             "ratio": per_call["ours"] / per_call["floor"] if per_call["floor"] > 0 else None,
             "target": "info"},
            {"name": f"{n} calls, session end: result event to exit, our hooks",
             "value": tail["ours"] * 1000, "unit": "ms", "floor": tail["floor"] * 1000,
             "floor_name": "cat hooks",
             "ratio": tail["ours"] / tail["floor"] if tail["floor"] > 0 else None,
             "target": "info"},
            {"name": f"claude -p, {n} tool calls, without hooks (scale)",
             "value": wall["none"] * 1000, "unit": "ms", "floor": None, "ratio": None,
             "target": "info"},
        ]
    return rows + gate
