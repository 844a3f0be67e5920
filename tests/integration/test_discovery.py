"""One daemon per user, found the same way from any environment, and stopped when the user says.

Real daemons in temp dirs, real clients in real processes, started as the harnesses start them:
`env -i HOME=… PATH=…` — no `XDG_*`, no `SLMACTOR_RUNTIME_DIR` — as Codex starts an MCP server
and a CI runner a hook. `/run/user/<uid>` cannot be made here, so each test makes its stand-in
under `$SLMACTOR_TEST_ROOT` (`<root>/run/user/<uid>`, 0700, ours: what systemd-logind makes);
the rules applied to it are the real ones (slmactor/locate.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from slmactor import locate
from slmactor.protocol.messages import FactList
from slmactor.testing import DaemonProcess, slack, spawn_daemon, stop_quietly, wait_for
from tests.fixtures.hooks import load

UID = os.getuid()
FIXTURES = {f.id: f for f in load()}


class User:
    """A user's machine in miniature: a stand-in root with its login runtime dir, a home."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "root"
        self.login = self.root / "run" / "user" / str(UID)
        self.login.mkdir(parents=True)
        self.login.chmod(0o700)
        self.runtime = self.login / "slmactor"
        self.home = base / "home"
        self.home.mkdir()
        self.project = base / "project"
        self.project.mkdir()

    def bare(self, **extra: str) -> dict[str, str]:
        """What `env -i HOME=… PATH=…` leaves (plus this checkout on the path, and the root)."""
        env = {"HOME": str(self.home), "PATH": os.environ["PATH"],
               locate.ENV_TEST_ROOT: str(self.root)}
        if os.environ.get("PYTHONPATH"):
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        env.update(extra)
        return env

    def run(self, argv: list[str], env: dict[str, str], stdin: bytes = b"",
            timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
        """`env -i` + `env` + `python -m slmactor argv`, from the project."""
        command = ["env", "-i", *(f"{k}={v}" for k, v in env.items()), sys.executable, "-m", "slmactor", *argv]
        return subprocess.run(command, input=stdin, capture_output=True, timeout=timeout, cwd=self.project,
                              check=False)


@pytest.fixture
def user() -> Iterator[User]:
    base = Path(tempfile.mkdtemp(prefix="sd-", dir="/tmp"))  # short: ipc paths have a limit
    try:
        yield User(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def user_daemon(user: User) -> Iterator[DaemonProcess]:
    """The user's one daemon, where the user service puts it: /run/user/<uid>/slmactor, the
    default user store ~/.slmcode."""
    proc = spawn_daemon(base=user.base / "d", runtime_dir=user.runtime, home=user.home / ".slmcode",
                        project=user.project, env={"HOME": str(user.home)})
    try:
        yield proc
    finally:
        stop_quietly(proc)


def _serving(user: User) -> set[int]:
    """Pids of the `slmactor serve` processes of this test's user (its HOME: other test runs
    share the machine)."""
    import psutil

    found = set()
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "serve" not in cmd or not any("slmactor" in part for part in cmd):
            continue
        try:
            if proc.environ().get("HOME") == str(user.home) and proc.status() != psutil.STATUS_ZOMBIE:
                found.add(proc.pid)
        except psutil.Error:
            continue
    return found


# ---------------------------------------------------------------- the rules


def test_the_login_runtime_dir_comes_before_any_variable(tmp_path: Path) -> None:
    login = tmp_path / "run" / "user" / str(UID)
    root = {locate.ENV_TEST_ROOT: str(tmp_path)}
    tmp_fallback = str(tmp_path / "tmp" / f"slmactor-{UID}")
    # No login session: $XDG_RUNTIME_DIR, else /tmp/slmactor-<uid>.
    assert locate.preferred(root) == tmp_fallback
    assert locate.preferred({**root, "XDG_RUNTIME_DIR": "/r"}) == "/r/slmactor"
    login.mkdir(parents=True)
    for mode in (0o755, 0o711, 0o770):  # not what logind makes: not trusted
        login.chmod(mode)
        assert locate.preferred({**root, "XDG_RUNTIME_DIR": "/r"}) == "/r/slmactor", oct(mode)
    login.chmod(0o700)
    # logind's directory: the same answer with or without the variables a parent may strip.
    for env in ({}, {"XDG_RUNTIME_DIR": "/r"}, {"XDG_RUNTIME_DIR": str(login)}):
        assert locate.preferred({**root, **env}) == str(login / "slmactor"), env
        assert locate.candidates({**root, **env})[0] == str(login / "slmactor")
    # An explicit choice wins, and is taken as it is.
    assert locate.preferred({**root, "SLMACTOR_RUNTIME_DIR": "/srv/rt"}) == "/srv/rt"
    assert locate.locate({**root, "SLMACTOR_RUNTIME_DIR": "/srv/rt"}) == "/srv/rt"
    # Another user's uid: its /run/user entry is not ours, whatever its mode.
    assert locate.login_runtime_dir(root, UID + 1) == ""


def test_a_symlinked_login_dir_is_not_trusted(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    real.mkdir(mode=0o700)
    (tmp_path / "run" / "user").mkdir(parents=True)
    (tmp_path / "run" / "user" / str(UID)).symlink_to(real)
    assert locate.login_runtime_dir({locate.ENV_TEST_ROOT: str(tmp_path)}) == ""


# ---------------------------------------------------------------- acceptance: any environment, one daemon


async def test_mcp_under_env_i_reaches_the_running_daemon(user: User, user_daemon: DaemonProcess) -> None:
    mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from mcp import StdioServerParameters

    env = user.bare()
    server = StdioServerParameters(command="env", args=["-i", *(f"{k}={v}" for k, v in env.items()),
                                                        sys.executable, "-m", "slmactor", "mcp"],
                                   cwd=str(user.project))
    async with mcp.Client(server) as client:
        said = await client.call_tool("remember", {"text": "Deploys go through make release",
                                                   "kind": "convention", "subject": "deploy"})
    assert not said.is_error, said
    with user_daemon.client() as c:
        assert any("make release" in f["text"] for f in c.ask(FactList())["facts"])
    assert _serving(user) == {user_daemon.pid}  # nothing started beside it


def test_with_slmactor_home_set_the_users_one_daemon_is_used_with_a_note(
        user: User, user_daemon: DaemonProcess) -> None:
    other_home = user.base / "other-store"
    env = user.bare(SLMACTOR_HOME=str(other_home))
    done = user.run(["--json", "status"], env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["pid"] == user_daemon.pid
    # A command that autostarts when nothing answers: it finds the daemon, says whose store it
    # keeps, and works — no second daemon, no BAD_PROJECT from two daemons on one project.
    facts = user.run(["memory", "facts"], env)
    assert facts.returncode == 0, facts.stderr
    note = facts.stderr.decode()
    assert note.count("\n") == 1 and f"pid {user_daemon.pid}" in note
    assert str(user_daemon.home) in note and str(other_home) in note
    assert not other_home.exists()  # a daemon of that store would have locked it
    assert _serving(user) == {user_daemon.pid}


@pytest.mark.parametrize("shell", ["stripped", "another-shell"])
def test_a_hook_with_a_stripped_environment_reaches_the_same_daemon(
        user: User, user_daemon: DaemonProcess, shell: str) -> None:
    run_id = f"{shell}-{time.monotonic_ns()}"
    project = str(user.project.resolve())

    def payload(fx_id: str) -> bytes:
        data = FIXTURES[fx_id].payload(project)
        data["session_id"] = run_id
        return json.dumps(data).encode()

    env = user.bare()
    if shell == "another-shell":
        # A long-lived hook host keeps the environment of whichever shell started it: here one
        # whose XDG_RUNTIME_DIR is another (private, empty) directory.
        elsewhere = user.base / "other-session"
        elsewhere.mkdir(mode=0o700)
        env = user.bare(XDG_RUNTIME_DIR=str(elsewhere))
    failed = user.run(["hook", "claude", "PostToolUseFailure"], env, payload("claude/PostToolUseFailure-Bash"))
    assert failed.returncode == 0, failed.stderr
    prompt = user.run(["hook", "claude", "UserPromptSubmit"], env, payload("claude/UserPromptSubmit"))
    assert prompt.returncode == 0, prompt.stderr
    # The failure the first hook recorded comes back in the second's context: both reached it.
    context = json.loads(prompt.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "pytest -q tests/test_parse.py" in context
    assert not (user.root / "tmp").exists()  # nothing looked for, or started, in the fallback


def test_a_daemon_in_another_candidate_dir_is_found_not_doubled(user: User, tmp_path: Path) -> None:
    # Started before the login session existed (or with $XDG_RUNTIME_DIR elsewhere): clients
    # now prefer /run/user/<uid>, find nothing there, and must use this one, not start another.
    xdg = user.base / "xdg"
    xdg.mkdir(mode=0o700)
    daemon = spawn_daemon(base=user.base / "d", runtime_dir=xdg / "slmactor", home=user.home / ".slmcode",
                          project=user.project, env={"HOME": str(user.home)})
    try:
        with_xdg = user.run(["--json", "status"], user.bare(XDG_RUNTIME_DIR=str(xdg)))
        assert json.loads(with_xdg.stdout)["pid"] == daemon.pid
        # Without XDG_RUNTIME_DIR: the user store's lock names the dir its daemon serves.
        stripped = user.run(["memory", "facts"], user.bare())
        assert stripped.returncode == 0, stripped.stderr
        assert json.loads(user.run(["--json", "status"], user.bare()).stdout)["pid"] == daemon.pid
        assert not user.runtime.exists() and _serving(user) == {daemon.pid}
    finally:
        stop_quietly(daemon)


# ---------------------------------------------------------------- stopped stays stopped


def _session_start(user: User, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    data = FIXTURES["claude/SessionStart"].payload(str(user.project.resolve()))
    return user.run(["hook", "claude", "SessionStart"], env, json.dumps(data).encode())


def _listening(path: Path) -> bool:
    return locate.ours_listening(str(path))


def test_a_stopped_daemon_stays_stopped_until_start(user: User) -> None:
    env = user.bare(XDG_STATE_HOME=str(user.base / "state"))
    # A session start autostarts the daemon where every client looks.
    first = _session_start(user, env)
    assert first.returncode == 0, first.stderr
    assert _listening(user.runtime)
    try:
        stop = user.run(["--json", "stop"], env)
        assert stop.returncode == 0, stop.stderr
        assert json.loads(stop.stdout)["autostart"] is False
        assert locate.stopped(str(user.runtime)) and not _listening(user.runtime)
        # Hooks: exit 0 with the neutral answer, one line why, nothing started.
        hook = _session_start(user, env)
        assert (hook.returncode, json.loads(hook.stdout)) == (0, {})
        assert b"stopped with `slmactor stop`" in hook.stderr
        # Commands: exit 1 saying so. mcp: the server runs, saying why there is no daemon.
        facts = user.run(["memory", "facts"], env)
        assert facts.returncode == 1 and b"`slmactor start`" in facts.stderr
        mcp = user.run(["mcp"], env, b"")  # stdin closed at once: the server exits
        assert b"daemon not started" in mcp.stderr and b"slmactor stop" in mcp.stderr
        assert not _listening(user.runtime)
        # `slmactor start` starts it, and the daemon takes the marker away.
        start = user.run(["--json", "start"], env)
        assert start.returncode == 0, start.stderr
        assert json.loads(start.stdout)["started"] is True
        assert not locate.stopped(str(user.runtime))
        assert _session_start(user, env).returncode == 0 and _listening(user.runtime)
    finally:
        user.run(["stop"], env)
    wait_for(lambda: not _listening(user.runtime), "the daemon to stop")


def test_stopped_from_one_environment_stays_stopped_from_another(user: User) -> None:
    # The daemon ran in $XDG_RUNTIME_DIR/slmactor (no login dir yet); the user stops it from that
    # shell; a hook from an environment without the variable, whose preferred dir is the login
    # dir, must not start one there either.
    xdg = user.base / "xdg"
    xdg.mkdir(mode=0o700)
    user.login.rmdir()
    env = user.bare(XDG_RUNTIME_DIR=str(xdg), XDG_STATE_HOME=str(user.base / "state"))
    assert _session_start(user, env).returncode == 0 and _listening(xdg / "slmactor")
    assert user.run(["stop"], env).returncode == 0
    user.login.mkdir(mode=0o700)  # the user logs in: clients now prefer /run/user/<uid>
    user.login.chmod(0o700)
    stripped = user.bare(XDG_STATE_HOME=str(user.base / "state"))
    hook = _session_start(user, stripped)
    assert hook.returncode == 0 and b"stopped with `slmactor stop`" in hook.stderr, hook.stderr
    assert not _listening(user.runtime) and not _listening(xdg / "slmactor")
    # Started again from the stripped environment: every marker goes.
    assert user.run(["start"], stripped).returncode == 0
    try:
        assert not locate.stopped(str(xdg / "slmactor")) and _listening(user.runtime)
    finally:
        user.run(["stop"], stripped)


def test_stop_without_a_daemon_still_keeps_autostart_off(user: User) -> None:
    env = user.bare(XDG_STATE_HOME=str(user.base / "state"))
    done = user.run(["stop"], env)
    assert done.returncode == 0 and b"stays stopped" in done.stdout
    hook = _session_start(user, env)
    assert hook.returncode == 0 and not _listening(user.runtime)


def test_hooks_after_stop_answer_at_once(user: User) -> None:
    env = user.bare()
    assert user.run(["stop"], env).returncode == 0
    started = time.monotonic()
    hook = _session_start(user, env)
    elapsed = time.monotonic() - started
    assert (hook.returncode, json.loads(hook.stdout)) == (0, {})
    assert b"stopped with `slmactor stop`" in hook.stderr and not _listening(user.runtime)
    # Well inside the hook's own 2 s deadline: no start attempted, nothing waited on.
    assert elapsed < slack(2.0), elapsed


# ---------------------------------------------------------------- mcp without its extra


SITE_WITHOUT_MCP = "import sys\nsys.modules['mcp'] = None  # what an install without the extra looks like\n"


def test_mcp_without_the_extra_says_what_to_install(user: User) -> None:
    site = user.base / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE_WITHOUT_MCP)
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")]))
    done = user.run(["mcp"], user.bare(PYTHONPATH=path))
    err = done.stderr.decode()
    assert done.returncode == 1
    assert err.count("\n") == 1 and "pip install 'slmactor[mcp]'" in err and "Traceback" not in err
    assert done.stdout == b""  # stdout is the protocol's: nothing else there
    assert not user.runtime.exists()  # nothing was started for a server that cannot run
