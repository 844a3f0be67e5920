"""One failure, one fingerprint id, whichever way it reaches the daemon (acceptance).

The same failed call — one per tool family a harness room has (shell, edit, read, search,
web) — is sent through every path that room offers, to one real daemon:

* **hook**: the real `slmactor hook <room> <event>` command fed the failure event the harness
  sends (OpenCode's plugin: a bash call, whose exit code is the one failure it reports); its id is the key the daemon answered, which the hook keeps in the session's ledger;
* **run.finish**: the session's end event through the same command (the report built from the
  ledger and the transcript it names); its id is the fingerprint of the failure in the episode
  the reflection writes;
* **import sessions**: the real `slmactor import sessions FILE` of the session's transcript (or
  trajectory) in the harness's own format; its id, again the episode's;
* **replay**: `metrics replay`'s driver (`learning_replay`) with the failed step; its id is what
  `evolve.on_failure` answered;
* **metrics replay --learn**: the real `slmactor metrics replay --learn --json FILE` of the same
  transcript (the replay of real histories, answered in its own process by the rules actor's
  functions); its id is the one the replay's report gives the failure.

A room without hooks (mini-swe-agent's is its in-process agent, through the client's
`on_failure`; SWE-agent has none) is sent through the paths it has. Codex's hooks fire for its
shell and `apply_patch` only, and its rollout records a failure only by an exit code or a patch
that did not apply; OpenCode's plugin reports a failure only as a bash call's exit code: their
other calls go through the import (OpenCode's export), replay and the client.

Formats, per room (the rooms' docstrings and `tests/fixtures/hooks/<room>/` name the sources):
Claude Code's `PostToolUseFailure{tool_name, tool_input, tool_use_id, error}` and its JSONL
transcript (`tool_use` / `tool_result{is_error}`, an error wrapped in `<tool_use_error>`, a
Bash failure as `Exit code N\\n<output>`); Codex CLI's `PostToolUse{tool_response: "Exit code:
N\\nWall time: …\\nOutput:\\n…"}` and its rollout (`function_call` / `function_call_output`,
`custom_tool_call` for `apply_patch`); Gemini CLI's `AfterTool{tool_response{llmContent,
returnDisplay, error{message, type}}}` (a shell failure only as `Exit Code: N` in `llmContent`)
and its chat file (`toolCalls[{status, result[{functionResponse{response}}]}]`); Cline's
`PostToolUse{postToolUse{toolName, parameters, result, success}}` and its task's
`api_conversation_history.json` (`tool_use` / `tool_result{is_error}`); OpenHands' SDK
`PostToolUse{tool_response{content, is_error, exit_code}}`; mini-swe-agent's and SWE-agent's
trajectory files (`tests/fixtures/sessions/*/SOURCE.md`); OpenCode's `tool.execute.after`
as slmactor's plugin hands it on and its `{info, parts}` export (its room's docstring).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from slmactor import harnesses
from slmactor.cli.loop.replay_driver import learning_replay
from slmactor.hooks import session
from slmactor.logic.loop.replay import Step, Trajectory
from slmactor.protocol.messages import EpisodeGet, EpisodeRecent, RunFinish
from slmactor.testing import DaemonProcess

MODEL = "claude-sonnet-4-5-20250929"


@dataclass(frozen=True)
class Failure:
    """One failed call: its tool, input, what the program or tool said, its exit status."""

    family: str
    tool: str
    args: dict[str, Any]
    said: str
    exit_code: int | None = None

    @property
    def action(self) -> str:
        """The call as a trajectory that spells actions as text keeps it (SWE-agent)."""
        return str(self.args.get("action", ""))

    @property
    def command(self) -> str:
        value = self.args.get("command", self.args.get("cmd", ""))
        return value if isinstance(value, str) else " ".join(value)


PY_ERROR = ("Traceback (most recent call last):\n  File \"/repo/manage.py\", line 3, in <module>\n"
            "    import django\nModuleNotFoundError: No module named 'django'")


def _failures(repo: Path, room: str) -> list[Failure]:
    """The failures each room is sent: its own tools, in its own argument keys, saying what that
    tool says (the tools' error texts as the room's fixtures record them)."""
    locked, missing = str(repo / "src" / "locked.py"), str(repo / "docs" / "missing.md")
    nowhere, url = str(repo / "nowhere"), "https://example.invalid/api/v1/spec"
    shell = ("shell", "python3 manage.py migrate", PY_ERROR, 1)
    table: dict[str, list[tuple[str, str, dict[str, Any], str, int | None]]] = {
        "claude": [
            ("shell", "Bash", {"command": shell[1], "description": "migrate"}, PY_ERROR, 1),
            ("edit", "Write", {"file_path": locked, "content": "x = 1\n"},
             f"EACCES: permission denied, open '{locked}'", None),
            ("read", "Read", {"file_path": missing}, "File does not exist.", None),
            ("search", "Grep", {"pattern": "TODO", "path": nowhere},
             f"Path does not exist: {nowhere}", None),
            ("web", "WebFetch", {"url": url, "prompt": "the spec"},
             "Request failed with status code 404", None),
        ],
        "codex": [
            ("shell", "Bash", {"command": shell[1]}, PY_ERROR, 1),
            ("edit", "apply_patch", {"command": "*** Begin Patch\n*** Update File: src/parse.py\n@@\n"
                                                "-    return  a+b\n+    return a + b\n*** End Patch"},
             "Failed to find expected lines in src/parse.py:\n    return  a+b", 1),
            ("read", "read_file", {"file_path": missing},
             f"failed to read file: No such file or directory (os error 2): {missing}", None),
            ("search", "list_dir", {"dir_path": nowhere},
             f"unable to access `{nowhere}`: No such file or directory (os error 2)", None),
            ("web", "web_search", {"query": "django migrate error"}, "web search failed: timeout",
             None),
        ],
        "gemini": [
            ("shell", "run_shell_command", {"command": shell[1], "description": "migrate"},
             PY_ERROR, 1),
            ("edit", "write_file", {"file_path": locked, "content": "x = 1\n"},
             f"Error writing to file: EACCES: permission denied, open '{locked}'", None),
            ("read", "read_file", {"file_path": missing}, f"File not found: {missing}", None),
            ("search", "list_directory", {"dir_path": nowhere},
             f"Error listing directory: ENOENT: no such file or directory, stat '{nowhere}'", None),
            ("web", "web_fetch", {"prompt": f"summarise {url}"},
             f"Error during fetch for {url}: Request failed with status code 404 Not Found", None),
        ],
        "cline": [
            ("shell", "execute_command", {"command": shell[1], "requires_approval": "false"},
             PY_ERROR, 1),
            ("edit", "write_to_file", {"path": locked, "content": "x = 1\n"},
             f"Error writing file: EACCES: permission denied, open '{locked}'", None),
            ("read", "read_file", {"path": missing}, f"Error reading file: File not found: {missing}",
             None),
            ("search", "search_files", {"path": nowhere, "regex": "TODO"},
             f"Error searching files: ENOENT: no such file or directory, scandir '{nowhere}'", None),
            ("web", "web_fetch", {"url": url}, "Error fetching web content: 404 Not Found", None),
        ],
        "openhands": [
            ("shell", "terminal", {"command": shell[1], "is_input": False}, PY_ERROR, 1),
            ("edit", "file_editor", {"command": "create", "path": locked, "file_text": "x = 1\n"},
             f"Ran into [Errno 13] Permission denied: '{locked}' while trying to write to {locked}",
             None),
            ("read", "file_editor", {"command": "view", "path": missing},
             (f"Invalid `path` parameter: {missing}. The path {missing} does not exist. Please "
             "provide a valid path."), None),
            ("search", "glob", {"pattern": "**/*.md", "path": nowhere},
             f"Search path '{nowhere}' is not a valid directory", None),
            ("web", "fetch", {"url": url}, "Failed to fetch the URL: HTTP Error 404: Not Found", None),
        ],
        "mini_swe_agent": [("shell", "bash", {"command": shell[1]}, PY_ERROR, 1)],
        # SWE-agent's actions are text; its tool is the action's program (`importers.program`),
        # its verdict the observation's error markers (SWE-agent's `open` and `find_file` print
        # "File … not found" / "Directory … not found", which it does not count as failures).
        "sweagent": [
            ("shell", "python", {"action": "python manage.py migrate"}, PY_ERROR, 1),
            ("edit", "create", {"action": f"create {locked}"},
             f"Error: File '{locked}' already exists.", None),
            ("read", "open", {"action": f'open "{missing}"'}, f"File {missing} not found", None),
            ("search", "find_file", {"action": f"find_file missing.md {nowhere}"},
             f"Directory {nowhere} not found", None),
        ],
        "opencode": [
            ("shell", "bash", {"command": shell[1], "description": "migrate"}, PY_ERROR, 1),
            ("edit", "write", {"filePath": locked, "content": "x = 1\n"},
             f"EACCES: permission denied, open '{locked}'", None),
            ("read", "read", {"filePath": missing}, f"File not found: {missing}", None),
            ("search", "grep", {"pattern": "TODO", "path": nowhere},
             f"ENOENT: no such file or directory, scandir '{nowhere}'", None),
            ("web", "webfetch", {"url": url, "format": "text"},
             "Request failed with status code: 404", None),
        ],
    }
    return [Failure(*row) for row in table[room]]


# ------------------------------------------------------------------------------ hook payloads


def _claude_error(f: Failure) -> str:
    return f"Exit code {f.exit_code}\n{f.said}" if f.family == "shell" else f.said


def _hook_claude(f: Failure, base: dict[str, Any], call_id: str) -> tuple[str, dict[str, Any]]:
    return "PostToolUseFailure", {**base, "hook_event_name": "PostToolUseFailure",
                                  "tool_name": f.tool, "tool_input": f.args,
                                  "tool_use_id": call_id, "error": _claude_error(f)}


def _codex_output(f: Failure) -> str:
    return f"Exit code: {f.exit_code}\nWall time: 0.4 seconds\nOutput:\n{f.said}\n"


def _hook_codex(f: Failure, base: dict[str, Any], call_id: str) -> tuple[str, dict[str, Any]]:
    return "PostToolUse", {**base, "hook_event_name": "PostToolUse", "turn_id": "turn-1",
                           "tool_name": f.tool, "tool_input": f.args, "tool_use_id": call_id,
                           "tool_response": _codex_output(f)}


def _gemini_response(f: Failure) -> dict[str, Any]:
    if f.family == "shell":  # packages/core/src/tools/shell.ts: no `error`, an exit code line
        return {"llmContent": f"Command: {f.command}\nDirectory: (root)\nOutput: {f.said}\n"
                              f"Error: (none)\nExit Code: {f.exit_code}\nSignal: (none)\n"
                              "Background PIDs: (none)\nProcess Group PGID: 4242",
                "returnDisplay": f.said}
    return {"llmContent": f.said, "returnDisplay": f"Error: {f.said}",
            "error": {"message": f.said, "type": "execution_failed"}}


def _hook_gemini(f: Failure, base: dict[str, Any], call_id: str) -> tuple[str, dict[str, Any]]:
    return "AfterTool", {**base, "hook_event_name": "AfterTool", "tool_name": f.tool,
                         "tool_input": f.args, "tool_response": _gemini_response(f)}


def _hook_cline(f: Failure, base: dict[str, Any], call_id: str) -> tuple[str, dict[str, Any]]:
    # apps/vscode/src/sdk/hooks-adapter.ts: the parameters as a string record.
    params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in f.args.items()}
    return "PostToolUse", {**base, "hookName": "PostToolUse", "postToolUse": {
        "toolName": f.tool, "parameters": params, "result": _cline_result(f), "success": False,
        "executionTimeMs": 12}}


def _cline_result(f: Failure) -> str:
    return f"Command executed.\nExit code: {f.exit_code}\nOutput:\n{f.said}" \
        if f.family == "shell" else f.said


def _hook_openhands(f: Failure, base: dict[str, Any], call_id: str) -> tuple[str, dict[str, Any]]:
    response: dict[str, Any] = {"content": [{"cache_prompt": False, "type": "text", "text": f.said}],
                                "is_error": f.family != "shell"}
    if f.family == "shell":
        response.update(command=f.command, exit_code=f.exit_code, timeout=False)
    return "PostToolUse", {**base, "event_type": "PostToolUse", "tool_name": f.tool,
                           "tool_input": f.args, "tool_response": response, "message": None,
                           "metadata": {}}


def _hook_opencode(f: Failure, base: dict[str, Any], call_id: str) -> tuple[str, dict[str, Any]]:
    # The plugin's `tool.execute.after` as slmactor's hook reads it (the room's docstring): a
    # bash call completes whatever its exit; `metadata.exit` says it failed.
    return "tool.execute.after", {**base, "hook_event_name": "tool.execute.after",
                                  "tool_name": f.tool, "tool_input": f.args,
                                  "tool_use_id": call_id, "tool_response": {
                                      "title": f.command, "output": f.said,
                                      "metadata": {"exit": f.exit_code, "output": f.said}}}


HookWriter = Callable[[Failure, dict[str, Any], str], tuple[str, dict[str, Any]]]
#: room → (its failure event writer, the common fields of its events, its end event).
HOOKS: dict[str, tuple[HookWriter, Callable[[Path, str, str], dict[str, Any]], str]] = {
    "claude": (_hook_claude, lambda p, s, t: {"session_id": s, "transcript_path": t, "cwd": str(p),
                                              "permission_mode": "default"}, "SessionEnd"),
    "codex": (_hook_codex, lambda p, s, t: {"session_id": s, "transcript_path": t, "cwd": str(p),
                                            "model": "gpt-5.1-codex", "permission_mode": "default"},
              "Stop"),
    "gemini": (_hook_gemini, lambda p, s, t: {"session_id": s, "transcript_path": t, "cwd": str(p),
                                              "timestamp": "2026-12-01T08:30:00.000Z"},
               "SessionEnd"),
    "cline": (_hook_cline, lambda p, s, t: {"clineVersion": "4.1.13", "timestamp": "1764577800000",
                                            "taskId": s, "workspaceRoots": [str(p)],
                                            "userId": "u-1"}, "TaskComplete"),
    "openhands": (_hook_openhands, lambda p, s, t: {"session_id": s, "working_dir": str(p)},
                  "SessionEnd"),
    "opencode": (_hook_opencode, lambda p, s, t: {"session_id": s, "cwd": str(p)},
                 "session.idle"),
}
#: The tools each room's hooks fire for (Codex CLI: its shell and `apply_patch`).
HOOKED_TOOLS = {"codex": {"Bash", "apply_patch"}, "opencode": {"bash"}}


# -------------------------------------------------------------------------------- transcripts


def _stamp(i: int) -> str:
    return f"2026-12-01T08:{30 + i // 60:02d}:{i % 60:02d}.000Z"


def _claude_transcript(path: Path, repo: Path, sid: str, fails: list[Failure]) -> Path:
    lines = [{"type": "user", "sessionId": sid, "cwd": str(repo), "timestamp": _stamp(0),
              "message": {"role": "user", "content": "migrate the database"}}]
    for i, f in enumerate(fails, start=1):
        lines.append({"type": "assistant", "sessionId": sid, "cwd": str(repo), "timestamp": _stamp(2 * i),
                      "message": {"id": f"msg_{i}", "model": MODEL, "role": "assistant", "content": [
                          {"type": "tool_use", "id": f"toolu_{i}", "name": f.tool, "input": f.args}],
                          "usage": {"input_tokens": 10, "output_tokens": 5}}})
        said = _claude_error(f) if f.family == "shell" else f"<tool_use_error>{f.said}</tool_use_error>"
        lines.append({"type": "user", "sessionId": sid, "cwd": str(repo), "timestamp": _stamp(2 * i + 1),
                      "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": f"toolu_{i}", "is_error": True,
                           "content": said}]}})
    path.write_text("".join(_compact(line) + "\n" for line in lines))
    return path


def _compact(value: Any) -> str:
    """One JSON line as the harnesses write them (no spaces)."""
    return json.dumps(value, separators=(",", ":"))


def _codex_transcript(path: Path, repo: Path, sid: str, fails: list[Failure]) -> Path:
    lines: list[dict[str, Any]] = [
        {"timestamp": _stamp(0), "type": "session_meta", "payload": {"id": sid, "cwd": str(repo)}},
        {"timestamp": _stamp(0), "type": "turn_context", "payload": {"cwd": str(repo), "model": "gpt-5.1-codex"}},
    ]
    for i, f in enumerate(fails, start=1):
        if f.tool == "apply_patch":  # the freeform tool: its input is the patch
            lines.append({"timestamp": _stamp(2 * i), "type": "response_item", "payload": {
                "type": "custom_tool_call", "call_id": f"call_{i}", "name": "apply_patch",
                "input": f.args["command"]}})
            lines.append({"timestamp": _stamp(2 * i + 1), "type": "response_item", "payload": {
                "type": "custom_tool_call_output", "call_id": f"call_{i}", "output": _codex_output(f)}})
        else:
            lines.append({"timestamp": _stamp(2 * i), "type": "response_item", "payload": {
                "type": "function_call", "call_id": f"call_{i}", "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", f.command]})}})
            lines.append({"timestamp": _stamp(2 * i + 1), "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": f"call_{i}", "output": _codex_output(f)}})
    path.write_text("".join(_compact(line) + "\n" for line in lines))
    return path


def _gemini_transcript(path: Path, repo: Path, sid: str, fails: list[Failure]) -> Path:
    calls = []
    for i, f in enumerate(fails, start=1):
        response = ({"output": _gemini_response(f)["llmContent"]} if f.family == "shell"
                    else {"error": f.said})
        calls.append({"id": f"call_{i}", "name": f.tool, "args": f.args,
                      "status": "success" if f.family == "shell" else "error",
                      "timestamp": _stamp(i), "resultDisplay": f.said,
                      "result": [{"functionResponse": {"id": f"call_{i}", "name": f.tool,
                                                       "response": response}}]})
    chat = {"sessionId": sid, "projectHash": "0" * 64, "startTime": _stamp(0),
            "lastUpdated": _stamp(59), "directories": [str(repo)], "messages": [
                {"id": "m1", "type": "user", "timestamp": _stamp(0), "content": "migrate the database"},
                {"id": "m2", "type": "gemini", "timestamp": _stamp(1), "model": "gemini-2.5-pro",
                 "content": "", "toolCalls": calls, "tokens": {"input": 10, "output": 5}}]}
    path.write_text(json.dumps(chat, indent=2))
    return path


def _cline_transcript(path: Path, repo: Path, sid: str, fails: list[Failure]) -> Path:
    task = path / sid
    task.mkdir(parents=True)
    start = int(time.time() * 1000) - 60_000  # a recent task (episodes age out)
    messages: list[dict[str, Any]] = [{"role": "user", "ts": start, "content": [
        {"type": "text", "text": "<task>\nmigrate the database\n</task>"},
        {"type": "text", "text": f"<environment_details>\n# Current Working Directory ({repo}) Files\n"
                                 "manage.py\n</environment_details>"}]}]
    for i, f in enumerate(fails, start=1):
        messages.append({"role": "assistant", "ts": start + 2 * i, "content": [
            {"type": "tool_use", "id": f"toolu_{i}", "name": f.tool, "input": f.args}]})
        messages.append({"role": "user", "ts": start + 2 * i + 1, "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i}", "is_error": True,
             "content": _cline_result(f)}]})
    out = task / "api_conversation_history.json"
    out.write_text(json.dumps(messages))
    return out


def _mini_trajectory(path: Path, repo: Path, sid: str, fails: list[Failure]) -> Path:
    # mini-swe-agent's `.traj.json`: `messages` (the model's ```bash block, then the
    # observation `<returncode>N</returncode><output>…</output>`), `info`, `trajectory_format`.
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful assistant."},
                                      {"role": "user", "content": "migrate the database"}]
    for f in fails:
        messages.append({"role": "assistant", "content": f"THOUGHT: migrate.\n\n```bash\n{f.command}\n```"})
        messages.append({"role": "user", "content": f"<returncode>{f.exit_code}</returncode>\n"
                                                    f"<output>\n{f.said}\n</output>"})
    path.write_text(json.dumps({"trajectory_format": "mini-swe-agent-1", "messages": messages,
                                "info": {"exit_status": "Submitted", "submission": "",
                                         "model_stats": {"api_calls": 1, "instance_cost": 0.0},
                                         "config": {"model": {"model_name": "gpt-4o"}}}}))
    return path


def _sweagent_trajectory(path: Path, repo: Path, sid: str, fails: list[Failure]) -> Path:
    # SWE-agent's `.traj`: `trajectory[{action, observation, response, thought, state}]`, `info`.
    steps = []
    for f in fails:
        action = f.action
        steps.append({"action": action, "observation": f.said, "response": f"```\n{action}\n```",
                      "thought": "", "state": json.dumps({"working_dir": str(repo)})})
    path.write_text(json.dumps({"trajectory": steps, "history": [],
                                "info": {"exit_status": "submitted", "model_stats": {"api_calls": 1}},
                                "environment": "swe_main"}))
    return path


def _opencode_export(path: Path, repo: Path, sid: str, fails: list[Failure]) -> Path:
    # `{info, parts}` per line (session/message-v2.ts): a tool part's state `error` with its
    # error, a bash call `completed` with `metadata.exit`.
    start = int(time.time() * 1000) - 60_000
    lines: list[dict[str, Any]] = [{"info": {"id": "msg_1", "sessionID": sid, "role": "user",
                                             "time": {"created": start}},
                                    "parts": [{"type": "text", "text": "migrate the database"}]}]
    parts = []
    for i, f in enumerate(fails, start=1):
        span = {"start": start + i, "end": start + i + 1}
        state: dict[str, Any] = ({"status": "completed", "input": f.args, "output": f.said,
                                  "metadata": {"exit": f.exit_code, "output": f.said}, "time": span}
                                 if f.tool == "bash" else
                                 {"status": "error", "input": f.args, "error": f.said, "time": span})
        parts.append({"type": "tool", "callID": f"call_{i}", "tool": f.tool, "state": state})
    lines.append({"info": {"id": "msg_2", "sessionID": sid, "role": "assistant",
                           "modelID": "claude-sonnet-4-5", "providerID": "anthropic",
                           "path": {"cwd": str(repo), "root": str(repo)},
                           "time": {"created": start + 1, "completed": start + 60}}, "parts": parts})
    path.write_text("".join(_compact(line) + "\n" for line in lines))
    return path


#: room → (transcript writer, file name) for the rooms whose recorded sessions are imported.
TRANSCRIPTS: dict[str, tuple[Callable[[Path, Path, str, list[Failure]], Path], str]] = {
    "claude": (_claude_transcript, "{sid}.jsonl"),
    "codex": (_codex_transcript, "rollout-{sid}.jsonl"),
    "gemini": (_gemini_transcript, "session-{sid}.json"),
    "cline": (_cline_transcript, "tasks"),
    "mini_swe_agent": (_mini_trajectory, "{sid}.traj.json"),
    "sweagent": (_sweagent_trajectory, "{sid}.traj"),
    "opencode": (_opencode_export, "{sid}.jsonl"),
}
#: What the import reads of a room's session (Codex's rollout records no other failures).
IMPORTED = {"codex": {"shell", "edit"}, "sweagent": {"shell", "edit"}}


# ---------------------------------------------------------------------------------- the paths


def _slmactor(daemon: DaemonProcess, *argv: str, stdin: str = "") -> str:
    proc = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
                           *argv], input=stdin.encode(), capture_output=True, timeout=120,
                          env=daemon.env, check=False)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode()


def _settle(daemon: DaemonProcess) -> None:
    """The finish pipelines run one at a time in arrival order: one more, waited for, is after
    every pipeline of the sessions reported so far."""
    scratch = daemon.base / "settle"
    scratch.mkdir(exist_ok=True)
    with daemon.client(project=scratch) as client:
        client.ask(RunFinish(report={"run_id": f"settle-{time.monotonic_ns()}"}, wait=True))


def _episodes(daemon: DaemonProcess, repo: Path) -> list[dict[str, Any]]:
    with daemon.client(project=repo) as client:
        recent = client.ask(EpisodeRecent(n=50))["episodes"]
        return [client.ask(EpisodeGet(episode_id=e["id"])) for e in recent]


def _episode_ids(daemon: DaemonProcess, repo: Path, run_id: str) -> dict[str, str]:
    """tool (lower-cased, as episodes keep it) → the fingerprint of its failure in the episode
    of the run `run_id` (or the first whose run id starts with it)."""
    found = [e for e in _episodes(daemon, repo) if str(e.get("run_id", "")).startswith(run_id)]
    assert found, f"no episode of {run_id}"
    return {f["tool"]: f["fingerprint"] for f in found[0]["failures"]}


def _through_hooks(daemon: DaemonProcess, repo: Path, room: str, fails: list[Failure],
                   transcript: str) -> tuple[dict[str, str], dict[str, str]]:
    """(tool → the id the failure event's hook was given, tool → the id in the episode of the
    session its end event reported)."""
    writer, common, end = HOOKS[room]
    sid = f"{room}-hook-session"
    base = common(repo, sid, transcript)
    hooked = [f for f in fails if f.tool in HOOKED_TOOLS.get(room, {f.tool})]
    for i, f in enumerate(hooked, start=1):
        event, payload = writer(f, base, f"toolu_{i}")
        _slmactor(daemon, "hook", room, event, stdin=json.dumps(payload))
    ledger = session.ledger_path(daemon.runtime_dir, str(repo), sid)
    keys = {e["tool"]: e["key"] for e in session.read_ledger(ledger) if e.get("key")}
    end_payload = {**base, "hook_event_name": end, "event_type": end, "reason": "other",
                   "stop_hook_active": False, "hookName": end, "taskComplete": {}}
    _slmactor(daemon, "hook", room, end, stdin=json.dumps(end_payload))
    _settle(daemon)
    return keys, _episode_ids(daemon, repo, sid)


def _through_import(daemon: DaemonProcess, repo: Path, room: str, fails: list[Failure],
                    folder: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(tool → the id in the imported session's episode, tool → the id `metrics replay --learn`
    of the same file gives)."""
    writer, name = TRANSCRIPTS[room]
    sid = f"{room}-import-session"
    imported = [f for f in fails if f.family in IMPORTED.get(room, {f.family})]
    written = writer(folder / name.format(sid=sid), repo, sid, imported)
    out = json.loads(_slmactor(daemon, "--project", str(repo), "import", "sessions",
                               "--harness", room, "--json", str(written)))
    assert out["new"] == 1 and out["failed_calls"] == len(imported), out
    _settle(daemon)
    replayed = json.loads(_slmactor(daemon, "--json", "metrics", "replay", "--learn", str(written)))
    failures = replayed["failures"]
    # The file's failed calls in its order (the room may name a tool otherwise than its hooks).
    assert len(failures) == len(imported), (room, failures)
    return (_episode_ids(daemon, repo, f"import:{room}:"),
            {f.tool: got["fingerprint"] for f, got in zip(imported, failures, strict=True)})


