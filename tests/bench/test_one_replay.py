"""One replay: `slmactor metrics replay PATH… --learn` and `python -m bench real_replay
--histories` print the same figures on the same histories (issue 41).

The histories: the demo's (Claude Code, Codex CLI and Gemini CLI formats, repeats fixed from
memory and before the call), the recorded-session fixtures of seven harness rooms, and
trajectories (slmactor's own format and other harnesses'), each folder a repository of its own.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _folders(tmp_path: Path) -> list[Path]:
    sources = {"shop": ROOT / "slmactor" / "demo_data" / "histories",
               "sessions": ROOT / "tests" / "fixtures" / "sessions",
               "trajectories": ROOT / "slmactor" / "demo_data" / "trajectories",
               "formats": ROOT / "tests" / "fixtures" / "trajectories"}
    out = []
    for name, source in sources.items():
        target = tmp_path / name
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.md", "__init__.py", "foreign-*"))
        out.append(target)
    return out


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "slmactor", *args], check=False, capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_the_users_replay_and_the_bench_print_the_same_figures(tmp_path: Path) -> None:
    from bench.bench_real_replay import histories

    folders = _folders(tmp_path)
    paths = [str(f) for f in folders]
    users: dict[str, Any] = json.loads(_cli("--json", "metrics", "replay", *paths, "--learn").stdout)
    table = _cli("metrics", "replay", *paths, "--learn").stdout
    printed = io.StringIO()
    with contextlib.redirect_stderr(printed):
        bench, rows = histories(folders, "fixtures")
    assert bench["harnesses"] == users["harnesses"] and bench["projects"] == users["projects"]
    assert table.strip() in printed.getvalue()
    total = users["harnesses"]["all"]
    # Histories of several harnesses, failures memory got right and a repeat fixed before the call.
    assert len(users["harnesses"]) >= 7 and total["derivable_right"] >= 6 and total["repaired_before"] >= 3
    figures = {row["name"]: row["value"] for row in rows}
    assert figures["fixtures: wrong rewrites"] == total["wrong_rewrites"]
    assert figures["fixtures: derivable repeats right (repaired or advice naming the fix)"] == \
        100.0 * total["derivable_right_share"]
