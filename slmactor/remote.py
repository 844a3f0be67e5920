"""Where a client finds a daemon on another host or outside its container, and how it proves who
it is: the client half of the remote endpoints (`slmactor.runtime.remote` is the daemon's).

A `Target` comes from `SLMACTOR_CONNECT_CTL` / `SLMACTOR_CONNECT_EVENTS` (tcp endpoints),
`SLMACTOR_SERVER_KEY` (the daemon's public key: 40 z85 characters, or its `server.key`
certificate file), `SLMACTOR_CLIENT_KEY` (this client's `*.key_secret`; default
`$SLMACTOR_HOME/keys/client.key_secret`) and `SLMACTOR_PATH_MAP` (`/workspace=/home/me/app`,
several joined by `;`) — or, for each one not in the environment, the same names in lower case
in the config file (`$SLMACTOR_CONFIG`, else `~/.config/slmactor/config.toml`). Without
`connect_ctl` there is no target and clients use the local ipc sockets as always.

A target without a server key is refused, loopback or not: the daemon serves tcp only with
CURVE and an allow-listed client key (another local account can reach a loopback port too), so
a client never sends memory in the clear and never to a daemon it cannot authenticate. Project paths are
mapped before they leave: a container's `/workspace/src` is the host's `/home/me/app/src`, so
its episodes land in the host's project. Reading this costs a hook a few environment lookups
and one `stat`; the config file is parsed only when it mentions `connect_`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# Imported by every client and hook (`remote_configured`): nothing here imports ZeroMQ, and the
# parsing modules are imported inside the functions that need them.

NAMES = ("connect_ctl", "connect_events", "server_key", "client_key", "path_map")


class TargetProblem(ValueError):
    """The remote target as configured cannot be used safely (or at all)."""


class Target:
    """A daemon reached over tcp (a plain class: no `dataclasses` import for every hook)."""

    __slots__ = ("client_public", "client_secret", "ctl", "events", "path_map", "server_key")

    def __init__(self, ctl: str, events: str, server_key: bytes = b"",
                 client_public: bytes = b"", client_secret: bytes = b"",
                 path_map: tuple[tuple[str, str], ...] = ()) -> None:
        self.ctl = ctl
        self.events = events
        self.server_key = server_key
        self.client_public = client_public
        self.client_secret = client_secret
        self.path_map = path_map

    def __repr__(self) -> str:  # never the secret key
        return f"Target(ctl={self.ctl!r}, events={self.events!r}, curve={bool(self.server_key)})"

    def secure(self, sock: Any) -> None:
        """Make `sock` a CURVE client of the daemon (before it connects)."""
        if self.server_key:
            sock.curve_serverkey = self.server_key
            sock.curve_publickey = self.client_public
            sock.curve_secretkey = self.client_secret

    def map_path(self, path: str) -> str:
        """`path` in the daemon's view: the longest matching prefix replaced."""
        return map_path(path, self.path_map)


def map_path(path: str, pairs: tuple[tuple[str, str], ...]) -> str:
    """`path` with the first (longest) matching `(inside, outside)` prefix replaced."""
    for inside, outside in pairs:
        if path == inside or path.startswith(inside.rstrip("/") + "/"):
            return outside.rstrip("/") + path[len(inside.rstrip("/")):]
    return path


def local_path_map(environ: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """`SLMACTOR_PATH_MAP` for a client of a daemon whose ipc directory is bind-mounted into its
    container (no tcp target, same mapping). Raises TargetProblem."""
    env = os.environ if environ is None else environ
    return _parse_map(env.get("SLMACTOR_PATH_MAP", ""))


def _loopback(endpoint: str) -> bool:
    import ipaddress
    from urllib.parse import urlsplit

    host = urlsplit(endpoint).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def remote_configured() -> bool:
    """Whether a daemon over tcp is configured (`SLMACTOR_CONNECT_CTL`, or `connect_ctl` in the
    config file). Cheap — an environment lookup and one small read — and importing this module
    does not import ZeroMQ, so a hook can ask it before anything else."""
    if os.environ.get("SLMACTOR_CONNECT_CTL"):
        return True
    config = os.environ.get("SLMACTOR_CONFIG") or os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config"),
        "slmactor", "config.toml")
    try:
        with open(config, "rb") as handle:
            return b"connect_ctl" in handle.read(1 << 20)
    except OSError:
        return False


