"""`evolve/regressions.json`: the project's regression checks (SPEC S-15).

A JSON document `{"version": 1, "checks": [...]}`, saved atomically, sorted by `added_at`, only
when something changed. A corrupt file, or one of another shape (a bare list included), is moved
aside by `JsonDoc` with a warning and the store starts empty. `run_offline(root)` evaluates only
file checks, through `slmactor.stores.base.confined` (confined to the root, no symlinks, regular files
only, non-blocking opens, bounded reads); command checks are never executed here — they are
returned to the harness by `command_checks`.

With the user's signing `key` every check is written with `sig`; one without a valid `sig` (a
regressions.json a repository brought) loads unverified: never evaluated, never handed to a
harness, written back unsigned until `trust` adopts it.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slmactor.logic.loop import regressions as logic
from slmactor.logic.loop.regressions import MAX_CHECKS, Check, CheckResult
from slmactor.logic.text.redact import redact_obj
from slmactor.logic.text.trust import signed, verified
from slmactor.stores.base.confined import observe
from slmactor.stores.base.jsondoc import JsonDoc, Shape
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.base.watched import Signature, signature

VERSION = 1


class RegressionStore:
    """The checks of one project. Owned by the reflector actor (single writer)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        warnings: WarningLog,
        *,
        cap: int = MAX_CHECKS,
        read_only: bool = False,
        now: Callable[[], float] = time.time,
        key: bytes | None = None,
    ) -> None:
        self.path = Path(path)
        self.cap = cap
        self._key = key
        self._now = now
        # One check per line: the file is shared through git (`slmactor git setup`).
        self._doc = JsonDoc(self.path, warnings, read_only=read_only, now=now,
                            shape=Shape("checks", list), records_key="checks")
        # The file as this store last read or wrote it (see `sync`).
        self._seen: Signature = None
        self._checks: list[Check] = self._read()
        self._dirty = False

    def sync(self) -> bool:
        """Re-read the file if it changed or vanished behind our back; True when it did.

        Every public method calls it first: after `rm -rf .slmcode` the checks are gone, and
        the next save must not write them back from memory (a hand edit is kept the same way).
        """
        if signature(self.path) == self._seen:
            return False
        self._checks = self._read()
        self._dirty = False
        return True

    def _read(self) -> list[Check]:
        data: Any = self._doc.load()
        self._seen = signature(self.path)
        raw = data.get("checks") if isinstance(data, dict) else data
        if not isinstance(raw, list):
            return []
        checks: list[Check] = []
        seen: set[str] = set()
        for item in raw:
            check = Check.from_dict(item) if isinstance(item, dict) else None
            if check is not None and not verified(self._key, item):
                check = dataclasses.replace(check, verified=False)
            if check is not None and check.id not in seen:
                seen.add(check.id)
                checks.append(check)
        return checks

    def checks(self) -> list[Check]:
        """Newest first."""
        self.sync()
        return logic.newest_first(self._checks)

    def command_checks(self) -> list[Check]:
        self.sync()
        return logic.command_checks(self._checks)

    def add(self, check: Check) -> bool:
        self.sync()
        if any(c.id == check.id and not c.verified for c in self._checks):
            # A repository's check under the id of one this user's run asks for (which would
            # keep the real one out forever): the user's own replaces it.
            self._checks = [c for c in self._checks if c.id != check.id]
        self._checks, added = logic.add(self._checks, check, self.cap)
        self._dirty = self._dirty or added
        return added

    def prune(self, cap: int | None = None) -> int:
        self.sync()
        before = len(self._checks)
        self._checks = logic.prune(self._checks, self.cap if cap is None else cap)
        dropped = before - len(self._checks)
        self._dirty = self._dirty or dropped > 0
        return dropped

    def run_offline(self, root: Path) -> list[tuple[Check, CheckResult]]:
        """Evaluate every file check against the files under `root`; commands are not run."""
        self.sync()
        now = self._now()
        results: list[tuple[Check, CheckResult]] = []
        updated: dict[str, Check] = {}
        for check in logic.offline(self._checks):
            result = logic.judge(check, observe(root, check.path, check.substring))
            after = logic.record(check, result, now)
            if after != check:
                updated[check.id] = after
            results.append((after, result))
        if updated:
            self._checks = [updated.get(c.id, c) for c in self._checks]
            self._dirty = True
        return results

    def save(self) -> bool:
        """Write the document if anything changed; True when written."""
        if not self._dirty:
            return False
        ordered = logic.prune(self._checks, 0)  # sorted by added_at, nothing dropped
        self._doc.save({"version": VERSION, "checks": [self._record(c) for c in ordered]})
        self._seen = signature(self.path)
        self._dirty = False
        return True

    def _record(self, check: Check) -> dict[str, Any]:
        record = check.to_dict()
        if not check.verified:
            return record
        clean = redact_obj(record)  # signed as stored
        return signed(self._key, clean if isinstance(clean, dict) else record)

    def unverified(self) -> list[Check]:
        self.sync()
        return [c for c in logic.newest_first(self._checks) if not c.verified]

    def trust(self, ids: list[str] | None) -> list[Check]:
        """Adopt unverified checks (`ids`, or all for None); `save()` signs them."""
        wanted = None if ids is None else set(ids)
        adopted = {c.id: dataclasses.replace(c, verified=True) for c in self.unverified()
                   if wanted is None or c.id in wanted}
        if adopted:
            self._checks = [adopted.get(c.id, c) for c in self._checks]
            self._dirty = True
        return list(adopted.values())

    def forget(self) -> int:
        """Drop every check and the file; returns how many there were."""
        count = len(self._checks)
        self._checks = []
        self._dirty = False
        self._doc.delete()
        self._seen = None
        return count
