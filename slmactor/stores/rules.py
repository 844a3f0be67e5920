"""Repair rules on disk: `<project>/.slmcode/evolve/rules.json` and `~/.slmcode/evolve/rules.json`
(SPEC S-10.12).

Open order: the 33 shipped seeds → the user file (scope `user`, model-level lessons shared by every
project) → the project file (scope `project`, plus the seeds' statistics).  A persisted copy of a
seed overlays its statistics, fingerprint and `retired` flag and stays `seeded`; its trigger and
repair always come from the code, so an upgraded seed text reaches old stores.  Deleting a seed
from the file just re-merges it; `"retired": true` disables it, and stays disabled.

Documents are `{"version": 1, "rules": [...]}`.  A corrupt file, or one of the wrong shape
(`"rules": "not a list"`, a bare `[]`), is moved to `rules.json.corrupt` by
`JsonDoc` with a warning and ignored: the seeds still work.

Trust: every project-file entry is written with `sig` under the user's key
(`slmactor.logic.text.trust`). An entry without a valid one — a rules.json a repository brought,
or one edited by hand — loads with `verified=False` (listed, shown labelled, never applied) and
is written back without a `sig`, so using it never launders it; an unsigned entry for a shipped
rule is ignored (the seed stays as shipped). `trust(ids)` adopts entries explicitly. The user
file lives in the user's own store and is trusted as it is. Without a key (the user store could
not hold one) nothing is marked or checked.

`save()` writes only when something changed: user-scope rules to the user file; project rules and
shipped rules *with state* (outcomes, a bound fingerprint, retired) to the project file; a file
with nothing to hold is not created.  `forget()` deletes both files and restores the seeds.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slmactor.logic.evolve.rule_seeds import seed_rules
from slmactor.logic.evolve.rules import Rule, RuleBook
from slmactor.logic.text.redact import redact_obj
from slmactor.logic.text.timefmt import to_rfc3339
from slmactor.logic.text.trust import signed, unsigned, verified
from slmactor.stores.base.jsondoc import JsonDoc, Shape
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.base.watched import Signature, signature

VERSION = 1


def _entries(data: Any) -> list[dict[str, Any]]:
    raw = data.get("rules") if isinstance(data, dict) else data
    if not isinstance(raw, list):
        return []
    return [item for item in raw if isinstance(item, dict)]


def rule_to_disk(record: dict[str, Any]) -> dict[str, Any]:
    """A rule as rules.json keeps it: a typed repair's spec as one canonical JSON text (the form
    files have always held, so older files and their signatures read as before). The one place
    a `Spec` becomes text."""
    repair = record.get("repair")
    if isinstance(repair, dict) and isinstance(repair.get("spec"), dict):
        from slmactor.logic.evolve.repairs import Spec

        spec = Spec.from_dict(repair["spec"])
        record = {**record, "repair": {**repair, "spec": spec.identity() if spec else ""}}
    return record


def rule_from_disk(item: dict[str, Any]) -> dict[str, Any]:
    """`rule_to_disk` undone: the spec text read back as a map (unreadable: no spec, so the rule is
    no valid typed repair and is never applied)."""
    repair = item.get("repair")
    if not (isinstance(repair, dict) and isinstance(repair.get("spec"), str)):
        return item
    import json

    try:
        spec = json.loads(repair["spec"]) if repair["spec"] else None
    except ValueError:
        spec = None
    return {**item, "repair": {**repair, "spec": spec}}


def _redacted(record: dict[str, Any]) -> dict[str, Any]:
    clean = redact_obj(record)
    return clean if isinstance(clean, dict) else record


def _has_state(rule: Rule) -> bool:
    return bool(rule.samples or rule.fingerprint or rule.retired or rule.last_used)


class RuleStore:
    """The rule book of one project, backed by the project and user rules.json files."""

    def __init__(
        self,
        project_path: str | os.PathLike[str] | None,
        user_path: str | os.PathLike[str] | None,
        warnings: WarningLog,
        *,
        seeds: bool = True,
        read_only: bool = False,
        now: Callable[[], float] = time.time,
        key: bytes | None = None,
    ) -> None:
        self._now = now
        self._seeds = seeds
        self._key = key
        shape = Shape("rules", list)
        # One rule per line: the project file is shared through git (`slmactor git setup`).
        self._project = JsonDoc(Path(project_path), warnings, read_only=read_only, now=now,
                                shape=shape, records_key="rules") \
            if project_path is not None else None
        self._user = JsonDoc(Path(user_path), warnings, read_only=read_only, now=now,
                             shape=shape, records_key="rules") if user_path is not None else None
        self.book = RuleBook()
        self._user_sig: tuple[int, int, int] | None = None
        # The project file as this store last read or wrote it: a file deleted by hand
        # (`rm -rf .slmcode` while the daemon runs) must not be written back from memory.
        self._project_sig: Signature = None
        self.reload()

    def _project_signature(self) -> Signature:
        return signature(self._project.path) if self._project is not None else None

    def sync(self) -> bool:
        """Catch up with the files before acting; True when the book was re-read.

        The project file changed or removed behind our back (edited, `rm -rf .slmcode`): the
        whole book is rebuilt from the seeds and what the files now hold, so deleted rules stay
        deleted. Otherwise the user file is re-read if another project's store rewrote it.
        """
        if self._project is not None and self._project_signature() != self._project_sig:
            self.reload()
            return True
        return self.refresh_user()

    def _user_signature(self) -> tuple[int, int, int] | None:
        if self._user is None:
            return None
        try:
            info = os.stat(self._user.path)
        except OSError:
            return None
        return (info.st_ino, info.st_size, info.st_mtime_ns)

    def refresh_user(self) -> bool:
        """Re-read the user file if another project's store rewrote it since it was read.

        The user file is shared by every project; the one actor that owns all rule files keeps
        one store per project, so each must pick up the others' user-scope lessons (and must not
        overwrite them with a stale copy).  True when the user rules were re-read.
        """
        if self._user is None or self._user_signature() == self._user_sig:
            return False
        dirty = self.book.dirty
        keep = {rid: r for rid, r in self.book.rules.items() if r.scope != "user"}
        seeds = {rid: r for rid, r in keep.items() if r.seeded}
        book = RuleBook(rules=keep)
        for item in _entries(self._user.load()):
            if str(item.get("id", "")) not in seeds:
                self._merge(book, {}, item, "user", trusted=True)
        book.dirty = dirty
        self.book = book
        self._user_sig = self._user_signature()
        return True

    def reload(self) -> None:
        """(Re)build the book from seeds, the user file and the project file."""
        book = RuleBook()
        seeds: dict[str, Rule] = {}
        if self._seeds:
            for rule in seed_rules():
                book.rules[rule.id] = rule
                seeds[rule.id] = rule
        for doc, scope in ((self._user, "user"), (self._project, "project")):
            if doc is None:
                continue
            for item in _entries(doc.load()):
                trusted = scope == "user" or verified(self._key, item)
                self._merge(book, seeds, rule_from_disk(item), scope, trusted=trusted)
        book.dirty = False
        self.book = book
        self._user_sig = self._user_signature()
        self._project_sig = self._project_signature()

    @staticmethod
    def _merge(book: RuleBook, seeds: dict[str, Rule], item: dict[str, Any], scope: str,
               *, trusted: bool) -> None:
        rid = str(item.get("id", ""))
        seed = seeds.get(rid)
        if seed is not None and not trusted:
            return  # statistics nobody here counted: the shipped rule stays as shipped
        if seed is not None:
            # Only the state of a shipped rule is persisted; its definition is the code's.
            stored = Rule.from_dict({**seed.to_dict(), **item, "trigger": seed.trigger.to_dict(),
                                     "repair": seed.repair.to_dict()})
            book.rules[rid] = Rule(
                id=rid, trigger=seed.trigger, repair=seed.repair, fingerprint=stored.fingerprint,
                evidence=stored.evidence, successes=stored.successes, failures=stored.failures,
                created_at=stored.created_at, last_used=stored.last_used, scope="builtin",
                seeded=True, retired=stored.retired, note=seed.note)
            return
        if "trigger" not in item or "repair" not in item:
            return  # a partial entry for a rule that does not exist (e.g. a removed seed)
        rule = Rule.from_dict(item)
        if rule.seeded or rule.scope == "builtin":
            # A "shipped" rule this version does not ship: keep it as a learned one of this file.
            rule = Rule.from_dict({**item, "seeded": False, "scope": scope})
        elif rule.scope != scope:
            rule = Rule.from_dict({**item, "scope": scope})
        if not trusted:
            rule = dataclasses.replace(rule, verified=False)
        book.rules[rule.id] = rule

    # --- writing --------------------------------------------------------------------------
    def save(self) -> bool:
        """Write the files if anything changed; True when something was written."""
        if not self.book.dirty:
            return False
        user = [r for r in self.book.rules.values() if r.scope == "user"]
        project = [r for r in self.book.rules.values()
                   if r.scope == "project" or (r.scope == "builtin" and _has_state(r))]
        wrote = self._write(self._user, user)
        self._user_sig = self._user_signature()
        wrote = self._write(self._project, project) or wrote
        self._project_sig = self._project_signature()
        self.book.dirty = False
        return wrote

    def _write(self, doc: JsonDoc | None, rules: list[Rule]) -> bool:
        if doc is None or doc.read_only:
            return False
        if not rules and not doc.exists():
            return False
        ordered = sorted(rules, key=lambda r: (r.scope != "builtin", r.created_at, r.id))
        # Redacted before signing: the signature covers exactly the bytes that are stored.
        entries = [signed(self._key, _redacted(rule_to_disk(r.to_dict()))) if r.verified
                   else unsigned(rule_to_disk(r.to_dict())) for r in ordered]
        doc.save({"version": VERSION, "updated": to_rfc3339(self._now()), "rules": entries})
        return True

    # --- trust ----------------------------------------------------------------------------
    def unverified(self) -> list[Rule]:
        """Rules a project file brought without this user's signature."""
        return [r for r in self.book.all() if not r.verified]

    def trust(self, ids: list[str] | None) -> list[Rule]:
        """Adopt unverified rules (`ids`, or every one for None): they are signed at the next
        `save()` and apply like learned ones. Returns the adopted rules."""
        return [self.book.adopt_verified(rule.id) or rule for rule in self.unverified()
                if ids is None or rule.id in ids]

    def forget(self) -> int:
        """Delete both files and go back to the seeds; returns how many rules were dropped."""
        before = len(self.book.rules)
        for doc in (self._user, self._project):
            if doc is not None:
                doc.delete()
        self.reload()
        return before - len(self.book.rules) if before > len(self.book.rules) else 0
