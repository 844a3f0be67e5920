"""Where every store file lives (SPEC S-18.1 / S-18.2), and how a project root is found.

Project store: `<project root>/.slmcode/` (episodes, facts, lessons, rules, regressions, graph,
metrics). User store: `~/.slmcode/`, or `$SLMACTOR_HOME` (procedures, latency, calibration,
user-scope rules, the bandit policy, the global MEMORY.md, and the daemon's lock file). The layout
is the Go harness's, so an existing store of slmcode is read in place.

`ProjectLayout.ensure()` also writes `.slmcode/.gitignore` so learned memory is never committed
by accident (fixes H-S-12: `slmcode init` left `memory/` and `evolve/` unignored and a repository
committed 26 learned rules). The lessons file `.slmcode/MEMORY.md` stays committable, as in the
seed; a `.gitignore` someone already wrote is left alone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from slmactor.stores.base import health
from slmactor.stores.base.fsutil import atomic_write_bytes, ensure_dir

HOME_ENV = "SLMACTOR_HOME"
STORE_DIR_NAME = ".slmcode"

GITIGNORE_TEXT = """\
# Written by slmactor: learned memory is per machine and must not be committed (H-S-12).
memory/
evolve/
graph/
metrics/
*.corrupt
*.corrupt.*
.*.tmp-*
.lock
"""


def default_home(environ: Mapping[str, str] | None = None) -> Path:
    """The user store: `$SLMACTOR_HOME` when set (and not blank), else `~/.slmcode`."""
    env = os.environ if environ is None else environ
    override = env.get(HOME_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    return Path.home() / STORE_DIR_NAME


def project_root_for(cwd: str | os.PathLike[str]) -> Path:
    """The git root containing `cwd` (a directory holding `.git`, a dir or a worktree file),
    else `cwd` itself. The result is absolute and has symlinks resolved."""
    start = Path(cwd).expanduser().resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


@dataclass(frozen=True, slots=True)
class ProjectLayout:
    """Paths of one project's store under `<root>/.slmcode/` (SPEC S-18.1)."""

    root: Path

    @property
    def slmcode(self) -> Path:
        return self.root / STORE_DIR_NAME

    @property
    def memory_dir(self) -> Path:
        return self.slmcode / "memory"

    @property
    def evolve_dir(self) -> Path:
        return self.slmcode / "evolve"

    @property
    def graph_dir(self) -> Path:
        return self.slmcode / "graph"

    @property
    def metrics_dir(self) -> Path:
        return self.slmcode / "metrics"

    @property
    def memory_md(self) -> Path:
        """Lessons (`.slmcode/MEMORY.md`)."""
        return self.slmcode / "MEMORY.md"

    @property
    def gitignore(self) -> Path:
        return self.slmcode / ".gitignore"

    @property
    def episodes(self) -> Path:
        return self.memory_dir / "episodes.jsonl"

    @property
    def episodes_index(self) -> Path:
        return self.memory_dir / "episodes.index.json"

    @property
    def facts(self) -> Path:
        return self.memory_dir / "facts.json"

    @property
    def semantic_md(self) -> Path:
        return self.memory_dir / "SEMANTIC.md"

    @property
    def lessons(self) -> Path:
        """Polar lessons (do/don't, tagged, scored) in the seed's JSONL format."""
        return self.memory_dir / "lessons.jsonl"

    @property
    def phase_budgets(self) -> Path:
        return self.memory_dir / "phase_budgets.jsonl"

    @property
    def working_md(self) -> Path:
        return self.memory_dir / "WORKING.md"

    @property
    def reflection_md(self) -> Path:
        return self.memory_dir / "REFLECTION.md"

    @property
    def rules(self) -> Path:
        return self.evolve_dir / "rules.json"

    @property
    def regressions(self) -> Path:
        return self.evolve_dir / "regressions.json"

    @property
    def edges(self) -> Path:
        return self.graph_dir / "edges.jsonl"

    @property
    def edges_index(self) -> Path:
        return self.graph_dir / "edges.index.json"

    @property
    def runs(self) -> Path:
        return self.metrics_dir / "runs.jsonl"

    def directories(self) -> tuple[Path, ...]:
        return (self.slmcode, self.memory_dir, self.evolve_dir, self.graph_dir, self.metrics_dir)

    def ensure(self) -> None:
        """Create the store directories (0700) and `.slmcode/.gitignore` if it is missing.

        Raises OSError / StoreWriteError when the project directory is not writable.
        """
        for directory in self.directories():
            ensure_dir(directory)
        if not os.path.lexists(self.gitignore):
            atomic_write_bytes(self.gitignore, GITIGNORE_TEXT.encode())
        elif os.path.islink(self.gitignore):
            # A symlink where the store's .gitignore should be (a repository's): never followed
            # or written through, and named in `status` until it is replaced by a file.
            health.found(self.gitignore, "is a symlink: left alone, not followed (replace it "
                         "with a file)", while_exists=self.gitignore)


@dataclass(frozen=True, slots=True)
class UserLayout:
    """Paths of the user store under `home` (SPEC S-18.2)."""

    home: Path

    @property
    def memory_dir(self) -> Path:
        return self.home / "memory"

    @property
    def evolve_dir(self) -> Path:
        return self.home / "evolve"

    @property
    def memory_md(self) -> Path:
        return self.home / "MEMORY.md"

    @property
    def lock_file(self) -> Path:
        """Held with flock by the running daemon for its whole life."""
        return self.home / ".lock"

    @property
    def procedures(self) -> Path:
        return self.memory_dir / "procedures.json"

    @property
    def procedures_md(self) -> Path:
        return self.memory_dir / "PROCEDURES.md"

    @property
    def latency(self) -> Path:
        return self.memory_dir / "latency.json"

    @property
    def latency_md(self) -> Path:
        return self.memory_dir / "LATENCY.md"

    @property
    def calibration(self) -> Path:
        return self.memory_dir / "calibration.json"

    @property
    def calibration_md(self) -> Path:
        return self.memory_dir / "CALIBRATION.md"

    @property
    def user_rules(self) -> Path:
        return self.evolve_dir / "rules.json"

    @property
    def policy(self) -> Path:
        return self.evolve_dir / "policy.json"

    def directories(self) -> tuple[Path, ...]:
        return (self.home, self.memory_dir, self.evolve_dir)

    def ensure(self) -> None:
        """Create the user store directories (0700)."""
        for directory in self.directories():
            ensure_dir(directory)
