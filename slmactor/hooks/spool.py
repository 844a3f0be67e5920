"""Hook events taken while the breaker is open, written down raw for the next hook to file.

While the daemon is skipped (the breaker: `breaker.py`) a hook must still answer at once, but
what the session did must not be lost: the event's payload goes, unparsed, into the runtime
directory's `hook-sessions/hook-spool` (0600; at most 8 MiB, beyond that events are dropped with
a warning). The next hook that reaches the daemon files the spooled events into their sessions'
ledgers (`loop.replay_spool`): calls and prompts as entries, a session's end as a report to send.

Stdlib only, no `json` and no parsing: it runs on the breaker's fast path, where a hook costs
little more than the interpreter's start. A record is a line `SLM1 <header bytes> <payload
bytes>`, then the header (harness, event, cwd, the harness's project variable, `--project`, the
time, separated by NUL, which none of them can contain), the payload as the harness sent it,
and a newline.
"""

from __future__ import annotations

import contextlib
import os

SPOOL = "hook-spool"
MAX_SPOOL_BYTES = 8 << 20
_MAGIC = b"SLM1"
_FIELDS = ("fmt", "event", "cwd", "project_env", "project", "at")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def path(runtime_dir: str) -> str:
    return os.path.join(runtime_dir, "hook-sessions", SPOOL)


def append(runtime_dir: str, harness: str, event: str, cwd: str, project_env: str, project: str, raw: bytes,
           now: float) -> bool:
    """Write one event down; False when the spool is full or cannot be written."""
    target = path(runtime_dir)
    try:
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        if os.fstat(fd).st_size > MAX_SPOOL_BYTES:
            return False
        header = "\0".join((harness, event, cwd, project_env, project, repr(now))).encode("utf-8", "replace")
        record = b"%s %d %d\n%s%s\n" % (_MAGIC, len(header), len(raw), header, raw)
        os.write(fd, record)  # one write: records of concurrent hooks do not interleave
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def parse(data: bytes) -> list[dict[str, Any]]:
    """The records of a spool's bytes, in order; a damaged tail (a write cut by a crash) ends it."""
    records: list[dict[str, Any]] = []
    at = 0
    while at < len(data):
        end = data.find(b"\n", at)
        head = data[at:end].split(b" ") if end >= 0 else []
        if len(head) != 3 or head[0] != _MAGIC or not head[1].isdigit() or not head[2].isdigit():
            break
        size, length = int(head[1]), int(head[2])
        start = end + 1
        if start + size + length > len(data):
            break
        fields = data[start:start + size].decode("utf-8", "replace").split("\0")
        if len(fields) != len(_FIELDS):
            break
        record: dict[str, Any] = dict(zip(_FIELDS, fields, strict=True))
        try:
            record["at"] = float(record["at"])
        except ValueError:
            record["at"] = 0.0
        record["payload"] = data[start + size:start + size + length].decode("utf-8", "replace")
        records.append(record)
        at = start + size + length + 1
    return records


def take(runtime_dir: str) -> list[dict[str, Any]]:
    """Every spooled event (oldest first), removed from the spool; [] when there is none. The
    spool is renamed first, so events spooled meanwhile start a new one."""
    target = path(runtime_dir)
    if not os.path.exists(target):
        return []
    claimed = f"{target}.taken-{os.getpid()}"
    try:
        os.replace(target, claimed)
        with open(claimed, "rb") as fh:
            data = fh.read(MAX_SPOOL_BYTES + (1 << 20))
    except OSError:
        return []
    finally:
        with contextlib.suppress(OSError):  # already gone: nothing left to claim twice
            os.unlink(claimed)
    return parse(data)
