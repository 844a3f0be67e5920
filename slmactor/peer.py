"""Whether the daemon behind a runtime directory is ours: the directory's owner and mode, and the
uid of the process listening on its sockets.

Without `$XDG_RUNTIME_DIR` (macOS, ssh, cron, containers) the runtime directory is
`/tmp/slmactor-<uid>`, a name any local user can create first and listen in. A client that
connected there would hand every prompt and tool command to that user and put their answers into
the agent's context. So before anything is sent, a client checks two things, both stdlib-only
and costing microseconds:

- the directory (not followed if it is a symlink) is a directory owned by us that no other user
  can write (`runtime_dir_problem`): binding a socket in it takes write permission, and
  connecting to one takes write permission on the socket file, which the daemon makes 0600 — so
  read bits (a `mkdir` under umask 022, before any daemon tightened it to 0700) are harmless;
- the process listening on the socket runs as our uid: a plain AF_UNIX connect to the socket file
  reads the listener's credentials (`SO_PEERCRED` on Linux, `LOCAL_PEERCRED` on macOS) before
  ZeroMQ exchanges a single byte (`listener_uid`). The same connect tells a stale socket left by a
  crash (ECONNREFUSED) from a live one.

The daemon applies the directory rule when it starts (`slmactor.runtime.rundir`). Stdlib C
modules only (`_socket`, no `socket`): the hook runs this on its start-up path.
"""

from __future__ import annotations

import os
import stat
import sys

#: `listener_uid` when nothing listens (no socket file, refused: a crash left it, or a timeout).
NOBODY = -1
#: `listener_uid` when something listens but this platform cannot say who.
UNKNOWN = -2
#: `listener_uid` when something listens but its backlog stayed full (a burst of connects, or a
#: wedged listener): alive, uid not read. The directory check still holds for it.
BUSY = -3

_FIX = "set SLMACTOR_RUNTIME_DIR (or XDG_RUNTIME_DIR) to a directory only you can write"


def runtime_dir_problem(path: str, uid: int | None = None) -> str:
    """Why `path` is not a runtime directory private to `uid` (default: ours); "" when it is,
    or when it does not exist (nothing can listen in it then)."""
    uid = os.getuid() if uid is None else uid
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"runtime dir {path} cannot be checked ({exc.strerror}); {_FIX}"
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return f"runtime dir {path} is a symlink or not a directory; refusing it; {_FIX}"
    if info.st_uid != uid:
        return (f"runtime dir {path} is owned by uid {info.st_uid}, not by you (uid {uid}): another "
                f"user may be posing as the daemon; refusing it; {_FIX}")
    if info.st_mode & 0o022:
        return (f"runtime dir {path} is writable by other users (mode {stat.S_IMODE(info.st_mode):o}), "
                f"who could listen in it; refusing it; chmod 700 it or {_FIX}")
    return ""


def _peer_uid(sock: object) -> int:
    """The uid of the process at the other end of a connected AF_UNIX socket, or UNKNOWN."""
    import _socket
    import struct

    platform = str(sys.platform)  # read at run time: both branches are checked on any platform
    if platform.startswith("linux"):
        opt = getattr(_socket, "SO_PEERCRED", 17)
        raw = sock.getsockopt(_socket.SOL_SOCKET, opt, struct.calcsize("3i"))  # type: ignore[attr-defined]
        return int(struct.unpack("3i", raw)[1])  # struct ucred {pid, uid, gid}
    if platform == "darwin":
        # <sys/un.h>: SOL_LOCAL 0, LOCAL_PEERCRED 1 -> struct xucred {u_int version; uid_t uid; ...}
        opt = getattr(_socket, "LOCAL_PEERCRED", 1)
        raw = sock.getsockopt(0, opt, 76)  # type: ignore[attr-defined]
        return int(struct.unpack_from("=II", raw)[1])
    return UNKNOWN


def listener_uid(path: str, timeout: float = 0.5) -> int:
    """The uid of the process listening on the unix socket `path`; NOBODY when nothing listens
    (missing, or a file left by a crash: the connect is refused at once), UNKNOWN when the
    platform cannot tell, BUSY when its backlog stayed full for `timeout`. Nothing is sent on
    the connection."""
    import _socket
    import errno
    import struct

    probe = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        # Blocking, with a send timeout: Linux then waits that long for room in a full backlog
        # (many clients connecting at once) instead of failing at once with EAGAIN, as a socket
        # in timeout mode does, which would make a busy daemon look dead.
        seconds = int(timeout)
        probe.setsockopt(_socket.SOL_SOCKET, _socket.SO_SNDTIMEO,
                         struct.pack("ll", seconds, int((timeout - seconds) * 1e6)))
        try:
            probe.connect(path)
        except OSError as exc:
            return BUSY if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK) else NOBODY
        try:
            return _peer_uid(probe)
        except OSError:
            return UNKNOWN
    finally:
        probe.close()


def peer_problem(path: str, peer: int, uid: int | None = None) -> str:
    """Why a listener of uid `peer` (from `listener_uid`) on `path` must not be talked to; ""
    when it is ours, or cannot be told (NOBODY, UNKNOWN, BUSY)."""
    uid = os.getuid() if uid is None else uid
    if peer < 0 or peer == uid:
        return ""
    return (f"{path} is served by a process of uid {peer}, not yours (uid {uid}): another user "
            f"may be posing as the daemon; refusing to talk to it; {_FIX}")
