"""What a fix is (`logic.evolve.fixes`): the difference between the failed call and the call that
got past it on the same target; what happened between when they are the same call; nothing when
the target changed or the arguments never parsed; and whether the fix held."""

from __future__ import annotations

from typing import Any

from slmactor.logic.evolve import fixes
from slmactor.logic.failures.call import COMMAND, NEW, OLD, PATH, REPLACE_ALL, ToolCall

TEST_FAILED = "FAILED test_calc.py::test_add - assert 1 == 3\n1 failed in 0.01s"


def shell(command: str, ok: bool = True, error: str = "", exit_code: int | None = None,
          tool: str = "Bash", call_id: str = "") -> ToolCall:
    return ToolCall(tool, "shell", "shell", {COMMAND: command}, {COMMAND: COMMAND}, command,
                    ok=ok, error=error, exit_code=exit_code if exit_code is not None
                    else (0 if ok else 1), call_id=call_id)


def edit(path: str, old: str, new: str, ok: bool = True, error: str = "", tool: str = "Edit",
         **more: Any) -> ToolCall:
    args = {PATH: path, OLD: old, NEW: new, **more}
    return ToolCall(tool, "edit", "edit", args, {k: k for k in args if k in (PATH, OLD, NEW,
                                                                            REPLACE_ALL)},
                    paths=(path,), ok=ok, error=error)


def read(path: str, ok: bool = True, error: str = "", **more: Any) -> ToolCall:
    args = {PATH: path, **more}
    return ToolCall("Read", "read", "read", args, {PATH: PATH}, paths=(path,), ok=ok, error=error)


def only(calls: list[ToolCall]) -> fixes.Outcome:
    [outcome] = fixes.outcomes(calls)
    return outcome


def test_a_test_fixed_by_an_edit_is_told_by_the_edit_never_as_the_same_call() -> None:
    out = only([shell("pytest -q test_calc.py", False, TEST_FAILED),
                read("calc.py"),
                edit("calc.py", "a - b", "a + b"),
                shell("pytest -q test_calc.py")])
    assert out.resolved and out.fixed_at == 3 and out.between == (1, 2)
    assert out.fix is not None and out.fix.kind == "after_edit"
    assert out.fix.text == "it passed after editing `calc.py`"
    assert "instead of" not in out.fix.text and "same" not in out.fix.text


def test_the_same_call_with_nothing_between_teaches_nothing() -> None:
    out = only([shell("curl -s http://localhost:8080/health", False, "connection refused", 7),
                shell("curl -s http://localhost:8080/health")])
    assert out.resolved and out.fix is None


def test_another_package_or_test_selection_is_no_repair_but_the_failure_is_not_unresolved() -> None:
    out = only([shell("go test ./pkg/auth -v", False, "--- FAIL: TestLogin"),
                shell("go test ./pkg/store -v")])
    assert out.fix is None and out.fixed_at is None
    assert out.resolved_at == 1  # the same program and sub-command got on: not "unresolved"
    out = only([shell("pnpm --filter web test", False, "ERR_PNPM engine"),
                shell("pnpm --filter api test")])
    assert out.fix is None


def test_a_corrected_interpreter_is_a_typed_repair_named_by_its_difference() -> None:
    out = only([shell("python3 -m pytest tests", False, "No module named pytest"),
                shell(".venv/bin/python -m pytest tests")])
    assert out.fix is not None and out.fix.kind == "typed"
    assert out.fix.repair is not None and out.fix.repair.kind == "substitute_command"
    assert out.fix.text.startswith("`.venv/bin/python` instead of `python3`")


def test_a_one_time_shell_step_before_the_goal_is_never_a_repair() -> None:
    out = only([shell("rm -f build/x && git checkout main", False,
                      "error: Your local changes would be overwritten by checkout"),
                shell("git stash && git checkout main")])
    assert out.resolved and out.fix is None


def test_a_bounded_read_is_named_as_the_fix_not_a_rerun() -> None:
    big = "File content (41234 tokens) exceeds maximum allowed tokens (25000)."
    out = only([read("data/big.csv", False, big),
                read("data/big.csv", offset=1, limit=200)])
    assert out.fix is not None and out.fix.repair is not None
    assert out.fix.repair.kind == "bound_output"
    assert "`offset: 1`" in out.fix.text and "`limit: 200`" in out.fix.text


