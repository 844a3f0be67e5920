"""`slmactor hook <format> <Event>` as a harness runs it: every fixture through the real command
against a real daemon, and fail-open whatever the argv, stdin or the daemon's state.

The payloads are the harnesses' own (tests/fixtures/hooks, each naming its source). Timing: the
wedge test measures whole hook processes against a wall bound — the promise that, after a wedge,
hooks return at once — and the `python -c pass` start-up it measures beside them.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.bench_hooks import WEDGE as _WEDGE  # the wedged daemon the bench measures against
from slmactor.hooks import breaker, dialects
from slmactor.protocol import codec
from slmactor.protocol.messages import WorkingSnapshot
from slmactor.testing import DaemonProcess, slack, spawn_daemon, stop_quietly
from tests.fixtures.hooks import Fixture, load, output_problems

FIXTURES = load()
_RUN_KEYS = {"claude": "session_id", "codex": "session_id", "gemini": "session_id", "openhands": "session_id",
             "cline": "taskId"}


def _hook(runtime_dir: Path, argv: list[str], stdin: bytes, env: dict[str, str] | None = None,
          timeout: float = 60, command: list[str] | None = None) -> tuple[int, Any, str, float]:
    """Run the hook as a harness does; returns (exit status, parsed stdout, stderr, seconds)."""
    args = [*(command or [sys.executable, "-m", "slmactor"]), "--runtime-dir", str(runtime_dir), *argv]
    started = time.monotonic()
    proc = subprocess.run(args, input=stdin, capture_output=True, timeout=timeout, env=env or dict(os.environ),
                          check=False)
    elapsed = time.monotonic() - started
    return proc.returncode, json.loads(proc.stdout), proc.stderr.decode(errors="replace"), elapsed


@pytest.fixture(scope="module")
def shared_daemon() -> Iterator[DaemonProcess]:
    """One daemon for the round trips below (each fixture uses its own run id)."""
    proc = spawn_daemon()
    try:
        yield proc
    finally:
        stop_quietly(proc)


# ---------------------------------------------------------------- every fixture, real command, real daemon


def _with_run(fx: Fixture, project: Path, run_id: str) -> dict[str, Any]:
    payload = fx.payload(str(project))
    payload[_RUN_KEYS[fx.fmt]] = run_id
    return payload


@pytest.mark.parametrize("fmt", dialects.FORMATS)
def test_every_fixture_through_the_real_command(fmt: str, shared_daemon: DaemonProcess) -> None:
    daemon = shared_daemon
    project = daemon.project.resolve()
    for fx in load(fmt):
        run_id = f"{fx.id}-{time.monotonic_ns()}"
        payload = _with_run(fx, project, run_id)
        rc, out, err, _ = _hook(daemon.runtime_dir, ["hook", fmt, fx.event], json.dumps(payload).encode(),
                                env=daemon.env)
        assert rc == 0, (fx.id, err)
        assert output_problems(fmt, fx.event, out) == [], (fx.id, out)
        assert "Traceback" not in err, (fx.id, err)
        expect = fx.expect
        if expect["action"] != "record":
            continue
        with daemon.client() as client:
            snap = client.ask(WorkingSnapshot(run_id=run_id))["snapshot"]
        assert snap["counters"]["calls"] == 1, fx.id
        assert snap["counters"]["errors"] == (0 if expect["ok"] else 1), (fx.id, snap)
        first = expect.get("paths", [""])[0]
        if expect["kind"] == "edit" and expect["ok"]:
            assert snap["files_edited"] == [first], (fx.id, snap)  # relative to the project root
        if not expect["ok"]:
            failure = snap["open_failures"][0]
            assert failure["tool"] == expect["tool"].lower(), (fx.id, failure)  # the daemon lower-cases names
            if first:
                assert failure["path"] == first, (fx.id, failure)
        if expect["kind"] == "shell":
            assert [c["status"] == "ok" for c in snap["commands"]] == [expect["ok"]], (fx.id, snap)


def test_a_session_gets_its_memory_back(shared_daemon: DaemonProcess) -> None:
    daemon = shared_daemon
    project = daemon.project.resolve()
    run_id = f"memory-{time.monotonic_ns()}"
    fail = next(f for f in FIXTURES if f.id == "claude/PostToolUseFailure-Bash")
    prompt = next(f for f in FIXTURES if f.id == "claude/UserPromptSubmit")
    assert _hook(daemon.runtime_dir, ["hook", "claude", "PostToolUseFailure"],
                 json.dumps(_with_run(fail, project, run_id)).encode(), env=daemon.env)[0] == 0
    rc, out, err, _ = _hook(daemon.runtime_dir, ["hook", "claude", "UserPromptSubmit"],
                            json.dumps(_with_run(prompt, project, run_id)).encode(), env=daemon.env)
    assert rc == 0, err
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "pytest -q tests/test_parse.py" in context


def test_a_successful_call_clears_the_breaker(shared_daemon: DaemonProcess) -> None:
    daemon = shared_daemon
    runtime = str(daemon.runtime_dir)
    breaker.trip(runtime, time.time() - 100, 1, "an old timeout")  # expired: the next hook tries again
    assert (daemon.runtime_dir / breaker.FILE).exists()
    fx = next(f for f in FIXTURES if f.id == "codex/PostToolUse-Bash")
    rc, out, err, _ = _hook(daemon.runtime_dir, ["hook", "codex", "PostToolUse"],
                            json.dumps(_with_run(fx, daemon.project, "clears")).encode(), env=daemon.env)
    assert (rc, out) == (0, {}), err
    assert not (daemon.runtime_dir / breaker.FILE).exists()


# ---------------------------------------------------------------- fail-open: usage errors, odd stdin


def _hook_in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str],
                     stdin: bytes) -> tuple[int, Any, str]:
    from slmactor.cli.main import main

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    rc = main(argv)
    captured = capsys.readouterr()
    return rc, json.loads(captured.out), captured.err


@pytest.mark.parametrize("argv", [
    ["hook", "claude", "UserPromptSubmit", "--no-autostart"],           # the flag HOOKS.md suggests, last
    ["hook", "--no-autostart", "claude", "PostToolUse", "--json"],
    ["hook", "claude", "PostToolUse", "--timeout"],                       # a value missing
    ["hook", "claude", "PostToolUse", "--timeout", "soon", "--budget", "x"],
    ["hook", "claude", "PostToolUse", "--what-is-this", "-x", "extra", "words"],
    ["--bogus", "hook", "gemini", "AfterTool", "--role=planner"],
    ["hook", "nosuchharness", "PostToolUse"],
    ["hook", "cline", "NoSuchEvent"],
    ["hook", "codex"],                                                    # event from the payload
])
def test_usage_errors_exit_0_with_valid_output(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    stdin = json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Bash", "prompt": "hi"}).encode()
    rc, out, _ = _hook_in_process(monkeypatch, capsys, ["--runtime-dir", str(tmp_path / "rt"), *argv], stdin)
    assert rc == 0
    fmt = next((w for w in argv if w in dialects.FORMATS), "")
    assert out == (dialects.neutral(fmt) if fmt else {})


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2]", b'{"tool_name": 5}', b"\xff\xfe{", b'{"a":' * 5000,
                                   b'{"tool_name": "Bash", "tool_input": [], "tool_response": 7}'])
@pytest.mark.parametrize("fmt", dialects.FORMATS)
def test_bad_stdin_still_exits_0_with_json(stdin: bytes, fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    event = next(e for e, a in dialects.EVENTS[fmt].items() if a == dialects.RECORD)
    rc, out, _ = _hook_in_process(monkeypatch, capsys, ["--runtime-dir", str(tmp_path), "hook", fmt, event], stdin)
    assert (rc, out) == (0, dialects.neutral(fmt))


def test_the_usage_error_from_issue_12_as_a_real_process(tmp_path: Path) -> None:
    # `slmactor hook claude UserPromptSubmit --no-autostart` used to exit 2: Claude erased the prompt.
    rc, out, err, _ = _hook(tmp_path / "rt", ["hook", "claude", "UserPromptSubmit", "--no-autostart"],
                            b'{"prompt": "hi"}')
    assert (rc, out) == (0, {}) and "not reachable" in err


def test_a_stdin_that_never_closes_does_not_hold_the_hook(tmp_path: Path) -> None:
    args = [sys.executable, "-m", "slmactor", "--runtime-dir", str(tmp_path), "hook", "claude", "PostToolUse",
            "--timeout", "0.5"]
    started = time.monotonic()
    with subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b'{"tool_name": "Bash"')  # and never closed
        proc.stdin.flush()
        out = proc.stdout.read()  # returns when the hook exits, its stdin still open
        rc = proc.wait(timeout=30)
    assert rc == 0 and json.loads(out) == {}
    assert time.monotonic() - started < slack(10)


def test_hook_help_is_still_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    from slmactor.cli.main import main

    with pytest.raises(SystemExit) as exc:
        main(["hook", "claude", "--help"])
    assert exc.value.code == 0 and "PostToolUseFailure" in capsys.readouterr().out


def test_runtime_dir_resolution_matches_the_config(tmp_path: Path) -> None:
    # One function for every client: the hook's answer is the CLI's and the client's.
    from slmactor import locate
    from slmactor.cli.hook import Options, runtime_dir
    from slmactor.config import client_runtime_dir

    login = tmp_path / "run" / "user" / str(os.getuid())
    login.mkdir(parents=True, mode=0o700)
    login.chmod(0o700)
    root = {locate.ENV_TEST_ROOT: str(tmp_path)}
    for env in ({}, {"XDG_RUNTIME_DIR": "/run/user/7"}, {"SLMACTOR_RUNTIME_DIR": "/srv/rt", "XDG_RUNTIME_DIR": "/r"},
                root, {**root, "XDG_RUNTIME_DIR": "/r"}):
        names = ("SLMACTOR_RUNTIME_DIR", "XDG_RUNTIME_DIR", locate.ENV_TEST_ROOT)
        saved = {k: os.environ.pop(k) for k in names if k in os.environ}
        os.environ.update(env)
        try:
            assert runtime_dir(Options(), os.environ) == str(client_runtime_dir()), env
        finally:
            for k in env:
                del os.environ[k]
            os.environ.update(saved)
    assert runtime_dir(Options(), root) == str(login / "slmactor")


def test_raw_hook_fields_are_what_the_codec_would_send() -> None:
    from slmactor.cli.hook import MEMORY_BLOCK_DEFAULTS, without_defaults
    from slmactor.protocol.messages import MemoryBlock

    block_cases: list[dict[str, Any]] = [
        {"role": "worker", "budget": 0, "query": "", "run_id": "s"},
        {"role": "", "budget": 300, "query": "fix it", "run_id": ""},
    ]
    for fields in block_cases:
        assert without_defaults(fields, MEMORY_BLOCK_DEFAULTS) == codec.wire_fields(MemoryBlock(**fields))


# ---------------------------------------------------------------- cheap: what a hook process imports


def _imports(argv: list[str], stdin: bytes, runtime: Path) -> set[str]:
    code = textwrap.dedent(f"""
        import io, sys
        sys.stdin = io.TextIOWrapper(io.BytesIO({stdin!r}))
        from slmactor.cli.entry import main
        rc = main({["--runtime-dir", str(runtime), *argv]!r})
        loaded = sorted(sys.modules)
        import json
        print(json.dumps(loaded), file=sys.stderr)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stderr.strip().splitlines()[-1]))


