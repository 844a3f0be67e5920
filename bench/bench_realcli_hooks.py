"""What our hooks cost inside the real Claude Code CLI: whole `claude -p` sessions of N tool calls
against an instant scripted model (tests/realcli), with our hooks installed by `slmactor hook
install`, against the floor measured in the same run — the same hook entries (same events,
matchers, async flags) running `cat >/dev/null`, which is Claude Code's own cost of spawning a
hook — and, for scale, no hooks at all.

Rows (medians over interleaved rounds, one session of each kind per round):
* per-session wall time with our hooks / with the floor hooks (target ≤ 1.5×);
* per tool call: the extra of our hooks over no hooks, and of the floor over no hooks;
* the session-end delay: from the CLI's final `result` event to its exit, ours vs the floor.

Needs the pinned CLI (`tests/realcli/install.sh`); without it the rows say so and are skipped.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

Row = dict[str, Any]
MODEL = "claude-sonnet-4-5"
CALLS = 8


def _scenario(calc: str) -> list[Any]:
    from tests.realcli.models import Call, Turn

    turns: list[Any] = [Turn(calls=(Call("Read", {"file_path": calc}),))]
    turns += [Turn(calls=(Call("Bash", {"command": f"echo step {n}", "description": "a step"}),))
              for n in range(CALLS - 1)]
    return turns


def _floor_settings(ours: dict[str, Any]) -> dict[str, Any]:
    """Our settings with every hook command replaced by `cat >/dev/null`."""
    doc: dict[str, Any] = json.loads(json.dumps(ours))
    for groups in doc.get("hooks", {}).values():
        for group in groups:
            for handler in group.get("hooks", []):
                handler["command"] = "cat >/dev/null"
    return doc


def _session(world: Any, claude: Path, settings: dict[str, Any] | None) -> tuple[float, float]:
    """(wall seconds, seconds from the `result` event to exit) of one session."""
    from tests.realcli.models import serving

    path = world.project / ".claude" / "settings.json"
    if settings is None:
        path.unlink(missing_ok=True)
    else:
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(settings))
    with serving("anthropic", _scenario(str(world.project / "calc.py")), MODEL) as server:
        env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-scripted-offline",
               "CLAUDE_CONFIG_DIR": str(world.home / ".claude"), "DISABLE_TELEMETRY": "1",
               "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "IS_SANDBOX": "1"}
        started = time.monotonic()
        done = world.run([str(claude), "-p", "take the steps", "--model", MODEL, "--output-format",
                          "stream-json", "--verbose", "--dangerously-skip-permissions"],
                         extra_env=env, timeout=120)
        ended = time.monotonic()
        if done.returncode != 0 or server.scenario.consumed != CALLS:
            raise RuntimeError(f"claude session failed ({done.returncode}): {done.stderr[-500:]}")
    # stream-json carries the session's duration as the CLI measured it up to its result.
    result = [json.loads(line) for line in done.stdout.splitlines() if '"type":"result"' in line]
    inside = float(result[-1].get("duration_ms", 0)) / 1000 if result else 0.0
    wall = ended - started
    return wall, max(wall - inside, 0.0)


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
    samples: dict[str, list[tuple[float, float]]] = {"ours": [], "floor": [], "none": []}
    with private_world() as world:
        write_calc(world.project)
        world.install_hooks("claude")
        ours = json.loads((world.project / ".claude" / "settings.json").read_text())
        floor = _floor_settings(ours)
        (world.home / ".claude").mkdir(exist_ok=True)
        _session(world, claude, ours)  # warm caches (bytecode, the CLI's own)
        for _ in range(rounds):
            for name, settings in (("ours", ours), ("floor", floor), ("none", None)):
                samples[name].append(_session(world, claude, settings))
    wall = {k: statistics.median(w for w, _ in v) for k, v in samples.items()}
    tail = {k: statistics.median(t for _, t in v) for k, v in samples.items()}
    per_call = {k: (wall[k] - wall["none"]) / CALLS * 1000 for k in ("ours", "floor")}
    return [
        {"name": f"claude -p, {CALLS} tool calls: wall with our hooks", "value": wall["ours"] * 1000, "unit": "ms",
         "floor": wall["floor"] * 1000, "floor_name": "same hooks running cat >/dev/null",
         "ratio": wall["ours"] / wall["floor"], "target": "≤ 1.5×"},
        {"name": "per tool call: our hooks over no hooks", "value": per_call["ours"], "unit": "ms",
         "floor": per_call["floor"], "floor_name": "cat hooks over no hooks",
         "ratio": per_call["ours"] / per_call["floor"] if per_call["floor"] > 0 else None, "target": "info"},
        {"name": "session end: result event to exit, our hooks", "value": tail["ours"] * 1000, "unit": "ms",
         "floor": tail["floor"] * 1000, "floor_name": "cat hooks",
         "ratio": tail["ours"] / tail["floor"] if tail["floor"] > 0 else None, "target": "info"},
        {"name": "claude -p without hooks (scale)", "value": wall["none"] * 1000, "unit": "ms", "floor": None,
         "ratio": None, "target": "info"},
    ]