def test_an_edit_of_a_file_not_read_yet_is_fixed_by_the_read_between() -> None:
    out = only([edit("a.py", "x", "y", False, "File has not been read yet. Read it first."),
                read("a.py"),
                edit("a.py", "x", "y")])
    assert out.fix is not None and out.fix.kind == "read_first"
    assert out.fix.text == "read `a.py` first, then the same Edit call"


def test_an_edit_resent_with_other_text_after_no_read_teaches_nothing() -> None:
    out = only([edit("a.py", "x = 1", "x = 2", False, "String to replace not found in file."),
                edit("a.py", "x  =  1", "x = 2")])
    assert out.resolved and out.fix is None


def test_a_replace_all_that_broke_the_tests_did_not_hold() -> None:
    ambiguous = "Found 2 matches of the string to replace, but replace_all is false."
    [out, _tests] = fixes.outcomes([shell("pytest -q"),
                                    edit("calc.py", "b", "y", False, ambiguous),
                                    edit("calc.py", "b", "y", replace_all=True),
                                    shell("pytest -q", False, TEST_FAILED)])
    assert out.fix is not None and out.held is False and out.backfire_at == 3


def test_a_wrong_path_fixed_by_the_right_one_is_resolved_and_named() -> None:
    missing = "No such file or directory: tests_calc.py"
    out = only([read("tests_calc.py", False, missing), read("test_calc.py")])
    assert out.resolved and out.fix is not None
    assert "test_calc.py" in out.fix.text and out.fix.files == ("test_calc.py",)


def test_a_removal_that_failed_then_worked_by_an_absolute_path_is_resolved() -> None:
    out = only([shell("rm notes.txt", False, "rm: notes.txt: No such file or directory"),
                shell("ls"),
                shell("rm /home/u/proj/notes.txt")])
    assert out.resolved_at == 2


def test_arguments_that_never_parsed_are_never_learned() -> None:
    garbage = ToolCall("Edit", "edit", "edit", {}, paths=("a.py",), ok=False,
                       error="String to replace not found in file.",
                       unparsed='} code? wait invalid JSON trailing comma,')
    out = only([garbage, edit("a.py", "x", "y", replace_all=True)])
    assert out.fix is None


def test_a_refusal_and_a_policy_are_their_own_kinds() -> None:
    refused = shell("git init", False, "The user doesn't want to proceed with this tool use.")
    assert only([refused]).kind == fixes.REFUSAL
    policy = shell("kubectl get secret x", False,
                   "Permission for this action was denied by the Claude Code auto mode "
                   "classifier.")
    assert only([policy]).kind == fixes.POLICY


def test_attempts_of_one_target_are_one_failure_compared_from_the_last() -> None:
    calls = [shell("pytest t.py", False, TEST_FAILED), shell("pytest t.py -x", False, TEST_FAILED),
             shell("pytest t.py -x -q")]
    out = only(calls)
    assert out.index == 1 and out.attempts == (0, 1)


def test_a_mask_that_only_hides_the_exit_status_is_no_repair() -> None:
    out = only([shell('grep -n "17" Dockerfile', False, "Use the Grep tool for content search", 2),
                shell('grep -n "17" Dockerfile ; true')])
    assert out.resolved and out.fix is None
    out = only([shell("make lint", False, "lint failed", 2), shell("make lint || echo done")])
    assert out.fix is None


def test_a_fixing_command_that_fails_the_same_way_later_did_not_hold() -> None:
    checks = "build-tarball skipping 0 https://github.com/o/r/actions/runs/1/job/2"
    first, later = fixes.outcomes([shell("gh pr checks 105", False, checks, 8),
                                   shell("gh pr checks 105 --watch"),
                                   shell("gh pr checks 105 --watch", False, checks, 8)])
    assert first.fix is not None and first.held is False and first.backfire_at == 2
    assert later.index == 2 and not later.resolved  # the later failure is one of its own


def test_a_script_missing_at_one_path_is_resolved_by_running_it_from_another() -> None:
    out = only([shell("scripts/dispatch.sh --handle x", False,
                      "zsh: no such file or directory: scripts/dispatch.sh", 127),
                shell("/home/u/.agents/skills/w/scripts/dispatch.sh --handle x")])
    assert out.resolved



