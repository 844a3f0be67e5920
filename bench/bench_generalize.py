"""Learning that carries over: the learning replay of the cross-language sets.

`tests/fixtures/replay_xlang/generate.py` writes, for a seed, trajectories in which every failure
kind (five line-number formats, trailing whitespace, fences, JSON slips, replace-all, truncated
JSON, ambiguous edits that need context, stale reads) first appears in one language and repeats
in others — in Claude Code's vocabulary, in Gemini CLI's (`replace`, `allow_multiple`), in
Codex CLI's (`apply_patch` envelopes: only the kinds a patch can meet) and in the bundled one.
Each set is replayed
with learning on, against a real daemon, in a project of its own. Measured per set:

* repeats fixed from memory — 2nd and later occurrences of a kind group (the transform that
  repairs it; every line-number format is one group) fixed without a model, target ≥ 0.90;
* wrong repairs (a confident repair other than the recorded fix), target 0;
* truncated calls answered with a repair to apply, target 0.

    .venv/bin/python -m bench generalize [--quick]      (quick: seed 1 only)
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from tests.fixtures.replay_xlang.generate import GROUP, write

SEEDS = (1, 2, 3)
VOCABULARIES = ("claude", "gemini", "bundled", "codex")


def measure(client: Any, directory: Path, label: str) -> dict[str, Any]:
    """Replay the set in `directory` through `client`; the figures of the module docstring."""
    from slmactor import harnesses
    from slmactor.cli.loop.replay_driver import learning_replay
    from slmactor.stores.trajectories import load_trajectories

    trajectories, skipped = load_trajectories(directory, harnesses.read_trajectory)
    assert not skipped, skipped
    kinds: dict[tuple[str, int], str] = {}
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for position, step in enumerate(data["steps"]):
            if "failure_kind" in step:
                kinds[(data["id"], position)] = step["failure_kind"]
    result = learning_replay(client, trajectories, label)
    seen: set[str] = set()
    repeats = from_memory = truncated_applied = 0
    by_kind: dict[str, list[int]] = {}
    for step in result.steps:
        kind = kinds[(step.trajectory, step.step)]
        group = GROUP.get(kind)
        truncated_applied += int(kind == "truncated_json" and step.applied)
        if group is None:
            continue
        if group in seen:
            repeats += 1
            from_memory += int(step.outcome == "memory")
            counts = by_kind.setdefault(kind, [0, 0])
            counts[0] += int(step.outcome == "memory")
            counts[1] += 1
        seen.add(group)
    return {"failures": result.tally.failures, "repeats": repeats, "repeats_from_memory": from_memory,
            "share": from_memory / repeats if repeats else None,
            "wrong_repairs": result.tally.wrong_repairs, "truncated_applied": truncated_applied,
            "tally_share": result.tally.repeat_share,
            "tally_repeats": f"{result.tally.repeat_from_memory}/{result.tally.repeat_failures}",
            "by_kind": by_kind}


def run(quick: bool) -> list[dict[str, Any]]:
    from slmactor.testing import spawn_daemon, stop_quietly

    rows: list[dict[str, Any]] = []
    daemon = spawn_daemon(debug_hooks=False)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for seed in SEEDS[:1] if quick else SEEDS:
                for vocabulary in VOCABULARIES:
                    directory = Path(tmp) / f"{vocabulary}-{seed}"
                    write(seed, vocabulary, directory)
                    project = daemon.project / f"{vocabulary}-{seed}"
                    project.mkdir()
                    with daemon.client(project=project, timeout=60) as client:
                        got = measure(client, directory, f"{vocabulary}{seed}")
                    name = f"seed {seed}, {vocabulary}: repeats fixed from memory"
                    rows.append({"name": name, "value": got["share"],
                                 "unit": f"{got['repeats_from_memory']}/{got['repeats']}",
                                 "floor": None, "floor_name": "", "ratio": None, "target": "≥ 0.90"})
                    rows.append({"name": f"seed {seed}, {vocabulary}: same, as metrics replay counts",
                                 "value": got["tally_share"], "unit": got["tally_repeats"],
                                 "floor": None, "floor_name": "", "ratio": None,
                                 "target": "≥ 0.90"})
                    rows.append({"name": f"seed {seed}, {vocabulary}: wrong repairs",
                                 "value": got["wrong_repairs"], "unit": "count", "floor": None,
                                 "floor_name": "", "ratio": None, "target": "0"})
                    rows.append({"name": f"seed {seed}, {vocabulary}: truncated calls applied",
                                 "value": got["truncated_applied"], "unit": "count", "floor": None,
                                 "floor_name": "", "ratio": None, "target": "0"})
    finally:
        stop_quietly(daemon)
    return rows
