"""bench/label_real.py: the README rules of tests/fixtures/real_failures, applied to small transcripts.

The snippets are written in the formats `bench/real_census.py` reads: Claude Code JSONL (`read_claude`:
a `tool_use` block and the `tool_result` with the same id, `is_error`), Codex rollouts (`read_codex`:
`function_call` and `function_call_output` by `call_id`, the `Process exited with code N` header),
Gemini CLI chats (`read_gemini`: `messages[].toolCalls[]` with `status`) and mini-swe-agent
trajectories (`read_mini`: assistant ```bash blocks and `<returncode>` observations).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bench import label_real
from bench.label_real import KINDS, MISUSES, clip_args, command_head, label_session, label_text
from bench.real_census import read_claude, read_codex, read_gemini, read_mini

SOURCE = {"repo": "o/r", "commit": "0" * 40, "ref": None}


def _claude(tmp_path: Path, calls: list[tuple[str, dict[str, Any], str, bool]]) -> list[dict[str, Any]]:
    """Rows for a Claude Code session made of (tool, input, result, is_error) calls."""
    lines = []
    for i, (tool, args, result, failed) in enumerate(calls):
        use = {"type": "tool_use", "id": f"t{i}", "name": tool, "input": args}
        res = {"type": "tool_result", "tool_use_id": f"t{i}", "content": result, "is_error": failed}
        lines.append({"type": "assistant", "sessionId": "s1", "version": "2.1.0", "message": {"content": [use]}})
        lines.append({"type": "user", "sessionId": "s1", "message": {"content": [res]}})
    path = tmp_path / "s1.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    session = next(read_claude(path))
    return list(label_session(session, SOURCE, "s1.jsonl"))


def _one(tmp_path: Path, tool: str, args: dict[str, Any], result: str) -> dict[str, Any]:
    rows = _claude(tmp_path, [(tool, args, result, True)])
    assert len(rows) == 1
    return rows[0]


def test_claude_exit_143_with_timed_out_is_a_timeout_not_a_runtime_error(tmp_path: Path) -> None:
    row = _one(tmp_path, "Bash", {"command": "go test ./..."}, "Exit code 143\nCommand timed out after 2m 0s")
    assert (row["kind"], row["rule"], row["fix_source"]) == ("timeout", "timeout", "memory")
    assert label_text("claude", "Bash", {"command": "sleep 999"},
                      "Error: Exit code 143\nCommand timed out after 2m 0s").kind == "timeout"


def test_which_exit_1_without_output_is_a_negative_probe(tmp_path: Path) -> None:
    row = _one(tmp_path, "Bash", {"command": "which foo"}, "Exit code 1")
    assert (row["kind"], row["rule"], row["benign"], row["fix_source"]) == \
        ("not_a_failure", "negative-probe", True, "none")


def test_ls_of_a_missing_path_exit_2_is_a_probe_of_a_missing_path(tmp_path: Path) -> None:
    # silenced: the exit status is all there is (rule 13); saying so, it is rule 17's
    row = _one(tmp_path, "Bash", {"command": "ls missing 2>/dev/null"}, "Exit code 2")
    assert (row["kind"], row["rule"], row["benign"]) == ("path_not_found", "probe-missing-path", False)
    row = _one(tmp_path, "Bash", {"command": "ls missing"},
               "Exit code 2\nls: cannot access 'missing': No such file or directory")
    assert (row["kind"], row["rule"], row["benign"]) == ("path_not_found", "path", False)
    # a `cat` writing a file, whose line failed later on something else, probed no path
    row = _one(tmp_path, "Bash", {"command": "cat > /tmp/body.md <<'EOF'\nx\nEOF\ngh pr edit 3"},
               "Exit code 1\nGraphQL: Projects (classic) is being deprecated")
    assert row["rule"] != "probe-missing-path"


def test_a_bare_exit_code_is_the_wrapper_so_the_command_said_nothing(tmp_path: Path) -> None:
    # README: "a leading `Exit code N`" is wrapper; with nothing after it the unwrapped text is empty
    assert _one(tmp_path, "Bash", {"command": "gh pr diff 3"}, "Exit code 1")["rule"] == "quiet-exit-1"
    assert _one(tmp_path, "Bash", {"command": "make fmt"}, "Exit code 2")["rule"] == "quiet-exit"
    # ... but a silent path reader or builder said what failed by its exit (rules 13, 16), and
    # curl's documented exit codes name a network failure or its timeout (rules 19, 8)
    assert _one(tmp_path, "Bash", {"command": "ls build"}, "Exit code 1")["rule"] == "probe-missing-path"
    assert _one(tmp_path, "Bash", {"command": "go build ./..."}, "Exit code 1")["rule"] == "builder-exit"
    assert _one(tmp_path, "Bash", {"command": "curl -s http://x"}, "Exit code 7")["kind"] == "network_error"
    assert _one(tmp_path, "Bash", {"command": "curl -m 5 http://x"}, "Exit code 28")["kind"] == "timeout"


def test_rule_order_first_match_wins() -> None:
    # 1 before 6: a too-long output that also mentions an edit miss
    assert label_text("claude", "Read", {"file_path": "/a"},
                      "File content (30000 tokens) exceeds maximum allowed tokens (25000). not found in file").rule \
        == "too-large"
    # 4 only in the first 300 characters
    assert label_text("claude", "Bash", {"command": "x"}, "Exit code 1\n" + "." * 400 + " was blocked").rule \
        != "harness-refused"
    # 12 (quiet probe) before 14 (missing module): `command -v` answering no
    assert label_text("claude", "Bash", {"command": "command -v rg"}, "Exit code 1").rule == "negative-probe"
    # 15 needs a test run; 20 takes the test run that said nothing rule 15 knows
    assert label_text("codex", "exec_command", {"cmd": "pytest -q"},
                      "Process exited with code 1\nOutput:\n1 failed, 2 passed").rule == "tests"
    assert label_text("codex", "exec_command", {"cmd": "pytest -q"},
                      "Process exited with code 4\nOutput:\nusage: pytest").rule == "tests-exit"
    # 16 builder-exit before 21 runtime, even when the output is a traceback
    assert label_text("mini-swe-agent", "bash", {"command": "pylint x.py", "blocks": 1},
                      "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n</output>").rule \
        == "builder-exit"
    # a reproduction script is written to fail, unless it could not start
    assert label_text("mini-swe-agent", "bash", {"command": "python reproduce_issue.py", "blocks": 1},
                      "<returncode>1</returncode>\n<output>\nAssertionError\n</output>").rule == "repro-script"
    assert label_text("mini-swe-agent", "bash", {"command": "python reproduce_issue.py", "blocks": 1},
                      "<returncode>1</returncode>\n<output>\nModuleNotFoundError: No module named 'x'\n</output>"
                      ).rule == "module"


def test_tool_misuse_names_its_kind_of_misuse() -> None:
    label = label_text("claude", "Edit", {"file_path": "/a"},
                       "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>")
    assert (label.kind, label.misuse, label.rule) == ("tool_misuse", "other", "other")
    label = label_text("claude", "Read", {"file_path": "/d"}, "EISDIR: illegal operation on a directory, read")
    assert (label.kind, label.misuse) == ("tool_misuse", "directory")
    # a shell's own "is missing" is not a missing parameter of the tool
    assert label_text("claude", "Bash", {"command": "foo"}, "Exit code 1\nconfig is missing").kind != "tool_misuse"


def test_fix_is_the_next_same_family_same_target_call_within_11(tmp_path: Path) -> None:
    miss = "<tool_use_error>String to replace not found in file.</tool_use_error>"
    ok_other_file = ("Edit", {"file_path": "/b.py", "old_string": "x", "new_string": "y"}, "ok", False)
    read_same = ("Read", {"file_path": "/a.py"}, "1\tx", False)
    fix = ("Edit", {"file_path": "/a.py", "old_string": "x", "new_string": "z"}, "ok", False)
    failed = ("Edit", {"file_path": "/a.py", "old_string": "q", "new_string": "z"}, miss, True)
    # the fix is the 11th call after the failure: found, past the other file and the read
    rows = _claude(tmp_path, [failed, ok_other_file, read_same, *[read_same] * 8, fix])
    assert rows[0]["kind"] == "edit_text_not_found"
    assert rows[0]["fix"] == {"tool": "Edit", "args": fix[1]}
    assert rows[0]["fix_source"] == "call"
    # the 12th call is out of the window
    rows = _claude(tmp_path, [failed, *[read_same] * 11, fix])
    assert rows[0]["fix"] is None


def test_path_not_found_on_a_file_tool_is_fixed_by_any_path_and_memory_only_if_only_the_path_changed(
        tmp_path: Path) -> None:
    missing = "<tool_use_error>File does not exist.</tool_use_error>"
    rows = _claude(tmp_path, [("Read", {"file_path": "/x/a.go"}, missing, True),
                              ("Read", {"file_path": "/x/b.go"}, "1\tpackage x", False)])
    assert (rows[0]["kind"], rows[0]["fix"]["args"], rows[0]["fix_source"]) == \
        ("path_not_found", {"file_path": "/x/b.go"}, "memory")
    rows = _claude(tmp_path, [("Read", {"file_path": "/x/a.go"}, missing, True),
                              ("Read", {"file_path": "/x/b.go", "offset": 9}, "9\tfunc", False)])
    assert rows[0]["fix_source"] == "model"


def test_codex_header_is_unwrapped_and_an_empty_rg_is_an_empty_search(tmp_path: Path) -> None:
    records = [
        {"type": "session_meta", "payload": {"id": "c1", "cli_version": "0.140.0"}},
        {"type": "response_item", "payload": {"type": "function_call", "call_id": "a", "name": "exec_command",
                                              "arguments": json.dumps({"cmd": "cd /r && rg -n zzz src",
                                                                       "yield_time_ms": 1000})}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "a",
                                              "output": "Chunk ID: 0f\nWall time: 0.0 seconds\nProcess exited "
                                                        "with code 1\nOriginal token count: 0\nOutput:\n"}},
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    (row,) = label_session(next(read_codex(path)), SOURCE, "rollout.jsonl")
    assert (row["session"], row["kind"], row["rule"]) == ("c1", "not_a_failure", "empty-search")
    assert row["args"] == {"cmd": "cd /r && rg -n zzz src"}  # yield_time_ms is presentation only
    assert row["source"]["harness_version"] == "0.140.0" and "ref" not in row["source"]


def test_gemini_cancelled_call_is_user_rejected(tmp_path: Path) -> None:
    doc = {"sessionId": "g1", "messages": [{"type": "gemini", "toolCalls": [
        {"name": "run_shell_command", "args": {"command": "wsl --install"}, "status": "cancelled",
         "result": [{"functionResponse": {"response": {"error": "[Operation Cancelled] Reason: User cancelled"}}}]},
        {"name": "run_shell_command", "args": {"command": "tasklist | findstr x"}, "status": "success",
         "result": [{"functionResponse": {"response": {"output": "Command: tasklist | findstr x\nDirectory: (root)\n"
                                                                 "Output: (empty)\nError: (none)\nExit Code: 1\n"
                                                                 "Signal: (none)"}}}]}]}]}
    path = tmp_path / "session-1.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    rows = list(label_session(next(read_gemini(path)), SOURCE, "session-1.json"))
    assert [(r["kind"], r["rule"]) for r in rows] == [("user_rejected", "gemini-cancelled"),
                                                      ("not_a_failure", "quiet-exit-1")]
    assert rows[0]["fix_source"] == "outside"


def test_mini_format_error_is_fixed_by_the_next_call_that_ran(tmp_path: Path) -> None:
    two = "Run one:\n```bash\nls\n```\nor\n```bash\npwd\n```"
    doc = {"instance_id": "django__1", "info": {"mini_version": "1.15.0"}, "messages": [
        {"role": "assistant", "content": two},
        {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks, found 2 actions."},
        {"role": "assistant", "content": "```bash\ncat setup.py\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\nfrom setuptools import setup\n</output>"},
    ]}
    path = tmp_path / "django__1.traj.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    (row,) = label_session(next(read_mini(path)), SOURCE, "django__1.traj.json")
    assert row["args"] == {"command": None, "blocks": 2}
    assert (row["kind"], row["fix_source"]) == ("format_rejected", "call")
    assert row["fix"] == {"tool": "bash", "args": {"command": "cat setup.py", "blocks": 1}}


def test_command_head_skips_cd_assignments_and_wrappers() -> None:
    assert command_head("cd /repo && FOO=1 sudo timeout 30 python -m pytest -q") == "python pytest"
    assert command_head("git diff --stat") == "git diff"
    assert command_head("/usr/bin/ls -la") == "ls"
    assert command_head("uv run mypy .") == "uv mypy"


def test_args_are_clipped_to_400_characters_longest_string_first() -> None:
    args = {"command": "x" * 1000, "description": "shown to the user", "note": "y" * 300}
    clipped = clip_args(args)
    assert "description" not in clipped
    assert len(json.dumps(clipped, ensure_ascii=False)) <= 400
    assert clipped["command"].endswith("…") and clipped["note"] == "y" * 300
    nested = clip_args({"questions": [{"q": "z" * 900}]})
    assert list(nested) == ["_clipped"] and len(nested["_clipped"]) == 360


def test_the_labeller_imports_nothing_of_the_classifier() -> None:
    tree = ast.parse(Path(label_real.__file__).read_text(encoding="utf-8"))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    project = {m for m in modules if m.startswith("slmactor")}
    assert project == {"slmactor.logic.text.redact"}


_HARNESSES = ("claude", "codex", "gemini", "cline", "mini-swe-agent", "swe-agent", "openhands", "aider")
_TOOLS = ("Bash", "Edit", "Read", "exec_command", "run_shell_command", "bash", "replace_in_file", "mcp__x__y", "aider")


@settings(max_examples=300, deadline=None)
@given(harness=st.sampled_from(_HARNESSES), tool=st.sampled_from(_TOOLS), text=st.text(max_size=400),
       command=st.one_of(st.none(), st.text(max_size=60)),
       status=st.sampled_from((None, "error", "cancelled")))
def test_labelling_never_raises_and_speaks_the_readme_vocabulary(harness: str, tool: str, text: str,
                                                                 command: str | None, status: str | None) -> None:
    args: dict[str, Any] = {} if command is None else {"command": command}
    label = label_text(harness, tool, args, text, status)
    assert label.kind in KINDS
    assert (label.misuse is not None) == (label.kind == "tool_misuse")
    assert label.misuse is None or label.misuse in MISUSES


def test_clipping_ends_when_no_string_can_get_shorter() -> None:
    # Many short strings beside a large non-string value: each is cut once, then the JSON text
    # is kept instead (a string already at its shortest is never cut again).
    from bench.label_real import clip_args

    args = {f"k{i}": "x" * 22 for i in range(30)} | {"numbers": list(range(200))}
    out = clip_args(args)
    assert list(out) == ["_clipped"] and len(out["_clipped"]) <= 360


def test_a_test_runner_whose_build_failed_is_a_compile_error_and_a_failed_test_is_a_test_failure() -> None:
    build = ("Exit code 1\n# example.com/app/calc [example.com/app/calc.test]\ncalc/calc_test.go:9:5: "
             "undefined: Sub\nFAIL\texample.com/app/calc [build failed]\nFAIL")
    label = label_text("claude", "Bash", {"command": "go test ./..."}, build)
    assert (label.kind, label.rule) == ("compile_error", "runner-build")
    slow = ("Exit code 1\n--- FAIL: TestRuntime (90.30s)\n    e2e_test.go:137: timed out waiting for condition\n"
            "FAIL\nFAIL\texample.com/app/runtime\t90.461s")
    assert label_text("claude", "Bash", {"command": "go test ./..."}, slow).kind == "test_failure"
    tsc = "Exit code 2\n\n> app@1.0.0 test\n> tsc && jest\n\nsrc/a.ts(3,7): error TS2322: Type 'string' is not"
    assert label_text("claude", "Bash", {"command": "npm test"}, tsc).kind == "compile_error"
    # The whole run killed by the harness's clock stays a timeout.
    assert label_text("claude", "Bash", {"command": "go test ./..."},
                      "Exit code 143\nCommand timed out after 2m 0s").kind == "timeout"


def test_a_wrong_runtime_and_an_inactive_environment_are_their_own_kinds(tmp_path: Path) -> None:
    pnpm = (" ERR_PNPM_UNSUPPORTED_ENGINE  Unsupported environment (bad pnpm and/or Node.js version)\n\n"
            "Your Node version is incompatible with \"/home/u/app\".\n\nExpected version: >=20\nGot: v18.19.0")
    row = _one(tmp_path, "Bash", {"command": "pnpm install"}, "Exit code 1\n" + pnpm)
    assert (row["kind"], row["rule"], row["fix_source"]) == ("runtime_version", "runtime-version", "memory")
    asdf = "Exit code 126\nNo version is set for command node\nConsider adding one of the following versions"
    label = label_text("claude", "Bash", {"command": "node -v"}, asdf)
    assert (label.kind, label.rule) == ("env_not_activated", "env-inactive")
