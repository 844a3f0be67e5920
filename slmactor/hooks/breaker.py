"""The hook breaker: after one hook timed out on the daemon, the next ones do not wait for it.

A wedged daemon (alive, holding `ctl.sock`, not answering) would cost every tool call the whole
hook deadline. So a hook that times out writes `hook-breaker` in the runtime directory: the epoch
second until which later hooks skip the daemon and answer at once (fail-open: the harness gets
its neutral output). When that time has passed, the next hook tries again (half-open): a reply
removes the file, another timeout writes it again. `rm` of the file closes the breaker by hand.

A refused connect is not a timeout: when the daemon crashed or stopped after the breaker opened,
its stale `ctl.sock` refuses at once, so there is nothing to wait out. `holds` checks that with one
connect while the breaker is open, and clears it, so a session start can start the daemon again.

The file is plain text (`<until>\\n<why>\\n`), a few bytes, written by rename so a reader never
sees half of it. Checking it costs one failed `open` while the breaker is closed. Stdlib only:
it runs before anything else on the hook path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

FILE = "hook-breaker"
#: Seconds the breaker stays open after a timeout (`--breaker S` or $SLMACTOR_HOOK_BREAKER_S).
DEFAULT_OPEN_SECONDS = 30.0
ENV_OPEN_SECONDS = "SLMACTOR_HOOK_BREAKER_S"


def open_seconds(given: float | None, env: Mapping[str, str]) -> float:
    """The configured open period: the option, else the environment, else the default."""
    if given is not None:
        return max(given, 0.0)
    try:
        return max(float(env.get(ENV_OPEN_SECONDS, "")), 0.0)
    except ValueError:
        return DEFAULT_OPEN_SECONDS


def open_until(runtime_dir: str) -> float:
    """Epoch second until which the breaker is open (0.0 when closed or unreadable)."""
    try:
        with open(os.path.join(runtime_dir, FILE), encoding="utf-8") as fh:
            first = fh.readline(64)
        return float(first)
    except (OSError, ValueError):
        return 0.0


def is_open(runtime_dir: str, now: float) -> bool:
    return now < open_until(runtime_dir)


def holds(runtime_dir: str, now: float) -> bool:
    """Whether a hook should skip the daemon: the breaker is open and something still listens on
    `ctl.sock` (a wedged daemon). Nothing listening (refused, or no socket) clears the breaker."""
    if not is_open(runtime_dir, now):
        return False
    from slmactor import peer  # stdlib only, like this module

    if peer.listener_uid(os.path.join(runtime_dir, "ctl.sock"), timeout=0.05) == peer.NOBODY:
        clear(runtime_dir)
        return False
    return True


def trip(runtime_dir: str, now: float, seconds: float, why: str) -> None:
    """Open the breaker for `seconds` (nothing when the runtime directory does not exist)."""
    if seconds <= 0 or not os.path.isdir(runtime_dir):
        return
    path = os.path.join(runtime_dir, FILE)
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temp, "w", encoding="utf-8") as fh:
            fh.write(f"{now + seconds:.3f}\n{why.splitlines()[0] if why else ''}\n")
        os.replace(temp, path)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass


def clear(runtime_dir: str) -> None:
    """Close the breaker (a reply came)."""
    try:
        os.unlink(os.path.join(runtime_dir, FILE))
    except OSError:
        pass
