"""CurveZMQ key files of this user: the daemon's and clients' key pairs and the allow-list.

Under the user store (`$SLMACTOR_HOME/keys/`, else `~/.slmcode/keys/`, directory 0700):

* `<name>.key` / `<name>.key_secret` — a key pair in ZeroMQ's certificate format (pyzmq's
  `zmq.auth.create_certificates`; both 0600). The daemon's own pair is named `server`; a
  client's default pair is `client`.
* `allowed/<name>.key` — the public certificate of each client the daemon serves over tcp.
  `AllowList` re-reads the directory when it changes, so `slmactor keys allow/revoke` take
  effect on the next connection without restarting the daemon.

A key is named by `[A-Za-z0-9_.-]{1,64}`; a public key is 40 z85 characters. Secret files are
never printed or sent anywhere; only public keys leave this directory.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

import zmq.auth

KEYS_DIR = "keys"
ALLOWED_DIR = "allowed"
SERVER_KEY = "server"
CLIENT_KEY = "client"
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_Z85 = re.compile(r"[0-9A-Za-z.\-:+=^!/*?&<>()\[\]{}@%$#]{40}")


class KeyProblem(ValueError):
    """A key operation the user can fix (bad name, missing key, existing key)."""


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name) or name.startswith("."):
        raise KeyProblem(f"key name {name!r} must be 1-64 of A-Z a-z 0-9 _ . - (not leading .)")
    return name


def is_public_key(text: str) -> bool:
    return bool(_Z85.fullmatch(text))


def keys_dir(home: Path) -> Path:
    return Path(home) / KEYS_DIR


def _private_dir(path: Path) -> Path:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise KeyProblem(f"{path} is not a directory of this user; refusing to keep keys there")
    os.chmod(path, 0o700)
    return path


def _public_cert(public: str) -> str:
    # ZeroMQ's certificate format (ZPL), as `zmq.auth.load_certificate` reads it.
    return ("#   ZeroMQ CURVE Public Certificate (slmactor keys allow)\n\nmetadata\ncurve\n"
            f'    public-key = "{public}"\n')


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(text)
    os.chmod(path, 0o600)


@dataclass(frozen=True, slots=True)
class KeyInfo:
    name: str
    public: str
    secret_file: str = ""
    allowed: bool = False

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "public": self.public, "secret_file": self.secret_file,
                "allowed": self.allowed}


def read_public(path: Path) -> str:
    """The z85 public key of a certificate file. Raises KeyProblem."""
    try:
        public, _secret = zmq.auth.load_certificate(str(path))
    except (OSError, ValueError) as exc:
        raise KeyProblem(f"{path} is not a ZeroMQ certificate: {exc}") from exc
    text = public.decode("ascii", "replace") if public else ""
    if not is_public_key(text):
        raise KeyProblem(f"{path} holds no CURVE public key")
    return text


def load_pair(path: Path) -> tuple[bytes, bytes]:
    """(public, secret) z85 keys of a `*.key_secret` file. Raises KeyProblem."""
    try:
        public, secret = zmq.auth.load_certificate(str(path))
    except (OSError, ValueError) as exc:
        raise KeyProblem(f"cannot read the key pair {path}: {exc}") from exc
    if not public or not secret:
        raise KeyProblem(f"{path} holds no secret key (a public certificate?)")
    return public, secret


def create(home: Path, name: str) -> KeyInfo:
    """A new key pair `name` (0600 files). Raises KeyProblem when it exists."""
    check_name(name)
    folder = _private_dir(keys_dir(home))
    if (folder / f"{name}.key_secret").exists() or (folder / f"{name}.key").exists():
        raise KeyProblem(f"key {name!r} exists ({folder}); revoke or remove it first")
    old = os.umask(0o077)
    try:
        public_file, secret_file = zmq.auth.create_certificates(str(folder), name)
    finally:
        os.umask(old)
    for path in (public_file, secret_file):
        os.chmod(path, 0o600)
    return KeyInfo(name, read_public(Path(public_file)), str(secret_file))


def allow(home: Path, what: str, name: str = "") -> KeyInfo:
    """Put a client on the allow-list: `what` is a key name of this user, a public certificate
    file, or a z85 public key (then `name` is required)."""
    folder = keys_dir(home)
    source = Path(what)
    if is_public_key(what) and not source.exists():
        public = what
        if not name:
            raise KeyProblem("allowing a bare public key needs --name")
    elif source.is_file():
        public = read_public(source)
        name = name or source.name.removesuffix(".key_secret").removesuffix(".key")
    elif _NAME.fullmatch(what) and (folder / f"{what}.key").is_file():
        public = read_public(folder / f"{what}.key")
        name = name or what
    else:
        raise KeyProblem(f"{what!r} is no key name, certificate file or public key")
    check_name(name)
    allowed = _private_dir(_private_dir(folder) / ALLOWED_DIR)
    _write_private(allowed / f"{name}.key", _public_cert(public))
    return KeyInfo(name, public, allowed=True)


def revoke(home: Path, name: str) -> bool:
    """Take `name` off the allow-list; False when it was not on it."""
    check_name(name)
    try:
        os.unlink(keys_dir(home) / ALLOWED_DIR / f"{name}.key")
    except FileNotFoundError:
        return False
    return True


def allowed_keys(home: Path) -> dict[str, str]:
    """public z85 key → name, for every readable certificate on the allow-list."""
    folder = keys_dir(home) / ALLOWED_DIR
    out: dict[str, str] = {}
    try:
        entries = sorted(folder.glob("*.key"))
    except OSError:
        return out
    for path in entries:
        try:
            out[read_public(path)] = path.stem
        except KeyProblem:
            continue
    return out


def list_keys(home: Path) -> list[KeyInfo]:
    folder = keys_dir(home)
    allowed = {name: public for public, name in allowed_keys(home).items()}
    infos: dict[str, KeyInfo] = {}
    for path in sorted(folder.glob("*.key")) if folder.is_dir() else []:
        try:
            public = read_public(path)
        except KeyProblem:
            continue
        secret = folder / f"{path.stem}.key_secret"
        infos[path.stem] = KeyInfo(path.stem, public, str(secret) if secret.exists() else "",
                                   allowed=allowed.get(path.stem) == public)
    for name, public in allowed.items():
        if name not in infos:
            infos[name] = KeyInfo(name, public, allowed=True)
    return [infos[n] for n in sorted(infos)]


class AllowList:
    """The allow-list as the daemon's ZAP handler sees it: re-read when the directory changed."""

    def __init__(self, home: Path) -> None:
        self.home = Path(home)
        self._stamp: tuple[int, int] | None = None
        self.keys: dict[str, str] = {}

    def lookup(self, public: str) -> str | None:
        """The name of an allowed public key, else None."""
        try:
            info = os.stat(keys_dir(self.home) / ALLOWED_DIR)
            stamp: tuple[int, int] | None = (info.st_mtime_ns, info.st_ino)
        except OSError:
            stamp = None
        if stamp != self._stamp or stamp is None:
            self.keys = allowed_keys(self.home) if stamp is not None else {}
            self._stamp = stamp
        return self.keys.get(public)