def test_events_with_nothing_to_do_import_no_client(tmp_path: Path) -> None:
    # (Cline's PreToolUse has work since Cline 3 takes `overrideInput`: its gate keeps it cheap.)
    for argv in (["hook", "claude", "Stop"], ["hook", "gemini", "AfterAgent"], ["hook", "openhands", "PreToolUse"],
                 ["hook", "cline", "Notification"], ["hook", "claude", "Notification"]):
        loaded = _imports(argv, b'{"tool_name": "Bash", "tool_input": {"command": "ls"}}', tmp_path)
        assert not {"zmq", "msgpack", "slmactor.client", "argparse", "dataclasses", "json", "typing"} & loaded, argv
    loaded = _imports(["hook", "claude", "PostToolUse"], b'{"tool_name": "Bash"}', tmp_path)  # daemon down
    assert not {"argparse", "slmactor.protocol.messages", "slmactor.logic.evolve.preflight"} & loaded


# ---------------------------------------------------------------- fail-open: daemon down, daemon wedged


@pytest.mark.parametrize("fmt", dialects.FORMATS)
def test_daemon_down_every_format_exits_0_at_once(fmt: str, tmp_path: Path) -> None:
    for fx in load(fmt):
        if fx.expect["action"] not in ("record", "context"):
            continue
        rc, out, err, elapsed = _hook(tmp_path / "rt", ["--no-autostart", "hook", fmt, fx.event],
                                      json.dumps(fx.payload(str(tmp_path))).encode())
        assert (rc, out) == (0, dialects.neutral(fmt)), fx.id
        assert "not reachable" in err and elapsed < slack(10)




