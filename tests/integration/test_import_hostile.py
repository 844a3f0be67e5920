"""`slmactor import sessions` over histories a disk may hold, against a real daemon: NUL and
control bytes in every field, a line nested 100,000 deep, a 200 MB line, a file growing while it
is read, a FIFO, a device, a folder loop, a folder named like a session, an unreadable folder,
invalid UTF-8 in a line and in a file name. Each import finishes (exit 0), counts every skip with
its reason (and `--json` lists it), imports every session it can, and keeps the CLI's and the
daemon's memory bounded. A hook event carrying a NUL is recorded, and a Claude `SessionEnd` hook
whose transcript holds the 100,000-deep line still reports the session.

The transcripts follow Claude Code 2.1.x's JSONL transcript (`~/.claude/projects/<p>/<s>.jsonl`:
`type`, `sessionId`, `cwd`, `timestamp`, an assistant `message` with `tool_use` blocks and a user
`message` with the matching `tool_result`; tests/fixtures/sessions/claude is a real excerpt).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from slmactor.protocol.messages import MetricsShow
from slmactor.testing import DaemonProcess, wait_for

pytestmark = pytest.mark.timeout(300)

#: Resident memory the import process may reach on any of these histories.
MAX_CLI_RSS = 200 << 20
MAX_DAEMON_RSS = 200 << 20


def transcript(session: str, cwd: str, calls: int = 3, *, text: str = "boom", tool: str = "Bash",
               model: str = "claude-sonnet-4-5", stamp: str = "2026-11-30T10:00:0{i}Z") -> str:
    """A Claude Code transcript: `calls` failed `tool` calls, each answered by its result."""
    lines = [{"type": "user", "sessionId": session, "cwd": cwd, "timestamp": stamp.format(i=0),
              "message": {"role": "user", "content": f"fix the {text} test"}}]
    for i in range(calls):
        use = f"toolu_{session}_{i}"
        lines.append({"type": "assistant", "sessionId": session, "cwd": cwd, "timestamp": stamp.format(i=i),
                      "message": {"id": f"msg_{session}_{i}", "model": model, "role": "assistant",
                                  "content": [{"type": "tool_use", "id": use, "name": tool,
                                               "input": {"command": f"go test ./{text}/..."}}],
                                  "usage": {"input_tokens": 10, "output_tokens": 5}}})
        lines.append({"type": "user", "sessionId": session, "cwd": cwd, "timestamp": stamp.format(i=i),
                      "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": use, "is_error": True,
                           "content": f"Exit code 1\n--- FAIL: Test{text}\n{text} output"}]}})
    return "".join(json.dumps(line) + "\n" for line in lines)


#: Runs its arguments without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH (linux/capability.h 1, 2;
#: prctl PR_CAPBSET_DROP = 24): root reads everything otherwise, so a mode-000 folder is
#: unreadable to the import as it is to a user.
_WITHOUT_READ_OVERRIDE = (
    "import ctypes, os, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "for cap in (1, 2):\n"
    "    if libc.prctl(24, cap, 0, 0, 0) != 0: raise OSError(ctypes.get_errno(), 'prctl')\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)


#: Runs the CLI and, at its exit, writes its own peak RSS (VmHWM, kB) to $SLMACTOR_TEST_HWM. Not
#: `wait4`'s ru_maxrss: Linux carries the parent's high-water mark across fork and exec into it,
#: so a child of a test process holding 360 MiB reports 360 MiB whatever it used itself.
_PEAK_RSS = (
    "import atexit, os, runpy, sys\n"
    "def peak():\n"
    "    with open('/proc/self/status') as status:\n"
    "        kb = next(line.split()[1] for line in status if line.startswith('VmHWM:'))\n"
    "    with open(os.environ['SLMACTOR_TEST_HWM'], 'w') as out:\n"
    "        out.write(kb)\n"
    "atexit.register(peak)\n"
    "runpy.run_module('slmactor', run_name='__main__', alter_sys=True)\n"
)


def run(daemon: DaemonProcess, cwd: Path, *args: str, as_user: bool = False) -> tuple[dict[str, Any], str, int]:
    """(the `--json` result, stderr, peak RSS in bytes) of one import process."""
    hwm = cwd / f".import-peak-{threading.get_ident()}"
    argv = [sys.executable, "-c", _PEAK_RSS, "--runtime-dir", str(daemon.runtime_dir), "--no-autostart",
            "--json", "import", "sessions", *args]
    if as_user and os.geteuid() == 0:
        argv = [sys.executable, "-c", _WITHOUT_READ_OVERRIDE, *argv]
    env = {**daemon.env, "SLMACTOR_TEST_HWM": str(hwm)}
    with subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        out_err: list[bytes] = []
        reader = threading.Thread(target=lambda: out_err.append(proc.stderr.read() if proc.stderr else b""))
        reader.start()
        out = proc.stdout.read() if proc.stdout else b""
        _, status, _usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        reader.join()
    err = b"".join(out_err).decode(errors="replace")
    assert proc.returncode == 0, out.decode(errors="replace") + err
    peak_kb = int(hwm.read_text())
    hwm.unlink()
    return json.loads(out), err, peak_kb * 1024


def runs(daemon: DaemonProcess, project: Path) -> dict[str, dict[str, Any]]:
    with daemon.client(project=project) as client:
        return {r["run_id"]: r for r in client.ask(MetricsShow(last=0))["runs"]}


def daemon_rss(daemon: DaemonProcess) -> int:
    with daemon.client() as client:
        return int(client.status()["rss_bytes"])


def reasons(result: dict[str, Any]) -> dict[str, set[str]]:
    """File name → the reasons `--json` lists it with."""
    found: dict[str, set[str]] = {}
    for skip in result["skips"]:
        found.setdefault(Path(skip["path"]).name, set()).add(skip["reason"])
    return found


def test_nul_and_control_bytes_in_every_field_are_imported(daemon: DaemonProcess, tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.mkdir()
    weird = "x\x00\x01\x07\x1b[31m\x7f\u2028y"
    text = transcript(f"s{weird}", f"/gone{weird}", text=f"nul{weird}", tool=f"Bash{weird}",
                      model=f"m{weird}")
    # Raw control bytes inside strings (not \\u escapes): invalid strict JSON, yet a disk holds it.
    raw = text.replace("\\u0001", "\x01").replace("\\u0007", "\x07")
    (history / "weird.jsonl").write_text(raw)
    result, _, _ = run(daemon, tmp_path, str(history), "--project", str(daemon.project))
    assert (result["new"], result["skipped_sessions"], result["skipped_lines"]) == (1, {}, {})
    assert result["calls"] == 3 and result["failed_calls"] == 3
    [run_id] = [r for r in wait_for(lambda: runs(daemon, daemon.project), "the run") if r.startswith("import:")]
    assert run_id == "import:claude:s" + weird.replace("\x00", "\ufffd")

    def stored() -> str:
        return "".join(p.read_text() for p in (daemon.project / ".slmcode").rglob("*.jsonl"))

    text = wait_for(lambda: stored() if "FAIL: Testnulx" in stored() else "", "the episode, its failure kept")
    assert "\\u0000" not in text and "\x00" not in text  # every NUL replaced, nothing dropped
    # A second run: nothing new, nothing lost.
    again, _, _ = run(daemon, tmp_path, str(history), "--project", str(daemon.project))
    assert again["new"] == 0 and again["unchanged_files"] == 1


def test_a_100k_deep_line_costs_that_line_only(daemon: DaemonProcess, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    history = tmp_path / "history"
    history.mkdir()
    deep = "[" * 100_000 + "]" * 100_000 + "\n"
    # Name order: the hostile file first, a good one after it.
    (history / "a-deep.jsonl").write_text(deep + transcript("deep", str(project)) + deep)
    (history / "b-good.jsonl").write_text(transcript("good", str(project)))
    for extra in (("--dry-run",), ()):
        result, _, _ = run(daemon, tmp_path, str(history), *extra)
        assert result["new"] == 2, result
        assert result["skipped_lines"] == {"line nested deeper than 200": 2}
        assert reasons(result) == {"a-deep.jsonl": {"line nested deeper than 200"}}
    assert set(wait_for(lambda: runs(daemon, project) if len(runs(daemon, project)) == 2 else None,
                        "both sessions")) == {"import:claude:deep", "import:claude:good"}


def test_a_200_mb_line_is_skipped_and_memory_stays_bounded(daemon: DaemonProcess, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    history = tmp_path / "history"
    history.mkdir()
    with open(history / "a-huge.jsonl", "wb") as fh:
        fh.write(transcript("huge", str(project)).encode())
        fh.write(b'{"type":"user","message":{"content":"')
        chunk = b"y" * (1 << 20)
        fh.writelines(chunk for _ in range(200))
        fh.write(b'"}}\n')
        fh.write(transcript("after", str(project)).encode())  # past the 32 MiB a file is read to
    (history / "b-next.jsonl").write_text(transcript("next", str(project)))
    result, _, rss = run(daemon, tmp_path, str(history))
    assert result["new"] == 2  # the session before the line, and the next file
    assert result["skipped_lines"] == {"read only its first 32 MiB": 1}
    assert rss <= MAX_CLI_RSS, f"import peak RSS {rss >> 20} MiB"
    assert daemon_rss(daemon) <= MAX_DAEMON_RSS
    # A line over the line cap inside a file under the file cap is drained and counted.
    (history / "c-long.jsonl").write_bytes(b'{"x":"' + b"z" * (2 << 20) + b'"}\n'
                                           + transcript("long", str(project)).encode())
    result, _, _ = run(daemon, tmp_path, str(history / "c-long.jsonl"))
    assert result["new"] == 1 and result["skipped_lines"] == {"line longer than 1 MiB": 1}


def test_a_file_growing_while_it_is_read_is_read_as_it_stood(daemon: DaemonProcess, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    history = tmp_path / "history"
    history.mkdir()
    growing = history / "growing.jsonl"
    growing.write_text(transcript("grow", str(project), calls=2))
    stop = threading.Event()
    written = [0]

    def write() -> None:
        # Appends until the import has finished, each line in two writes (a reader may find half
        # a line at the end), each made durable before the next: a transcript being written.
        line = transcript("grow", str(project), calls=1).splitlines(keepends=True)[1]
        with open(growing, "a") as fh:
            while not stop.is_set() and written[0] < 100_000:
                fh.write(line[:20])
                fh.flush()
                fh.write(line[20:])
                fh.flush()
                os.fsync(fh.fileno())
                written[0] += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        result, _, rss = run(daemon, tmp_path, str(history))
    finally:
        stop.set()
        writer.join()
    assert growing.stat().st_size > result["bytes"]  # it grew after it was counted
    assert result["new"] == 1 and result["sessions"] == 1 and result["skipped_lines"] == {}
    assert rss <= MAX_CLI_RSS
    # What was written meanwhile is the next run's, as the session's next part or nothing new.
    later, _, _ = run(daemon, tmp_path, str(history))
    assert (later["new"], later["continued"], later["sessions"], later["already_imported"]) == (0, 0, 1, 1)


def test_special_files_loops_and_unreadable_folders_are_counted(daemon: DaemonProcess, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    history = tmp_path / "history"
    (history / "sub").mkdir(parents=True)
    (history / "a.jsonl").write_text(transcript("a", str(project)))
    os.mkfifo(history / "fifo.jsonl")
    (history / "zero.jsonl").symlink_to("/dev/zero")
    (history / "sub" / "loop").symlink_to(history)
    (history / "folder.jsonl").mkdir()
    (history / "folder.jsonl" / "inside.jsonl").write_text(transcript("inside", str(project)))
    locked = history / "locked"
    locked.mkdir()
    (locked / "hidden.jsonl").write_text(transcript("hidden", str(project)))
    locked.chmod(0)
    try:
        result, _, _ = run(daemon, tmp_path, str(history), "--dry-run", as_user=True)
    finally:
        locked.chmod(0o700)
    assert result["new"] == 1
    assert reasons(result) == {
        "fifo.jsonl": {"a FIFO (never opened)"},
        "zero.jsonl": {"a character device (never opened)"},
        "loop": {"a link to a folder already read (a loop)"},
        "folder.jsonl": {"a folder named like a session file (not read)"},
        "locked": {"unreadable folder (Permission denied)"},
    }
    assert sum(result["skipped_files"].values()) == 5
    # Readable again: its session is imported (the folder was never recorded as read).
    result, _, _ = run(daemon, tmp_path, str(history))
    assert {"import:claude:a", "import:claude:hidden"} <= set(
        wait_for(lambda: runs(daemon, project) if len(runs(daemon, project)) >= 2 else None, "two runs"))


def test_invalid_utf8_in_a_line_and_in_a_file_name(daemon: DaemonProcess, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    history = tmp_path / "history"
    history.mkdir()
    data = transcript("utf", str(project), text="utf").encode().replace(b"utf output", b"utf \xff\xfe output")
    (history / "bad.jsonl").write_bytes(data)
    os.makedirs(os.fsencode(history) + b"/\xff\xfe", exist_ok=True)
    with open(os.fsencode(history) + b"/\xff\xfe/name-\xff.jsonl", "wb") as fh:
        fh.write(transcript("named", str(project)).encode())
    result, _, _ = run(daemon, tmp_path, str(history))
    assert result["new"] == 2
    assert result["skipped_lines"] == {"invalid UTF-8 replaced (line kept)": 3}
    assert result["skipped_files"] == {}


def test_a_hook_event_carrying_a_nul_is_recorded(daemon: DaemonProcess, tmp_path: Path) -> None:
    project = daemon.project.resolve()
    payload = {"hook_event_name": "PostToolUseFailure", "session_id": "nul-hook", "cwd": str(project),
               "tool_name": "Bash", "tool_input": {"command": "go test ./..."}, "tool_use_id": "tu-1",
               "error": "Exit code 1\n--- FAIL: TestX\nwant \x00 got \x01"}
    end = {"hook_event_name": "SessionEnd", "session_id": "nul-hook", "cwd": str(project), "reason": "exit"}
    for event, body in (("PostToolUseFailure", payload), ("SessionEnd", end)):
        done = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
                               "hook", "claude", event], input=json.dumps(body).encode(), env=daemon.env,
                              capture_output=True, timeout=60, check=False)
        assert done.returncode == 0 and b"BAD_FIELD" not in done.stderr, done.stderr
    run_ = wait_for(lambda: runs(daemon, project).get("nul-hook"), "the hooked session's report")
    assert run_["tool_calls"] == 1 and run_["tool_errors"] == 1


def test_session_end_reports_a_transcript_holding_a_100k_deep_line(daemon: DaemonProcess, tmp_path: Path) -> None:
    project = daemon.project.resolve()
    path = tmp_path / "deep-transcript.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n" + transcript("deep-end", str(project), calls=2))
    end = {"hook_event_name": "SessionEnd", "session_id": "deep-end", "cwd": str(project), "reason": "exit",
           "transcript_path": str(path)}
    done = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
                           "hook", "claude", "SessionEnd"], input=json.dumps(end).encode(), env=daemon.env,
                          capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    run_ = wait_for(lambda: runs(daemon, project).get("deep-end"), "the session's report")
    assert run_["tool_calls"] == 2 and run_["tool_errors"] == 2  # the calls only the transcript had
