"""What earlier imports did: `<user store>/import-sessions.jsonl`.

Plain JSON lines, compacted past `MAX_STATE_LINES`: each imported session's run id (with the calls
imported and the parts sent) as soon as the daemon accepted it, and each file that was read to
its end with every session in it imported — its size and mtime. A file that held a session the
import skipped (its directory is gone, `--since`, the daemon refused it) is never recorded, so a
rerun (with `--project`, say) reads it again; sessions already imported are known by run id and
not sent twice. A line cut by an interrupted run is skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

#: The state file keeps at most this many lines (compacted to the newest when over).
MAX_STATE_LINES = 200_000
STATE_NAME = "import-sessions.jsonl"


class ImportState:
    """What earlier runs imported: run ids, and finished files with their size and mtime."""

    def __init__(self, path: Path, *, write: bool) -> None:
        self.path = path
        self.write = write
        #: run id → (calls imported, parts sent): a session that went on after its import is
        #: imported again from its first new call, as its next part (`<run id>#2`, ...).
        self.sessions: dict[str, tuple[int, int]] = {}
        self.files: dict[str, tuple[int, int]] = {}
        #: The projects sessions were filed in (where a moved project's sessions may belong).
        self.projects: dict[str, None] = {}
        lines = 0
        # No file yet: nothing imported.
        with contextlib.suppress(FileNotFoundError), open(path, "rb") as fh:
            for raw in fh:
                lines += 1
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue  # a line cut by an interrupted run
                if isinstance(entry, dict):
                    self._apply(entry)
        if write and lines > MAX_STATE_LINES:
            self._compact()

    def _apply(self, entry: dict[str, Any]) -> None:
        if isinstance(entry.get("s"), str):
            calls, part = entry.get("calls"), entry.get("part")
            # A line that does not say how many calls: the session counts as imported whole.
            self.sessions[entry["s"]] = (calls if isinstance(calls, int) else 1 << 62,
                                         part if isinstance(part, int) else 1)
        elif isinstance(entry.get("f"), str) and isinstance(entry.get("size"), int) \
                and isinstance(entry.get("mtime_ns"), int):
            self.files[entry["f"]] = (entry["size"], entry["mtime_ns"])
        elif isinstance(entry.get("p"), str):
            self.projects[entry["p"]] = None

    def _append(self, entry: dict[str, Any]) -> None:
        if not self.write:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", errors="replace"))
        finally:
            os.close(fd)

    def _compact(self) -> None:
        keep_sessions = list(self.sessions.items())[-MAX_STATE_LINES // 2:]
        keep_files = list(self.files.items())[-MAX_STATE_LINES // 2:]
        self.sessions, self.files = dict(keep_sessions), dict(keep_files)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps({"s": s, "calls": calls, "part": part}) + "\n"
                          for s, (calls, part) in keep_sessions)
            fh.writelines(json.dumps({"f": f, "size": size, "mtime_ns": mtime}) + "\n"
                          for f, (size, mtime) in keep_files)
            fh.writelines(json.dumps({"p": p}) + "\n" for p in list(self.projects)[-1000:])
        os.replace(tmp, self.path)

    def project(self, root: str) -> None:
        """A project a session was filed in (remembered once)."""
        if root not in self.projects:
            self.projects[root] = None
            self._append({"p": root})

    def unchanged(self, path: str, size: int, mtime_ns: int) -> bool:
        return self.files.get(path) == (size, mtime_ns)

    def imported(self, run_id: str, calls: int, part: int) -> None:
        self.sessions[run_id] = (calls, part)
        self._append({"s": run_id, "calls": calls, "part": part})

    def finished(self, path: str, size: int, mtime_ns: int, run_ids: list[str]) -> None:
        self.files[path] = (size, mtime_ns)
        self._append({"f": path, "size": size, "mtime_ns": mtime_ns, "sessions": run_ids[:50]})
