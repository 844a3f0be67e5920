"""Persistence primitives every store is built on: an append-only JSONL log, an
atomic JSON document, Markdown mirrors, the on-disk layout of SPEC S-18, the single-instance lock,
and the warning log `status` shows. Everything written passes through `logic.text.redact` first.

Stores never import actors or the runtime; they take a `WarningLog` and (optionally) a clock.
"""

from __future__ import annotations

from slmactor.stores.base.errors import (
    AlreadyRunning,
    RecordNotSerializable,
    RecordTooLarge,
    StoreError,
    StoreWriteError,
)
from slmactor.stores.base.jsondoc import JsonDoc
from slmactor.stores.base.jsonl import JsonlLog
from slmactor.stores.base.layout import (
    ProjectLayout,
    UserLayout,
    default_home,
    project_root_for,
)
from slmactor.stores.base.lock import StoreLock, acquire_store_lock
from slmactor.stores.base.markdown import read_text, write_markdown
from slmactor.stores.base.warnings import WarningLog

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
