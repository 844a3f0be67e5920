"""The durability mode (docs/DURABILITY.md): in "always" every acknowledged log record
(episodes, metrics runs) was fdatasynced before the reply; in the default "os" mode none is
(one write(2) per record); an unknown mode is refused at start with a clear line."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from slmactor.config import load_settings
from slmactor.protocol.messages import EpisodeAppend, MetricsRecord
from slmactor.testing import spawn_daemon, stop_quietly


def _fdatasyncs_during_appends(env: dict[str, str], tmp: Path) -> int:
    daemon = spawn_daemon(env=env)
    trace = tmp / "trace.txt"
    try:
        with daemon.client(timeout=30) as client:
            client.ask(EpisodeAppend(episode={"query": "warm the store", "run_id": "w"}))
            tracer = subprocess.Popen(
                ["strace", "-f", "-e", "trace=fdatasync", "-o", str(trace),
                 "-p", str(daemon.pid)],
                stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            try:
                assert tracer.stderr is not None
                # strace says "Process N attached" once it traces the daemon's main thread.
                for line in tracer.stderr:  # ends at EOF if strace exits instead
                    if "attached" in line:
                        break
                for i in range(5):
                    client.ask(EpisodeAppend(episode={"query": f"task {i}", "run_id": f"r{i}"}))
                    client.ask(MetricsRecord(run={"run_id": f"r{i}", "label": "t"}))
            finally:
                tracer.terminate()
                tracer.communicate(timeout=10)  # also closes its stderr pipe
    finally:
        stop_quietly(daemon)
    return trace.read_text().count("fdatasync(") if trace.exists() else 0


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_always_fdatasyncs_every_acknowledged_record_and_os_does_not(tmp_path: Path) -> None:
    always = _fdatasyncs_during_appends({"SLMACTOR_DURABILITY": "always"}, tmp_path)
    default = _fdatasyncs_during_appends({}, tmp_path)
    assert always >= 10  # 5 episodes + 5 metrics rows, each synced before its reply
    assert default == 0


def test_an_unknown_mode_is_refused() -> None:
    assert load_settings(durability="always").fsync_logs is True
    assert load_settings().fsync_logs is False
    with pytest.raises(ValueError, match="durability must be one of os, always"):
        load_settings(durability="sometimes")
