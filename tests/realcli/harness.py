"""What every real-CLI test needs: the pinned binary, a private world, and the daemon's view.

Owns: finding a CLI installed by `install.sh` (or skipping the test with the reason), one private
directory per test (HOME, the CLI's config dir, a git project with our hooks installed through
the `slmactor hook install` command, SLMACTOR_RUNTIME_DIR / SLMACTOR_HOME of a real daemon), running
the CLI in its own process group with a deadline, and reading back what the daemon recorded
through the `slmactor` CLI's `--json` output.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly, wait_for

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

# Variables of the developer's or CI's environment that would reach a real service or another
# configuration: none of them gets through to a CLI under test.
_DROP_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_", "CLINE_",
                  "SLMACTOR_", "XDG_")
# Port 9 (discard) on loopback: nothing listens there on a CI runner or a dev machine.
DEAD_PROXY = "http://127.0.0.1:9"
_DROP = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
         "NODE_OPTIONS", "npm_config_prefix"}


@dataclass(frozen=True)
class Pin:
    name: str
    package: str
    version: str
    binary: str


def pins() -> dict[str, Pin]:
    table: dict[str, Pin] = {}
    for line in (HERE / "pins.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, package, version, binary = line.split()
            table[name] = Pin(name, package, version, binary)
    return table


def realcli_dir() -> Path:
    return Path(os.environ.get("SLMACTOR_REALCLI_DIR") or REPO / ".realcli")


def binary(name: str) -> Path:
    """The installed binary of a pinned CLI, or skip the test saying why it is missing."""
    pin = pins()[name]
    prefix = realcli_dir() / f"{name}-{pin.version}"
    path = prefix / "node_modules" / ".bin" / pin.binary
    if not (prefix / ".installed").is_file() or not os.access(path, os.X_OK):
        pytest.skip(f"{pin.package}@{pin.version} is not installed in {prefix} "
                    "(run tests/realcli/install.sh; it needs npm and the registry)")
    return path


@dataclass
class World:
    """One test's private machine: a home, a project, a daemon and the environment of a CLI."""

    base: Path
    home: Path
    project: Path
    daemon: DaemonProcess
    env: dict[str, str]

    def slmactor(self, *args: str) -> Any:
        """Run `slmactor ARGS --json` against this world's daemon; the parsed JSON."""
        done = subprocess.run(
            [sys.executable, "-m", "slmactor", *args, "--json", "--no-autostart"],
            check=False, cwd=self.project, env=self.env, capture_output=True, text=True,
            timeout=60,
        )
        assert done.returncode == 0, f"slmactor {' '.join(args)}: {done.stderr}{done.stdout}"
        return json.loads(done.stdout)

    def install_hooks(self, harness: str, *, scope: str = "--project") -> dict[str, Any]:
        """Our hooks through `slmactor hook install` (the project's files unless `scope` is
        "--user": the tests read and rewrite the project's, and the user's are theirs)."""
        result: dict[str, Any] = self.slmactor("hook", "install", "--harness", harness, scope)
        assert result.get("ok"), result
        return result

    def episodes(self) -> list[dict[str, Any]]:
        found = self.slmactor("memory", "episodes", "50")
        rows = found.get("episodes", found) if isinstance(found, dict) else found
        return list(rows)

    def stored_episodes(self) -> list[dict[str, Any]]:
        """The project's episode log as stored (plain JSONL, the user-inspectable record): the
        per-command and per-failure detail `memory episodes` summarises."""
        path = self.project / ".slmcode" / "memory" / "episodes.jsonl"
        if not path.is_file():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def wait_episodes(self, n: int = 1) -> list[dict[str, Any]]:
        """The episodes once `n` of them are recorded (session ends are told asynchronously)."""
        return list(wait_for(lambda: (e := self.episodes()) and len(e) >= n and e,
                             f"{n} episode(s) in the daemon", timeout=30, pause=0.2))

    def run(self, argv: list[str], *, timeout: float = 100, stdin: str | None = None,
            extra_env: dict[str, str] | None = None,
            label: str = "") -> subprocess.CompletedProcess[str]:
        """Run a CLI in the project, in its own process group; on the deadline the group (our
        child and whatever it started without leaving the group) is killed."""
        name = label or Path(argv[0]).name
        trace_dir = os.environ.get("SLMACTOR_REALCLI_STRACE")
        if trace_dir:
            # Opt-in audit that nothing leaves loopback: every connect() of the CLI and its
            # children, one file per run (see README.md).
            argv = ["strace", "-f", "-qq", "-e", "trace=connect", "-o",
                    str(Path(trace_dir) / f"{self.base.name}-{name}.strace"), *argv]
        proc = subprocess.Popen(
            argv, cwd=self.project, env={**self.env, **(extra_env or {})},
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            raise AssertionError(f"{argv[0]} still running after {timeout} s:\n{err[-4000:]}") \
                from None
        finally:
            # Whatever our child left in its group (a hook still running) goes with it.
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        (self.base / f"{name}.stdout").write_text(out)
        (self.base / f"{name}.stderr").write_text(err)
        return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def cli_env(base: Path, home: Path, daemon: DaemonProcess) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in _DROP and not k.startswith(_DROP_PREFIXES)}
    env.update({
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "TMPDIR": str(base / "tmp"),
        "SLMACTOR_RUNTIME_DIR": str(daemon.runtime_dir),
        "SLMACTOR_HOME": str(daemon.home),
        # Loopback only. Telemetry a CLI sends despite its opt-outs goes to a proxy on a
        # loopback port where nothing listens (refused at once, never resolved by us); the
        # scripted server on 127.0.0.1 is reached directly.
        **dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                         "all_proxy"), DEAD_PROXY),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "NO_COLOR": "1",
        "CI": "1",
    })
    # The hooks installed run this interpreter's `slmactor`; it must import this checkout.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return env


