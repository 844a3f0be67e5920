"""A whole JSON document on disk, replaced atomically (facts, rules, policy, regressions, ...).

`save` writes a temp file `.<name>.tmp-*` in the same directory (0600), fsyncs it, renames it over
the document and fsyncs the directory (SPEC S-18.3, RELIABILITY (b) 3): a crash at any point
leaves either the old or the new document, never a mix. A failed step raises `StoreWriteError`
and leaves the old document in place.

`load` never raises. A document that cannot be read as JSON (garbage, truncated, empty, invalid
UTF-8, a directory or symlink where the file should be) is moved to `NAME.corrupt` (or
`NAME.corrupt.1`, `.2`, ... — an earlier copy is never overwritten), a warning is recorded, and
`load` returns None so the owner starts from its zero value (SPEC S-18.5). Symlinks are not
followed: a repository cannot point a store file at something outside it.

Valid JSON of the wrong shape is treated the same way, by one rule for every store: an owner
names the shape it reads (`Shape`: the key of its list or map), and a document that is not that
shape — `"rules": "not a list"`, `"keys": "not a map"`, a bare `[]` where the object should be,
a journal that is a list — is quarantined with a warning and `load` returns None, instead of
being read as empty and overwritten or deleted silently at the next save.

Stale temp files from a crash between write and rename are removed when the store is opened.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slmactor.logic.text.redact import redact_obj
from slmactor.stores.base.errors import (
    RecordNotSerializable,
    RecordTooLarge,
    StoreError,
    StoreWriteError,
)
from slmactor.stores.base.fsutil import (
    READ_FLAGS,
    Clock,
    atomic_write_bytes,
    is_regular,
    not_a_file,
    quarantine,
    remove_stale_temps,
)
from slmactor.stores.base.jsonl_lines import loads_servable
from slmactor.stores.base.warnings import WarningLog

#: Documents larger than this are refused on save and treated as unreadable on load.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
#: How deep a record sits in a records document (`{key: [record]}`), for redaction's depth bound.
RECORD_DEPTH = 2


def encode_document(data: Any, records_key: str | None = None) -> bytes:
    """The on-disk form: UTF-8 JSON, 2-space indent, keys in insertion order, final newline.

    With `records_key`, a document `{..., records_key: [records]}` is written one record per
    line with sorted keys instead: a store shared through git then diffs and merges record by
    record (one changed counter is one changed line), and every writer produces the same bytes.
    """
    try:
        records = data.get(records_key) if records_key and isinstance(data, dict) else None
        if not isinstance(records, list):
            text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
            return (text + "\n").encode("utf-8", "surrogatepass")
        assert records_key is not None
        return _one_record_per_line(data, records_key, [encode_row(r) for r in records])
    except (TypeError, ValueError) as exc:
        raise RecordNotSerializable(f"document is not JSON-serialisable: {exc}") from exc


def encode_row(record: Any) -> str:
    """One record's line of a records document (sorted keys)."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False, sort_keys=True)


def _one_record_per_line(data: dict[str, Any], records_key: str, rows: list[str]) -> bytes:
    """`encode_document`'s records form, the records' lines given (`encode_row`)."""
    head = [f"  {json.dumps(k, ensure_ascii=False)}: "
            f"{json.dumps(v, ensure_ascii=False, allow_nan=False, sort_keys=True)}"
            for k, v in data.items() if k != records_key]
    body = "[]" if not rows else "[\n" + ",\n".join(f"    {r}" for r in rows) + "\n  ]"
    head.append(f"  {json.dumps(records_key)}: {body}")
    text = "{\n" + ",\n".join(head) + "\n}"
    return (text + "\n").encode("utf-8", "surrogatepass")


@dataclass(frozen=True, slots=True)
class Shape:
    """What a document must look like: an object whose `key` holds a `kind` (list or dict).
    No store ever wrote a bare list, so a bare `[]` is the wrong shape, not an empty store."""

    key: str
    kind: type = list
    #: The key may be missing (the owner then reads its zero value).
    optional: bool = False

    def problem(self, data: Any) -> str:
        """Why `data` is not of this shape, or ""."""
        if not isinstance(data, dict):
            return f"a JSON {type(data).__name__}, not an object"
        if self.key not in data:
            return "" if self.optional else f"no {self.key!r}"
        if not isinstance(data[self.key], self.kind):
            return f"{self.key!r} is not a {'list' if self.kind is list else 'map'}"
        return ""


