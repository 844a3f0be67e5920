"""Error codes carried in error replies, and the exception the codec raises.

Codes are stable numbers: clients in any language switch on them, so a code is never reused.
"""

from __future__ import annotations

from enum import IntEnum


class ErrorCode(IntEnum):
    """Why a request failed; sent as `error.code` in an error reply."""

    #: The message did not have exactly the frames `[kind, body]`.
    BAD_FRAMES = 1
    #: The body was not a msgpack map (undecodable, ext type, too deep, too many items).
    BAD_MSGPACK = 2
    #: The body's `v` is missing or not a protocol version this daemon speaks.
    BAD_VERSION = 3
    #: The kind frame names no message this daemon knows.
    UNKNOWN_KIND = 4
    #: A field is missing, of the wrong type, or over its cap.
    BAD_FIELD = 5
    #: The message is larger than the daemon accepts.
    TOO_LARGE = 6
    #: The actor's inbox is full; retry later.
    BUSY = 7
    #: An internal ask between actors took too long.
    TIMEOUT = 8
    #: The actor is restarting, crashed or stopped.
    UNAVAILABLE = 9
    #: The handler raised; the reason says what happened. The actor keeps running.
    INTERNAL = 10
    #: The thing asked for does not exist.
    NOT_FOUND = 11
    #: The project directory is missing, not absolute, or not a directory; or its store is
    #: refused: `.slmcode` is a symlink or another user's, or another daemon writes it (the
    #: reason names that daemon).
    BAD_PROJECT = 12
    #: A store could not be written (disk full, permissions); nothing was acknowledged.
    STORE_ERROR = 13
    #: The daemon is shutting down.
    SHUTTING_DOWN = 14
    #: The request is well formed but not allowed (e.g. a debug hook on a production daemon).
    FORBIDDEN = 15
    #: The request's values are well typed but make no sense (e.g. an unknown scope).
    INVALID = 16


class ProtocolError(Exception):
    """Raised by the codec for a message that cannot be accepted.

    Carries the request id when it could be read, so the daemon can still answer the sender.
    """

    def __init__(self, code: ErrorCode, reason: str, request_id: str = "") -> None:
        super().__init__(f"{code.name}: {reason}")
        self.code = code
        self.reason = reason
        self.request_id = request_id


class RequestError(Exception):
    """Raised by a handler to answer a request with a specific error code (the actor keeps running)."""

    def __init__(self, code: ErrorCode, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
