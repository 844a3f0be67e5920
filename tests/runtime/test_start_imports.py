"""The daemon's way to READY imports no logic its first ask does not need.

Every actor loads its logic (fingerprints, reflection, the graph, distillation, the bandit, the
rankers, numpy) with the first ask that uses it, so `start → READY` pays only for the runtime, the
actors' shells and what their `on_start` opens. A child runs the real `slmactor serve` entry
point on real ipc sockets in a temp dir; when the daemon tells the service manager READY=1 the
child writes the modules it has loaded and stops the daemon with SIGTERM. After READY the daemon
loads the same logic in a background thread (`slmactor.actors.warm_up`), so the first asks seldom
wait for it: the warm-up must cover everything READY left out.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

#: Logic that no ask needs before its first use, and the daemon must not load to become READY.
DEFERRED = (
    "numpy",
    "bm25s",
    "slmactor.stores.episodes",
    "slmactor.logic.recall.rank",
    "slmactor.logic.recall.index",
    "slmactor.logic.failures.fingerprint",
    "slmactor.logic.failures.diagnose",
    "slmactor.logic.evolve.suggest",
    "slmactor.logic.evolve.transforms",
    "slmactor.logic.loop.reflect",
    "slmactor.logic.loop.run_report",
    "slmactor.logic.loop.metrics",
    "slmactor.logic.graph.backfill",
    "slmactor.logic.graph.query",
    "slmactor.logic.memory.distill",
    "slmactor.logic.memory.block",
    "slmactor.logic.memory.polar_lessons",
    "slmactor.logic.memory.lesson_recall",
    "slmactor.logic.policy.bandit",
    "slmactor.logic.policy.calibration",
)

CHILD = """
    import json, os, signal, sys
    from slmactor.runtime import sdnotify

    real_notify = sdnotify.notify

    def notify(state):
        if state.startswith("READY=1"):
            with open(sys.argv[1], "w") as out:
                json.dump(sorted(sys.modules), out)
            os.kill(os.getpid(), signal.SIGTERM)  # a clean stop, as systemd would ask
        return real_notify(state)

    sdnotify.notify = notify
    from slmactor.cli.entry import main
    sys.exit(main(["serve"]))
"""


def test_every_deferred_module_exists() -> None:
    # A name that no longer exists would make the test below pass whatever the daemon loads.
    assert [m for m in DEFERRED if m != "bm25s" and importlib.util.find_spec(m) is None] == []


def test_ready_loads_no_deferred_logic() -> None:
    base = Path(tempfile.mkdtemp(prefix="sa-", dir="/tmp"))  # short: ipc paths
    try:
        loaded_at_ready = base / "modules.json"
        env = dict(os.environ, SLMACTOR_RUNTIME_DIR=str(base / "rt"), SLMACTOR_HOME=str(base / "home"))
        env.pop("NOTIFY_SOCKET", None)
        result = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(CHILD), str(loaded_at_ready)],
            cwd=base, env=env, capture_output=True, text=True, timeout=60, check=False,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        loaded = set(json.loads(loaded_at_ready.read_text()))
        assert "slmactor.actors.recall" in loaded and "slmactor.runtime.daemon" in loaded
        assert sorted(set(DEFERRED) & loaded) == []
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_the_warm_up_after_ready_loads_what_ready_left_out() -> None:
    code = "import json, sys\nfrom slmactor.actors import warm_up\nwarm_up()\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    loaded = set(json.loads(result.stdout))
    assert sorted(m for m in DEFERRED if m != "bm25s" and m not in loaded) == []
