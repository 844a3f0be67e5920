"""What each room says of a shell call that did not return, and how it puts a rewritten command
back into its own tool's arguments. The notices are the real binaries' words: Claude Code
2.1.328's Bash tool_response (`timedOutAfterMs`, `backgroundTaskId`), Codex CLI 0.169's unified
exec summary ("Process running with session ID N"), both as tests/realcli/
test_environment_scenarios.py sees them."""

from __future__ import annotations

import json

from slmactor import harnesses
from slmactor.harnesses.codex import rollout

RUNNING = ("Chunk ID: bef477\nWall time: 10.0012 seconds\nProcess running with session ID 47714\n"
           "Original token count: 10\nOutput:\nServing HTTP on 127.0.0.1 port 45421\n")
EXITED = ("Chunk ID: 5c721a\nWall time: 0.0000 seconds\nProcess exited with code 0\n"
          "Original token count: 0\nOutput:\n")


def test_claude_code_says_a_command_it_moved_to_the_background_did_not_return() -> None:
    room = harnesses.get("claude")
    moved = {"stdout": "Serving HTTP on 127.0.0.1 port 8000", "stderr": "", "interrupted": False,
             "backgroundTaskId": "bo6xvxtrb", "timedOutAfterMs": 4000}
    said = room.outlived("Bash", "PostToolUse", {"tool_response": moved})
    assert said.startswith("Command did not complete within its 4s timeout and was moved to "
                           "the background") and "Serving HTTP" in said
    # Run in the background by the model's own choice (`run_in_background`): no timeout.
    chosen = {"stdout": "", "stderr": "", "backgroundTaskId": "b2"}
    assert room.outlived("Bash", "PostToolUse", {"tool_response": chosen}) == ""
    assert room.outlived("Read", "PostToolUse", {"tool_response": moved}) == ""


def test_codex_says_a_command_its_exec_kept_running_did_not_return() -> None:
    room = harnesses.get("codex")
    said = room.outlived("Bash", "PostToolUse", {"tool_response": RUNNING})
    assert said.startswith("Process running with session ID 47714: the command had not "
                           "returned after 10.0012 seconds") and said.endswith("port 45421")
    assert room.outlived("Bash", "PostToolUse", {"tool_response": EXITED}) == ""


def _rollout_line(kind: str, payload: dict[str, object]) -> str:
    return json.dumps({"timestamp": "2026-12-07T20:48:57.000Z", "type": kind, "payload": payload})


def test_codex_rollout_records_a_server_its_exec_kept_running_as_not_returned() -> None:
    # Codex 0.169 fires no PostToolUse for a yielded command: the rollout is its record.
    def call(n: int, cmd: str, output: str) -> list[str]:
        return [_rollout_line("response_item", {
                    "type": "function_call", "call_id": f"c{n}", "name": "exec_command",
                    "arguments": json.dumps({"cmd": cmd, "yield_time_ms": 10000})}),
                _rollout_line("response_item", {
                    "type": "function_call_output", "call_id": f"c{n}", "output": output})]

    build = RUNNING.replace("Serving HTTP on 127.0.0.1 port 45421", "[1/30] cc -c a.c")
    stats = rollout([*call(1, "python3 server.py", RUNNING), *call(2, "make all", build),
                     *call(3, "python3 server.py > server.log 2>&1 &", EXITED)])
    verdicts = [(c["command"], c["ok"]) for c in stats.calls]
    assert verdicts == [("python3 server.py", False), ("make all", True),
                        ("python3 server.py > server.log 2>&1 &", True)]
    assert stats.calls[0]["error"].startswith("timed out: Process running with session ID")


def test_each_room_puts_a_rewritten_command_back_in_its_tool_s_form() -> None:
    new = ". .nodeenv/activate && npm install"
    assert harnesses.get("claude").with_command(
        {"command": "npm install", "timeout": 5}, new) == {"command": new, "timeout": 5}
    assert harnesses.get("codex").with_command({"cmd": "npm install"}, new) == {"cmd": new}
    assert harnesses.get("codex").with_command(
        {"command": ["bash", "-lc", "npm install"]}, new) == {"command": ["bash", "-lc", new]}
    cline = harnesses.get("cline")
    # Cline 3's hook sees `commands` as JSON text; its tool takes a list.
    assert cline.with_command({"commands": '["npm install"]'}, new) == {"commands": [new]}
    assert cline.with_command({"commands": ["npm install"]}, new) == {"commands": [new]}
    # Several commands in one call: one rewrite of them all would change what runs.
    assert cline.with_command({"commands": '["npm install", "npm test"]'}, new) is None


