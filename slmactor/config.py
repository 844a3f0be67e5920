"""Daemon settings: where things live and how big things may get.

Settings come from (lowest to highest priority) built-in defaults, `~/.config/slmactor/config.toml`
(or `$SLMACTOR_CONFIG`), environment variables, and CLI flags. Only stdlib and platformdirs here;
platformdirs is imported where it is used, so the client (which needs `default_runtime_dir`)
works in a client-only install (`pip install slmactor`, no `[daemon]` extra).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

#: Values of the `durability` setting (docs/DURABILITY.md).
DURABILITY_MODES = ("os", "always")
#: Environment variables that override a setting.
ENV_RUNTIME_DIR = "SLMACTOR_RUNTIME_DIR"
ENV_HOME = "SLMACTOR_HOME"
ENV_CONFIG = "SLMACTOR_CONFIG"


def default_runtime_dir() -> Path:
    """Where this user's daemon serves (`slmactor.locate.preferred`: `$SLMACTOR_RUNTIME_DIR`,
    else `/run/user/<uid>/slmactor` when logind made that, else `$XDG_RUNTIME_DIR/slmactor`,
    else `/tmp/slmactor-<uid>`)."""
    from slmactor import locate

    return Path(locate.preferred(os.environ))


def client_runtime_dir() -> Path:
    """Where a client talks to this user's daemon (`slmactor.locate.locate`): the preferred dir,
    or the other one a daemon of this user already serves."""
    from slmactor import locate

    return Path(locate.locate(os.environ))


def default_home() -> Path:
    """The user store: `$SLMACTOR_HOME`, else `~/.slmcode` (the seed's layout)."""
    override = os.environ.get(ENV_HOME)
    return Path(override) if override else Path.home() / ".slmcode"


def default_config_path() -> Path:
    override = os.environ.get(ENV_CONFIG)
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_config_dir("slmactor")) / "config.toml"