def _through_replay(daemon: DaemonProcess, repo: Path, room: str, fails: list[Failure]) -> dict[str, str]:
    steps = tuple(Step(tool=f.tool, args=f.action or json.dumps(f.args), ok=False,
                       error=_replayed_error(room, f)) for f in fails)
    with daemon.client(project=repo, timeout=60) as client:
        result = learning_replay(client, [Trajectory(id=f"{room}-replay", query="migrate",
                                                     steps=steps)], f"{room}-replay")
    return {fails[s.step].tool.lower(): s.fingerprint for s in result.steps}


def _replayed_error(room: str, f: Failure) -> str:
    """The error a replayed step carries: as the room's trajectory (or transcript) shows it."""
    return {"claude": _claude_error, "codex": _codex_output, "cline": _cline_result}.get(
        room, lambda f: f.said)(f)


def _through_client(daemon: DaemonProcess, repo: Path, room: str, fails: list[Failure]) -> dict[str, str]:
    """What an in-process adapter sends (mini-swe-agent's agent, opencode through a client)."""
    with daemon.client(project=repo) as client:
        run = client.start_run("migrate the database")
        return {f.tool.lower(): client.on_failure(run.run_id, f.tool, _replayed_error(room, f),
                                                  args=f.action or f.args).fingerprint
                for f in fails}