def test_claude_code_transcript_records_a_server_it_moved_to_the_background() -> None:
    from slmactor.harnesses.claude import transcript_stats as transcript

    def call(n: int, command: str, result: dict[str, object]) -> list[str]:
        use = {"type": "assistant", "timestamp": "2026-12-07T20:43:50.000Z", "message": {
            "role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{n}",
                                              "name": "Bash", "input": {"command": command}}]}}
        done = {"type": "user", "timestamp": "2026-12-07T20:43:55.000Z", "toolUseResult": result,
                "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{n}", "is_error": False,
                     "content": "…"}]}}
        return [json.dumps(use), json.dumps(done)]

    moved = {"stdout": "Serving HTTP on 127.0.0.1 port 38495", "stderr": "", "interrupted": False,
             "backgroundTaskId": "bo6xvxtrb", "timedOutAfterMs": 4000}
    build = {**moved, "stdout": "[3/40] cc -c a.c"}
    stats = transcript([*call(1, "python3 server.py", moved), *call(2, "make all", build),
                        *call(3, "python3 server.py &", {"stdout": "", "stderr": ""})])
    assert [(c["command"], c["ok"]) for c in stats.calls] == [
        ("python3 server.py", False), ("make all", True), ("python3 server.py &", True)]
    assert "moved to the background" in stats.calls[0]["error"]


CUT = ("Chunk ID: 4a64de\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token "
       "count: 109516\nOutput:\nWarning: truncated output (original token count: 109516)\nTotal "
       "output lines: 8000\n\nline 00001\n")


def test_a_read_the_harness_cut_is_output_too_large_unless_it_asked_a_range() -> None:
    # The harnesses' own notices, as tests/realcli/test_truncated_reads.py sees them from the
    # real binaries (Codex 0.169, Gemini 0.61, Cline 3.0.65).
    codex = harnesses.get("codex")
    assert codex.truncation("Bash", "PostToolUse", {"tool_response": CUT}).startswith(
        "Warning: truncated output (original token count: 109516)")
    assert codex.truncation("Bash", "PostToolUse", {"tool_response": EXITED}) == ""
    gemini = harnesses.get("gemini")
    cut = {"llmContent": "\nIMPORTANT: The file content has been truncated.\nStatus: Showing "
                         "lines 1-2000 of 8000 total lines.\nAction: To read more of the file, "
                         "you can use the 'start_line' and 'end_line' parameters in a subsequent "
                         "'read_file' call. For example, ...\n"}
    whole = {"tool_input": {"file_path": "/p/big.log"}, "tool_response": cut}
    assert gemini.truncation("read_file", "AfterTool", whole).startswith(
        "IMPORTANT: The file content has been truncated. Status: Showing lines 1-2000")
    # A ranged read is told "truncated" of the rest of the file too: it got what it asked for.
    ranged = {**whole, "tool_input": {"file_path": "/p/big.log", "start_line": 1,
                                      "end_line": 100}}
    assert gemini.truncation("read_file", "AfterTool", ranged) == ""
    cline = harnesses.get("cline")

    def cline_read(files: list[dict[str, object]], shown: str) -> dict[str, object]:
        result = json.dumps([{"query": "big.log", "result": f"1 | line 00001\n\n{shown}",
                              "success": True}])
        return {"tool_result": {"name": "read_files", "input": {"files": files}},
                "postToolUse": {"toolName": "read_files",
                                "parameters": {"files": json.dumps(files)}, "result": result}}

    notice = "[Showing lines 1-790 of 8000. Use start_line/end_line to read other sections.]"
    assert cline.truncation("read_files", "PostToolUse",
                            cline_read([{"path": "/p/big.log"}], notice)) == notice
    # A command whose output quotes such a line (`cat` of a saved transcript) cut nothing.
    assert cline.truncation("run_commands", "PostToolUse",
                            cline_read([{"path": "/p/big.log"}], notice)) == ""
    assert gemini.truncation("run_shell_command", "AfterTool", whole) == ""
    assert cline.truncation("read_files", "PostToolUse", cline_read(
        [{"path": "/p/big.log", "start_line": 1, "end_line": 100}],
        notice.replace("1-790", "1-100"))) == ""



def test_cline_s_read_files_names_the_files_of_its_entries() -> None:
    # Cline CLI 3.0.65's `read_files {files: [{path, start_line?, end_line?}]}` (as the real
    # binary sends it in tests/realcli/test_truncated_reads.py): a cut read and the ranged read
    # that got past it are on one file, so the range is learned as the fix.
    cline = harnesses.get("cline")
    whole = cline.tool_call("read_files", {"files": [{"path": "/p/big.log"}]})
    ranged = cline.tool_call("read_files", {"files": [{"path": "/p/big.log", "start_line": 1,
                                                       "end_line": 100}]})
    assert whole.paths == ranged.paths == ("/p/big.log",)
    two = cline.tool_call("read_files", {"files": [{"path": "a.py"}, {"path": "b.py"}]})
    assert two.paths == ("a.py", "b.py")
    # Its hook's `postToolUse.parameters` carries the list as JSON text.
    sent = cline.tool_call("read_files", {"files": json.dumps([{"path": "/p/big.log"}])})
    assert sent.paths == ("/p/big.log",)

def test_codex_rollout_records_a_cut_output_as_too_large() -> None:
    stats = rollout([
        _rollout_line("response_item", {"type": "function_call", "call_id": "c1",
                                        "name": "exec_command",
                                        "arguments": json.dumps({"cmd": "cat big.log"})}),
        _rollout_line("response_item", {"type": "function_call_output", "call_id": "c1",
                                        "output": CUT})])
    assert stats.calls[0]["ok"] is False
    assert stats.calls[0]["error"].startswith("output too large: Warning: truncated output")
