"""Working memory through the real daemon, real sockets and the real client.

The flood test is the acceptance test of the hot path: a separate harness process sends 100k
`record_tool` tells as fast as it can while this process asks `working.render` every 10 ms.
Nothing may be lost below the high-water mark (whatever the client had to drop is counted by
the client, reported to the daemon and shown by `status`), every render must be answered, and
the final counters must equal what was sent.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq

from slmactor.protocol import PROTOCOL_VERSION
from slmactor.protocol.messages import (
    Decide,
    Fail,
    Focus,
    Resolve,
    RunStart,
    Summarize,
    WorkingRender,
    WorkingSnapshot,
)
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

FLOOD = 100_000

_SENDER = textwrap.dedent(
    """
    import json, sys, time
    from slmactor.client import Client
    from slmactor.protocol.messages import Summarize, WorkingRender
    runtime, project, run, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    tools = ("Read", "Edit", "Bash", "Grep", "ws_read", "str_replace_editor")
    with Client(runtime, project=project, tell_hwm=100_000) as c:
        failed = 0
        c.record_tool(run, "Read", path="warm-up.py")  # connect before the flood starts
        c.ask(WorkingRender(run_id=run, client=c.client_id, seq=c.last_seq))
        print("sending", flush=True)
        for i in range(n):
            ok = i % 10 != 0
            failed += not ok
            c.record_tool(run, tools[i % 6], path=f"src/m{i % 50}.py", args=f"--line {i}",
                          ok=ok, error="" if ok else f"E{i % 7}: boom\\nmore")
        flood_dropped = c.dropped  # the flush tells below may be dropped too: they are no calls
        deadline = time.monotonic() + 10
        # Make sure the drop count (if any) reaches the daemon: any later tell carries it.
        while c._teller._unreported and time.monotonic() < deadline:
            time.sleep(0.01)
            c.tell(Summarize(run_id=run, text="flush"))  # carries the drop report; no counter moves
        # The harness reads its own writes before it exits: the client closes with LINGER=0, so
        # tells still queued in this process at exit would be discarded.
        # A backlog larger than the daemon's short wait answers caught_up=false: ask again.
        deadline = time.monotonic() + 30
        caught_up = False
        while not caught_up and time.monotonic() < deadline:
            caught_up = c.ask(WorkingRender(run_id=run, client=c.client_id, seq=c.last_seq))["caught_up"]
        print(json.dumps({"client": c.client_id, "seq": c.last_seq, "dropped": flood_dropped, "dropped_all": c.dropped,
                          "failed": failed, "sent": n + 1, "caught_up": caught_up}), flush=True)
    """
)


@pytest.fixture(scope="module")
def daemon() -> Iterator[DaemonProcess]:
    """One daemon for the module (each test uses its own run ids; counters are compared as deltas)."""
    proc = spawn_daemon()
    try:
        yield proc
    finally:
        stop_quietly(proc)


def _working_extra(client: Any) -> dict[str, int]:
    status = client.status()
    working = next(a for a in status["actors"] if a["name"] == "working")
    assert working["state"] == "running" and working["restarts"] == 0
    extra: dict[str, int] = working["extra"]
    return extra


def _counters(client: Any, run: str) -> dict[str, int]:
    reply = client.ask(WorkingSnapshot(run_id=run))
    return reply["snapshot"]["counters"] if reply["live"] else {"calls": 0, "errors": 0, "redundant": 0}


def test_flood_while_rendering_loses_nothing_and_renders_answer(daemon: DaemonProcess) -> None:
    sender = subprocess.Popen(
        [sys.executable, "-c", _SENDER, str(daemon.runtime_dir), str(daemon.project), "flood", str(FLOOD)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=daemon.env,
    )
    with daemon.client() as client:
        before = _working_extra(client)
    latencies: list[float] = []
    assert sender.stdout is not None
    assert sender.stdout.readline().strip() == b"sending", sender.stderr.read() if sender.stderr else ""
    with daemon.client(timeout=5.0, retries=1) as client:
        while sender.poll() is None:
            started = time.perf_counter()
            reply = client.ask(WorkingRender(run_id="flood"))
            latencies.append(time.perf_counter() - started)
            assert reply["tokens"] <= 700
            time.sleep(0.01)
        out, err = sender.communicate(timeout=60)
        assert sender.returncode == 0, err.decode()
        report = json.loads(out)
        expected_calls = report["sent"] - report["dropped"]
        assert report["caught_up"] is True
        counters = _counters(client, "flood")
        after = _working_extra(client)
    assert counters["calls"] == expected_calls
    if report["dropped"] == 0:
        assert counters["errors"] == report["failed"]
    assert after["client_dropped"] - before["client_dropped"] == report["dropped_all"]
    assert after["events_invalid"] == before["events_invalid"]
    assert latencies, "no render was asked during the flood"
    # Every render was answered (a timeout would have raised). The ask p99 target is 5 ms on an
    # idle machine; this box is shared by several test runs, so only starvation is a failure
    # here (asks queued behind the whole flood made most renders wait ~1 s before the events
    # loop yielded between batches) — the benchmark (bench/bench_working.py) measures the figure.
    ms = sorted(x * 1000 for x in latencies)
    p90 = ms[int(0.9 * (len(ms) - 1))]
    assert p90 < 100, f"renders starved: p90 {p90:.0f} ms, max {ms[-1]:.0f} ms, median {statistics.median(ms):.1f} ms"
    assert ms[-1] < 2000, f"a render stalled for {ms[-1]:.0f} ms"


def test_read_your_writes_across_the_two_sockets(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        assert client.ask(RunStart(run_id="rw", task="Fix the parser\ndetails", role="worker"))["run_id"] == "rw"
        client.tell(Focus(run_id="rw", paths=["parser.py"]))
        for i in range(500):
            client.record_tool("rw", "Read", path=f"f{i % 20}.py")
        client.record_tool("rw", "Bash", command="pytest -q", ok=False, error="1 failed\nlong tail")
        client.tell(Fail(run_id="rw", key="fp1", tool="Edit", path="parser.py", message="old_string not found"))
        client.tell(Resolve(run_id="rw", key="fp1", resolution="re-read the file", resolved_by="rule:r1"))
        client.tell(Decide(run_id="rw", text="keep the tokenizer"))
        client.tell(Summarize(run_id="rw", text="read 20 files, one test fails"))
        reply = client.ask(WorkingRender(run_id="rw", client=client.client_id, seq=client.last_seq))
    assert reply["caught_up"] is True
    assert reply["counters"] == {"calls": 501, "errors": 1, "redundant": 480}
    text = reply["text"]
    order = [
        "## Working memory (this run)", "Current task: Fix the parser", "Role: worker",
        "Focus files: parser.py", "So far: read 20 files", "Files read:", "Commands run + exit status:",
        "- `pytest -q` → failed", "Failed tool calls:", "- bash: 1 failed", "Decisions:",
        "Already fixed this run (do not redo):", "- old_string not found → fixed by re-read the file",
    ]
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions)


def test_bad_events_on_the_socket_are_counted_and_the_actor_keeps_going(daemon: DaemonProcess) -> None:
    zctx: zmq.Context[Any] = zmq.Context()
    push = zctx.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 1000)
    push.connect(f"ipc://{daemon.runtime_dir / 'events.sock'}")
    good = {"v": PROTOCOL_VERSION, "project": str(daemon.project), "run_id": "bad", "tool": "Read"}
    bad_frames = [
        [b"record_tool", b"\xc1\xc1"],
        [b"record_tool", msgpack.packb({**good, "path": 42})],
        [b"record_tool", msgpack.packb({**good, "tool": ""})],
        [b"record_tool", msgpack.packb({**good, "run_id": None})],
        [b"record_tool", msgpack.packb({**good, "args": "x" * 20_000})],
        [b"record_tool", msgpack.packb({**good, "v": 0})],
        [b"focus", msgpack.packb({**good, "paths": [1, 2]})],
        [b"record_tool"],
        [b"record_tool", b"", b"extra"],
    ]
    with daemon.client() as client:
        before = _working_extra(client)
    try:
        push.send_multipart([b"record_tool", msgpack.packb({**good, "path": "first.py", "client": "raw", "seq": 1})])
        for frames in bad_frames:
            push.send_multipart(frames)
        push.send_multipart([b"record_tool", msgpack.packb({**good, "path": "last.py", "client": "raw", "seq": 2})])
    finally:
        push.close()
        zctx.term()
    with daemon.client() as client:
        snap = client.ask(WorkingSnapshot(run_id="bad", client="raw", seq=2))
        after = _working_extra(client)
        warnings = client.status().get("warnings", [])
    assert snap["caught_up"] is True
    assert [e["path"] for e in snap["snapshot"]["events"]] == ["first.py", "last.py"]
    assert after["events_invalid"] - before["events_invalid"] == len(bad_frames)
    assert any(w["text"].startswith("dropped bad event #") for w in warnings)


def test_mirror_and_cli(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        client.ask(RunStart(run_id="cli", task="Add retries", role="worker"))
        client.record_tool("cli", "Edit", path="client.py")
        client.record_tool("cli", "Bash", command="export API_KEY=sk-live-abcdefghijklmnop1234567890 && make")
        reply = client.working_mirror("cli")  # names this client's last tell: written after it
        assert reply["written"] is True
    mirror = Path(reply["path"])
    assert mirror == daemon.project / ".slmcode" / "memory" / "WORKING.md"
    text = mirror.read_text()
    assert "- client.py" in text and "sk-live-abcdefghijklmnop1234567890" not in text

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
             "--project", str(daemon.project), "--no-autostart", *args],
            check=False, capture_output=True, text=True, env=daemon.env, timeout=30,
        )

    shown = cli("memory", "working", "--run", "cli")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("## Working memory (this run)\nCurrent task: Add retries\n")
    as_json = json.loads(cli("--json", "memory", "working", "--run", "cli", "--budget", "30").stdout)
    assert as_json["tokens"] <= 30 and as_json["counters"]["calls"] == 2
    snap = json.loads(cli("--json", "memory", "working", "--run", "cli", "--snapshot").stdout)
    assert snap["snapshot"]["files_edited"] == ["client.py"]
    assert cli("memory", "working", "--run", "cli", "--budget", "-1").returncode == 2
    assert cli("memory", "working").returncode == 2
    assert json.loads(cli("--json", "memory", "working", "--run", "cli", "--reset", "--yes").stdout) == {"reset": True, "runs": 1}
    gone = cli("memory", "working", "--run", "cli")
    assert "nothing known about run 'cli'" in gone.stdout


def test_client_working_methods(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        assert c.working_render("m") == ""  # nothing known, no tell sent yet: no wait either
        assert c.run_start("m", "Port the parser", "worker")["run_id"] == "m"
        assert c.focus("m", ["parser.py"])
        c.record_tool("m", "Edit", path="parser.py", ok=False, error="old_string not found", key="fp")
        assert c.fail("m", key="fp2", tool="Bash", message="exit 1")
        assert c.resolve("m", "fp", resolution="re-read first", resolved_by="rule:r9")
        assert c.decide("m", "keep the AST")
        assert c.summarize("m", "one edit failed, fixed")
        text = c.working_render("m")
        assert "Focus files: parser.py" in text and "- bash: exit 1" in text
        assert "- old_string not found → fixed by re-read first" in text
        snap = c.working_snapshot("m")
        assert snap["caught_up"] and snap["snapshot"]["counters"]["errors"] == 1
        assert c.working_mirror("m")["written"] is True
        assert c.run_reset("m") == {"reset": True, "runs": 1}


async def test_async_client_working_methods(daemon: DaemonProcess) -> None:
    from slmactor.client import AsyncClient

    async with AsyncClient(daemon.runtime_dir, project=daemon.project) as c:
        await c.run_start("a", "Async task", "tester")
        c.record_tool("a", "Read", path="x.py")
        assert "- x.py" in await c.working_render("a", 100)
        assert (await c.working_snapshot("a"))["snapshot"]["role"] == "tester"
        assert (await c.working_mirror("a"))["written"] is True
        assert await c.run_reset("a") == {"reset": True, "runs": 1}


def test_hook_payloads_of_real_harnesses_land_in_the_right_lists(daemon: DaemonProcess) -> None:
    """Claude Code and OpenHands tool names, through `slmactor hook`, as a harness would send them."""
    project = str(daemon.project)

    def hook(fmt: str, payload: dict[str, Any]) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "--project", project,
             "--no-autostart", "hook", fmt],
            input=json.dumps(payload), check=False, capture_output=True, text=True, env=daemon.env, timeout=30,
        )
        assert done.returncode == 0, done.stderr

    claude = {"session_id": "cc-1", "cwd": project, "hook_event_name": "PostToolUse"}
    hook("claude", {**claude, "tool_name": "Read", "tool_input": {"file_path": f"{project}/src/a.py"},
                    "tool_response": {"success": True}})
    hook("claude", {**claude, "tool_name": "MultiEdit", "tool_input": {"file_path": f"{project}/src/b.py"},
                    "tool_response": {"success": True}})
    hook("claude", {**claude, "tool_name": "Bash", "tool_input": {"command": "pytest -q"},
                    "tool_response": {"stdout": "", "stderr": "1 failed", "exit_code": 1}})
    openhands = {"session_id": "oh-1", "working_dir": project, "event_type": "PostToolUse"}
    hook("openhands", {**openhands, "tool_name": "str_replace_editor",
                       "tool_input": {"command": "view", "path": f"{project}/src/c.py"}})
    hook("openhands", {**openhands, "tool_name": "str_replace_editor",
                       "tool_input": {"command": "str_replace", "path": f"{project}/src/d.py",
                                      "old_str": "a", "new_str": "b"}})
    hook("openhands", {**openhands, "tool_name": "execute_bash", "tool_input": {"command": "ls -la"}})
    with daemon.client() as client:
        cc = client.working_snapshot("cc-1")["snapshot"]
        oh = client.working_snapshot("oh-1")["snapshot"]
    assert (cc["files_read"], cc["files_edited"]) == (["src/a.py"], ["src/b.py"])
    assert [(c["command"], c["status"]) for c in cc["commands"]] == [("pytest -q", "failed")]
    assert cc["counters"] == {"calls": 3, "errors": 1, "redundant": 0}
    assert (oh["files_read"], oh["files_edited"]) == (["src/c.py"], ["src/d.py"])
    assert [c["command"] for c in oh["commands"]] == ["ls -la"]
