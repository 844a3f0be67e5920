"""Loading recorded trajectories from a directory (SPEC S-17.1).

`*.json` files sorted by name; a file that cannot be read or parsed (or is not a JSON object) is
skipped and named in the returned list of problems; a missing directory is an error. Files are
read with a size bound so a stray multi-gigabyte file cannot exhaust memory.
"""

from __future__ import annotations

import json
from pathlib import Path

from slmactor.logic.loop.replay import Trajectory

MAX_TRAJECTORY_BYTES = 4 * 1024 * 1024


def load_trajectories(directory: Path) -> tuple[list[Trajectory], list[str]]:
    """Trajectories in file-name order, and one message per skipped file."""
    if not directory.is_dir():
        raise FileNotFoundError(f"trajectory directory not found: {directory}")
    out: list[Trajectory] = []
    skipped: list[str] = []
    for path in sorted(directory.glob("*.json")):
        try:
            if path.stat().st_size > MAX_TRAJECTORY_BYTES:
                skipped.append(f"{path.name}: larger than {MAX_TRAJECTORY_BYTES} bytes")
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            skipped.append(f"{path.name}: {exc}")
            continue
        if not isinstance(data, dict):
            skipped.append(f"{path.name}: not a JSON object")
            continue
        out.append(Trajectory.from_dict(data, default_id=path.stem))
    return out, skipped
