"""Persistence primitives every store is built on (issue 2, item 8): an append-only JSONL log, an
atomic JSON document, Markdown mirrors, the on-disk layout of SPEC S-18, the single-instance lock,
and the warning log `status` shows. Everything written passes through `logic.redact` first.

Stores never import actors or the runtime; they take a `WarningLog` and (optionally) a clock.
"""

from __future__ import annotations

from slmactor.stores.errors import (
    AlreadyRunning,
    RecordNotSerializable,
    RecordTooLarge,
    StoreError,
    StoreWriteError,
)
from slmactor.stores.jsondoc import JsonDoc
from slmactor.stores.jsonl import JsonlLog
from slmactor.stores.layout import (
    ProjectLayout,
    UserLayout,
    default_home,
    project_root_for,
)
from slmactor.stores.lock import StoreLock, acquire_store_lock
from slmactor.stores.markdown import read_text, write_markdown
from slmactor.stores.warnings import WarningLog

__all__ = [
    "AlreadyRunning",
    "JsonDoc",
    "JsonlLog",
    "ProjectLayout",
    "RecordNotSerializable",
    "RecordTooLarge",
    "StoreError",
    "StoreLock",
    "StoreWriteError",
    "UserLayout",
    "WarningLog",
    "acquire_store_lock",
    "default_home",
    "project_root_for",
    "read_text",
    "write_markdown",
]
