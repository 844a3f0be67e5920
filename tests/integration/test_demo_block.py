"""The memory block a worker gets after the bundled trajectories (slmactor/demo_data/
trajectories, what `slmactor demo` replayed before issue 41) are replayed twice through a real
daemon is worth its tokens: no two items name the same rule or task or repeat a claim, and
nothing is cut in the middle of a word."""

from __future__ import annotations

import json
import re

from slmactor.cli.loop.replay_driver import bundled_trajectories
from slmactor.logic.failures.fingerprint import normalize, salient_line
from slmactor.logic.memory.block import block_items, distinct_items
from slmactor.testing import spawn_daemon, stop_quietly


def _replayed_block() -> str:
    """Both passes of the learning replay, then the block a worker on the last task receives."""
    from slmactor import harnesses
    from slmactor.cli.loop.replay_driver import learning_replay
    from slmactor.protocol.messages import MemoryBlock, MemoryDistill
    from slmactor.stores.trajectories import load_trajectories

    trajectories, _skipped = load_trajectories(bundled_trajectories(), harnesses.read_trajectory)
    daemon = spawn_daemon(debug_hooks=False)
    try:
        with daemon.client(timeout=30.0, retries=1) as client:
            learning_replay(client, trajectories, "pass-1")
            learning_replay(client, trajectories, "pass-2")
            client.ask(MemoryDistill(wait=True))
            last = trajectories[-1]
            block = client.ask(MemoryBlock(role="worker", query=last.query, budget=600,
                                           language=last.language, model=last.model))
    finally:
        stop_quietly(daemon)
    return str(block.get("text") or block.get("block") or "")


def _words_of_the_replay() -> set[str]:
    """Every whole word the block's texts can come from: task texts and the errors' salient lines
    as the reflector stores them."""
    words: set[str] = set()
    for path in bundled_trajectories().glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        words.update(data["query"].split())
        for step in data["steps"]:
            if step.get("error"):
                words.update(normalize(salient_line(step["error"])).split())
    return words


def test_the_demo_block_names_each_rule_and_task_once_and_cuts_no_word() -> None:
    block = _replayed_block()
    items = block_items(block)
    # 7 since one fingerprint per failure on every path: the demo's OpenHands editor failure
    # is fixed from memory in its first pass (39 of 49, was 38), so it teaches no convention.
    assert len(items) >= 7, block
    distinct, total = distinct_items(block)
    assert distinct == total, block
    rules = [rule for item in items for rule in re.findall(r"rule_[0-9a-f]{12}", item)]
    assert len(rules) == len(set(rules)), block
    tasks = [item for item in items if item[:1] in "✓✗"]
    assert len(tasks) == len(set(tasks)), block
    assert "\n…\n" not in block, block  # no section was cut inside a line
    words = _words_of_the_replay()
    for cut in re.findall(r"(\S+)…", block):
        assert cut in words, f"{cut!r} is a word cut in the middle:\n{block}"
