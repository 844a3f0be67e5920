"""Loading recorded trajectories from a directory or one file (SPEC S-17.1).

`*.json`, `*.traj` and `*.jsonl` files sorted by name (or the one file given); each is read in
whichever format it is — slmactor's own, or a harness's (mini-swe-agent, SWE-agent `.traj`,
OpenHands events, OpenHands SDK events as JSON lines) — by the reader the caller hands it
(`slmactor.harnesses.read_trajectory`: a store knows files, not harnesses).
A file that cannot be read or parsed is skipped and named in the
returned list of problems; so is a file of a directory that parses but is none of those formats
(one foreign file never refuses the rest), while the one file a user names raises
`TrajectoryFormatError` (never replayed as an empty run); a missing path is an error. Files are read with a size bound so a stray multi-gigabyte file cannot exhaust
memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slmactor.logic.loop.importers import UnknownTrajectoryFormat
from slmactor.logic.loop.replay import Trajectory

MAX_TRAJECTORY_BYTES = 4 * 1024 * 1024
#: File names read from a directory.
PATTERNS = ("*.json", "*.traj", "*.jsonl")


class TrajectoryFormatError(ValueError):
    """A file parsed as JSON but is no trajectory format we read; the message names it."""


#: (parsed JSON, the file's stem) → its `Trajectory`; raises `UnknownTrajectoryFormat`.
Reader = Callable[[Any, str], Trajectory]


def load_trajectories(path: Path, read_trajectory: Reader) -> tuple[list[Trajectory], list[str]]:
    """Trajectories in file-name order, and one message per skipped file."""
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted({p for pattern in PATTERNS for p in path.glob(pattern)})
    else:
        raise FileNotFoundError(f"trajectory file or directory not found: {path}")
    out: list[Trajectory] = []
    skipped: list[str] = []
    for file in files:
        try:
            if file.stat().st_size > MAX_TRAJECTORY_BYTES:
                skipped.append(f"{file.name}: larger than {MAX_TRAJECTORY_BYTES} bytes")
                continue
            text = file.read_text(encoding="utf-8")
            # JSON lines (an OpenHands SDK event log): the list of their values.
            data = [json.loads(line) for line in text.splitlines() if line.strip()] \
                if file.suffix == ".jsonl" else json.loads(text)
        except (OSError, ValueError) as exc:
            skipped.append(f"{file.name}: {exc}")
            continue
        try:
            out.append(read_trajectory(data, file.stem))
        except UnknownTrajectoryFormat as exc:
            if len(files) == 1:
                # The one file the user named: a clear error, not an empty replay.
                raise TrajectoryFormatError(f"{file}: {exc}") from None
            # A foreign file among trajectories is skipped and counted, never a reason to
            # refuse the rest of the directory.
            skipped.append(f"{file.name}: not a trajectory ({exc})")
    return out, skipped
