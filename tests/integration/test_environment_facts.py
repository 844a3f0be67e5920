"""Environment facts through the real hook command and a real daemon: a wrong runtime fixed by
activating the right one in session 1 is a fact of the project — its pre-flight table is
written, the same command is rewritten before it runs in session 2 (and announced), another
command of the runtime's family is told at its failure, the next session's start is told the
fact; a server that never returned is started in the background the second time; Gemini's cut
read teaches a ranged read.

Payloads follow the hook fixtures (tests/fixtures/hooks/claude/*.json, gemini/*.json, each names
its source); the error texts are those of tests/fixtures/failures/runtimes.jsonl (each names the
tool's source, version and file).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from slmactor.testing import DaemonProcess, run_hook, spawn_daemon, stop_quietly, wait_for
from tests.fixtures.hooks import load

PNPM_ENGINE = (" ERR_PNPM_UNSUPPORTED_ENGINE  Unsupported environment (bad pnpm and/or Node.js "
               "version)\n\nYour Node version is incompatible with \"/home/u/app\".\n\nExpected "
               "version: >=20\nGot: v18.19.0")
ACTIVATE = "source .nodeenv/activate &&"


@pytest.fixture(scope="module")
def daemon() -> Iterator[DaemonProcess]:
    proc = spawn_daemon()
    try:
        yield proc
    finally:
        stop_quietly(proc)


def _repo(daemon: DaemonProcess, name: str) -> Path:
    repo = daemon.base / name
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def _claude(repo: Path, session: str, name: str, **fields: Any) -> dict[str, Any]:
    fixture = next(f for f in load("claude") if f.name == name)
    return {**fixture.payload(str(repo)), "session_id": session, "cwd": str(repo),
            "transcript_path": str(repo.parent / f"{session}.jsonl"), **fields}


def _failed(daemon: DaemonProcess, repo: Path, session: str, command: str, error: str,
            n: int) -> str:
    out = run_hook(daemon, "claude", "PostToolUseFailure", _claude(
        repo, session, "PostToolUseFailure-Bash", tool_input={"command": command},
        tool_use_id=f"toolu_f{n}", error=error))
    return str(out.get("hookSpecificOutput", {}).get("additionalContext", ""))


def _ran(daemon: DaemonProcess, repo: Path, session: str, command: str, n: int,
         **extra: Any) -> None:
    run_hook(daemon, "claude", "PostToolUse", _claude(
        repo, session, "PostToolUse-Bash", tool_input={"command": command, **extra},
        tool_use_id=f"toolu_s{n}",
        tool_response={"stdout": "done", "stderr": "", "interrupted": False, "isImage": False}))


def _pre(daemon: DaemonProcess, repo: Path, session: str, command: str, n: int) -> dict[str, Any]:
    return run_hook(daemon, "claude", "PreToolUse", _claude(
        repo, session, "PreToolUse-Edit", hook_event_name="PreToolUse", tool_name="Bash",
        tool_input={"command": command, "description": "d"}, tool_use_id=f"toolu_p{n}"))


def test_a_runtime_activation_learned_once_rewrites_the_same_command_next_time(
        daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "node-project")
    # Before anything was learned: no table, the command runs as written.
    assert _pre(daemon, repo, "s0", "pnpm install", 0) == {}
    assert not (repo / ".slmcode" / "evolve" / "preflight.keys").exists()

    first = _failed(daemon, repo, "s1", "pnpm install", "Exit code 1\n" + PNPM_ENGINE, 1)
    assert ACTIVATE not in first  # nothing known yet
    _ran(daemon, repo, "s1", f"{ACTIVATE} pnpm install", 1)
    keys = (repo / ".slmcode" / "evolve" / "preflight.keys").read_text().split()
    assert {"npm", "pnpm", "yarn", "node"} <= set(keys)

    out = _pre(daemon, repo, "s2", "pnpm install", 2)
    spec = out["hookSpecificOutput"]
    assert spec["updatedInput"] == {"command": f"{ACTIVATE} pnpm install", "description": "d"}
    assert "permissionDecision" not in spec  # Claude Code's own permission rules decide
    assert "failed here before" in spec["additionalContext"]

    # Another command of the family was never seen failing and the fact is not proven yet: it
    # runs as written, and its failure is told the fix in its own words.
    assert _pre(daemon, repo, "s2", "npm run build", 3) == {}
    told = _failed(daemon, repo, "s2", "npm run build",
                   "Exit code 1\nnpm error code EBADENGINE\nnpm error engine Unsupported engine", 3)
    assert f"`{ACTIVATE}` first" in told and f"{ACTIVATE} npm run build" in told


def test_the_next_session_start_is_told_the_project_s_toolchain(daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "node-told")
    _failed(daemon, repo, "t1", "pnpm install", "Exit code 1\n" + PNPM_ENGINE, 1)
    _ran(daemon, repo, "t1", f"{ACTIVATE} pnpm install", 1)

    def block() -> str:
        out = run_hook(daemon, "claude", "SessionStart", _claude(repo, "t2", "SessionStart"))
        return str(out.get("hookSpecificOutput", {}).get("additionalContext", ""))

    text = wait_for(lambda: (t := block()) and ACTIVATE in t and t, "the toolchain line",
                    timeout=30, pause=0.2)
    assert "node commands" in text


def test_a_server_that_never_returned_is_started_in_the_background_next_time(
        daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "server-project")
    _failed(daemon, repo, "v1", "npm start",
            "Exit code 143\nCommand timed out after 2m 0s\n\n> app@1.0.0 start\n> node server.js"
            "\n\nServer listening on http://localhost:3000", 1)
    _ran(daemon, repo, "v1", "npm start > server.log 2>&1 &", 1)
    spec = _pre(daemon, repo, "v2", "npm start", 2)["hookSpecificOutput"]
    assert spec["updatedInput"]["command"] == "npm start > server.log 2>&1 &"


def test_a_read_gemini_cut_is_recorded_too_large_and_teaches_a_ranged_read(
        daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "gemini-read")
    (repo / "big.log").write_text("x\n" * 5000)
    # Gemini CLI 0.61's AfterTool payload (the fixture's fields) for its read_file tool, whose
    # cut read says so in `llmContent` (packages/core/src/tools/read-file.ts).
    after = next(f for f in load("gemini") if f.name == "AfterTool-run_shell_command")
    notice = ("\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 1-2000 of "
              "5000 total lines.\nAction: To read more of the file, you can use the 'start_line' "
              "and 'end_line' parameters in a subsequent 'read_file' call.\n\n--- FILE CONTENT "
              "(truncated) ---\nx\n")

    def read(session: str, args: dict[str, Any], cut: bool) -> dict[str, Any]:
        payload = {**after.payload(str(repo)), "session_id": session, "cwd": str(repo),
                   "tool_name": "read_file",
                   "tool_input": {"file_path": str(repo / "big.log"), **args},
                   "tool_response": {"llmContent": notice if cut else "x\n",
                                     "returnDisplay": "read"}}
        return run_hook(daemon, "gemini", "AfterTool", payload)

    first = read("g1", {}, cut=True)
    context = json.dumps(first)
    assert "start_line" in context  # the cut read is told to read in ranges
    read("g1", {"start_line": 2001, "end_line": 4000}, cut=False)
    second = json.dumps(read("g2", {}, cut=True))
    assert "start_line" in second and "worked" in second, second


def test_a_server_claude_code_moved_to_the_background_is_started_there_next_time(
        daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "claude-server")
    # Claude Code 2.1.328's PostToolUse of a Bash command that outlived its `timeout`: it kept
    # the command running in the background and said so (`timedOutAfterMs`, the task's id).
    out = run_hook(daemon, "claude", "PostToolUse", _claude(
        repo, "w1", "PostToolUse-Bash", tool_input={"command": "python3 server.py", "timeout": 4000},
        tool_use_id="toolu_w1", tool_response={
            "stdout": "Serving HTTP on 127.0.0.1 port 8000", "stderr": "", "interrupted": False,
            "isImage": False, "backgroundTaskId": "b1", "timedOutAfterMs": 4000}))
    assert "background" in json.dumps(out)  # the advice: start it in the background
    _ran(daemon, repo, "w1", "python3 server.py > server.log 2>&1 &", 2)
    spec = _pre(daemon, repo, "w2", "python3 server.py", 3)["hookSpecificOutput"]
    assert spec["updatedInput"]["command"] == "python3 server.py > server.log 2>&1 &"

    # A long build the harness kept running is no failure: nothing is learned of it.
    run_hook(daemon, "claude", "PostToolUse", _claude(
        repo, "w3", "PostToolUse-Bash", tool_input={"command": "make all"},
        tool_use_id="toolu_w3", tool_response={
            "stdout": "cc -c a.c", "stderr": "", "interrupted": False, "isImage": False,
            "backgroundTaskId": "b2", "timedOutAfterMs": 120000}))
    _ran(daemon, repo, "w3", "make all &", 4)
    assert _pre(daemon, repo, "w4", "make all", 5) == {}


def _cline(repo: Path, session: str, event: str, commands: list[str], result: str = "",
           ok: bool = True) -> dict[str, Any]:
    """Cline CLI 3.0.65's hook payloads (tests/fixtures/hooks/cline/*-cli3.json: `tool_call` and
    `tool_result`), for its `run_commands` tool."""
    fixture = next(f for f in load("cline") if f.name == "PostToolUse-run_commands-failed-cli3")
    base = {k: v for k, v in fixture.payload(str(repo)).items()
            if k not in ("tool_result", "postToolUse")}
    base = {**base, "taskId": session, "sessionContext": {"rootSessionId": session}}
    params = {"commands": json.dumps(commands)}
    if event == "PreToolUse":
        return {**base, "hookName": "tool_call",
                "tool_call": {"id": "c1", "name": "run_commands", "input": {"commands": commands}},
                "preToolUse": {"toolName": "run_commands", "parameters": params}}
    output = [{"query": commands[0], "result": result, "success": ok,
               **({} if ok else {"error": "Command exited with code 1"})}]
    return {**base, "hookName": "tool_result",
            "tool_result": {"id": "c1", "name": "run_commands", "input": {"commands": commands},
                            "output": output},
            "postToolUse": {"toolName": "run_commands", "parameters": params,
                            "result": json.dumps(output), "success": True}}


def test_cline_s_run_commands_is_rewritten_in_its_own_form(daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "cline-node")
    engine = ("[Command exited with code 1]\n\n[stderr]\nnpm error code EBADENGINE\nnpm error "
              "engine Unsupported engine\nnpm error notsup Required: {\"node\":\">=99\"}")
    run_hook(daemon, "cline", "PostToolUse",
         _cline(repo, "k1", "PostToolUse", ["npm install"], engine, ok=False))
    run_hook(daemon, "cline", "PostToolUse",
         _cline(repo, "k1", "PostToolUse", [f"{ACTIVATE} npm install"], "up to date"))
    out = run_hook(daemon, "cline", "PreToolUse", _cline(repo, "k2", "PreToolUse", ["npm install"]))
    # Cline 3's `overrideInput` replaces the tool's input before it runs: `commands` a list.
    assert out["overrideInput"] == {"commands": [f"{ACTIVATE} npm install"]}, out
    assert out["cancel"] is False and "slmactor ran" in out["contextModification"]


def test_gemini_is_told_the_rewrite_after_the_call(daemon: DaemonProcess) -> None:
    repo = _repo(daemon, "gemini-node")
    fixture = next(f for f in load("gemini") if f.name == "AfterTool-run_shell_command-failed")

    def event(name: str, session: str, command: str, said: str = "") -> dict[str, Any]:
        payload = {**fixture.payload(str(repo)), "session_id": session, "cwd": str(repo),
                   "hook_event_name": name,
                   "tool_input": {"command": command, "description": "d"}}
        if name == "BeforeTool":
            payload.pop("tool_response")
        else:
            payload["tool_response"] = {"llmContent": f"<untrusted_context>\nOutput: {said}\n"
                                                      "</untrusted_context>", "returnDisplay": said}
        return run_hook(daemon, "gemini", name, payload)

    event("AfterTool", "m1", "pnpm install", PNPM_ENGINE + "\nExit Code: 1")
    event("AfterTool", "m1", f"{ACTIVATE} pnpm install", "Done")
    before = event("BeforeTool", "m2", "pnpm install")
    assert before["hookSpecificOutput"]["tool_input"]["command"] == f"{ACTIVATE} pnpm install"
    # BeforeTool carries no text to the model (its systemMessage is the user's); the rewritten
    # call's AfterTool says what ran and why.
    after = event("AfterTool", "m2", f"{ACTIVATE} pnpm install", "Done")
    assert "slmactor ran" in after["hookSpecificOutput"]["additionalContext"], after
    assert event("AfterTool", "m2", "ls", "a b") == {}


def _trust(daemon: DaemonProcess, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    import sys

    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "--project",
         str(repo), "--no-autostart", "trust", *args],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=60)


def test_environment_facts_a_repository_brought_wait_for_slmactor_trust(
        daemon: DaemonProcess) -> None:
    """A cloned repository's `environment.json` (facts without this user's signature) rewrites
    nothing and is told nowhere; `slmactor trust` lists each fact whole and adopts the one named,
    which is then used like a learned one."""
    learned = _repo(daemon, "node-learned")
    _failed(daemon, learned, "c1", "pnpm install", "Exit code 1\n" + PNPM_ENGINE, 1)
    _ran(daemon, learned, "c1", f"{ACTIVATE} pnpm install", 1)
    document = json.loads((learned / ".slmcode" / "evolve" / "environment.json").read_text())
    [fact] = document["facts"]
    assert fact.pop("sig")  # what a repository brings: the facts, not this user's signature
    clone = _repo(daemon, "node-cloned")
    (clone / ".slmcode" / "evolve").mkdir(parents=True)
    (clone / ".slmcode" / "evolve" / "environment.json").write_text(json.dumps(document))

    assert _pre(daemon, clone, "d1", "pnpm install", 1) == {}
    told = _failed(daemon, clone, "d1", "pnpm install", "Exit code 1\n" + PNPM_ENGINE, 2)
    assert ACTIVATE not in told
    listed = _trust(daemon, clone, "--list", "--json")
    assert listed.returncode == 0, listed.stderr
    [pending] = json.loads(listed.stdout)["environment"]["unverified"]
    assert pending["id"] == fact["id"] and ACTIVATE in json.dumps(pending)
    shown = _trust(daemon, clone).stdout
    assert "unverified environment facts (1):" in shown and fact["id"] in shown, shown

    adopted = _trust(daemon, clone, fact["id"], "--json")
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    assert json.loads(adopted.stdout)["environment"]["adopted"] == [fact["id"]]
    kept = json.loads((clone / ".slmcode" / "evolve" / "environment.json").read_text())
    assert [f["id"] for f in kept["facts"] if f.get("sig")] == [fact["id"]]
    spec = _pre(daemon, clone, "d2", "pnpm install", 3)["hookSpecificOutput"]
    assert spec["updatedInput"]["command"] == f"{ACTIVATE} pnpm install"