def test_a_runtime_activated_first_is_what_the_environment_needed_never_a_mask() -> None:
    failed = shell("pnpm install", False, "ERR_PNPM_UNSUPPORTED_ENGINE", 1)
    assert fixes.prepared_otherwise(failed, shell("source .nodeenv/activate && pnpm install"))
    assert not fixes.prepared_otherwise(failed, shell("pnpm install"))
    assert not fixes.prepared_otherwise(failed, shell("pnpm install || true"))
    assert not fixes.prepared_otherwise(failed, shell("pnpm add left-pad"))


def test_a_runtime_activated_before_the_same_command_is_what_the_project_needs() -> None:
    # npm 10's engine check (lib/utils/error-message.js, code EBADENGINE) under engine-strict.
    error = ("npm error code EBADENGINE\nnpm error engine Unsupported engine\n"
             "npm error notsup Required: {\"node\":\">=99\"}\nnpm error notsup Actual:   "
             "{\"npm\":\"10.8.2\",\"node\":\"v20.19.0\"}")
    out = only([shell("npm install", False, error, 1), shell(". .nodeenv/activate && npm install")])
    assert out.resolved and out.fix is not None and out.fix.kind == "prepared"
    assert out.fix.commands == (". .nodeenv/activate && npm install",)


def test_a_cut_whole_read_is_fixed_by_the_same_file_read_in_part() -> None:
    # Codex CLI 0.169's unified exec cuts a long output (codex-rs/core/src/unified_exec: "Warning:
    # truncated output (original token count: N)"); its hook records it as output too large.
    cut = "output too large: Warning: truncated output (original token count: 109516)"
    out = only([shell("cat big.log", False, cut, 0), shell("sed -n '1,100p' big.log")])
    assert out.resolved and out.fix is not None and out.fix.kind == "typed"
    assert "sed -n 1,100p" in out.fix.text
    # Another file read in part is no fix of this one; nor is a viewer's whole read again.
    other = only([shell("cat big.log", False, cut, 0), shell("head -n 100 small.log")])
    assert other.fix is None and not other.resolved


def test_a_range_set_in_a_list_sent_as_json_text_is_the_bounded_read() -> None:
    # Cline CLI 3.0.65's PostToolUse hook carries `read_files`' `files` as JSON text
    # (`postToolUse.parameters.files`), as the real binary sends it in
    # tests/realcli/test_truncated_reads.py; the repair puts the list back as a list.
    cut = ("output too large: [Showing lines 1-790 of 8000. Use start_line/end_line to read "
           "other sections.]")
    whole = ToolCall("read_files", "read", "read", {"files": '[{"path":"/p/big.log"}]'},
                     ok=False, error=cut)
    ranged = ToolCall("read_files", "read", "read",
                      {"files": '[{"path":"/p/big.log","start_line":1,"end_line":100}]'})
    out = only([whole, ranged])
    assert out.fix is not None and out.fix.kind == "typed"
    assert "end_line: 100" in out.fix.text


def test_a_test_fixed_by_an_edit_made_in_the_shell_is_told_by_the_edit() -> None:
    # Codex CLI with a local model has only `exec_command`: its edit is a `sed -i`. Replaying it
    # before the test ("Run `sed -i …` first") would redo one session's change of the code.
    out = only([shell("python3 test_calc.py", False, TEST_FAILED),
                shell("sed -i 's/a - b/a + b/' calc.py"),
                shell("python3 test_calc.py")])
    assert out.fix is not None and out.fix.kind == "after_edit"
    assert out.fix.text == "it passed after editing `calc.py`"


def test_a_wrong_path_fixed_by_the_right_one_is_resolved_and_named_never_learned() -> None:
    # CPython 3.11's own words for a script that is not there (Modules/main.c: "can't open file
    # %R: [Errno %d] %s").
    err = "python3: can't open file '/p/tests_calc.py': [Errno 2] No such file or directory"
    out = only([shell("python3 tests_calc.py", False, err, 2), shell("python3 test_calc.py")])
    assert out.resolved and out.fix is not None and out.fix.kind == "respelled"
    assert out.fix.text == "`test_calc.py`, not `tests_calc.py` (`python3 test_calc.py` ran)"
    assert out.fix.files == ("test_calc.py",)
    # Another script run after it is no fix of this one.
    other = only([shell("python3 tests_calc.py", False, err, 2), shell("python3 app.py")])
    assert other.fix is None
