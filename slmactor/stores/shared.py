"""The project stores a team shares, and merging their files: git's merge driver and bundles.

Shared (committed, merged): `evolve/rules.json`, `evolve/regressions.json`, `memory/facts.json`,
`memory/lessons.jsonl` and `MEMORY.md` under `.slmcode/`. Everything else — episodes, working
memory, reflections, metrics, the graph, locks, quarantined copies, bundle bases — stays on the
machine (`SHARED_GITIGNORE`).

`merge_texts(kind, o, a, b)` is what `slmactor merge-driver` runs on git's three versions: each
side is parsed and every record normalised by its own class (so ids and derived fields are the
daemon's), merged by `slmactor.logic.memory.merge`, redacted and written back in the stores'
one-record-per-line form, so a merge that changed nothing writes the bytes the daemon writes.
A side that cannot be parsed is a `MergeConflict`: git then keeps the conflict for a human.

Bundles carry the same records between machines without a shared repository: one JSONL file,
a header line then one `{kind, record}` line each. Importing merges against the previous bundle
imported from the same source (kept in `.slmcode/bundles/`, never committed), so importing one
bundle twice, or a newer bundle of the same source, counts each piece of evidence once.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slmactor.logic.evolve.rules import MAX_EVIDENCE, Rule
from slmactor.logic.loop.regressions import Check
from slmactor.logic.memory.facts import MAX_SOURCES, Fact, beta_confidence
from slmactor.logic.memory.merge import (
    Record,
    Shape,
    canonical,
    field_key,
    merge_lines,
    merge_records,
    merge_scalars,
    sort_records,
)
from slmactor.logic.memory.polar_lessons import lesson_from_record
from slmactor.logic.text.redact import redact_obj
from slmactor.logic.text.timefmt import to_rfc3339
from slmactor.stores.base.fsutil import atomic_write_bytes, ensure_dir
from slmactor.stores.base.jsondoc import encode_document
from slmactor.stores.base.layout import STORE_DIR_NAME
from slmactor.stores.rules import rule_from_disk, rule_to_disk

BUNDLE_FORMAT = "slmactor-bundle"
BUNDLE_VERSION = 1
#: A bundle or store file larger than this is refused (the stores themselves are capped far lower).
MAX_FILE_BYTES = 64 * 1024 * 1024

#: `.slmcode/.gitignore` once the project shares its learning (`slmactor git setup`): ignore
#: everything, then let the shared files through. New kinds of files stay private by default.
SHARED_GITIGNORE = """\
# Written by slmactor git setup: the learning a team shares is committed, the rest stays here.
# Shared (merged by the slmactor merge driver): rules, regression checks, facts, lessons.
/*
!/.gitignore
!/MEMORY.md
!/evolve/
/evolve/*
!/evolve/rules.json
!/evolve/regressions.json
!/memory/
/memory/*
!/memory/facts.json
!/memory/lessons.jsonl
"""


class MergeConflict(Exception):
    """The versions cannot be merged as records (one is not a store file of its kind)."""


def _rule(record: Mapping[str, Any]) -> Record | None:
    if "trigger" not in record or "repair" not in record:
        return dict(record) if record.get("id") else None  # a seed's state-only entry
    return rule_to_disk(Rule.from_dict(rule_from_disk(dict(record))).to_dict())


def _fact(record: Mapping[str, Any]) -> Record | None:
    fact = Fact.from_dict(record)
    return fact.to_dict() if fact is not None else None


def _check(record: Mapping[str, Any]) -> Record | None:
    check = Check.from_dict(dict(record))
    return check.to_dict() if check is not None else None


def _lesson(record: Mapping[str, Any]) -> Record | None:
    # `now` only fills a missing `ts`; a record without one gets 0 so the result is reproducible.
    lesson = lesson_from_record(record, 0.0)
    return lesson.to_dict() if lesson is not None else None


def _lesson_key(record: Mapping[str, Any]) -> str:
    return str(record.get("trigger", "")).strip().lower()


@dataclass(frozen=True, slots=True)
class SharedKind:
    """One shared store file: where it lives, its records and how they merge."""

    name: str
    relpath: str
    records_key: str | None  # the list in a JSON document; None: JSONL (or Markdown if no shape)
    shape: Shape | None
    normalise: Callable[[Mapping[str, Any]], Record | None] | None
    #: Records are normalised as they are read (their identity is computed: a fact's id is its
    #: kind and subject); otherwise only merged records are, the others pass as the file has them.
    normalise_inputs: bool = False


KINDS: tuple[SharedKind, ...] = (
    SharedKind("rules", "evolve/rules.json", "rules", Shape(
        key=field_key("id"), counters=("successes", "failures"), flags=("retired",),
        sets=(("evidence", MAX_EVIDENCE),), newest=("last_used",), oldest=("created_at",),
        stamp="last_used", order=("scope", "created_at")), _rule),
    SharedKind("regressions", "evolve/regressions.json", "checks", Shape(
        key=field_key("id"), counters=("runs", "fails"), newest=("last_run",),
        oldest=("added_at",), stamp="last_run", order=("added_at",)), _check),
    SharedKind("facts", "memory/facts.json", "facts", Shape(
        key=field_key("id"), counters=("support", "contradict"), flags=("pinned",),
        sets=(("sources", MAX_SOURCES),), newest=("last_seen",), oldest=("first_seen",),
        stamp="last_seen", order=("first_seen",)), _fact, normalise_inputs=True),
    SharedKind("lessons", "memory/lessons.jsonl", None, Shape(
        key=_lesson_key, counters=("used",), scores=(("confidence", 0.0, 1.0),),
        sets=(("tags", 0),), oldest=("ts",), stamp="ts", order=("ts",)), _lesson),
    SharedKind("memory", "MEMORY.md", None, None, None),
)
BY_NAME = {kind.name: kind for kind in KINDS}


def kind_for_path(path: str) -> SharedKind | None:
    """The shared kind of a repository path (`.slmcode/evolve/rules.json` → rules), else None."""
    parts = Path(path).parts
    for kind in KINDS:
        tail = Path(STORE_DIR_NAME, kind.relpath).parts
        if tuple(parts[-len(tail):]) == tail:
            return kind
    return None


# --- parsing and writing one version -----------------------------------------------------------
def _normalised(kind: SharedKind, raw: Iterable[Any], *, always: bool = False) -> list[Record]:
    assert kind.normalise is not None and kind.shape is not None
    if not (always or kind.normalise_inputs):
        key = kind.shape.key
        return [item for item in raw if isinstance(item, dict) and key(item)]
    out = []
    for item in raw:
        if isinstance(item, dict):
            record = kind.normalise(item)
            if record is not None:
                out.append(record)
    return out


def parse(kind: SharedKind, data: bytes) -> tuple[dict[str, Any], list[Record]]:
    """(the document's top-level fields, its records); an empty file is an empty store.
    Raises MergeConflict when `data` is not a store file of this kind."""
    if kind.shape is None:
        raise MergeConflict(f"{kind.name} is a text file, not records")
    text = data.decode("utf-8", "surrogateescape")
    if not text.strip():
        return {}, []
    if kind.records_key is None:
        rows: list[Any] = []
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue  # a torn or corrupt line: the store skips it on load too
        return {}, _normalised(kind, rows)
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise MergeConflict(f"{kind.relpath} is not JSON: {exc}") from exc
    if isinstance(doc, list):
        return {}, _normalised(kind, doc)
    if not isinstance(doc, dict) or not isinstance(doc.get(kind.records_key, []), list):
        raise MergeConflict(f"{kind.relpath} has no {kind.records_key!r} list")
    top = {k: v for k, v in doc.items() if k != kind.records_key}
    return top, _normalised(kind, doc.get(kind.records_key, []))


def encode(kind: SharedKind, top: Mapping[str, Any], records: list[Record],
           clean: frozenset[int] = frozenset()) -> bytes:
    """The store file's bytes: redacted (but for the records whose `id()` is in `clean`: taken
    unchanged from a version already committed), one record per line with sorted keys."""
    clean_records = [r if id(r) in clean else redact_obj(r) for r in records]
    if kind.records_key is None:
        return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                       for r in clean_records).encode("utf-8", "surrogatepass")
    doc = {"version": top.get("version", 1), **{k: v for k, v in top.items() if k != "version"},
           kind.records_key: clean_records}
    return encode_document(doc, kind.records_key)


def _refresh_derived(kind: SharedKind, merged: list[Record], sides: list[list[Record]]) -> None:
    """Fields computed from the merged counters (a fact's Beta confidence)."""
    if kind.name != "facts":
        return
    counts = {(r.get("id"), r.get("support"), r.get("contradict")) for side in sides for r in side}
    for record in merged:
        if (record.get("id"), record.get("support"), record.get("contradict")) not in counts:
            record["confidence"] = round(beta_confidence(int(record.get("support", 0)),
                                                         int(record.get("contradict", 0))), 6)


def merge_parsed(
    kind: SharedKind,
    o: tuple[dict[str, Any], list[Record]],
    a: tuple[dict[str, Any], list[Record]],
    b: tuple[dict[str, Any], list[Record]],
) -> tuple[dict[str, Any], list[Record]]:
    assert kind.shape is not None and kind.normalise is not None
    merged = merge_records(o[1], a[1], b[1], kind.shape)
    # A record merged from both sides is renormalised by its class, so derived fields (a rule's
    # confidence) follow the counts; one taken whole from a side already is (same object).
    taken = {id(r) for side in (a[1], b[1]) for r in side}
    records = [r for r in (m if id(m) in taken else kind.normalise(m) for m in merged)
               if r is not None]
    _refresh_derived(kind, records, [a[1], b[1]])
    return merge_scalars(o[0], a[0], b[0], newest=("updated",)), sort_records(records, kind.shape)


#: Fields a user may edit by hand without voiding a record's signature, per kind.
SIGN_LOOSE: dict[str, tuple[str, ...]] = {"facts": ("pinned",)}


def _resigned(kind: SharedKind, key: bytes | None, records: list[Record],
              sides: tuple[list[Record], ...], taken: frozenset[int]) -> list[Record]:
    """Merged records re-signed where every side's version was this user's own (signed with
    `key`): merging two of the user's branches keeps the user's records trusted. A record with
    a side this user did not sign (a teammate's, a repository's) stays unverified until
    `slmactor trust` adopts it; one taken whole from a side keeps that side's signature."""
    from slmactor.logic.text.trust import SIG_FIELD, signed, verified

    if key is None or kind.shape is None or not kind.records_key:
        return records
    loose = SIGN_LOOSE.get(kind.name, ())
    versions: dict[str, list[Record]] = {}
    for side in sides:
        for record in side:
            versions.setdefault(kind.shape.key(record), []).append(record)
    out = []
    for record in records:
        seen = versions.get(kind.shape.key(record), [])
        if id(record) not in taken and seen and all(verified(key, v, loose) for v in seen):
            record = signed(key, {k: v for k, v in record.items() if k != SIG_FIELD}, loose)
        out.append(record)
    return out


def merge_texts(kind: SharedKind, o: bytes, a: bytes, b: bytes, key: bytes | None = None) -> bytes:
    """Git's three versions of one shared file merged into one; with the user's signing `key`,
    records merged from the user's own versions are signed again. Raises MergeConflict."""
    if kind.shape is None:
        def text(data: bytes) -> str:
            return data.decode("utf-8", "surrogateescape")

        return merge_lines(text(o), text(a), text(b)).encode("utf-8", "surrogateescape")
    ours, theirs = parse(kind, a), parse(kind, b)
    top, records = merge_parsed(kind, parse(kind, o), ours, theirs)
    taken = frozenset(id(r) for side in (ours[1], theirs[1]) for r in side)
    records = _resigned(kind, key, records, (ours[1], theirs[1]), taken)
    return encode(kind, top, records, taken)


def read_bytes(path: Path) -> bytes:
    """A file's bytes (b"" when missing); refuses anything but a bounded regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return b""
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not (info.st_mode & 0o170000 == 0o100000):
            raise MergeConflict(f"{path} is not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise MergeConflict(f"{path} is larger than {MAX_FILE_BYTES} bytes")
        return handle.read(MAX_FILE_BYTES + 1)


# --- bundles -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Bundle:
    """The shared records of one project, as exported by one source (a machine's project)."""

    source: str
    exported: str
    stores: dict[str, tuple[dict[str, Any], list[Record]]]
    memory: str = ""

    def to_lines(self) -> bytes:
        head = {"format": BUNDLE_FORMAT, "version": BUNDLE_VERSION, "source": self.source,
                "exported": self.exported}
        lines = [json.dumps(head, sort_keys=True)]
        for name in sorted(self.stores):
            top, records = self.stores[name]
            if top:
                lines.append(json.dumps({"kind": name, "top": top}, sort_keys=True,
                                        ensure_ascii=False))
            lines.extend(json.dumps({"kind": name, "record": redact_obj(r)}, sort_keys=True,
                                    ensure_ascii=False) for r in records)
        if self.memory:
            lines.append(json.dumps({"kind": "memory", "text": self.memory}, ensure_ascii=False))
        return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")

    @classmethod
    def from_lines(cls, data: bytes) -> Bundle:
        """Raises ValueError (with the line number) for a file that is not a bundle."""
        lines = data.decode("utf-8", "replace").splitlines()
        try:
            head = json.loads(lines[0]) if lines else None
        except ValueError:
            head = None
        if not isinstance(head, dict) or head.get("format") != BUNDLE_FORMAT:
            raise ValueError("not an slmactor bundle (no header line)")
        if head.get("version") != BUNDLE_VERSION:
            raise ValueError(f"bundle version {head.get('version')!r} is not supported")
        source = str(head.get("source") or "")
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,80}", source):
            raise ValueError("the bundle names no usable source")
        stores: dict[str, tuple[dict[str, Any], list[Record]]] = {
            k.name: ({}, []) for k in KINDS if k.shape is not None}
        memory = ""
        for number, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"line {number} is not JSON") from exc
            kind = BY_NAME.get(str(item.get("kind"))) if isinstance(item, dict) else None
            if kind is None:
                raise ValueError(f"line {number} names no shared store")
            if kind.shape is None:
                memory = str(item.get("text", ""))
            elif isinstance(item.get("top"), dict):
                stores[kind.name] = (item["top"], stores[kind.name][1])
            elif isinstance(item.get("record"), dict):
                stores[kind.name][1].extend(_normalised(kind, [item["record"]], always=True))
        return cls(source=source, exported=str(head.get("exported", "")), stores=stores,
                   memory=memory)


def read_bundle_of(store: Path, source: str, exported: float) -> Bundle:
    """The shared records of the project store at `store` (`<root>/.slmcode`)."""
    stores = {}
    for kind in KINDS:
        if kind.shape is not None:
            stores[kind.name] = parse(kind, read_bytes(store / kind.relpath))
    memory = read_bytes(store / BY_NAME["memory"].relpath).decode("utf-8", "replace")
    return Bundle(source=source, exported=to_rfc3339(exported), stores=stores, memory=memory)


@dataclass(frozen=True, slots=True)
class ImportCount:
    kind: str
    before: int
    after: int
    changed: int


def import_bundle(store: Path, bundle: Bundle) -> list[ImportCount]:
    """Merge `bundle` into the project store at `store`, against the last bundle imported from
    the same source; then keep `bundle` as that base. Caller holds the project's store lock."""
    base_path = store / "bundles" / f"{bundle.source}.jsonl"
    base_bytes = read_bytes(base_path)
    base = Bundle.from_lines(base_bytes) if base_bytes else None
    counts: list[ImportCount] = []
    for kind in KINDS:
        path = store / kind.relpath
        current = read_bytes(path)
        if kind.shape is None:
            ancestor = base.memory if base is not None else ""
            merged = merge_lines(ancestor, current.decode("utf-8", "surrogateescape"),
                                 bundle.memory).encode("utf-8", "surrogateescape")
            changed = int(merged != current)
            before = after = 0
        else:
            ours = parse(kind, current)
            theirs = bundle.stores.get(kind.name, ({}, []))
            o = base.stores.get(kind.name, ({}, [])) if base is not None else ({}, [])
            top, records = merge_parsed(kind, o, ours, theirs)
            merged = encode(kind, top, records)
            old = {canonical(r) for r in ours[1]}
            changed = sum(1 for r in records if canonical(r) not in old)
            before, after = len(ours[1]), len(records)
        if merged != current and (current or merged.strip()):
            ensure_dir(path.parent)
            atomic_write_bytes(path, merged)
        counts.append(ImportCount(kind.name, before, after, changed))
    ensure_dir(base_path.parent)
    atomic_write_bytes(base_path, bundle.to_lines())
    return counts
