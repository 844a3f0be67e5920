"""Where the user's one daemon listens: its runtime directory, found the same way from any
environment, and the marker `slmactor stop` leaves there.

A parent process may strip environment variables: an agent starts its MCP servers without
`XDG_RUNTIME_DIR`, a CI runner hands hooks a bare environment, a long-lived hook host keeps the
environment of whichever shell started it. A client that derived the socket directory from those
variables looked somewhere else, found nothing, and started a second daemon. So the directory
comes from the user id and the system's own files first, and from variables only after that:

1. `$SLMACTOR_RUNTIME_DIR`, when set: an explicit choice (tests, containers, a second daemon on
   purpose) is taken as it is, and nothing else is looked at;
2. `/run/user/<uid>/slmactor`, when `/run/user/<uid>` is what systemd-logind makes for a logged-in
   user (pam_systemd(8), "$XDG_RUNTIME_DIR"): a real directory, owned by us, mode 0700. It is
   there whatever the environment says;
3. `$XDG_RUNTIME_DIR/slmactor`, when that variable is set (a system without logind that sets it);
4. `/tmp/slmactor-<uid>` (macOS, containers, ssh without a login session), checked before use
   like the others (`slmactor.peer`).

`preferred` is where a daemon starts; `locate` is where clients talk: the preferred directory,
unless nothing of ours listens there and a daemon of ours listens in another of the candidates
above, or in the runtime dir the user store's lock names (a daemon started with another
`$SLMACTOR_RUNTIME_DIR`). Then that one is used: one daemon per user, however a client was
started. Every client uses these — the CLI, `slmactor mcp`, the hooks, autostart — and the units
`slmactor service` writes set no runtime dir, so the daemon under them answers the same way.

`$SLMACTOR_TEST_ROOT` is for tests only: a directory standing in for `/` in the two places that
come from the uid (`<root>/run/user/<uid>`, `<root>/tmp/slmactor-<uid>`), since a test cannot
create `/run/user/<uid>` and must not find another test's daemon in `/tmp`. The same checks
apply to whatever it names.

Stdlib only, no `pathlib`: the hook runs this on its start-up path.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

ENV_RUNTIME_DIR = "SLMACTOR_RUNTIME_DIR"
#: For tests only: the directory standing in for `/` in `/run/user/<uid>` and `/tmp/slmactor-<uid>`.
ENV_TEST_ROOT = "SLMACTOR_TEST_ROOT"
RUN_USER_ROOT = "/run/user"
SUBDIR = "slmactor"
#: Left in the runtime dir by `slmactor stop`; autostarts refuse while it is there, and a daemon
#: that starts removes it.
STOP_MARKER = "stopped"


def _uid(uid: int | None) -> int:
    return os.getuid() if uid is None else uid


def _under_test_root(env: Mapping[str, str], path: str) -> str:
    root = env.get(ENV_TEST_ROOT, "")
    return os.path.join(root, path.lstrip("/")) if root else path


def run_user_root(env: Mapping[str, str]) -> str:
    """`/run/user` (or its stand-in under `$SLMACTOR_TEST_ROOT`)."""
    return _under_test_root(env, RUN_USER_ROOT)


def login_runtime_dir(env: Mapping[str, str], uid: int | None = None) -> str:
    """`/run/user/<uid>` when systemd-logind made it for us (a directory, not a symlink, owned by
    `uid`, mode 0700), else ""."""
    uid = _uid(uid)
    path = os.path.join(run_user_root(env), str(uid))
    try:
        info = os.lstat(path)
    except OSError:
        return ""
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or stat.S_IMODE(info.st_mode) != 0o700:
        return ""
    return path


def candidates(env: Mapping[str, str], uid: int | None = None) -> list[str]:
    """The runtime dirs a daemon of this user may serve, most preferred first (without an
    explicit `$SLMACTOR_RUNTIME_DIR`)."""
    uid = _uid(uid)
    out: list[str] = []
    login = login_runtime_dir(env, uid)
    if login:
        out.append(os.path.join(login, SUBDIR))
    xdg = env.get("XDG_RUNTIME_DIR", "")
    if xdg:
        out.append(os.path.join(xdg, SUBDIR))
    # Not platformdirs' /tmp/runtime-<uid>: that is shared with other programs and warns.
    out.append(_under_test_root(env, f"/tmp/slmactor-{uid}"))
    return _unique(out)


def _unique(paths: list[str]) -> list[str]:
    """`paths` without those naming a directory already listed (the first spelling kept)."""
    unique: list[str] = []
    for path in paths:
        if os.path.normpath(path) not in map(os.path.normpath, unique):
            unique.append(path)
    return unique


def explicit(env: Mapping[str, str]) -> str:
    """`$SLMACTOR_RUNTIME_DIR`, or "" when it is not set (or blank)."""
    return env.get(ENV_RUNTIME_DIR, "").strip()


def preferred(env: Mapping[str, str], uid: int | None = None) -> str:
    """Where a daemon of this user starts: `$SLMACTOR_RUNTIME_DIR`, else the first candidate."""
    return explicit(env) or candidates(env, uid)[0]


def ours_listening(runtime_dir: str, uid: int | None = None) -> bool:
    """Whether a daemon of `uid` listens in `runtime_dir` (a private directory of ours, and a
    listener on its `ctl.sock` that is ours or cannot be told apart from ours)."""
    from slmactor import peer

    uid = _uid(uid)
    if not os.path.isdir(runtime_dir) or peer.runtime_dir_problem(runtime_dir, uid):
        return False
    who = peer.listener_uid(os.path.join(runtime_dir, "ctl.sock"))
    return who == uid or who in (peer.UNKNOWN, peer.BUSY)


def _lock_notes(env: Mapping[str, str]) -> list[str]:
    """The runtime dirs the user stores' locks name (line 2 of `<home>/.lock`, written by the
    daemon holding it): `$SLMACTOR_HOME`'s and the default `~/.slmcode`'s (`~` from `$HOME`, else
    the password database)."""
    user_home = env.get("HOME", "")
    if not user_home and not env.get(ENV_TEST_ROOT):  # a test's home is the one it gives
        import pwd

        try:
            user_home = pwd.getpwuid(os.getuid()).pw_dir
        except KeyError:
            user_home = ""
    homes = [env.get("SLMACTOR_HOME", "").strip(), os.path.join(user_home, ".slmcode") if user_home else ""]
    notes: list[str] = []
    for home in filter(None, homes):
        if home.startswith("~"):
            home = user_home + home[1:] if user_home else ""
        if not os.path.isabs(home):
            continue
        try:
            with open(os.path.join(home, ".lock"), encoding="utf-8", errors="replace") as handle:
                lines = handle.read(4096).splitlines()
        except OSError:
            continue
        if len(lines) > 1 and os.path.isabs(lines[1].strip()):
            notes.append(lines[1].strip())
    return notes


def locate(env: Mapping[str, str], uid: int | None = None) -> str:
    """The runtime dir clients talk to (see the module docstring)."""
    given = explicit(env)
    if given:
        return given
    uid = _uid(uid)
    found = candidates(env, uid)
    if ours_listening(found[0], uid):
        return found[0]
    for other in found[1:] + _lock_notes(env):
        if ours_listening(other, uid):
            return other
    return found[0]


# ---------------------------------------------------------------- "the user stopped it"


def stopped(runtime_dir: str) -> bool:
    """Whether `slmactor stop` left its marker in `runtime_dir` (and no daemon started since)."""
    return os.path.isfile(os.path.join(runtime_dir, STOP_MARKER))


def mark_stopped(runtime_dir: str, note: str) -> None:
    """Leave the marker (creating a private `runtime_dir` if needed). Raises OSError."""
    os.makedirs(runtime_dir, mode=0o700, exist_ok=True)
    path = os.path.join(runtime_dir, STOP_MARKER)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(note + "\n")


def clear_stopped(runtime_dir: str) -> bool:
    """Remove the marker; True when there was one."""
    try:
        os.unlink(os.path.join(runtime_dir, STOP_MARKER))
    except FileNotFoundError:
        return False
    return True


def marker_dirs(env: Mapping[str, str], runtime_dir: str, uid: int | None = None) -> list[str]:
    """Where `slmactor stop` leaves its marker and autostarts look for it: the dir of the daemon,
    and without an explicit `$SLMACTOR_RUNTIME_DIR` every candidate dir and the dirs the user
    stores' locks name — an autostart happens in the preferred dir of the client that starts,
    whose environment may not be the one `stop` ran in."""
    if explicit(env):
        return [runtime_dir]
    return _unique([runtime_dir, *candidates(env, uid), *_lock_notes(env)])


def stopped_for(env: Mapping[str, str], runtime_dir: str) -> bool:
    """Whether an autostart into `runtime_dir` must not happen: the marker there, or — without
    an explicit `$SLMACTOR_RUNTIME_DIR` — in any candidate dir or the dir the user store's lock
    names (the daemon the user stopped may have served one this environment does not prefer)."""
    return any(stopped(each) for each in marker_dirs(env, runtime_dir))


def mark_stopped_everywhere(env: Mapping[str, str], runtime_dir: str, note: str) -> None:
    """The marker in each of `marker_dirs` that is private to us (created, 0700, when its parent
    exists). Raises OSError when it cannot be left in `runtime_dir` itself."""
    from slmactor import peer

    mark_stopped(runtime_dir, note)
    for other in marker_dirs(env, runtime_dir)[1:]:
        if peer.runtime_dir_problem(other) or not os.path.isdir(os.path.dirname(other)):
            continue
        try:
            mark_stopped(other, note)
        except OSError:
            continue  # not ours to write: nothing autostarts there without passing its checks


def clear_stopped_everywhere(env: Mapping[str, str], runtime_dir: str) -> bool:
    """Remove the marker from each of `marker_dirs`; True when there was one in any."""
    cleared = False
    for each in marker_dirs(env, runtime_dir):
        try:
            cleared = clear_stopped(each) or cleared
        except OSError:
            continue
    return cleared