def _config_path(environ: Mapping[str, str]) -> Path:
    given = environ.get("SLMACTOR_CONFIG", "")
    if given:
        return Path(given)
    base = environ.get("XDG_CONFIG_HOME", "") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "slmactor" / "config.toml"


def _config_bytes(environ: Mapping[str, str]) -> bytes:
    try:
        with open(_config_path(environ), "rb") as handle:
            return handle.read(1 << 20)
    except OSError:
        return b""


def _config_values(environ: Mapping[str, str]) -> dict[str, str]:
    path = _config_path(environ)
    data = _config_bytes(environ)
    if b"connect_" not in data:
        return {}
    import tomllib

    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TargetProblem(f"{path}: not valid TOML: {exc}") from None
    return {k: str(table[k]) for k in NAMES if k in table}


def _parse_map(text: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in text.split(";"):
        if not item.strip():
            continue
        inside, sep, outside = item.partition("=")
        if not sep or not inside.startswith("/") or not outside.startswith("/"):
            raise TargetProblem(f"path_map entry {item!r} is not /container/path=/host/path")
        pairs.append((inside.strip(), outside.strip()))
    # Longest first, so /workspace/sub=... wins over /workspace=...
    return tuple(sorted(pairs, key=lambda p: -len(p[0])))


def _server_key(text: str) -> bytes:
    from slmactor.stores.keys import KeyProblem, is_public_key, read_public

    if is_public_key(text):
        return text.encode("ascii")

    try:
        return read_public(Path(text).expanduser()).encode("ascii")
    except KeyProblem as exc:
        raise TargetProblem(f"server_key: {exc}") from None


def target(environ: Mapping[str, str] | None = None) -> Target | None:
    """The configured remote daemon, or None (use the local sockets). Raises TargetProblem."""
    env = os.environ if environ is None else environ
    values = {name: env.get(f"SLMACTOR_{name.upper()}", "") for name in NAMES}
    if not values["connect_ctl"]:
        file_values = _config_values(env)
        values = {name: values[name] or file_values.get(name, "") for name in NAMES}
    ctl = values["connect_ctl"].strip()
    if not ctl:
        return None
    from urllib.parse import urlsplit

    events = values["connect_events"].strip()
    if not events:
        raise TargetProblem(f"connect_ctl is {ctl} but connect_events is not set: tells need "
                            "the daemon's tcp events endpoint too")
    for endpoint in (ctl, events):
        try:
            port = urlsplit(endpoint).port
        except ValueError:
            port = None
        if not endpoint.startswith("tcp://") or not port:
            raise TargetProblem(f"{endpoint!r} is not tcp://HOST:PORT")
    path_map = _parse_map(values["path_map"])
    if not values["server_key"].strip():
        where = "across a network" if not (_loopback(ctl) and _loopback(events)) else \
            "over tcp (any local account can reach a loopback port)"
        raise TargetProblem(f"no server_key for {ctl}: refusing to talk to a daemon {where} "
                            "without CURVE")
    from slmactor.stores.keys import CLIENT_KEY, KeyProblem, keys_dir, load_pair

    secret_file = values["client_key"].strip()
    if not secret_file:
        home = env.get("SLMACTOR_HOME", "") or str(Path.home() / ".slmcode")
        secret_file = str(keys_dir(Path(home)) / f"{CLIENT_KEY}.key_secret")
    try:
        public, secret = load_pair(Path(secret_file).expanduser())
    except KeyProblem as exc:
        raise TargetProblem(f"client_key: {exc} (make one: `slmactor keys create client`)") \
            from None
    return Target(ctl, events, _server_key(values["server_key"].strip()), public, secret,
                  path_map)