@pytest.mark.parametrize("room", harnesses.names())
def test_one_failure_gets_one_id_through_every_path(daemon: DaemonProcess, tmp_path: Path,
                                                    room: str) -> None:
    repo = daemon.base / f"repo-{room}"
    (repo / "src").mkdir(parents=True)
    fails = _failures(repo, room)
    families = {f.family for f in fails}
    assert families >= ({"shell"} if room == "mini_swe_agent" else {"shell", "edit", "read", "search"})
    assert set(harnesses.get(room).families.values()) & {"web"} <= families  # every family it has
    paths: dict[str, dict[str, str]] = {}
    transcript = ""
    if room in TRANSCRIPTS:
        folder = tmp_path / "sessions"
        folder.mkdir()
        paths["import"], paths["metrics replay --learn"] = _through_import(daemon, repo, room, fails,
                                                                           folder)
        writer, name = TRANSCRIPTS[room]
        if room in HOOKS and room not in ("cline", "opencode"):  # the end event reads its transcript
            transcript = str(writer(tmp_path / name.format(sid=f"{room}-hook"), repo,
                                    f"{room}-hook-session", fails))
    if room in HOOKS:
        paths["hook"], paths["run.finish"] = _through_hooks(daemon, repo, room, fails, transcript)
    if room in ("mini_swe_agent", "opencode", "sweagent") or room in HOOKED_TOOLS:
        paths["client"] = _through_client(daemon, repo, room, fails)
    paths["replay"] = _through_replay(daemon, repo, room, fails)
    # Every path saw the failures it can see; each failure has one id on all of them.
    for f in fails:
        ids = {path: got[key] for path, got in paths.items()
               for key in (f.tool, f.tool.lower()) if key in got}
        assert "replay" in ids and len(ids) >= 2, (room, f.tool, paths)
        assert len(set(ids.values())) == 1, (room, f.family, f.tool, ids)
    for family in families:
        seen = {p for p, got in paths.items() for f in fails if f.family == family
                and (f.tool in got or f.tool.lower() in got)}
        assert len(seen) >= 2, (room, family, seen)