class JsonDoc:
    """One JSON document at `path`, owned by a single writer."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        warnings: WarningLog,
        *,
        redact: bool = True,
        read_only: bool = False,
        max_bytes: int = DEFAULT_MAX_BYTES,
        records_key: str | None = None,
        now: Clock = time.time,
        shape: Shape | None = None,
    ) -> None:
        self.path = Path(path)
        self.shape = shape
        #: The list written one record per line (`encode_document`); None = plain indented JSON.
        self.records_key = records_key
        self.warnings = warnings
        self.redact = redact
        self.read_only = read_only
        self.max_bytes = max_bytes
        self._now = now
        # One owner, but possibly two threads (an actor and its flush worker): saves in order.
        self._lock = threading.Lock()
        #: Each record's line as last saved, redacted, by its line before redaction.
        self._redacted_rows: dict[str, str] = {}
        if not read_only:
            remove_stale_temps(self.path)

    def _read_bytes(self) -> bytes | None:
        """The raw document; None when missing. Raises ValueError for a non-file / oversize."""
        try:
            fd = os.open(self.path, READ_FLAGS)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if not_a_file(exc):
                raise ValueError("is not a regular file") from exc
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ValueError("is not a regular file")
            if info.st_size > self.max_bytes:
                raise ValueError(f"is larger than {self.max_bytes} bytes")
            chunks: list[bytes] = []
            total = 0
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                total += len(chunk)
                if total > self.max_bytes:
                    raise ValueError(f"is larger than {self.max_bytes} bytes")
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def load(self) -> Any | None:
        """The stored document, or None when it is missing or had to be quarantined."""
        try:
            raw = self._read_bytes()
        except ValueError as exc:
            self._set_aside(f"unreadable ({exc})")
            return None
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):
                self._set_aside("unreadable (permission denied)")
            else:
                self.warnings.warn(f"{self.path.name} could not be read: {exc.strerror}", self._now(),
                                   self.path)
            return None
        if raw is None:
            return None
        try:
            data = loads_servable(raw)
        except (ValueError, RecursionError) as exc:
            reason = "empty" if not raw.strip() else f"not valid JSON: {exc}"
            self._set_aside(f"unreadable ({reason[:160]})")
            return None
        problem = self.shape.problem(data) if self.shape is not None else ""
        if problem:
            self._set_aside(f"has the wrong shape ({problem})")
            return None
        return data

    def set_aside(self, why: str) -> None:
        """Quarantine a document its owner cannot use (`why`: e.g. the wrong shape)."""
        self._set_aside(why)

    def _set_aside(self, why: str) -> None:
        """Quarantine the document, or only warn when this store is read-only (S-18.5)."""
        if self.read_only:
            self.warnings.warn(f"{self.path.name} {why}; left in place (read-only)", self._now(),
                               self.path)
        else:
            quarantine(self.path, self.warnings, self._now(), why)

    def save(self, data: Any) -> None:
        """Replace the document by `data` (redacted unless `redact=False`), atomically."""
        if self.read_only:
            raise StoreError(f"{self.path} is open read-only")  # before the work of encoding
        payload = self._redacted_payload(data) if self.redact else encode_document(
            data, self.records_key)
        self._write_payload(payload)

    def _write_payload(self, payload: bytes) -> None:
        if self.read_only:
            raise StoreError(f"{self.path} is open read-only")
        if len(payload) > self.max_bytes:
            raise RecordTooLarge(self.path, len(payload), self.max_bytes)
        with self._lock:
            if is_regular(self.path) is False:
                moved = quarantine(self.path, self.warnings, self._now(), "is not a regular file")
                if moved is None and os.path.lexists(self.path):
                    raise StoreWriteError(self.path, "a non-file is in the way")
            atomic_write_bytes(self.path, payload)

    def save_rows(self, head: dict[str, Any], rows: list[str]) -> None:
        """`save(head + {records_key: records})` for records already encoded with `encode_row`
        (and redacted, or needing none): an owner that keeps each record's line saves its
        document without encoding the unchanged ones again."""
        if self.records_key is None:
            raise ValueError(f"{self.path} is not a records document")
        try:
            payload = _one_record_per_line(head, self.records_key, rows)
        except (TypeError, ValueError) as exc:
            raise RecordNotSerializable(f"document is not JSON-serialisable: {exc}") from exc
        self._write_payload(payload)

    def _redacted_payload(self, data: Any) -> bytes:
        """`encode_document(redact_obj(data))`, redacting only the records that changed since
        the last save. A store saved on every change (the facts, hundreds of times a second
        under many clients) spent two thirds of each save redacting records it had redacted
        before. A record is known by its own encoding, not by identity, so one changed in
        place is redacted again (redaction is a pure function of the text)."""
        records = data.get(self.records_key) if self.records_key and isinstance(data, dict) \
            else None
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            # (Lines of text are redacted as a list: a private key split one line per item.)
            return encode_document(redact_obj(data), self.records_key)
        assert self.records_key is not None
        head = redact_obj({k: v for k, v in data.items() if k != self.records_key})
        assert isinstance(head, dict)
        known, rows = self._redacted_rows, []
        seen: dict[str, str] = {}
        try:
            for record in records:
                raw = encode_row(record)
                row = known.get(raw) or seen.get(raw)
                if row is None:
                    row = encode_row(redact_obj(record, depth=RECORD_DEPTH))
                seen[raw] = row
                rows.append(row)
            payload = _one_record_per_line(head, self.records_key, rows)
        except (TypeError, ValueError) as exc:
            raise RecordNotSerializable(f"document is not JSON-serialisable: {exc}") from exc
        self._redacted_rows = seen  # the records of this save only: bounded by the document
        return payload

    def exists(self) -> bool:
        return os.path.lexists(self.path)

    def delete(self) -> None:
        """Remove the document; a missing one is fine."""
        if self.read_only:
            raise StoreError(f"{self.path} is open read-only")
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            quarantine(self.path, self.warnings, self._now(), "is a directory")
        except OSError as exc:
            raise StoreWriteError(self.path, "could not delete", exc.errno) from exc
