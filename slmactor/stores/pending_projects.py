"""`~/.slmcode/evolve/pending-projects/`: which projects hold finish reports saved before a crash.

The reflector journals every accepted `run.finish` inside the project (`<project>/.slmcode/
evolve/pending/`), where a daemon can only find it once that project is used again. This folder
names those projects — one small file per project holding its root path — so the daemon replays
every saved report at start. A marker is written once per project (remembered in memory after
that) and removed at start when its project has nothing pending any more; a marker naming a
project that is gone is removed too. `rm -rf` of the folder only delays replays until the project
is next used.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from slmactor.logic.text.strings import hash_id
from slmactor.stores.base.fsutil import atomic_write_bytes

#: Longest project path a marker may name (the protocol's own limit).
MAX_ROOT_CHARS = 4096


class PendingProjects:
    """The markers of projects with saved finish reports (owned by the reflector)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._known: set[Path] = set()

    def _marker(self, root: Path) -> Path:
        return self.directory / (hash_id("prj_", str(root)) + ".path")

    def register(self, root: Path) -> None:
        """Note that `root` has a saved report (a write the first time per process only)."""
        if root in self._known:
            return
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write_bytes(self._marker(root), str(root).encode("utf-8", "surrogateescape"))
        self._known.add(root)

    def roots(self) -> list[Path]:
        """Projects named by a marker, in a stable order (unreadable markers are removed)."""
        try:
            markers = sorted(self.directory.glob("prj_*.path"))
        except OSError:
            return []
        roots: list[Path] = []
        for marker in markers:
            try:
                text = marker.read_bytes()[: MAX_ROOT_CHARS * 4].decode("utf-8", "surrogateescape")
            except OSError:
                continue
            if not text or "\x00" in text or not os.path.isabs(text):
                self._remove(marker)
                continue
            roots.append(Path(text))
        return roots

    def done(self, root: Path) -> None:
        """`root` has nothing pending any more: drop its marker."""
        self._known.discard(root)
        self._remove(self._marker(root))

    @staticmethod
    def _remove(marker: Path) -> None:
        # Already gone, or not removable now: a marker left behind only costs an idle replay
        # check at the next start.
        with contextlib.suppress(OSError):
            marker.unlink()
