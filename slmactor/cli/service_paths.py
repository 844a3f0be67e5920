"""Where the user service lives: its name per service manager and the path of its unit file.

Apart from `service` (which writes and removes units) so that autostart, which only needs to
know whether one is installed, does not import the command module.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

UNIT_NAME = "slmactor.service"
LAUNCHD_LABEL = "dev.slmactor"
MANAGERS = ("systemd", "launchd")


def default_manager() -> str:
    return "launchd" if sys.platform == "darwin" else "systemd"


def unit_path(manager: str, unit_dir: str | None = None) -> Path:
    """The unit file (systemd) or LaunchAgent plist (launchd) of the user service."""
    if unit_dir:
        base = Path(unit_dir).expanduser()
    elif manager == "systemd":
        config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        base = Path(config) / "systemd" / "user"
    else:
        base = Path.home() / "Library" / "LaunchAgents"
    name = UNIT_NAME if manager == "systemd" else f"{LAUNCHD_LABEL}.plist"
    return base.absolute() / name
