"""The memory block `slmactor demo` shows is worth its tokens: no two items name the
same rule or task or repeat a claim, and nothing is cut in the middle of a word."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from slmactor.cli.loop.demo import bundled_trajectories
from slmactor.logic.failures.fingerprint import normalize, salient_line
from slmactor.logic.memory.block import block_items, distinct_items


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


def test_the_demo_block_names_each_rule_and_task_once_and_cuts_no_word(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLMACTOR_", "XDG_"))}
    env["HOME"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-m", "slmactor", "--json", "demo"], check=False,
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    block = json.loads(done.stdout)["memory_block"]
    items = block_items(block)
    assert len(items) >= 8, block
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
