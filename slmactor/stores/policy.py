"""The bandit policy on disk: `policy.json` (SPEC S-13.4, S-18.2).

User scope by default (`~/.slmcode/evolve/policy.json`, shared by every project), project scope by
option (`<project>/.slmcode/evolve/policy.json`). Written atomically (temp + fsync + rename +
fsync(dir), via `JsonDoc`). A corrupt file is moved to `policy.json.corrupt` with the warning
`policy.json unreadable; starting from priors` and the policy starts from its priors; arms with
α ≤ 0 or β ≤ 0 are dropped on load. Read-only mode never writes, creates or quarantines (S-18.5).
A file edited or deleted by hand is noticed before the next request (`sync`) and reloaded — a
deleted policy stays forgotten instead of being written back.

Two-step flush as in `MirroredBook`: `snapshot()` on the owner's loop, `write()` in a thread.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slmactor.logic.policy.bandit import ChangeConfig, Policy, PriorTable
from slmactor.logic.policy.document import policy_from_dict, policy_to_dict
from slmactor.stores.base.jsondoc import Shape
from slmactor.stores.base.layout import ProjectLayout, UserLayout
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.base.watched import WatchedDoc

UNREADABLE_WARNING = "policy.json unreadable; starting from priors"


class PolicyStore:
    """One `policy.json` and the `Policy` loaded from it; single writer (the bandit actor)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        warnings: WarningLog,
        *,
        read_only: bool = False,
        priors: PriorTable | None = None,
        change: ChangeConfig | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.warnings = warnings
        self.read_only = read_only
        self._priors = priors
        self._change = change
        self._now = now
        self._doc = WatchedDoc(path, warnings, read_only=read_only, now=now,
                               shape=Shape("keys", dict, optional=True))
        self.dirty = False
        #: Set by the owner while `write` runs in a worker thread (`sync` then holds off).
        self.writing = False
        self.policy = self._read()

    @classmethod
    def for_user(cls, layout: UserLayout, warnings: WarningLog, **kwargs: Any) -> PolicyStore:
        return cls(layout.policy, warnings, **kwargs)

    @classmethod
    def for_project(cls, layout: ProjectLayout, warnings: WarningLog, **kwargs: Any) -> PolicyStore:
        return cls(layout.evolve_dir / "policy.json", warnings, **kwargs)

    @property
    def path(self) -> Path:
        return self._doc.path

    def _read(self) -> Policy:
        existed = os.path.lexists(self.path)
        data = self._doc.load()
        if data is None:
            if existed:
                self.warnings.warn(UNREADABLE_WARNING, self._now(), self._doc.path)
            return Policy(self._priors, change=self._change)
        policy, problems = policy_from_dict(data, priors=self._priors, change=self._change)
        for problem in problems:
            self.warnings.warn(f"policy.json: {problem}", self._now(), self._doc.path)
        return policy

    def sync(self) -> bool:
        """Reload when the file changed behind our back (edited, replaced or deleted)."""
        if self.writing or not self._doc.changed():
            return False
        self.policy = self._read()
        self.dirty = False
        return True

    def touch(self) -> None:
        self.dirty = True

    def snapshot(self, now: float) -> dict[str, Any] | None:
        """The document to write, or None when nothing changed (or read-only)."""
        if not self.dirty or self.read_only:
            return None
        self.dirty = False
        return policy_to_dict(self.policy, now)

    def write(self, document: dict[str, Any]) -> None:
        """Save atomically (blocking). Raises StoreWriteError; the old file stays intact."""
        self._doc.save(document)

    def flush(self) -> None:
        document = self.snapshot(self._now())
        if document is not None:
            self.write(document)

    def forget(self) -> None:
        """Delete the policy file (and corrupt copies); the shipped priors apply again."""
        if not self.read_only:
            self._doc.delete()
        self.policy = Policy(self._priors, change=self._change)
        self.dirty = False
