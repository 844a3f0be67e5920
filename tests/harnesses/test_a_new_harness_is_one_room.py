"""Adding a harness is adding one room: a made-up harness, written here as a small module of its
own and registered through `SLMACTOR_HARNESSES`, is driven through the real `slmactor hook`
command against a real daemon (its session start gets the memory block in its own output shape,
a failed call is recorded as a failure, its end reads the session's transcript with the room's
reader and becomes an episode) and through `hook install --dry-run` — touching no other module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

ROOM = textwrap.dedent('''
    """Toy Agent, a harness that exists only in this test: events Begin / Did / Done, payloads
    {sid, root, ask, tool, input, result: {failed, text}}, answers {note}, a ".toylog" transcript
    of lines "MODEL <name>" and "TURN"."""

    from slmactor.harnesses.base import CONTEXT, END, RECORD, SHELL, Harness, JsonSettings


    class Toy(Harness):
        name = "toyagent"
        title = "Toy Agent"
        events = {"Begin": CONTEXT, "Did": RECORD, "Done": END}
        context_events = frozenset({"Begin", "Did"})
        end_events = frozenset({"Done"})
        start_events = frozenset({"Begin"})
        event_key = "event"
        project_key = "root"
        tool_kinds = {"sh": SHELL}
        shell_tools = ("sh",)
        settings = JsonSettings(".toy", "hooks.json")
        next_step = "Restart the toy."

        def run_id(self, payload, env):
            return payload.get("sid", "")

        def prompt(self, payload):
            return payload.get("ask", "")

        def tool_fields(self, payload):
            raw = payload.get("input")
            return payload.get("tool", ""), raw, raw if isinstance(raw, dict) else {}

        def outcome(self, tool, event, payload):
            result = payload.get("result") or {}
            return (False, result.get("text", "")) if result.get("failed") else (True, "")

        def output(self, event, context, new_input):
            return {"note": context} if context else {}

        def transcript_path(self, payload):
            return payload.get("log", "")

        def transcript_suffix(self):
            return ".toylog"

        def transcript_stats(self, path, lines, since):
            from slmactor.logic.loop.transcripts import TranscriptStats

            models = [line.split(" ", 1)[1] for line in lines if line.startswith("MODEL ")]
            turns = sum(1 for line in lines if line == "TURN")
            return TranscriptStats(model=models[-1] if models else "", llm_calls=turns)


    HARNESS = Toy()
''')


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DaemonProcess, dict[str, str]]]:
    plugins = tmp_path_factory.mktemp("plugins")
    (plugins / "toy_room.py").write_text(ROOM)
    proc = spawn_daemon()
    env = {**proc.env, "SLMACTOR_HARNESSES": "toy_room",
           "PYTHONPATH": os.pathsep.join([str(plugins), *filter(None, [proc.env.get("PYTHONPATH", "")])])}
    try:
        yield proc, env
    finally:
        stop_quietly(proc)


def _run(daemon: DaemonProcess, env: dict[str, str], argv: list[str], stdin: Any = None) -> Any:
    proc = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), *argv],
                          input=json.dumps(stdin).encode() if stdin is not None else b"",
                          capture_output=True, timeout=60, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_hook_command_serves_a_new_room(toy: tuple[DaemonProcess, dict[str, str]]) -> None:
    daemon, env = toy
    repo = daemon.base / "toy-repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    common = {"sid": "toy-1", "root": str(repo)}
    with daemon.client(project=repo) as client:
        client.remember("build", "the toy builds with make toy")
    began = _run(daemon, env, ["hook", "toyagent", "Begin"], {**common, "ask": "build the toy"})
    assert "make toy" in began["note"]  # the memory block, in the room's own output shape
    failed = {**common, "tool": "sh", "input": {"command": "mkae toy"},
              "result": {"failed": True, "text": "sh: mkae: command not found"}}
    advice = _run(daemon, env, ["hook", "toyagent", "Did"], failed)
    assert set(advice) <= {"note"}  # advice on a failure goes out in the room's shape too
    fixed = {**common, "tool": "sh", "input": {"command": "make toy"}, "result": {"failed": False}}
    assert _run(daemon, env, ["hook", "toyagent", "Did"], fixed) == {}
    log = daemon.base / "session.toylog"
    log.write_text("MODEL toy-model-1\nTURN\nTURN\nTURN\n")
    assert _run(daemon, env, ["hook", "toyagent", "Done"], {**common, "log": str(log)}) == {}
    episodes = _run(daemon, env, ["--project", str(repo), "--json", "memory", "episodes"])
    items = episodes.get("episodes", episodes) if isinstance(episodes, dict) else episodes
    (episode,) = [e for e in items if "toyagent" in e.get("tags", [])]
    assert episode["model"] == "toy-model-1"  # read by the room's transcript reader
    assert episode["query"] == "build the toy"
    assert episode["failures"] == 1 and episode["tools"] == ["sh"]


def test_hook_install_dry_run_writes_the_rooms_settings(toy: tuple[DaemonProcess, dict[str, str]],
                                                       tmp_path: Path) -> None:
    daemon, env = toy
    out = _run(daemon, env, ["--project", str(tmp_path), "--json", "hook", "install", "--harness", "toyagent",
                             "--dry-run"])
    assert out["path"] == str(tmp_path / ".toy" / "hooks.json") and out["changed"] is True
    assert "hook toyagent Did" in out["diff"] and "hook toyagent Done" in out["diff"]
    assert not (tmp_path / ".toy").exists()  # a dry run writes nothing


def test_an_unknown_room_module_fails_open(toy: tuple[DaemonProcess, dict[str, str]]) -> None:
    daemon, env = toy
    proc = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
                           "hook", "nosuchagent", "Begin"], input=b"{}", capture_output=True, timeout=60,
                          env={**env, "SLMACTOR_HARNESSES": "no_such_module"}, check=False)
    assert proc.returncode == 0 and json.loads(proc.stdout) == {}
    assert b"no_such_module" in proc.stderr and b"unknown hook format" in proc.stderr