@contextmanager
def private_world() -> Iterator[World]:
    """A world for one CLI session (or a few): torn down, daemon stopped, on exit."""
    daemon = spawn_daemon()
    base = daemon.base
    home = base / "home-user"
    for sub in ("", ".config", ".cache", ".local/share", ".local/state"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    (base / "tmp").mkdir()
    project = daemon.project
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    env = cli_env(base, home, daemon)
    try:
        yield World(base, home, project, daemon, env)
    finally:
        keep = os.environ.get("SLMACTOR_REALCLI_KEEP")
        if keep:
            # Everything a failure needs to be understood: CLI output, the request log, the
            # daemon's log and stores, the CLI's own transcripts under the private home.
            with suppress(OSError):
                shutil.copytree(base, Path(keep) / base.name, symlinks=True,
                                ignore=shutil.ignore_patterns("*.sock"))
        stop_quietly(daemon)


CALC = "def add(a, b):\n    return a - b\n"
CHECK = "from calc import add\n\nassert add(2, 3) == 5, 'add(2, 3) should be 5'\nprint('ok')\n"


def write_calc(project: Path) -> None:
    """The project every scenario works on: `calc.py` subtracts where it should add."""
    (project / "calc.py").write_text(CALC)
    (project / "check.py").write_text(CHECK)


def gemini_settings(config: Path) -> None:
    """`~/.gemini/settings.json` for an offline session: an API key (with only a base URL set,
    0.61 picks an auth type it then rejects: exit 41), no updates, statistics or telemetry."""
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }))


def gemini_env(base_url: str) -> dict[str, str]:
    """The variables of a headless Gemini CLI session against the scripted server at `base_url`:
    project hooks run only in a trusted folder (headless untrusted exits 55 before any hook)."""
    return {"GOOGLE_GEMINI_BASE_URL": base_url, "GEMINI_API_KEY": "offline-scripted",
            "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_TELEMETRY_ENABLED": "false"}


def claude_env(config: Path, base_url: str) -> dict[str, str]:
    """The variables of an offline `claude -p` session against the scripted server at
    `base_url`, with `config` as its configuration directory."""
    return {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "sk-ant-scripted-offline",
            "CLAUDE_CONFIG_DIR": str(config), "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            # --dangerously-skip-permissions refuses to run as root outside a sandbox.
            "IS_SANDBOX": "1"}
