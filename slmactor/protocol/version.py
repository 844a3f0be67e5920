"""The wire format's version number, on its own so that importing it costs nothing."""

from __future__ import annotations

#: Version of the wire format; a daemon answers other versions with `BAD_VERSION`.
PROTOCOL_VERSION = 1
