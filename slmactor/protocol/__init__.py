"""The wire contract shared by the daemon and every client: messages, codec, endpoints.

Imports only the standard library and msgpack, so a harness can depend on it alone.

The message classes (`MESSAGES`, `Kind`, `Message`, `Tell`) load on first use (PEP 562): building
them is most of the start-up of a short-lived client such as `slmactor status` or a hook, which
may never touch them. Everything else loads with the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .codec import (
    MAX_MESSAGE_BYTES,
    MAX_TELL_BYTES,
    Reply,
    dump,
    dump_error,
    dump_result,
    load,
    load_body,
    load_fields,
    load_reply,
)
from .errors import ErrorCode, ProtocolError, RequestError
from .version import PROTOCOL_VERSION

if TYPE_CHECKING:
    from .messages import MESSAGES, Kind, Message, Tell

_FROM_MESSAGES = frozenset({"MESSAGES", "Kind", "Message", "Tell"})

__all__ = [
    "MAX_MESSAGE_BYTES",
    "MAX_TELL_BYTES",
    "MESSAGES",
    "PROTOCOL_VERSION",
    "ErrorCode",
    "Kind",
    "Message",
    "ProtocolError",
    "Reply",
    "RequestError",
    "Tell",
    "dump",
    "dump_error",
    "dump_result",
    "load",
    "load_body",
    "load_fields",
    "load_reply",
]


def __getattr__(name: str) -> Any:
    if name in _FROM_MESSAGES:
        from . import messages

        value = getattr(messages, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