def default_log_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_state_dir("slmactor"))


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the daemon needs to know at start-up."""

    runtime_dir: Path = field(default_factory=default_runtime_dir)
    home: Path = field(default_factory=default_home)
    log_dir: Path = field(default_factory=default_log_dir)
    #: Messages an actor's inbox holds before the front door answers BUSY.
    inbox_size: int = 1000
    #: High-water mark of the events socket: tells queued per connected sender before that sender
    #: sees EAGAIN (and counts a drop). ZeroMQ bounds queues in messages, not bytes, so this times
    #: MAX_TELL_BYTES (256 KiB) is the memory one flooding sender can pin: 64 MiB. Ingest speed is
    #: the same as with 100,000 (bench working); the sender's own queue absorbs bursts.
    events_hwm: int = 256
    #: Live runs the working actor keeps (least recently used evicted first; `status` shows
    #: `runs_evicted`).
    working_runs: int = 256
    #: Seconds between checkpoints of live runs' working memory (also written at shutdown and
    #: restored at start, so a crash loses at most this much).
    working_checkpoint_seconds: float = 5.0
    #: Restarts allowed per actor within `restart_window` seconds before the daemon exits.
    max_restarts: int = 5
    restart_window: float = 60.0
    #: Seconds SIGTERM waits for inboxes to drain and stores to flush.
    stop_deadline: float = 5.0
    #: Seconds an actor waits for another actor's reply.
    internal_ask_timeout: float = 10.0
    #: Open project stores kept per actor (least recently used closed first).
    max_open_projects: int = 32
    #: Enables `debug.crash` (tests only).
    debug_hooks: bool = False
    #: Bandit: argmax instead of sampling (the `--no-explore` knob).
    deterministic: bool = False
    #: Memory block budget in tokens when a request says 0.
    memory_tokens: int = 1200
    #: Episodic recall gates: "default" (coverage over known terms, docs/RECALL.md) or "seed" (S-3.7).
    recall_mode: str = "default"
    #: JSONL logs (episodes, metrics runs, graph edges): "os" acknowledges after write(2) —
    #: safe against a daemon crash; "always" also fdatasyncs each record before acknowledging —
    #: safe against power loss. JSON documents are always fsynced. See docs/DURABILITY.md.
    durability: str = "os"
    #: Read for old configuration files only: lines of a project's MEMORY.md that this daemon
    #: did not write are always labelled where they reach a prompt (one trust boundary for
    #: everything a repository brings; no setting turns it off).
    mark_foreign_memory: bool = True
    #: Episode log bounds (S-7.8): newest `episodes_cap` kept, older than the age dropped.
    episodes_cap: int = 300
    episodes_max_age_days: float = 180.0
    #: Whole episodes the distiller keeps per project between passes. Episodes never change once
    #: recorded, so a pass after one more run finished fetches one episode instead of 120; 0
    #: fetches every episode of the window on every pass.
    distill_cache: int = 120
    #: Shortest time between two distill passes of a project (seconds); passes asked for meanwhile
    #: are coalesced into the next one. `memory.distill wait=true` does not wait for it.
    distill_interval: float = 2.0
    #: Remote endpoints (`runtime.remote`, docs/REMOTE.md): `tcp://HOST:PORT` for asks and for
    #: tells; "" = ipc only. Always CURVE with the allow-list: `tcp_curve = false` (an older
    #: loopback-only mode) now refuses to start, loopback included.
    tcp_ctl: str = ""
    tcp_events: str = ""
    tcp_curve: bool = True
    #: Per client key: requests per second, their burst, and asks waiting for a reply at once.
    remote_rate: float = 200.0
    remote_burst: int = 200
    remote_inflight: int = 32
    #: Per client key: tells per second and their burst (tells over it are dropped, counted). A
    #: harness sends one or two per tool call; 500/s leaves a flooding key a share of the events
    #: loop that local hooks do not feel (`python -m bench remote`).
    remote_events_rate: float = 500.0
    remote_events_burst: int = 1000
    #: Client side (`slmactor.remote`): the daemon to reach over tcp, its public key (z85 or a
    #: certificate file), this client's key pair, and project paths mapped to the daemon's view
    #: (`/workspace=/home/me/src/app`, several joined by `;`). Environment: SLMACTOR_<NAME>.
    connect_ctl: str = ""
    connect_events: str = ""
    server_key: str = ""
    client_key: str = ""
    path_map: str = ""

    @property
    def ctl_path(self) -> Path:
        return self.runtime_dir / "ctl.sock"

    @property
    def events_path(self) -> Path:
        return self.runtime_dir / "events.sock"

    @property
    def fsync_logs(self) -> bool:
        """True in durability mode "always" (any other value is "os")."""
        return self.durability.strip().lower() == "always"

    @property
    def ctl_endpoint(self) -> str:
        return f"ipc://{self.ctl_path}"

    @property
    def events_endpoint(self) -> str:
        return f"ipc://{self.events_path}"


def _coerce(current: Any, raw: Any, name: str) -> Any:
    if isinstance(current, Path):
        return Path(str(raw)).expanduser()
    if isinstance(current, bool):
        if isinstance(raw, str):
            return raw.strip().lower() in {"1", "true", "yes", "on"}
        return bool(raw)
    if isinstance(current, int):
        return int(raw)
    if isinstance(current, float):
        return float(raw)
    if isinstance(current, str):
        return str(raw)
    raise ValueError(f"setting {name!r} cannot be set from {raw!r}")  # pragma: no cover


def load_settings(config_path: Path | None = None, **overrides: Any) -> Settings:
    """Defaults ← config file ← `SLMACTOR_<NAME>` environment variables ← `overrides`.

    Raises ValueError for a config file that is not valid TOML or names unknown settings.
    """
    settings = Settings()
    names = {f.name for f in fields(Settings)}
    path = config_path or default_config_path()
    values: dict[str, Any] = {}
    if path.is_file():
        import tomllib  # only when there is a config file to read

        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: not valid TOML: {exc}") from None
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"{path}: unknown setting(s): {', '.join(sorted(unknown))}")
        values.update(data)
    for name in names - {"runtime_dir", "home"}:  # those two have their own documented variables
        env = os.environ.get(f"SLMACTOR_{name.upper()}")
        if env is not None:
            values[name] = env
    values.update({k: v for k, v in overrides.items() if v is not None})
    coerced = {k: _coerce(getattr(settings, k), v, k) for k, v in values.items()}
    durability = str(coerced.get("durability", settings.durability)).strip().lower()
    if durability not in DURABILITY_MODES:
        raise ValueError(f"durability must be one of {', '.join(DURABILITY_MODES)}, not {durability!r}")
    return replace(settings, **coerced)
