"""bench/truth: the rules of tests/fixtures/truth/README.md, on small transcripts written in the
harnesses' own formats, as `bench/real_census.py` reads them:

* Claude Code 2.1.x session JSONL (as in the corpus, e.g. Claude Code 2.1.59): records with `type`,
  `sessionId`, `version`, `cwd`, `timestamp` and `message.content[]`; a call is a `tool_use` block
  answered by the `tool_result` of the same id, failed when `is_error` is true; a Bash failure's
  result starts `Exit code N`, a refusal is "The user doesn't want to proceed with this tool use…".
* Codex CLI rollouts (codex-rs `RolloutLine`, cli 0.104): `session_meta` (`id`, `cwd`,
  `cli_version`), `response_item` `function_call` (`name`, JSON `arguments`, `call_id`) and
  `function_call_output` (`Chunk ID / Wall time / Process exited with code N / Output:`).
* Gemini CLI chat files (`sessionId`, `startTime`, `messages[].toolCalls[]` with `name`, `args`,
  `status`, `result[].functionResponse.response.output|error`; a shell result's `Exit Code: N`).

Every test builds a history, renders a line the way the product prints it, and checks the label
and rule id: each fails when its rule is broken.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.truth.history import History, read_history
from bench.truth.label import label
from bench.truth.render import Item, Probe, hook_payload
from bench.truth.shell import relative, segments
from tests.fixtures.hooks import load as load_hook_fixtures

CWD = "/home/u/proj"
Call = tuple[str, dict[str, Any], str, bool]


def claude_session(path: Path, sid: str, calls: list[Call], start: str = "2026-03-01T10:00:00.000Z") -> Path:
    lines: list[dict[str, Any]] = [{"type": "user", "sessionId": sid, "version": "2.1.59", "cwd": CWD,
                                    "timestamp": start, "message": {"role": "user", "content": "fix the tests"}}]
    for i, (tool, args, result, failed) in enumerate(calls):
        use = {"type": "tool_use", "id": f"{sid}-t{i}", "name": tool, "input": args}
        res = {"type": "tool_result", "tool_use_id": f"{sid}-t{i}", "content": result, "is_error": failed}
        lines.append({"type": "assistant", "sessionId": sid, "cwd": CWD, "timestamp": start,
                      "message": {"role": "assistant", "content": [use]}})
        lines.append({"type": "user", "sessionId": sid, "cwd": CWD, "timestamp": start,
                      "message": {"role": "user", "content": [res]}})
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    return path


def codex_session(path: Path, sid: str, calls: list[tuple[str, str, int]]) -> Path:
    """(tool, command, exit code) calls of `exec_command`; a patch is ("apply_patch", body, code)."""
    lines: list[dict[str, Any]] = [{"timestamp": "2026-03-01T10:00:00.000Z", "type": "session_meta",
                                    "payload": {"id": sid, "cwd": CWD, "cli_version": "0.104.0"}}]
    for i, (tool, command, code) in enumerate(calls):
        if tool == "apply_patch":
            item = {"type": "custom_tool_call", "name": "apply_patch", "input": command, "call_id": f"c{i}"}
            out = {"type": "custom_tool_call_output", "call_id": f"c{i}",
                   "output": "apply_patch verification failed: Failed to find expected lines" if code else "Success."}
        else:
            item = {"type": "function_call", "name": "exec_command", "call_id": f"c{i}",
                    "arguments": json.dumps({"cmd": command, "workdir": CWD})}
            out = {"type": "function_call_output", "call_id": f"c{i}",
                   "output": f"Chunk ID: a{i}\nWall time: 0.1 seconds\nProcess exited with code {code}\nOutput:\n"
                             + ("error" if code else "ok")}
        lines += [{"timestamp": "2026-03-01T10:00:01.000Z", "type": "response_item", "payload": item},
                  {"timestamp": "2026-03-01T10:00:02.000Z", "type": "response_item", "payload": out}]
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    return path


def gemini_session(path: Path, sid: str, calls: list[tuple[str, dict[str, Any], str, str]]) -> Path:
    """(tool, args, status, output) calls."""
    tool_calls = [{"id": f"g{i}", "name": tool, "args": args, "status": status,
                   "result": [{"functionResponse": {"id": f"g{i}", "name": tool,
                                                    "response": {"error" if status == "error" else "output": out}}}]}
                  for i, (tool, args, status, out) in enumerate(calls)]
    doc = {"sessionId": sid, "startTime": "2026-03-01T10:00:00.000Z", "lastUpdated": "2026-03-01T10:05:00.000Z",
           "messages": [{"type": "user", "content": "make the tests pass"},
                        {"type": "gemini", "content": "", "toolCalls": tool_calls}]}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def history(harness: str, *files: Path, tree: set[str] | None = None) -> History:
    return read_history(f"{harness}/o/r", harness, list(files), tree)


def verdict(hist: History, text: str, channel: str = "block", meta: dict[str, Any] | None = None) -> tuple[str, str]:
    v = label(Item(hist.project, "dev", channel, text, meta or {}), hist)
    return v.label, v.rule


def test_a_path_removed_by_its_absolute_spelling_two_calls_later_was_resolved(tmp_path: Path) -> None:
    calls: list[Call] = [("Bash", {"command": "rm notes.txt"}, "Exit code 1\nrm: notes.txt: No such file or directory", True),
                         ("Bash", {"command": "ls"}, "a.txt", False),
                         ("Bash", {"command": f"rm {CWD}/notes.txt"}, "", False)]
    line = "- ⚠ `rm notes.txt` failed here and stayed unresolved: rm: notes.txt: No such file or directory"
    assert verdict(history("claude", claude_session(tmp_path / "a.jsonl", "s1", calls)), line) == ("false", "F-resolved")
    alone = claude_session(tmp_path / "b.jsonl", "s2", calls[:2])
    assert verdict(history("claude", alone), line) == ("true", "T-unresolved")


def test_a_linter_that_passed_eight_calls_later_was_resolved(tmp_path: Path) -> None:
    calls: list[Call] = [("Bash", {"command": "golangci-lint run ./..."}, "Exit code 1\nmain.go:3: unused x", True)]
    calls += [("Read", {"file_path": f"{CWD}/main.go"}, "package main", False)] * 7
    calls += [("Bash", {"command": "golangci-lint run ./..."}, "0 issues.", False)]
    line = "⚠ `golangci-lint run ./...` failed here and stayed unresolved: main.go:3: unused x"
    assert verdict(history("claude", claude_session(tmp_path / "a.jsonl", "s1", calls)), line, "md") \
        == ("false", "F-resolved")


def test_a_test_that_passed_after_an_edit_was_not_fixed_by_running_it_again(tmp_path: Path) -> None:
    run = ("Bash", {"command": "pytest -q tests/test_calc.py"})
    failed: Call = (*run, "Exit code 1\nE   AssertionError: assert 4 == 3\n1 failed", True)
    passed: Call = (*run, "1 passed", False)
    edit: Call = ("Edit", {"file_path": f"{CWD}/calc.py", "old_string": "a+b+1", "new_string": "a+b"},
                  "The file has been updated.", False)
    line = ("- AssertionError: assert 4 == 3 — fix: the same Bash call on pytest -q tests/test_calc.py "
            "succeeded when run again (seen 1×)")
    edited = history("claude", claude_session(tmp_path / "a.jsonl", "s1", [failed, edit, passed]))
    assert verdict(edited, line) == ("false", "F-same-call")
    flaky = history("claude", claude_session(tmp_path / "b.jsonl", "s2", [failed, passed]))
    assert verdict(flaky, line) == ("true", "T-fix-same")


def test_a_read_over_the_limit_was_fixed_by_offset_and_limit_not_by_reading_again(tmp_path: Path) -> None:
    calls: list[Call] = [
        ("Read", {"file_path": f"{CWD}/big.json"}, ("<tool_use_error>File content (536.2KB) exceeds maximum allowed "
                                                   "size (256KB). Please use offset and limit</tool_use_error>"), True),
        ("Read", {"file_path": f"{CWD}/big.json", "offset": 1, "limit": 200}, "{", False)]
    line = ("- File content (536.2KB) exceeds maximum allowed size (256KB). Please use offset and limit… — fix: the "
            f"same Read call on {CWD}/big.json succeeded when run again (seen 1×)")
    assert verdict(history("claude", claude_session(tmp_path / "a.jsonl", "s1", calls)), line) \
        == ("false", "F-same-call")


def test_testing_another_package_is_not_a_repair_and_the_venv_interpreter_is(tmp_path: Path) -> None:
    go: list[Call] = [("Bash", {"command": "go test ./pkg/a -v"}, "Exit code 1\n--- FAIL: TestA", True),
                      ("Bash", {"command": "go test ./pkg/b -v"}, "ok  	x/pkg/b", False)]
    hist = history("claude", claude_session(tmp_path / "a.jsonl", "s1", go))
    assert verdict(hist, "- ⚙ bash: a test failed — fixed by `go test ./pkg/b -v` instead of `go test ./pkg/a -v`",
                   "md") == ("false", "F-swap-target")
    py: list[Call] = [("Bash", {"command": "python3 -m pytest -q tests"},
                       "Exit code 1\nModuleNotFoundError: No module named 'requests'", True),
                      ("Bash", {"command": ".venv/bin/python -m pytest -q tests"}, "3 passed", False)]
    hist = history("claude", claude_session(tmp_path / "b.jsonl", "s2", py))
    assert verdict(hist, "[error_pattern] When: bash: a command, module or package is missing -> Do: "
                         "`.venv/bin/python -m pytest -q tests` instead of `python3 -m pytest -q tests`",
                   "lessons") == ("true", "T-fix-swap")


def test_a_fix_that_is_the_failed_command_itself_is_false(tmp_path: Path) -> None:
    calls = [("run_shell_command", {"command": "npm test"}, "success", "Command: npm test\nExit Code: 1"),
             ("replace", {"file_path": f"{CWD}/a.js", "old_string": "1", "new_string": "2"}, "success", "ok"),
             ("run_shell_command", {"command": "npm test"}, "success", "Command: npm test\nOutput: ok\nExit Code: 0")]
    hist = history("gemini", gemini_session(tmp_path / "session-1.json", "g1", calls))
    assert verdict(hist, "`npm test` instead of `npm test`", "rules") == ("false", "F-swap-equal")


def test_a_refusal_is_not_a_failure_and_do_not_retry_is_false_once_the_agent_got_past_it(tmp_path: Path) -> None:
    refused: Call = ("ExitPlanMode", {"plan": "p"}, ("The user doesn't want to proceed with this tool use. The tool use "
                                                    "was rejected (eg. if it was a file edit, the new_string was NOT "
                                                    "written to the file)."), True)
    accepted: Call = ("ExitPlanMode", {"plan": "p2"}, "User has approved your plan.", False)
    hist = history("claude", claude_session(tmp_path / "a.jsonl", "s1", [refused, accepted]))
    assert verdict(hist, "- project memory: ⚠ ExitPlanMode failed here and stayed unresolved: The user doesn't "
                         "want to proceed with this tool use. The tool use was rejected…", "lessons") \
        == ("false", "F-refusal")
    assert verdict(hist, "Do not retry ExitPlanMode on this target: the user refused it.", "rules") \
        == ("false", "F-dont-retry")


def test_a_one_time_shell_state_is_not_a_project_fact(tmp_path: Path) -> None:
    calls: list[Call] = [("Bash", {"command": "cp a out/a"}, "Exit code 1\ncp: out/a: No such file or directory", True),
                         ("Bash", {"command": "cd .. && mkdir -p out && cp a out/a"}, "", False)]
    hist = history("claude", claude_session(tmp_path / "a.jsonl", "s1", calls))
    assert verdict(hist, "Run `cd .. && mkdir -p out` first (`cd .. && mkdir -p out && …`).", "rules") \
        == ("false", "F-shell-state")


def test_a_fix_on_a_file_the_history_deleted_later_is_stale(tmp_path: Path) -> None:
    def calls(delete: bool) -> list[Call]:
        out: list[Call] = [
            ("Edit", {"file_path": f"{CWD}/src/old.py", "old_string": "x", "new_string": "y"},
             "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>", True),
            ("Read", {"file_path": f"{CWD}/src/old.py"}, "x", False),
            ("Edit", {"file_path": f"{CWD}/src/old.py", "old_string": "x", "new_string": "y"}, "updated", False)]
        return out + ([("Bash", {"command": "rm src/old.py"}, "", False)] if delete else [])
    line = (f"- ⚙ edit: the file must be read before it can be edited — fixed by reading {CWD}/src/old.py again, "
            "then Edit again with its text copied from what it holds")
    tree = {"src", "src/old.py"}
    kept = history("claude", claude_session(tmp_path / "a.jsonl", "s1", calls(False)), tree=tree)
    assert verdict(kept, line, "md") == ("true", "T-fix-reread")
    gone = history("claude", claude_session(tmp_path / "b.jsonl", "s2", calls(True)), tree=tree)
    assert verdict(gone, line, "md") == ("false", "F-stale")
    absent = history("claude", claude_session(tmp_path / "c.jsonl", "s3", calls(False)), tree={"src"})
    assert verdict(absent, line, "md")[1] == "F-stale"


def test_reading_again_is_false_when_nothing_read_the_file_and_a_codex_sed_is_a_read(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: calc.py\n@@\n-a\n+b\n*** End Patch"
    line = ("- ⚙ apply_patch: the patch did not apply — fixed by reading calc.py again, then apply_patch again with "
            "its text copied from what it holds")
    blind = history("codex", codex_session(tmp_path / "a.jsonl", "c1", [("apply_patch", patch, 1),
                                                                         ("apply_patch", patch, 0)]))
    assert verdict(blind, line, "md") == ("false", "F-reread")
    read = history("codex", codex_session(tmp_path / "b.jsonl", "c2", [("apply_patch", patch, 1),
                                                                        ("exec", "sed -n '1,80p' calc.py", 0),
                                                                        ("apply_patch", patch, 0)]))
    assert verdict(read, line, "md") == ("true", "T-fix-reread")


def test_seen_counts_must_match_the_records(tmp_path: Path) -> None:
    fail: Call = ("Bash", {"command": "make build"}, "Exit code 2\nmake: *** No rule to make target 'build'", True)
    ok: Call = ("Bash", {"command": "make -C app build"}, "done", False)
    files = [claude_session(tmp_path / f"{i}.jsonl", f"s{i}", [fail, ok], f"2026-03-0{i + 1}T10:00:00.000Z")
             for i in range(3)]
    hist = history("claude", *files)
    line = "- make: *** No rule to make target 'build' — fix: `make -C app build` instead of `make build` (seen {}×)"
    assert verdict(hist, line.format(3)) == ("true", "T-fix-swap")
    assert verdict(hist, line.format(2)) == ("false", "F-count")
    assert verdict(hist, line.format(5)) == ("false", "F-count")


def test_content_free_lines(tmp_path: Path) -> None:
    py: list[Call] = [("Bash", {"command": "python -m pytest -q"}, "Exit code 1\nweird", True),
                      ("Bash", {"command": ".venv/bin/python -m pytest -q"}, "ok", False),
                      ("Bash", {"command": "python3 <<'PY'\nprint(1)\nPY"}, "1", False)]
    hist = history("claude", claude_session(tmp_path / "a.jsonl", "s1", py))
    assert verdict(hist, "- bash: an unrecognised failure — fixed by `.venv/bin/python -m pytest -q` instead of "
                         "`python -m pytest -q`") == ("content_free", "C-unknown")
    assert verdict(hist, "- `python3 <<'PY'` works here (1/1 runs succeeded)") == ("content_free", "C-mangled")
    assert verdict(hist, "slmactor: a known fix for this kind of Bash failure (not tried in this project yet). The "
                         "path does not exist. List the directory (Glob / Glob) before guessing paths.", "hook") \
        == ("content_free", "C-mangled")
    assert verdict(hist, "slmactor: a known fix for this kind of Bash failure (not tried in this project yet). A "
                         "command, module or package is missing. Report the missing dependency.", "hook") \
        == ("content_free", "C-shipped")
    assert verdict(hist, "Read the file again first, then resend the edit.", "rules") == ("content_free", "C-generic")


def test_a_shell_tool_named_without_its_command_is_mangled(tmp_path: Path) -> None:
    lines = [{"timestamp": "2026-03-01T10:00:00.000Z", "type": "session_meta",
              "payload": {"id": "c1", "cwd": CWD, "cli_version": "0.104.0"}},
             {"type": "response_item", "payload": {"type": "function_call", "name": "write_stdin", "call_id": "w",
                                                   "arguments": json.dumps({"session_id": 7, "chars": ""})}},
             {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "w",
                                                   "output": "Process exited with code 1\nOutput:\n3"}}]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    assert verdict(history("codex", path), "⚠ write_stdin failed here and stayed unresolved: 3", "md") \
        == ("content_free", "C-mangled")


def test_a_verdict_mark_on_an_imported_session_and_headings(tmp_path: Path) -> None:
    hist = history("claude", claude_session(tmp_path / "a.jsonl", "s1", []))
    assert verdict(hist, "- ✗ fix the tests → touched `calc.py`", "block_task") == ("false", "F-verdict")
    assert verdict(hist, "## What we know about this project")[0] == "structure"
    assert verdict(hist, "Gotchas:")[0] == "structure"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="abcxyz-_.", min_size=1, max_size=6), min_size=1, max_size=5))
def test_a_pattern_with_pipes_and_semicolons_inside_quotes_is_one_step(words: list[str]) -> None:
    pattern = "|".join(words) + ";" + "&&".join(words)
    assert segments(f'rg -n "{pattern}" src') == [f'rg -n "{pattern}" src']
    assert segments(f"rg -n '{pattern}' src | head -3 && echo done") == [f"rg -n '{pattern}' src", "echo done"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="abcdefgh_-", min_size=1, max_size=8), min_size=1, max_size=4))
def test_a_path_under_the_sessions_folder_is_relative_to_the_project(parts: list[str]) -> None:
    rel = "/".join(parts)
    assert relative(f"{CWD}/{rel}", [CWD]) == rel
    assert relative(rel, [CWD]) == rel
    assert relative(f"/elsewhere/{rel}", [CWD]) is None
    assert relative(f"../../{rel}", [CWD]) is None
    assert relative("C:\\Users\\u\\proj\\" + rel.replace("/", "\\"), ["c:/Users/u/proj"]) == rel


def test_hook_payloads_have_the_keys_of_each_harness_fixture() -> None:
    probe = Probe("path_not_found", "Bash", {"command": "cat nope"}, "Exit code 1\ncat: nope: No such file", "s", 3)
    wanted = {"claude": "PostToolUseFailure-Bash", "codex": "PostToolUse-Bash-failed",
              "gemini": "AfterTool-run_shell_command-failed", "cline": "PostToolUse-editor-failed"}
    fixtures = {f.id: f for f in load_hook_fixtures()}
    for harness, name in wanted.items():
        tool = {"gemini": "run_shell_command", "cline": "execute_command"}.get(harness, "exec_command")
        shaped = hook_payload(harness, Probe(probe.kind, "Bash" if harness == "claude" else tool, probe.args,
                                             probe.result, "s", 3, "success"), "/p", "sess")
        assert shaped is not None
        event, payload = shaped
        fixture = fixtures[f"{harness}/{name}"]
        assert event == fixture.event
        assert set(payload) <= set(fixture.payload("/p")), harness
        if harness == "cline":
            assert set(payload["postToolUse"]) == set(fixture.payload("/p")["postToolUse"])
    # a Codex tool that runs no hook, and a Gemini call the user cancelled, get no payload
    assert hook_payload("codex", Probe("x", "update_plan", {}, "", "s", 1), "/p", "s") is None
    assert hook_payload("gemini", Probe("x", "run_shell_command", {}, "", "s", 1, "cancelled"), "/p", "s") is None


def test_the_labeller_imports_nothing_of_the_products_classifier_or_repair_logic() -> None:
    code = ("import sys; import bench.truth.label, bench.truth.history, bench.truth.evidence, bench.truth.fixes; "
            "bad = [m for m in sys.modules if m.startswith(('slmactor.logic.failures', 'slmactor.logic.evolve'))]; "
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stdout + done.stderr
