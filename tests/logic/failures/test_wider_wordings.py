"""Classes of failures in wordings and call shapes the first tuning corpus did not have.

Every text is a program's or a harness's own, as recorded in a public session transcript
(`tests/fixtures/real_failures/heldout2.jsonl`; each case names its harness and source), cut to
what the case needs. Each case also states a near miss the rule must not catch.
"""

from __future__ import annotations

from slmactor import harnesses
from slmactor.logic.failures.fingerprint import analyze


def _fp(tool: str, error: str, command: str = "") -> tuple[str, str]:
    fp = analyze(tool, error, command=command, family=harnesses.tool_family(tool))
    return fp.cls, fp.detail


CODEX_EXIT = "Chunk ID: 5a91d7\nWall time: 0.0000 seconds\nProcess exited with code {code}\n" \
             "Original token count: 10\nOutput:\n{out}"


def test_a_tool_outside_the_six_families_has_its_input_refused_as_a_misuse() -> None:
    # Claude Code 2.1's TaskCreate (Standard-Syntax/basic) and StructuredOutput (jdx/mise).
    task = ("InputValidationError: TaskCreate failed due to the following issues:\n"
            "The required parameter `subject` is missing\n"
            "An unexpected parameter `tasks` was provided")
    assert _fp("TaskCreate", task) == ("tool_misuse", "missing_parameter")
    assert _fp("StructuredOutput", "Output does not match required schema: /findings: must be "
               "array") == ("tool_misuse", "missing_parameter")
    # A shell's output is a program's, whatever words it prints.
    assert _fp("Bash", "Exit code 1\nconfig key `token` is missing", "./deploy.sh")[0] \
        != "tool_misuse"


def test_a_read_only_file_system_is_a_permission_and_extra_inputs_are_not() -> None:
    # aider (BartoshMaxim/TradePirates): "[Errno 30] Read-only file system".
    assert _fp("aider", "Error creating file /add: [Errno 30] Read-only file system: '/add'")[0] \
        == "permission_denied"
    # pydantic's schema check in an MCP server (darthzen/neuvector-mcp).
    pydantic = ("4 validation errors for call[nv_create_waf_sensor]\nrules.0.patterns.0.key\n"
                "  Extra inputs are not permitted [type=extra_forbidden, input_value='pattern']")
    assert _fp("mcp__neuvector__nv_create_waf_sensor", pydantic)[0] != "permission_denied"


def test_a_command_the_shell_could_not_parse_is_a_syntax_error_not_a_provider_error() -> None:
    # Claude Code's Bash (Nomos-N4s/nomos; ta93abe/me under zsh).
    assert _fp("Bash", "Exit code 2\n/usr/bin/bash: -c: line 176: unexpected EOF while looking "
               "for matching `''", "cat <<'EOF'")[0] == "compile_error"
    assert _fp("Bash", "Exit code 1\n(eval):6: parse error near `end'", "for p in a b")[0] \
        == "compile_error"


def test_a_search_that_could_not_read_a_path_is_known_by_its_own_lines_not_its_matches() -> None:
    # Codex CLI's exec_command running rg (jdx/mise): the matches differ, the failure does not.
    command = 'rg -n "usage =" e2e tests src -S'
    first = analyze("exec_command", CODEX_EXIT.format(code=2, out=(
        "rg: tests: No such file or directory (os error 2)\nsrc/a.rs:3:let usage = 1;\n")),
        command=command, family="shell")
    second = analyze("exec_command", CODEX_EXIT.format(code=2, out=(
        "rg: tests: No such file or directory (os error 2)\nsrc/b.rs:9:fn error_usage() {}\n")),
        command=command, family="shell")
    assert first.cls == second.cls == "file_not_found"
    assert first.id == second.id
    other = analyze("exec_command", CODEX_EXIT.format(code=2, out=(
        "rg: docs: No such file or directory (os error 2)\nsrc/a.rs:3:let usage = 1;\n")),
        command='rg -n "usage =" docs src', family="shell")
    assert other.id != first.id  # another missing path is another failure


def test_matches_of_a_silenced_search_that_exited_2_are_not_diagnostics() -> None:
    # rg over paths of which one is missing, its errors sent to /dev/null (jdx/mise): exit 2 is
    # rg's error; the lines are matches, and `path:line:text` is not a compiler's diagnostic.
    out = ".github/workflows/ci.yml:39:      - uses: cache-action # zizmor: ignore[error]\n"
    command = 'rg -n "zizmor|cache-action" hk.pkl .github/workflows .config 2>/dev/null'
    assert _fp("exec_command", CODEX_EXIT.format(code=2, out=out), command)[0] == "path_not_found"
    # Exit 1 with matches piped through is not this rule's.
    assert _fp("exec_command", CODEX_EXIT.format(code=1, out=out), command)[0] != "path_not_found"


