"""The real Cline CLI (pinned in pins.txt): its hook hub keeps the environment of the shell that
started it, and our hooks still reach the user's one daemon.

Cline 3 runs hooks inside a background hub (`cline --cline-hub-daemon`) that outlives the
command; a later `cline` from another shell talks to the same hub, so its hooks run with the
first shell's variables. Here each shell has its own `XDG_RUNTIME_DIR` (two private, empty
directories, as two login sessions or an ssh shell beside a desktop have) and no
`SLMACTOR_RUNTIME_DIR`; the daemon runs where every client looks first, the login runtime
directory (`/run/user/<uid>/slmactor`; its stand-in under `SLMACTOR_TEST_ROOT`, the rules
applied to it are slmactor/locate.py's). Both sessions must be recorded into that daemon, from
the hub's environment, and no second daemon may start in either shell's directory.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from slmactor import locate
from slmactor.testing import spawn_daemon, stop_quietly
from tests.realcli.harness import World, binary, cli_env
from tests.realcli.models import Call, Turn, serving
from tests.realcli.test_cline_smoke import hub_pid, stop_hub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

MODEL = "scripted-coder"


@dataclass
class Shells:
    world: World
    first: Path
    second: Path
    codes: tuple[int, int]
    hub_env: dict[str, str]
    episodes: list[dict[str, Any]]
    status_from_second: dict[str, Any]


def _hub_environment(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    pairs = (item.decode(errors="replace").partition("=") for item in raw if item)
    return {k: v for k, _, v in pairs}


def _running_hubs() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and b"--cline-hub-daemon" in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.fixture(scope="module")
def shells(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shells]:
    cline = str(binary("cline"))
    # A `cline` started while another hub runs joins that one, with its environment (seen with
    # 3.0.65: a hub left by another test, under another HOME, served the next `cline`).
    others = _running_hubs()
    if others:
        pytest.skip(f"another Cline hub is running (pid {others[0]}): this test starts its own")
    base = tmp_path_factory.mktemp("hub")
    root = base / "root"
    login = root / "run" / "user" / str(os.getuid())
    login.mkdir(parents=True)
    login.chmod(0o700)
    home = base / "home-user"
    for sub in ("", ".config", ".cache", ".local/share", ".local/state"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    (base / "tmp").mkdir()
    project = base / "project"
    project.mkdir()
    daemon = spawn_daemon(base=base / "d", runtime_dir=login / "slmactor", home=home / ".slmcode",
                          project=project, env={"HOME": str(home), locate.ENV_TEST_ROOT: str(root)})
    try:
        env = cli_env(base, home, daemon)
        # Found, not told: no SLMACTOR_RUNTIME_DIR (nor SLMACTOR_HOME, the user's default).
        env.pop("SLMACTOR_RUNTIME_DIR")
        env.pop("SLMACTOR_HOME")
        env[locate.ENV_TEST_ROOT] = str(root)
        world = World(base, home, project, daemon, env)
        subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
        (project / "greet.py").write_text('print("hello")\n')
        world.install_hooks("cline")
        settings = home / ".cline" / "data" / "settings"
        settings.mkdir(parents=True)
        # Cline's global settings (its CLI's schema: telemetryOptOut, autoUpdateEnabled).
        (settings / "global-settings.json").write_text(
            json.dumps({"telemetryOptOut": True, "autoUpdateEnabled": False}))
        first, second = base / "xdg-first-shell", base / "xdg-second-shell"
        for directory in (first, second):
            directory.mkdir(mode=0o700)
        turns = [Turn(calls=(Call("run_commands", {"commands": ["python3 greet.py"]}),)),
                 Turn(text="It prints hello."),
                 Turn(calls=(Call("run_commands", {"commands": ["python3 greet.py"]}),)),
                 Turn(text="Still hello.")]
        try:
            with serving("chat", turns, MODEL) as server:
                auth = world.run([cline, "auth", "-p", "openai-compatible", "-k", "offline",
                                  "-m", MODEL, "-b", f"{server.base_url}/v1"],
                                 extra_env={"XDG_RUNTIME_DIR": str(first)}, timeout=60,
                                 label="cline-auth")
                assert auth.returncode == 0, auth.stderr
                one = world.run([cline, "Run greet.py.", "--json"], timeout=100, label="cline-1",
                                extra_env={"XDG_RUNTIME_DIR": str(first)})
                world.wait_episodes(1)
                pid = hub_pid(world)
                hub_env = _hub_environment(pid) if pid is not None else {}
                two = world.run([cline, "Run greet.py again.", "--json"], timeout=100,
                                label="cline-2", extra_env={"XDG_RUNTIME_DIR": str(second)})
                episodes = world.wait_episodes(2)
                # `slmactor status` typed in the second shell.
                status = World(base, home, project, daemon,
                               {**env, "XDG_RUNTIME_DIR": str(second)}).slmactor("status")
        finally:
            stop_hub(world)
        yield Shells(world, first, second, (one.returncode, two.returncode), hub_env, episodes,
                     status)
    finally:
        stop_quietly(daemon)


def test_the_hub_runs_the_second_shells_hooks_with_the_first_shells_environment(
        shells: Shells) -> None:
    assert shells.codes == (0, 0)
    assert shells.hub_env.get("XDG_RUNTIME_DIR") == str(shells.first)
    assert "SLMACTOR_RUNTIME_DIR" not in shells.hub_env


def test_both_sessions_reach_the_one_daemon_and_no_other_starts(shells: Shells) -> None:
    assert len(shells.episodes) == 2
    assert shells.status_from_second["pid"] == shells.world.daemon.pid
    for directory in (shells.first, shells.second):
        assert not (directory / "slmactor" / "ctl.sock").exists(), directory
    assert not (shells.world.base / "root" / "tmp").exists()  # the fallback was never used
