"""A session end the harness only waits on (`--background`, what `hook install` writes for Claude
Code's and Gemini CLI's `SessionEnd`): the hook answers at once and a detached child reports the
session, so the harness's exit never waits on the daemon.

Real daemon, real hook processes, fed the Claude Code payloads of `tests/fixtures/hooks/claude/`
(each names the hooks reference it follows). The daemon is stopped (SIGSTOP) while the session ends: the
answer still comes, from a hook whose report is then still pending in a detached process (its
own session, none of the harness's pipes); once the daemon runs again, that child reports the
session and the episode is stored — once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil

from slmactor.protocol.messages import EpisodeRecent
from slmactor.testing import DaemonProcess, wait_for
from tests.fixtures.hooks import load

FIXTURES = {f.id: f for f in load()}
#: The prompt of the UserPromptSubmit fixture: the session's query.
QUERY = FIXTURES["claude/UserPromptSubmit"].payload("")["prompt"]


def _hook(daemon: DaemonProcess, args: list[str], payload: dict[str, Any]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
                           "hook", *args], input=json.dumps(payload).encode(), capture_output=True,
                          timeout=60, env=daemon.env, check=False)


def _payload(fixture: str, repo: Path, session: str) -> dict[str, Any]:
    data = FIXTURES[fixture].payload(str(repo))
    data["session_id"] = session
    data["transcript_path"] = str(repo / "no-transcript.jsonl")  # the hooks' record alone
    return data


def _episodes(daemon: DaemonProcess, repo: Path) -> list[Any]:
    with daemon.client(project=repo) as client:
        reply = client.ask(EpisodeRecent(n=0))
    return list(reply.get("episodes", []))


def _detached_reporters() -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        line = proc.info.get("cmdline") or []
        if "SessionEnd" in line and "--background" in line and proc.pid != os.getpid():
            try:
                if os.getsid(proc.pid) == proc.pid:  # leads a session of its own
                    found.append(proc)
            except OSError:
                continue
    return found


def test_the_session_end_answers_at_once_and_the_detached_child_reports_the_session(
        daemon: DaemonProcess) -> None:
    repo = daemon.base / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for fixture in ("claude/UserPromptSubmit", "claude/PostToolUse-Bash"):
        told = _hook(daemon, ["claude", FIXTURES[fixture].event],
                     _payload(fixture, repo, "bg-1"))
        assert told.returncode == 0, told.stderr

    os.kill(daemon.pid, signal.SIGSTOP)
    try:
        ended = _hook(daemon, ["claude", "SessionEnd", "--background", "--timeout", "2"],
                      _payload("claude/SessionEnd", repo, "bg-1"))
        # Answered (the harness's neutral JSON, exit 0) while the daemon could not take anything:
        # the report is still to be made, by a child that holds none of the hook's pipes.
        assert (ended.returncode, ended.stdout) == (0, b"{}\n"), ended.stderr
        assert _detached_reporters(), "no detached child is reporting the session"
    finally:
        os.kill(daemon.pid, signal.SIGCONT)
    stored = wait_for(lambda: _episodes(daemon, repo), "the session's episode", timeout=30, pause=0.1)
    assert [e["query"] for e in stored] == [QUERY]
    wait_for(lambda: not _detached_reporters(), "the detached child to finish", pause=0.1)
    assert len(_episodes(daemon, repo)) == 1


def test_without_the_flag_the_session_end_reports_before_it_answers(daemon: DaemonProcess) -> None:
    repo = daemon.base / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for fixture in ("claude/UserPromptSubmit", "claude/PostToolUse-Bash"):
        _hook(daemon, ["claude", FIXTURES[fixture].event], _payload(fixture, repo, "fg-1"))
    ended = _hook(daemon, ["claude", "SessionEnd"], _payload("claude/SessionEnd", repo, "fg-1"))
    assert (ended.returncode, ended.stdout) == (0, b"{}\n"), ended.stderr
    # The report was taken before the hook answered (journalled, then stored off the hook path).
    stored = wait_for(lambda: _episodes(daemon, repo), "the session's episode", timeout=30, pause=0.1)
    assert [e["query"] for e in stored] == [QUERY]


#: A Claude Code 2.1 transcript from a public session (`tests/fixtures/sessions/claude/SOURCE.md`):
#: a Grep, an Edit the harness rejected, then a Read — its last call.
TRANSCRIPT = (Path(__file__).parents[1] / "fixtures" / "sessions" / "claude" / "session.jsonl")


#: A harness ending its session: it runs the SessionEnd hook, reads its answer, and only then
#: writes the transcript's last line (after a pause longer than the hook takes to report when it
#: does not wait) and exits.
_HARNESS = """
import json, subprocess, sys, time
hook, payload, transcript, last = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
done = subprocess.run(hook, input=payload.encode(), capture_output=True, check=False)
sys.stdout.write(done.stdout.decode())
time.sleep(0.6)
with open(transcript, "a") as handle:
    handle.write(last)
"""


def test_the_transcript_is_read_once_the_harness_that_writes_it_has_exited(
        daemon: DaemonProcess) -> None:
    # `claude -p` cancels the last call's async PostToolUse when it exits, and fires SessionEnd
    # before the transcript has that call's result: no hook told the daemon of it, and the file
    # gets it a moment later. The detached reporter waits for the harness to exit.
    repo = daemon.base / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    lines = TRANSCRIPT.read_text().splitlines(keepends=True)
    transcript = repo / "session.jsonl"
    transcript.write_text("".join(lines[:-1]))  # the Read asked for, its result not yet written
    payload = FIXTURES["claude/SessionEnd"].payload(str(repo))
    payload["session_id"] = "late-1"
    payload["transcript_path"] = str(transcript)
    hook = [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "hook",
            "claude", "SessionEnd", "--background", "--timeout", "2"]
    harness = subprocess.run([sys.executable, "-c", _HARNESS, json.dumps(hook),
                              json.dumps(payload), str(transcript), lines[-1]],
                             capture_output=True, timeout=60, env=daemon.env, check=False)
    assert (harness.returncode, harness.stdout) == (0, b"{}\n"), harness.stderr
    stored = wait_for(lambda: _episodes(daemon, repo), "the session's episode", timeout=30, pause=0.1)
    assert stored[0]["tools"] == ["Grep", "Edit", "Read"]
