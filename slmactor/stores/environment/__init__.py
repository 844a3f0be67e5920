"""The project's environment facts on disk, and the small table a hook reads before it asks.

Files (under `<project>/.slmcode/evolve/`, ignored by the store's `.gitignore` like every learned
rule):

* `environment.json` — `{"version": 1, "facts": [...]}`, one fact per line (`EnvFact.to_dict`),
  each signed with the user's key; a fact without a valid `sig` (a file a repository brought, or
  edited by hand) loads unverified: listed, never told or applied (an activation prefix is a
  command the shell runs), written back unsigned until `slmactor trust` adopts it (`trust`:
  signed at the next save, then used like a learned one). A corrupt file is quarantined by `JsonDoc`
  and the project starts with no facts; `rm` of it forgets them all.
* `preflight.json` — `{"version": 1, "rows": [...]}` (`EnvBook.table`): for each fact that may
  rewrite, the exact commands it was seen failing on, whether it is proven, its scope and the
  words that can trigger it. Written with the facts, read by `slmactor hook` with no daemon.
* `preflight.keys` — those words, one a line: what the hook's shell gate looks for in a
  payload (`grep -F -f`) before it starts Python at all. Absent when no fact may rewrite.

One writer (the rules actor). Pure data in, bytes out; no clock but the one passed in.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slmactor.logic.evolve.environment import EnvBook, EnvFact
from slmactor.logic.text.trust import signed, unsigned, verified
from slmactor.stores.base.fsutil import atomic_write_bytes
from slmactor.stores.base.jsondoc import JsonDoc, Shape
from slmactor.stores.base.warnings import WarningLog

VERSION = 1
FACTS_NAME = "environment.json"
TABLE_NAME = "preflight.json"
KEYS_NAME = "preflight.keys"


class EnvStore:
    """One project's environment facts and the hook's pre-flight table."""

    def __init__(self, evolve_dir: str | os.PathLike[str], warnings: WarningLog, *,
                 key: bytes | None = None, read_only: bool = False,
                 now: Callable[[], float] = time.time) -> None:
        self.dir = Path(evolve_dir)
        self._key = key
        self._read_only = read_only
        self.doc = JsonDoc(self.dir / FACTS_NAME, warnings, read_only=read_only,
                           records_key="facts", now=now, shape=Shape("facts"))
        self.table_doc = JsonDoc(self.dir / TABLE_NAME, warnings, read_only=read_only,
                                 now=now, shape=Shape("rows"))
        self.book = EnvBook()
        #: Facts a repository brought, unsigned: kept and listed, never used.
        self.unverified: dict[str, dict[str, Any]] = {}
        self._load()

    def _load(self) -> None:
        data = self.doc.load()
        records = data.get("facts") if isinstance(data, dict) else None
        facts: list[EnvFact] = []
        for record in records if isinstance(records, list) else []:
            fact = EnvFact.from_dict(record)
            if fact is None:
                continue
            if verified(self._key, record):
                facts.append(fact)
            else:
                self.unverified[fact.id] = unsigned(record)
        self.book = EnvBook(facts)

    @property
    def keys_path(self) -> Path:
        return self.dir / KEYS_NAME

    def save(self) -> None:
        """Write the facts, then the hook's table and its keys (atomically, each)."""
        records = [signed(self._key, f) for f in self.book.to_list()]
        records += [r for fid, r in sorted(self.unverified.items()) if fid not in self.book.facts]
        self.dir.mkdir(parents=True, exist_ok=True)
        self.doc.save({"version": VERSION, "facts": records})
        rows = self.book.table()
        self.table_doc.save({"version": VERSION, "rows": rows})
        words = sorted({w for row in rows for w in row["keys"] if w})
        if words:
            atomic_write_bytes(self.keys_path, "".join(f"{w}\n" for w in words).encode())
        else:
            try:
                self.keys_path.unlink()
            except FileNotFoundError:
                pass

    def trust(self, ids: list[str] | None) -> list[str]:
        """Adopt unverified facts (`ids`, or every one for None): they join the book, are
        signed at the next `save()` and are used like learned ones. Returns the adopted ids."""
        adopted: list[str] = []
        for fact_id, record in list(self.unverified.items()):
            fact = EnvFact.from_dict(record)
            if fact is None or (ids is not None and fact_id not in ids):
                continue
            self.book.facts[fact.id] = fact
            del self.unverified[fact_id]
            adopted.append(fact_id)
        return adopted

    def forget(self) -> None:
        """Forget every fact (and the table): `rm` of the files, kept consistent."""
        self.book = EnvBook()
        self.unverified.clear()
        for path in (self.doc.path, self.table_doc.path, self.keys_path):
            try:
                path.unlink()
            except FileNotFoundError:
                pass

