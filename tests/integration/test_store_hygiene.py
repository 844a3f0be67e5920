"""Store hygiene: private modes, no temp litter, wrong-shaped JSON set aside with a
warning, `memory.prune` honouring `episodes_cap`, a read-only runtime dir reported in one line,
and a private daemon log — against a real daemon where a daemon is involved."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from slmactor.cli.autostart import open_private_log
from slmactor.protocol.messages import (
    EpisodeAppend,
    EpisodeRecent,
    FactList,
    FactObserve,
    LessonAdd,
    MemoryPrune,
    PolicyUpdate,
    RunFinish,
)
from slmactor.testing import DaemonProcess, _short_tempdir, spawn_daemon, stop_quietly


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.lstat().st_mode) for p in root.rglob("*")}


def test_every_store_directory_is_0700_and_every_file_0600(daemon: DaemonProcess) -> None:
    store = daemon.project / ".slmcode"
    store.mkdir(mode=0o755)  # as a checkout leaves it
    os.chmod(store, 0o755)
    with daemon.client(timeout=30) as client:
        client.ask(FactObserve(kind="convention", subject="s", text="a fact"))
        client.ask(LessonAdd(lessons=[{"text": "a lesson"}]))
        client.ask(LessonAdd(lessons=[{"text": "a global lesson"}], scope="global"))
        client.ask(PolicyUpdate(decision="edit_format", arm="whole", outcome={"applied": True}))
        client.run_start("r1", task="t")
        client.record_tool("r1", "bash", path="a.py", command="make")
        client.working_mirror("r1")
        client.ask(RunFinish(report={"run_id": "r1", "query": "q", "files_changed": ["a.py"]},
                             wait=True))  # fmt: skip
    assert daemon.stop() == 0
    for root in (store, daemon.home):
        modes = _modes(root)
        assert len(modes) >= 6, modes
        loose = {
            name: oct(mode) for name, mode in modes.items()
            if mode != (0o700 if (root / name).is_dir() else 0o600)
        }  # fmt: skip
        assert loose == {}, root
    assert stat.S_IMODE(store.stat().st_mode) == 0o700


def test_temp_files_left_by_a_crash_are_removed_and_fresh_ones_kept(daemon: DaemonProcess) -> None:
    memory = daemon.project / ".slmcode" / "memory"
    memory.mkdir(parents=True, mode=0o700)
    old = [memory / ".WORKING.md.tmp-k3j2", daemon.project / ".slmcode" / ".MEMORY.md.tmp-x1"]
    fresh = memory / ".SEMANTIC.md.tmp-now"
    for path in [*old, fresh]:
        path.write_text("half a mirror")
    for path in old:
        os.utime(path, (1_000_000_000, 1_000_000_000))
    with daemon.client(timeout=30) as client:
        client.ask(FactList())  # the first request for the project claims and tidies it
    assert [p.exists() for p in old] == [False, False]
    assert fresh.exists()  # possibly being written: left alone


def test_wrong_shaped_json_is_set_aside_with_a_warning(daemon: DaemonProcess) -> None:
    facts = daemon.project / ".slmcode" / "memory" / "facts.json"
    facts.parent.mkdir(parents=True, mode=0o700)
    facts.write_text(json.dumps({"version": 1, "facts": "not a list"}))
    with daemon.client(timeout=30) as client:
        assert client.ask(FactList())["facts"] == []
        warnings = [w["text"] for w in client.status()["warnings"]]
        client.ask(FactObserve(kind="convention", subject="s", text="a fact"))
    assert any("facts.json has the wrong shape" in w for w in warnings), warnings
    corrupt = facts.with_name("facts.json.corrupt")
    assert json.loads(corrupt.read_text())["facts"] == "not a list"


def test_memory_prune_honours_the_configured_episodes_cap(daemon: DaemonProcess) -> None:
    capped = spawn_daemon(base=daemon.base / "capped", env={"SLMACTOR_EPISODES_CAP": "3"})
    try:
        with capped.client(timeout=30) as client:
            for i in range(5):  # under the 2x cap backstop of appends
                client.ask(EpisodeAppend(episode={"query": f"task {i}", "run_id": f"r{i}"}))
            assert client.ask(EpisodeRecent(n=10))["total"] == 5
            pruned = client.ask(MemoryPrune())
            assert pruned["episodes_removed"] == 2
            assert client.ask(EpisodeRecent(n=10))["total"] == 3
    finally:
        stop_quietly(capped)


def test_a_read_only_runtime_dir_is_one_clear_line(tmp_path: Path) -> None:
    base = _short_tempdir()
    runtime = base / "rt"
    runtime.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", str(runtime)],
                             capture_output=True, check=False)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip("needs root to mount a read-only tmpfs")
    try:
        env = {**os.environ, "SLMACTOR_RUNTIME_DIR": str(runtime),
               "SLMACTOR_HOME": str(base / "home")}  # fmt: skip
        done = subprocess.run([sys.executable, "-m", "slmactor", "serve"], env=env,
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    finally:
        subprocess.run(["umount", "-l", str(runtime)], check=False)
        subprocess.run(["rm", "-rf", str(base)], check=False)
    output = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 2
    assert "Traceback" not in "\n".join(output)
    assert len(output) == 1 and "runtime dir" in output[0] and "SLMACTOR_RUNTIME_DIR" in output[0]


def test_the_daemon_log_is_private_even_when_it_was_not(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    log.write_text("an old line\n")
    os.chmod(log, 0o644)
    with open_private_log(log) as handle:
        handle.write(b"a new line\n")
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert log.read_text() == "an old line\na new line\n"
    fresh = tmp_path / "fresh.log"
    with open_private_log(fresh):
        pass  # creating the file is the point: its mode is checked below
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600
