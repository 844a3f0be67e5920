"""The wire contract shared by the daemon and every client: messages, codec, endpoints.

Imports only the standard library and msgpack, so a harness can depend on it alone.
"""

from .codec import (
    MAX_MESSAGE_BYTES,
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
from .messages import MESSAGES, PROTOCOL_VERSION, Kind, Message, Tell

__all__ = [
    "MAX_MESSAGE_BYTES",
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
