"""The daemon never executes a command (RELIABILITY T15): traced with strace for execve."""

from __future__ import annotations

import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from slmactor.client import RequestFailed
from slmactor.protocol import Message
from slmactor.protocol.messages import (
    EvolveOnFailure,
    EvolveRegressions,
    MemoryBlock,
    MemoryRecall,
    RunFinish,
    RunStart,
)
from slmactor.testing import spawn_daemon, stop_quietly

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")


def test_no_execve_while_serving_a_session(tmp_path: Path) -> None:
    trace = tmp_path / "exec.trace"
    proc = spawn_daemon()
    tracer = subprocess.Popen(
        ["strace", "-f", "-e", "trace=execve,execveat,fork,vfork", "-o", str(trace), "-p", str(proc.pid)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert tracer.stderr is not None
        # strace says "Process N attached" once per thread it attached to; the first line is enough
        # to know the daemon is traced before the session starts.
        first = tracer.stderr.readline()
        assert "attached" in first, first
        messages: list[Message] = [
            RunStart(run_id="r1", task="build the thing", role="worker"),
            EvolveOnFailure(run_id="r1", tool="Bash", message="bash: rm -rf /: command not found",
                            args='{"command": "rm -rf /"}'),
            MemoryRecall(query="build"),
            MemoryBlock(role="worker", query="build"),
            RunFinish(report={"run_id": "r1", "query": "build", "failures": [
                {"signal": {"tool": "Bash", "message": "exit 1"}, "resolved_by": "llm",
                 "recheck": {"kind": "command", "command": "touch /tmp/slmactor-must-not-exist"}}]}),
            EvolveRegressions(run=True),
        ]
        with proc.client(timeout=5.0) as client:
            client.record_tool("r1", "Bash", command="make", ok=False, error="make: *** [all] Error 1")
            for msg in messages:
                try:
                    client.ask(msg)
                except RequestFailed:
                    pass  # the point is what the daemon does, not whether every ask succeeds
            assert client.status()["pid"] == proc.pid
    finally:
        tracer.send_signal(signal.SIGINT)  # strace detaches cleanly on SIGINT
        tracer.wait(timeout=20)
        if tracer.stderr is not None:
            tracer.stderr.close()
        stop_quietly(proc)
    calls = [line for line in trace.read_text().splitlines() if "exec" in line or "fork" in line]
    assert calls == []
    assert not Path("/tmp/slmactor-must-not-exist").exists()