def test_a_wedged_daemon_trips_the_breaker_and_later_hooks_return_at_once(tmp_path: Path) -> None:
    # As a harness runs it: the console script pip writes for `[project.scripts]` (its exact
    # text), with the byte-code cache usable.
    script = tmp_path / "slmactor"
    script.write_text(f"#!{sys.executable}\nimport re\nimport sys\nfrom slmactor.cli.entry import main\n"
                      "if __name__ == '__main__':\n    sys.exit(main())\n")
    script.chmod(0o755)
    command = [str(script)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    runtime = Path(f"/tmp/sa-wedge-{os.getpid()}")
    runtime.mkdir(exist_ok=True)
    wedge = subprocess.Popen([sys.executable, "-c", _WEDGE, str(runtime / "ctl.sock")], stdout=subprocess.PIPE)
    try:
        assert wedge.stdout is not None and wedge.stdout.readline() == b"bound\n"
        fx = next(f for f in FIXTURES if f.id == "claude/PostToolUse-Bash")
        stdin = json.dumps(fx.payload(str(tmp_path))).encode()
        rc, out, err, elapsed = _hook(runtime, ["hook", "claude", "PostToolUse", "--timeout", "1"], stdin,
                                      env=env, command=command)
        assert (rc, out) == (0, {}) and "no reply" in err
        assert elapsed < slack(10)  # the 1 s deadline plus start-up
        assert breaker.is_open(str(runtime), time.time())
        for _ in range(3):
            # The breaker's path: the daemon is not asked (no "no reply" after a wait), and
            # the call is still written down for the report a later event sends. How close to
            # a bare interpreter start that is: `python -m bench hooks` ("breaker open" rows).
            rc, out, err, elapsed = _hook(runtime, ["hook", "claude", "PostToolUse"], stdin, env=env, command=command)
            assert (rc, out) == (0, {}) and "breaker open" in err and "no reply" not in err
            assert elapsed < slack(1.0)  # not the 1 s deadline it would wait on the daemon
        # Context events too: no wait at every prompt while the daemon is wedged.
        rc, out, err, elapsed = _hook(runtime, ["hook", "gemini", "BeforeAgent"], b'{"prompt": "x"}', env=env,
                                      command=command)
        assert (rc, out) == (0, {}) and "breaker open" in err and "no reply" not in err
    finally:
        wedge.kill()
        wedge.wait()
        if wedge.stdout is not None:
            wedge.stdout.close()
        shutil.rmtree(runtime, ignore_errors=True)


def test_session_start_starts_the_daemon(tmp_path: Path) -> None:
    runtime = Path(f"/tmp/sa-hook-{os.getpid()}")
    env = {**os.environ, "HOME": str(tmp_path), "SLMACTOR_HOME": str(tmp_path / "store"),
           "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("NOTIFY_SOCKET", None)
    project = tmp_path / "repo"
    project.mkdir()
    fx = next(f for f in FIXTURES if f.id == "claude/SessionStart")
    try:
        rc, out, err, _ = _hook(runtime, ["hook", "claude", "SessionStart"],
                                json.dumps(fx.payload(str(project))).encode(), env=env)
        assert (rc, out) == (0, {}), err  # a new store has nothing to say yet, but the daemon runs
        assert (runtime / "ctl.sock").exists()
    finally:
        stop = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(runtime), "stop"],
                              capture_output=True, text=True, timeout=60, env=env, check=False)
        shutil.rmtree(runtime, ignore_errors=True)
    assert stop.returncode == 0, stop.stderr
