"""Failures read through the harnesses' wrappers, and the classes the call's structure decides.

The wrapped texts follow the formats their harnesses print (each case names it); the texts
inside are the programs' own messages. `unwrap` is checked by properties over texts built from
those wrappers and arbitrary lines: it never raises, reading twice changes nothing, and every
line it returns is a piece of the input.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.failures.fingerprint import analyze
from slmactor.logic.failures.unwrap import signal_of, unwrap
from slmactor.logic.failures.verdict import command_heads, segments

# ---------------------------------------------------------------------------------- unwrap

#: (wrapped text, inner text, exit code, signal) — the wrappers as their harnesses print them.
WRAPPED = [
    # Claude Code: `Error: ` before the Bash result's `Exit code N` header.
    ("Error: Exit code 143\nCommand timed out after 2m 0s", "Command timed out after 2m 0s",
     143, "terminated"),
    ("Exit code 1\nls: cannot access 'x': No such file or directory",
     "ls: cannot access 'x': No such file or directory", 1, ""),
    (("<tool_use_error>File has not been read yet. Read it first before writing to it."
     "</tool_use_error>"), "File has not been read yet. Read it first before writing to it.",
     None, ""),
    # mini-swe-agent's observation template.
    ("<returncode>2</returncode>\n<output>\ngrep: x.py: No such file or directory\n</output>",
     "grep: x.py: No such file or directory", 2, ""),
    # Gemini CLI's shell tool result.
    (("Command: tasklist | findstr X\nDirectory: (root)\nOutput: (empty)\nError: (none)\n"
     "Exit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 19160"),
     "", 1, ""),
    (("Command: npm run build\nDirectory: app\nOutput: > build\nerror TS2304: x\nError: (none)\n"
     "Exit Code: 2\nSignal: (none)"), "> build\nerror TS2304: x", 2, ""),
    # Codex CLI's unified exec summary and its exec summary.
    (("Chunk ID: 0faf38\nWall time: 0.0000 seconds\nProcess exited with code 1\n"
     "Original token count: 0\nOutput:\n"), "", 1, ""),
    ("Exit code: 124\nWall time: 10.0 seconds\nOutput:\nstill waiting", "still waiting", 124,
     "timeout"),
    # Cline's tool result header and error frame, with a serialised JavaScript Error.
    (("[read_file for 'a.js'] Result:\nThe tool execution failed with the following error:\n"
     "<error>\nError reading file: {\"name\":\"Error\",\"message\":\"File not found: a.js\","
     "\"stack\":\"Error: File not found\\n    at Timeout.x\"}\n</error>"),
     "Error reading file:\nFile not found: a.js", None, ""),
    # mini-swe-agent's timeout notice.
    (("The last command <command>sleep 99</command> timed out and has been killed.\n"
     "The output of the command was:\n <output>\npartial\n</output>\nPlease try another command."),
     "partial", None, "timeout"),
    # Shell start-up noise above the program's output.
    (("Exit code 1\nbash: /home/u/.bashrc: line 3: nvm: command not found\n"
     "bash: no job control in this shell\nfatal: not a git repository"),
     "fatal: not a git repository", 1, ""),
]


@pytest.mark.parametrize(("text", "inner", "code", "signal"), WRAPPED)
def test_wrappers_are_read(text: str, inner: str, code: int | None, signal: str) -> None:
    found = unwrap(text)
    assert (found.text, found.exit_code, found.signal) == (inner, code, signal)


def test_exit_codes_name_their_signals() -> None:
    assert [signal_of(c) for c in (0, 1, 124, 130, 137, 143, 144, None)] == [
        "", "", "timeout", "interrupted", "killed", "terminated", "signal 16", ""]


def test_an_error_prefix_inside_a_frame_is_the_programs() -> None:
    assert unwrap("Exit code 1\nError: No agent found").said_error
    assert not unwrap("Error: Exit code 1\nboom").said_error


_PIECES = st.sampled_from([
    "Error: ", "Error:\n", "Exit code 1\n", "Exit code: 143\n", "Process exited with code 2\n",
    "<tool_use_error>", "</tool_use_error>", "<returncode>1</returncode>\n", "<output>\n",
    "</output>", "<error>", "</error>", "<warning>\n", "Command: ls\n", "Directory: (root)\n",
    "Output: ", "Output:\n", "Error: (none)\n", "Exit Code: 1\n", "Signal: 15\n",
    "Chunk ID: ab\n", "Wall time: 0.1 seconds\n", "[read_file for 'x'] Result:\n",
    "The tool execution failed with the following error:\n",
    "bash: /home/dev/.bashrc: line 1: x: command not found\n", "bash: no job control in this shell\n",
    'Error reading file: {"name":"Error","message":"gone"}', "\n", " ", "(empty)",
    "The last command <command>x</command> timed out and has been killed.\n",
])
_TEXTS = st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=12).map("".join)


@settings(derandomize=True, max_examples=600, deadline=None)
@given(_TEXTS)
def test_unwrap_is_total_idempotent_and_keeps_the_inputs_lines(text: str) -> None:
    found = unwrap(text)
    again = unwrap(found.text)
    assert again.text == found.text and not again.wrappers
    for line in found.text.split("\n"):
        assert line in text


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_unwrap_never_raises_on_any_text(text: str) -> None:
    assert unwrap(unwrap(text).text).text == unwrap(text).text


# ---------------------------------------------------------------------------- shell lines

def test_shell_segments_respect_quotes_and_heredocs() -> None:
    assert segments('rg -n "a|b" x') == ['rg -n "a|b" x']
    assert command_heads("cd /x && cat >> f << 'EOF'\nfoo | bar\nEOF\ngo test ./...") == [
        "cat", "go test"]
    assert command_heads("FOO=1 sudo timeout 10 python -m pytest -x") == ["python pytest"]
    assert command_heads("npm run build -- --x; ./bin/test a") == ["npm build", "./bin/test"]


# --------------------------------------------------------------------- classes by structure

#: (tool, family, command, wrapped error, class, detail).
CALLS = [
    # A program that could not parse the JSON it read (CPython 3.11 json/decoder.py words it)
    # failed at run time; `malformed_json` stays for a call whose own arguments did not parse.
    ("Bash", "shell", "gh api repos/o/r | python3 -c 'import json,sys; json.load(sys.stdin)'",
     ("Exit code 1\nTraceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
      "json.decoder.JSONDecodeError: Extra data: line 1 column 212 (char 211)"), "runtime_error", ""),
    ("call_tool", "", "", "json.decoder.JSONDecodeError: Expecting ',' delimiter: line 1 column 9 (char 8)",
     "malformed_json", ""),
    ("Bash", "shell", "npm test", "Error: Exit code 143\nCommand timed out after 2m 0s",
     "timeout", ""),
    ("Bash", "shell", "pkill -f 'node server'", "Exit code 144", "self_kill", ""),
    ("Bash", "shell", "which zsh", "Exit code 1", "not_a_failure", "negative_probe"),
    ("exec_command", "shell", "rg -n needle src",
     "Chunk ID: 1\nWall time: 0.0 seconds\nProcess exited with code 1\nOutput:\n",
     "not_a_failure", "empty_search"),
    ("bash", "shell", "python reproduce_issue.py",
     "<returncode>1</returncode>\n<output>\nAssertionError: bug reproduced\n</output>",
     "not_a_failure", "repro_script"),
    ("bash", "shell", "diff a.txt b.txt", "<returncode>1</returncode>\n<output>\n</output>",
     "not_a_failure", "diff_differs"),
    ("Bash", "shell", "ls build/ 2>/dev/null", "Exit code 2", "path_not_found", ""),
    ("Bash", "shell", "ls src/*.rs", "Exit code 1\n(eval):1: no matches found: src/*.rs",
     "path_not_found", ""),
    ("Read", "read", "", "File content (31000 tokens) exceeds maximum allowed tokens (25000).",
     "output_too_large", ""),
    ("bash", "shell", "", "Please always provide EXACTLY ONE action in triple backticks, found 2.",
     "format_rejected", ""),
    ("run_shell_command", "shell", "", "Command rejected because it could not be parsed safely",
     "policy_denied", ""),
    ("Bash", "shell", "", "The user doesn't want to proceed with this tool use.",
     "user_rejected", ""),
    ("str_replace_editor", "edit", "",
     ("ERROR:\nInvalid `path` parameter: /a.py. File already exists at: /a.py. Cannot overwrite "
     "files using command `create`."), "tool_misuse", "exists"),
    ("Read", "read", "", ("<tool_use_error>EISDIR: illegal operation on a directory, read"
     "</tool_use_error>"), "tool_misuse", "directory"),
    ("execute_bash", "shell", "", "ERROR: Cannot execute multiple commands at once.",
     "tool_misuse", "multiple_commands"),
    ("Edit", "edit", "", ("<tool_use_error>InputValidationError: Edit failed due to the following "
     "issue:\nThe required parameter `old_string` is missing</tool_use_error>"), "tool_misuse",
     "missing_parameter"),
    ("BashOutput", "shell", "", "<tool_use_error>No shell found with ID: 3f2a</tool_use_error>",
     "stale_handle", ""),
    ("mcp_search", "", "", "Error: RESOURCE_EXHAUSTED: quota exceeded for this project",
     "service_exhausted", ""),
    # Claude Code 2.1's Read over its byte limit (the bundle's size error, as the public Entire
    # sessions of agurod42/torre-swipe recorded it).
    ("Read", "read", "", ("<tool_use_error>File content (312.2KB) exceeds maximum allowed size "
     "(256KB). Please use offset and limit parameters to read specific portions of the file, or "
     "use the GrepTool to search for specific content.</tool_use_error>"), "output_too_large", ""),
    # Claude Code 2.1's Grep/Glob on a path that is not there (its bundle's wording).
    ("Grep", "search", "", ("<tool_use_error>Path does not exist: /repo/src/missing. Note: your "
     "current working directory is /repo.</tool_use_error>"), "file_not_found", ""),
    # Claude Code cancelling the calls made beside one that failed (ShamsiievDmytro/entire-bmad).
    ("Bash", "shell", "git log -3", ("<tool_use_error>Cancelled: parallel tool call Bash(git-ai "
     "prompts --since 1d 2>&1) errored</tool_use_error>"), "not_a_failure", "not_run"),
    # Cline's replace_in_file whose markers form no block (src/core/assistant-message/diff.ts).
    ("replace_in_file", "edit", "", ("[replace_in_file for 'a.py'] Result:\nThe tool execution "
     "failed with the following error:\n<error>\nInvalid state transition.\nValid transitions "
     "are:\n- Idle \u2192 StateSearch\n- StateSearch \u2192 StateReplace\n</error>"),
     "format_rejected", ""),
    ("replace_in_file", "edit", "", ("The tool execution failed with the following error:\n"
     "<error>\nFile processing incomplete - SEARCH/REPLACE operations still active during "
     "finalization\n</error>"), "format_rejected", ""),
    # Claude Code 2.1 (its bundle's words): auto mode could not check the call, so it never ran.
    ("Agent", "task", "", ("<tool_use_error>claude-sonnet-5[1m] is temporarily unavailable, so "
     "auto mode cannot determine the safety of Agent right now. This is not a judgment that the "
     "action is unsafe.</tool_use_error>"), "policy_denied", ""),
    ("Skill", "", "", "<tool_use_error>Unknown skill: commit</tool_use_error>", "tool_misuse",
     "other"),
    ("Task", "task", "", ("<tool_use_error>Agent type 'code-simplifier' not found. Available "
     "agents: general-purpose, statusline-setup</tool_use_error>"), "tool_misuse", "other"),
    # Gemini CLI 0.61 (its bundle): an ignored path, and Ajv's type error on a parameter.
    ("read_file", "read", "", ("File path '/home/u/app/.env' is ignored by configured ignore "
     "patterns."), "policy_denied", ""),
    ("list_directory", "search", "", "params/ignore must be array", "tool_misuse",
     "missing_parameter"),
    # curl's exit codes (its manual's EXIT CODES) say what failed when `-s` silenced it.
    ("Bash", "shell", "curl -s -X POST http://localhost:3000/auth", "Exit code 7",
     "provider_error", ""),
    ("Bash", "shell", "curl -s -m 5 http://localhost:3000/", "Exit code 28", "timeout", ""),
    # Codex's write_stdin sending Ctrl-C to its own process: interrupted, silent, nothing failed.
    ("write_stdin", "shell", "", ("Chunk ID: 2c1a9a\nWall time: 0.0234 seconds\nProcess exited "
     "with code 130\nOriginal token count: 0\nOutput:\n"), "not_a_failure", "quiet_exit"),
    # sympy's `bin/test` runner is a test run, never the shell's `test` probe answering no.
    ("bash", "shell", "bin/test sympy/core/tests/test_expr.py",
     ("<returncode>1</returncode>\n<output>\n____ sympy/core/tests/test_expr.py:test_issue ____\n"
      "AssertionError\n= tests finished: 98 passed, 1 failed, in 2.31 seconds =\nDO *NOT* COMMIT!\n"
      "</output>"), "test_failure", ""),
    # The same words from a program run in a shell are the program's, not a diff's.
    ("Bash", "shell", "python fsm.py", "Exit code 1\nValueError: invalid state transition",
     "runtime_error", ""),
]


@pytest.mark.parametrize(("tool", "family", "command", "error", "cls", "detail"), CALLS)
def test_the_call_decides_the_class(tool: str, family: str, command: str, error: str, cls: str,
                                    detail: str) -> None:
    fp = analyze(tool, error, command=command, family=family)
    assert (fp.cls, fp.detail) == (cls, detail)
    assert fp.benign == (cls == "not_a_failure")


def test_a_failing_test_run_and_a_failing_build_are_named_by_the_run() -> None:
    run = analyze("Bash", "Exit code 1\n3 passed, 1 skipped", command="uv run pytest -q",
                  family="shell")
    build = analyze("Bash", "Exit code 2\nsomething printed", command="npm run typecheck",
                    family="shell")
    assert (run.cls, build.cls) == ("test_failure", "compile_error")


def test_the_same_failure_in_two_harnesses_is_one_fingerprint() -> None:
    claude = analyze("Bash", "Error: Exit code 143\nCommand timed out after 2m 0s", family="shell")
    gemini = analyze("run_shell_command", "Command: sleep 300\nDirectory: (root)\nOutput: (empty)"
                     "\nError: (none)\nExit Code: 143\nSignal: (none)", family="shell")
    other = analyze("Bash", "Exit code 143", family="edit")
    assert claude.id == gemini.id != other.id


#: The same three mistakes as bash 5.2 and zsh 5.9 word them (each printed by the shell here;
#: Claude Code 2.1.328 runs a Bash call through `eval` in the user's shell, so zsh users' results
#: say `(eval):1:`).
SHELL_WORDINGS = [
    ("Exit code 127\n/bin/bash: line 1: .venv/bin/python: No such file or directory",
     "Exit code 127\n(eval):1: no such file or directory: .venv/bin/python", "file_not_found"),
    ("Exit code 127\n/bin/bash: line 1: rg: command not found",
     "Exit code 127\nzsh:1: command not found: rg", "dependency_missing"),
    ("Exit code 126\n/bin/bash: line 1: ./run.sh: Permission denied",
     "Exit code 126\n(eval):1: permission denied: ./run.sh", "permission_denied"),
    ("Exit code 1\n/bin/bash: line 1: cd: nope: No such file or directory",
     "Exit code 1\nzsh:cd:1: no such file or directory: nope", "file_not_found"),
]


@pytest.mark.parametrize(("bash", "zsh", "cls"), SHELL_WORDINGS)
def test_a_failure_worded_by_zsh_has_the_class_bash_gives_it(bash: str, zsh: str, cls: str) -> None:
    # zsh's `name:line: msg` is not a compiler's `file:line: msg`.
    assert analyze("Bash", bash, command="x", family="shell").cls == cls
    assert analyze("Bash", zsh, command="x", family="shell").cls == cls


def test_a_leading_error_prefix_no_longer_makes_a_runtime_error() -> None:
    assert analyze("Bash", "Error: Exit code 127\n/bin/sh: rg: command not found").cls == \
        "dependency_missing"
    assert analyze("Bash", "Error: ls: cannot access 'x': No such file or directory").cls == \
        "file_not_found"


def test_a_cline_search_block_miss_is_an_edit_miss_even_when_its_block_is_clipped() -> None:
    # Cline's diff.ts (constructNewFileContent) throws "The SEARCH block:\n<block>\n...does not
    # match anything in the file."; the result then names the file, and the block can be long
    # enough that the "does not match" line is past what a clipped error keeps (the real
    # failure below, cut at 1,500 characters in tests/fixtures/real_failures/dev.jsonl).
    rows = Path(__file__).parents[2] / "fixtures" / "real_failures" / "dev.jsonl"
    row = next(r for r in map(json.loads, rows.read_text(encoding="utf-8").splitlines())
               if r["session"] == "1746807626581" and r["seq"] == 21)
    assert "does not match anything" not in row["error"]
    assert analyze("replace_in_file", row["error"], family="edit").cls == "edit_not_found"
    # A search block quoted in a program's output is no such failure.
    quoted = "Exit code 1\nusage: the SEARCH block: is what aider calls it"
    assert analyze("Bash", quoted, command="tool --help", family="shell").cls != "edit_not_found"