def test_command_v_is_a_probe_and_command_x_runs_x() -> None:
    # Codex CLI (jdx/hk): `command -v shellcheck`, exit 1, silent: the answer is no.
    assert _fp("exec_command", CODEX_EXIT.format(code=1, out=""), "command -v shellcheck") \
        == ("not_a_failure", "negative_probe")
    assert _fp("exec_command", CODEX_EXIT.format(code=1, out=""), "command shellcheck x.sh")[0] \
        != "not_a_failure"


def test_a_silent_search_before_and_is_an_empty_search() -> None:
    # Codex CLI (Standard-Syntax/basic): rg found nothing, so the `cat` after `&&` never ran.
    command = "rg -n \"CREATE TABLE .*review\" go/internal -g '*.sql' && cat go/internal/x.go"
    assert _fp("exec_command", CODEX_EXIT.format(code=1, out=""), command) \
        == ("not_a_failure", "empty_search")
    # Joined by `;`, the `cat` ran whatever the search found, and its status is the line's.
    assert _fp("exec_command", CODEX_EXIT.format(code=1, out=""),
               "rg -n y go/internal; cat go/internal/x.go")[0] == "path_not_found"


def test_git_failing_to_apply_or_merge_is_a_runtime_error_and_apply_patch_stays_a_patch() -> None:
    # Claude Code's Bash (ebridges/wakil; Safecast/safecast-map-MCP).
    assert _fp("Bash", "Exit code 128\nerror: corrupt patch at line 13",
               "git apply --cached --check /tmp/x.patch")[0] == "runtime_error"
    assert _fp("Bash", "Exit code 1\nAuto-merging .gitignore\nCONFLICT (content): Merge conflict "
               "in .gitignore", "git merge main")[0] == "runtime_error"
    # Codex's apply_patch tool: its hunks did not apply, or the file it updates is not there.
    assert _fp("apply_patch", "apply_patch verification failed: Failed to find expected lines in "
               "src/a.rs")[0] == "patch_failed"
    assert _fp("apply_patch", "apply_patch verification failed: Failed to read file to update "
               "/r/go/x.sql: No such file or directory (os error 2)")[0] == "file_not_found"


def test_a_host_that_does_not_resolve_is_offline_even_in_a_test_run() -> None:
    # Codex CLI (jdx/communique): cargo could not download its crates.
    out = ("Downloading crates ...\nwarning: spurious network error (3 tries remaining): [6] "
           "Couldn't resolve host name (Could not resolve host: static.crates.io)\n")
    assert _fp("exec_command", CODEX_EXIT.format(code=101, out=out), "cargo test --no-run")[0] \
        == "provider_error"
    # A test that failed while printing "connection refused" failed its tests.
    failed = "--- FAIL: TestDial (0.01s)\n    dial_test.go:9: dial tcp: connection refused\nFAIL\n"
    assert _fp("exec_command", CODEX_EXIT.format(code=1, out=failed), "go test ./...")[0] \
        == "test_failure"


def test_a_thing_that_does_not_exist_is_a_missing_path() -> None:
    # Codex CLI's git (Esdeveniments/esdeveniments-frontend) and aider (BartoshMaxim/TradePirates).
    assert _fp("exec_command", CODEX_EXIT.format(code=128, out=(
        "fatal: path '.github/workflows/deploy.yml' does not exist in 'c3f1dae'\n")),
        "git show c3f1dae:.github/workflows/deploy.yml")[0] == "file_not_found"
    assert _fp("aider", "Read-only file C:\\Users\\a\\Assets\\Scripts does not exist. Skipping.")[0] \
        == "file_not_found"


def test_a_plugin_confining_file_access_to_the_project_is_a_policy() -> None:
    # Claude Code with the context-mode plugin's MCP tool (keparlak/NumWordify).
    blocked = ('File access blocked: "C:/Users/e/.claude/projects/x.jsonl" resolves outside the '
               "project root (C:\\Users\\e\\numwordify).")
    assert _fp("mcp__plugin_context-mode_context-mode__ctx_execute_file", blocked)[0] \
        == "policy_denied"


def test_aider_search_replace_blocks_that_failed_to_match_are_an_edit_miss() -> None:
    assert _fp("aider", "# 2 SEARCH/REPLACE blocks failed to match!")[0] == "edit_not_found"


def test_aider_fetching_a_url_that_is_not_served_is_a_network_error() -> None:
    assert _fp("aider", "Failed to retrieve content from http://127.0.0.1:54321")[0] \
        == "provider_error"
