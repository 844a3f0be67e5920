"""Client import cost: what `import slmactor.client` adds to a harness's process.

Rows (median over fresh interpreters, each importing from a warm bytecode cache):
* `python -c "import slmactor.client"` vs the floor `python -c "import zmq, msgpack"` — the two
  libraries the client cannot do without (target ≤ 1.3×);
* `python -c "import slmactor; slmactor.session"` (the helper the README uses) vs the same floor;
* the interpreter alone (`python -c pass`), for scale.

Times are wall clocks of whole processes, measured interleaved (one of
each per round) so a busy neighbour slows all three alike.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

Row = dict[str, Any]
REPO = Path(__file__).resolve().parents[1]
PYCACHE = Path(tempfile.gettempdir()) / f"sab-client-pycache-{os.getpid()}"

SCRIPTS = {
    "floor": "import zmq, msgpack",
    "client": "import slmactor.client",
    "session": "import slmactor; slmactor.session",
    "bare": "pass",
}


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="", PYTHONPYCACHEPREFIX=str(PYCACHE))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def _time(code: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return (time.perf_counter() - started) * 1000


def run(quick: bool) -> list[Row]:
    env = _env()
    rounds = 5 if quick else 21
    try:
        for code in SCRIPTS.values():
            _time(code, env)  # fill the bytecode cache
        samples: dict[str, list[float]] = {name: [] for name in SCRIPTS}
        for _ in range(rounds):
            for name, code in SCRIPTS.items():
                samples[name].append(_time(code, env))
    finally:
        shutil.rmtree(PYCACHE, ignore_errors=True)
    median = {name: statistics.median(values) for name, values in samples.items()}
    floor = median["floor"]
    return [
        {"name": "python -c 'import slmactor.client'", "value": median["client"], "unit": "ms",
         "floor": floor, "floor_name": "python -c 'import zmq, msgpack'",
         "ratio": median["client"] / floor, "target": "≤ 1.3×"},
        {"name": "python -c 'import slmactor; slmactor.session'", "value": median["session"],
         "unit": "ms", "floor": floor, "floor_name": "python -c 'import zmq, msgpack'",
         "ratio": median["session"] / floor, "target": "≤ 1.3×"},
        {"name": "python -c pass (interpreter alone)", "value": median["bare"], "unit": "ms",
         "floor": None, "floor_name": "", "ratio": None, "target": "info"},
    ]
