"""Who the page answers: a request on loopback, from this user, carrying this launch's token.

* The server binds 127.0.0.1 only (never a wildcard address), so no other host reaches it.
* Every launch draws a new token (`secrets.token_urlsafe`, 192 bits); a request without it, or
  with another, is answered 403 and nothing else. It travels in the URL the command prints (and
  in each link and form of the page); compared in constant time.
* On Linux the peer's uid is read from the kernel's socket table (`/proc/net/tcp`: the row whose
  local address is the peer's and remote address ours); a connection of another user is
  refused even with the token. Where there is no such table (macOS) the token alone decides.
* The `Host` header must name the loopback address the page is on (a page of another site that
  resolves its own name to 127.0.0.1 cannot read or drive it), and a form must come from the
  page's own origin.
"""

from __future__ import annotations

import hmac
import os
import secrets
import socket
from dataclasses import dataclass

TCP_TABLE = "/proc/net/tcp"


def new_token() -> str:
    return secrets.token_urlsafe(24)


def _hex_address(host: str, port: int) -> str:
    """An IPv4 address as /proc/net/tcp writes it: the address in host byte order, then port."""
    packed = socket.inet_aton(host)
    return f"{int.from_bytes(packed, 'little'):08X}:{port:04X}"


#: What `peer_uid` says of a connection the table does not list (refused: nobody's to trust).
UNKNOWN_PEER = -1


def peer_uid(peer: tuple[str, int], local: tuple[str, int], table: str = TCP_TABLE) -> int | None:
    """The uid owning the socket at `peer` connected to `local`; None when there is no table to
    read (not Linux), UNKNOWN_PEER when the table does not list the connection."""
    try:
        with open(table, encoding="ascii") as fh:
            rows = fh.read().splitlines()[1:]
    except OSError:
        return None
    want_local, want_remote = _hex_address(*peer), _hex_address(*local)
    for row in rows:
        fields = row.split()
        if len(fields) > 7 and fields[1] == want_local and fields[2] == want_remote:
            try:
                return int(fields[7])
            except ValueError:
                return UNKNOWN_PEER
    return UNKNOWN_PEER


@dataclass(frozen=True, slots=True)
class Gate:
    """The checks one launch applies to every request."""

    token: str
    host: str
    port: int
    uid: int = os.getuid()

    def token_ok(self, given: str) -> bool:
        return bool(given) and hmac.compare_digest(given.encode(), self.token.encode())

    def host_ok(self, header: str | None) -> bool:
        allowed = {f"{self.host}:{self.port}", f"localhost:{self.port}"}
        return header is not None and header.strip().lower() in allowed

    def origin_ok(self, origin: str | None) -> bool:
        """A form's `Origin` (absent from some clients: then the token decides alone)."""
        if origin is None:
            return True
        return origin.strip().lower() in {f"http://{self.host}:{self.port}",
                                          f"http://localhost:{self.port}"}

    def peer_ok(self, peer: tuple[str, int]) -> bool:
        """False when the kernel says the connection is another user's."""
        uid = peer_uid(peer, (self.host, self.port))
        return uid is None or uid == self.uid
