"""Label the failed calls of the real-sessions corpus by the rules of `tests/fixtures/real_failures/README.md`.

This owns the labelling that made `dev.jsonl` and `heldout.jsonl`, so any label can be re-made and
checked. It reads transcripts only through `bench/real_census.py` (its readers and its failure
verdicts) and imports nothing of the project but `slmactor.logic.text.redact`: the labels are what
the project's failure classifier is measured against, so they must not come from it.

Each numbered rule of "How `kind` is decided" is one function below named after the rule id and
tried in the README's order; the first that returns a label wins. "How `fix` is found",
"How `fix_source` is decided" and "Which failures were kept" are `find_fix`, `fix_source` and
`select`.

    python bench/label_real.py [ROOT] [--split dev|heldout|all] [--select --out FILE]
    python bench/label_real.py [ROOT] --check FIXTURE [--json]

Readings taken where the README leaves room: patterns match regardless of case, except those the
README writes in two cases (rules 15, 16 and 21); `npm/pnpm/yarn test` includes `X run test` (the same
script) but `bun test` is bun's test runner, not `bun run test`; rule 13's `ls` probe comes after
rule 12's quiet exit 1, as the order says; the `head` of `python script.py` is `python`; "for a file
tool, only in its path argument" means every other argument is equal; a call with no target (no
path-like key, no command, no patch) has no fix unless an exception waives the target.

ROOT defaults to `$SLMACTOR_REAL_CORPUS`, else `fetch_real_sessions.default_corpus()`. Without
`--select` every failed call is labelled (and written to `--out`, or counted); `--check` compares
the labels of an existing fixture with the script's and always exits 0: it is a report.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.fetch_real_sessions import MANIFEST, default_corpus
from bench.real_census import Call, Session, iter_sessions
from slmactor.logic.text.redact import redact

KINDS = ("output_too_large", "user_rejected", "not_a_failure", "policy_denied", "format_rejected",
         "edit_text_not_found", "self_kill", "timeout", "stale_handle", "service_exhausted", "tool_misuse",
         "path_not_found", "compile_error", "runtime_version", "env_not_activated", "missing_module",
         "test_failure", "permission_denied", "network_error", "runtime_error", "other")
MISUSES = ("exists", "directory", "multiple_commands", "missing_parameter", "other")

#: README "One line", `args`: dropped because they only describe or present the call. Codex's
#: `sandbox_permissions` / `with_escalated_permissions` are kept: asking to run outside the
#: sandbox is what gets a call past a sandbox refusal (its `justification` is the model's words).
PRESENTATION_KEYS = frozenset({"description", "thought", "workdir", "max_output_tokens", "yield_time_ms",
                               "justification", "timeout_ms", "security_risk", "impl_source", "is_input"})
ARGS_MAX = 400
ERROR_MAX = 1500
#: A string is never cut shorter than this; when cutting strings is not enough the JSON text is kept
#: to this many characters under `_clipped` (the committed fixtures' own limits, read off them).
_CUT_MIN = 20
_CLIPPED_KEEP = 360
_CUT_SLACK = 4
FIX_WINDOW = 11

# --- tool families (README "How `fix` is found") ---------------------------------------------

FAMILIES: dict[str, frozenset[str]] = {
    "edit": frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit", "replace", "write_file", "replace_in_file",
                       "write_to_file", "str_replace_editor", "apply_patch", "edit", "file_editor", "create_file"}),
    "read": frozenset({"Read", "read_file", "read_many_files", "view", "open"}),
    "shell": frozenset({"Bash", "exec_command", "shell", "run_shell_command", "execute_command", "bash", "run",
                        "local_shell", "write_stdin", "BashOutput", "KillShell"}),
    "search": frozenset({"Grep", "Glob", "LS", "search_files", "grep", "glob", "search_file_content", "list_files",
                         "list_directory", "find_file", "search_dir"}),
    "web": frozenset({"WebFetch", "WebSearch", "web_fetch", "google_web_search", "browser_action"}),
    "task": frozenset({"Task", "TodoWrite", "Agent", "update_plan"}),
}


def family(tool: str) -> str:
    if tool.startswith("mcp__") or tool == "use_mcp_tool":
        return "mcp"
    for name, tools in FAMILIES.items():
        if tool in tools:
            return name
    return "tool:" + tool


def is_shell_call(harness: str, tool: str) -> bool:
    """A call that ran a shell command: the shell family, and every SWE-agent action (a shell line)."""
    return family(tool) == "shell" or harness == "swe-agent" or tool == "PowerShell"


# --- unwrapping (README "How `kind` is decided", first paragraph) -----------------------------

_TAGS = re.compile(r"</?(?:tool_use_error|returncode|output|warning)>")
_CLAUDE_EXIT = re.compile(r"\A(?:Error: )?Exit code (-?\d+)\n?")
_CODEX_HEADER = re.compile(r"^(?:Chunk ID|Wall time|Original token count|Total output lines):.*\n?|"
                           r"^Process exited with code (-?\d+)\n?|^Exit code: (-?\d+)\n?|^Output:\n?", re.MULTILINE)
_RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")
_GEMINI_FIELD = re.compile(r"^(Command|Directory|Output|Error|Exit Code|Signal|Background PIDs|"
                           r"Process Group PGID): ?", re.MULTILINE)
_NOTHING = ("(empty)", "(none)", "")


@dataclass
class Failure:
    """One failed call as the rules see it."""

    harness: str
    tool: str
    args: dict[str, Any]
    raw: str
    text: str
    exit_code: int | None
    command: str
    head: str
    status: str | None = None


def _unwrap_gemini(raw: str) -> tuple[str, int | None]:
    fields = list(_GEMINI_FIELD.finditer(raw))
    if not fields or fields[0].group(1) != "Command":
        return raw, None
    parts: dict[str, str] = {}
    for i, match in enumerate(fields):
        end = fields[i + 1].start() if i + 1 < len(fields) else len(raw)
        parts[match.group(1)] = raw[match.end():end].strip("\n")
    code = parts.get("Exit Code", "").strip()
    kept = [parts[k] for k in ("Output", "Error") if parts.get(k, "").strip() not in _NOTHING]
    return "\n".join(kept), int(code) if re.fullmatch(r"-?\d+", code) else None


def _unwrap_codex(raw: str) -> tuple[str, int | None]:
    if raw.startswith("{"):
        try:
            doc = json.loads(raw)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and "output" in doc:
            meta = doc.get("metadata") or {}
            given = meta.get("exit_code") if isinstance(meta, dict) else None
            return str(doc.get("output") or ""), given if isinstance(given, int) else None
    code: int | None = None
    head_end = raw.find("Output:\n")
    head = raw if head_end < 0 else raw[:head_end + len("Output:\n")]
    for match in _CODEX_HEADER.finditer(head):
        number = match.group(1) or match.group(2)
        if number is not None:
            code = int(number)
    if head_end < 0 and code is None:
        return raw, None
    return _CODEX_HEADER.sub("", head) + raw[len(head):], code


def unwrap(harness: str, raw: str) -> tuple[str, int | None]:
    """The result text without its harness wrapper, and the exit code the wrapper gives (or None)."""
    if harness == "gemini":
        return _unwrap_gemini(raw)
    if harness == "codex":
        return _unwrap_codex(raw)
    code: int | None = None
    text = raw
    rc = _RETURNCODE.search(text)
    if rc:
        code = int(rc.group(1))
        text = _RETURNCODE.sub("", text, count=1)
    text = _TAGS.sub("", text)
    match = _CLAUDE_EXIT.match(text.lstrip("\n") if harness == "claude" else text)
    if match:
        code = int(match.group(1))
        text = text.lstrip("\n")[match.end():]
    elif text.startswith("Error: "):
        text = text[len("Error: "):]
    return text.strip("\n"), code


# --- the command and its head -----------------------------------------------------------------

_SUBCOMMAND_TOOLS = frozenset({"npm", "pnpm", "yarn", "bun", "npx", "go", "cargo", "git", "make"})
_PREFIX_WORDS = frozenset({"sudo", "env", "time", "nohup"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def command_of(args: dict[str, Any]) -> str:
    for key in ("command", "cmd"):
        value = args.get(key)
        if isinstance(value, list):
            return " ".join(str(v) for v in value)
        if isinstance(value, str):
            return value
    return ""


def _words(segment: str) -> list[str]:
    return re.findall(r"""(?:"[^"]*"|'[^']*'|[^\s"'])+""", segment)


def command_head(command: str) -> str:
    """The first word after `cd X &&`, assignments, sudo/env/time/nohup and `timeout N`, with the
    sub-command of python -m, uv run, the JS package managers, go, cargo, git and make."""
    rest = command.strip()
    while True:
        cd = re.match(r"cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*", rest)
        if not cd:
            break
        rest = rest[cd.end():]
    words = _words(rest.split("\n", 1)[0])
    i = 0
    while i < len(words):
        word = words[i]
        if _ASSIGNMENT.match(word) or word in _PREFIX_WORDS:
            i += 1
        elif word == "timeout":
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
            i += 1  # the duration
        else:
            break
    if i >= len(words):
        return ""
    first = words[i].strip("\"'").rsplit("/", 1)[-1]
    after = [w for w in words[i + 1:] if w]
    if re.fullmatch(r"python[0-9.]*", first) and len(after) >= 2 and after[0] == "-m":
        return f"{first} {after[1]}"
    if first == "uv" and len(after) >= 2 and after[0] == "run":
        return f"uv {after[1]}"
    if first in _SUBCOMMAND_TOOLS and after and not after[0].startswith("-"):
        return f"{first} {after[0]}"
    return first


# --- the rules --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Label:
    kind: str
    misuse: str | None
    rule: str


Rule = Callable[[Failure], Label | None]


def _rx(*alternatives: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{a})" for a in alternatives), flags)


_TOO_LARGE = _rx(r"The output of your last command was too long", r"exceeds maximum allowed tokens",
                 r"File content \([^)]*\) exceeds", r"exceeds maximum allowed size",
                 r"output (?:is )?too (?:large|long)", r"exceeds the maximum", r"too large to read")


def rule_too_large(f: Failure) -> Label | None:
    """1. output_too_large."""
    return Label("output_too_large", None, "too-large") if _TOO_LARGE.search(f.text) else None


_USER_NO = _rx(r"The user doesn't want to (?:proceed|take this action)", r"User rejected",
               r"The user denied this operation", r"\[Request interrupted by user", r"rejected by the user",
               r"Operation cancelled by user")


def rule_gemini_cancelled(f: Failure) -> Label | None:
    """2. user_rejected: a Gemini call the user cancelled."""
    return Label("user_rejected", None, "gemini-cancelled") if f.harness == "gemini" and f.status == "cancelled" \
        else None


def rule_user_said_no(f: Failure) -> Label | None:
    """2. user_rejected: the user's refusal in the text."""
    return Label("user_rejected", None, "user-said-no") if _USER_NO.search(f.text) else None


def rule_sibling_errored(f: Failure) -> Label | None:
    """3. not_a_failure: Claude Code never ran it because a parallel call failed."""
    return Label("not_a_failure", None, "sibling-errored") if _SIBLING.search(f.text) else None


_SIBLING = _rx(r"Sibling tool call errored", r"Cancelled: parallel tool call .{0,200}errored")


_REFUSED = _rx(r"Command rejected because it could not be parsed safely", r"Permission for this tool use was denied",
               r"Blocked:", r"was blocked", r"has been denied", r"denied by (?:the )?(?:permission|policy|sandbox)",
               r"must be within one of the workspace directories", r"requires approval", r"PreToolUse:\S* hook",
               r"hook error", r"sandbox denied", r"approval policy",
               r"outside (?:of )?the (?:allowed|project)(?: directory| workspace)?", r"outside (?:of )?the workspace",
               r"auto mode cannot determine the safety of", r"is ignored by configured ignore patterns")


def rule_harness_refused(f: Failure) -> Label | None:
    """4. policy_denied: the harness's own refusal, first 300 characters, never mini-swe-agent."""
    if f.harness == "mini-swe-agent" or not _REFUSED.search(f.text[:300]):
        return None
    return Label("policy_denied", None, "harness-refused")


_FORMAT = _rx(r"EXACTLY ONE (?:action|bash)", r"You did not use a tool in your previous response",
              r"did not conform to the edit format", r"failed to parse function arguments", r"Please always provide",
              r"format error")


_DIFF_MARKERS = _rx(r"Invalid state transition", r"SEARCH/REPLACE operations still active during finalization",
                    r"Malformed SEARCH/REPLACE block", r"Malformed REPLACE block")


def rule_format(f: Failure) -> Label | None:
    """5. format_rejected (on an edit tool also the SEARCH/REPLACE parser's refusals)."""
    if _FORMAT.search(f.text) or (family(f.tool) == "edit" and _DIFF_MARKERS.search(f.text)):
        return Label("format_rejected", None, "format")
    return None


_EDIT_MISS = _rx(r"String to replace not found", r"old_string not found", r"does not match anything in the file",
                 r"could not find the string to replace", r"\b0 occurrences found", r"No replacement was performed",
                 r"failed to match", r"Failed to find expected lines", r"Failed to edit", r"did not appear verbatim",
                 r"not found in file", r"Failed to apply patch", r"patch does not apply", r"Invalid patch")


def rule_edit_miss(f: Failure) -> Label | None:
    """6. edit_text_not_found."""
    return Label("edit_text_not_found", None, "edit-miss") if _EDIT_MISS.search(f.text) else None


def rule_pkill_exit(f: Failure) -> Label | None:
    """7. self_kill: pkill/killall took down the shell that ran it."""
    if re.search(r"\b(?:pkill|killall)\b", f.command) and f.exit_code in (143, 144, 137, 130, -1):
        return Label("self_kill", None, "pkill-exit")
    return None


_TIMEOUT = _rx(r"timed out", r"timeout after", r"Command timed out", r"deadline exceeded", r"ETIMEDOUT",
               r"TimeoutError", r"took too long", r"Timeout waiting")


def rule_timeout(f: Failure) -> Label | None:
    """8. timeout: exit 124/143, or the text says so — unless only the text says so, in a test run
    whose runner reports a failed test (the test's own message said "timed out")."""
    if f.exit_code in (124, 143) or (f.head == "curl" and f.exit_code == 28):
        return Label("timeout", None, "timeout")
    if _TIMEOUT.search(f.text) and not (is_test_run(f) and _RUNNER_FAILED.search(f.text)):
        return Label("timeout", None, "timeout")
    return None


#: A test runner's own line for a failed test (Go's `--- FAIL:`, pytest's `FAILED x::y`, Jest's
#: `Tests: N failed`, libtest's `test result: FAILED`).
_RUNNER_FAILED = re.compile(r"^--- FAIL: |^FAILED \S+::|Tests: +\d+ failed|test result: FAILED", re.MULTILINE)
#: A test runner saying its build step failed before any test ran (Go's `FAIL pkg [build failed]`,
#: cargo's `could not compile`), or a TypeScript diagnostic with no test report after it.
_RUNNER_BUILD = re.compile(r"\[build failed\]|could not compile `")
_TS_ERROR = re.compile(r"error TS\d{4}:")
_TEST_REPORT = re.compile(r"Tests: +\d+|Test Files +\d+|^ ?(?:FAIL|PASS) ", re.MULTILINE)


def rule_runner_build(f: Failure) -> Label | None:
    """14a. compile_error: a test run whose runner compiled first and says the build failed."""
    if is_test_run(f) and (_RUNNER_BUILD.search(f.text) or (
            _TS_ERROR.search(f.text) and not _TEST_REPORT.search(f.text))):
        return Label("compile_error", None, "runner-build")
    return None


# The package managers' and version managers' own words (their sources are named in
# tests/fixtures/failures/runtimes.jsonl; written here independently of the classifier).
_RUNTIME_VERSION = _rx(r"\bEBADENGINE\b", r"notsup Unsupported engine for", r"ERR_PNPM_UNSUPPORTED_ENGINE",
                       r'The engine "[\w.-]+" is incompatible with this module', r"requires go >= \S+ \(running go",
                       r"requires a different Python:", r"incompatible with the project's Python requirement",
                       r"\b(?:py|rb|nod|go)env: version \S+ is not installed \(set by",
                       r'N/A: version "\S+" is not yet installed', r"No preset version installed for command",
                       r"mise (?:ERROR|WARN)\s+missing: ")
_ENV_NOT_ACTIVATED = _rx(r"No version is set for (?:command|shim:)", r"command exists in these \w+ versions",
                         r"\bnvm: command not found", r"Volta error: (?:Node|Yarn|pnpm|npm) is not available",
                         r"has not been properly configured to use 'conda activate'",
                         r"mise ERROR Config files? in \S+ (?:is|are) not trusted")


def rule_runtime_env(f: Failure) -> Label | None:
    """14b. runtime_version / env_not_activated: a package or version manager says the runtime is the
    wrong version, or the project's environment is not active in this shell."""
    text = f.text[:4000]
    if _ENV_NOT_ACTIVATED.search(text):
        return Label("env_not_activated", None, "env-inactive")
    if _RUNTIME_VERSION.search(text):
        return Label("runtime_version", None, "runtime-version")
    return None


_GONE = _rx(r"No shell found with ID", r"No such process", r"Shell \S+ (?:not found|not running|is not running)",
            r"No task found", r"session not found", r"can't find session", r"no server running on",
            r"Unknown process id", r"process \S+ not found")


def rule_gone(f: Failure) -> Label | None:
    """9. stale_handle, first 400 characters."""
    return Label("stale_handle", None, "gone") if _GONE.search(f.text[:400]) else None


_QUOTA = _rx(r"quota (?:exceeded|exhausted)", r"rate.?limited", r"rate limit exceeded", r"RateLimitError",
             r"\b429\b", r"Too Many Requests", r"credit balance is too low", r"usage limit", r"RESOURCE_EXHAUSTED",
             r"overloaded", r"insufficient_quota", r"hit your limit", r"limit reached", r"out of credits")


def rule_quota(f: Failure) -> Label | None:
    """10. service_exhausted, first 600 characters, not for a test command."""
    if is_test_run(f) or not _QUOTA.search(f.text[:600]):
        return None
    return Label("service_exhausted", None, "quota")


_EXISTS = _rx(r"already exists", r"file exists", r"EEXIST", r"Cannot create")
_DIRECTORY = _rx(r"EISDIR", r"Is a directory", r"path is not a file")
_MULTIPLE = _rx(r"cannot execute multiple commands", r"multiple commands at once", r"only one command")
_PARAMETER = _rx(r"InputValidationError", r"required parameter", r"is missing", r"must have required property",
                 r"Missing required", r"missing field", r"parameter \S+ is required",
                 r"Invalid (?:input|arguments|parameters)", r"Expected \S+(?: \S+)? but received",
                 r"unexpected keyword", r"An unexpected parameter", r"must be (?:a|an) ",
                 r"must be (?:array|string|object|integer|number|boolean|null)\b")
_MISUSE_OTHER = _rx(r"has not been read yet", r"Read it first", r"File has been modified since read", r"No such tool",
                    r"Unknown tool", r"not found in registry",
                    r"Found \d+ matches of the string to replace, but replace_all is false",
                    r"tool \S+ (?:is )?not available", r"Use the NotebookEdit", r"Unknown skill: ",
                    r"Agent type '[^']*' (?:not found|is unavailable)")


def rule_misuse_exists(f: Failure) -> Label | None:
    """11. tool_misuse/exists, on an edit or create tool."""
    if family(f.tool) == "edit" and _EXISTS.search(f.text):
        return Label("tool_misuse", "exists", "exists")
    return None


def rule_misuse_directory(f: Failure) -> Label | None:
    """11. tool_misuse/directory, on a read or edit tool."""
    if family(f.tool) in ("read", "edit") and _DIRECTORY.search(f.text):
        return Label("tool_misuse", "directory", "directory")
    return None


def rule_misuse_multiple(f: Failure) -> Label | None:
    """11. tool_misuse/multiple_commands."""
    return Label("tool_misuse", "multiple_commands", "multiple_commands") if _MULTIPLE.search(f.text) else None


def rule_misuse_parameter(f: Failure) -> Label | None:
    """11. tool_misuse/missing_parameter, on a non-shell tool."""
    if not is_shell_call(f.harness, f.tool) and _PARAMETER.search(f.text):
        return Label("tool_misuse", "missing_parameter", "parameter")
    return None


def rule_misuse_other(f: Failure) -> Label | None:
    """11. tool_misuse/other."""
    return Label("tool_misuse", "other", "other") if _MISUSE_OTHER.search(f.text) else None


_NEGATIVE_PROBES = frozenset({"which", "command", "type", "pgrep", "pidof", "where"})
_GREPS = frozenset({"grep", "rg", "egrep", "git grep"})


def _no_output(f: Failure) -> bool:
    return not f.text.strip()


def rule_negative_probe(f: Failure) -> Label | None:
    """12. not_a_failure: `which foo` (and kin) answering no."""
    if f.exit_code == 1 and f.head in _NEGATIVE_PROBES:
        return Label("not_a_failure", None, "negative-probe")
    return None


def rule_empty_search(f: Failure) -> Label | None:
    """12. not_a_failure: a search that found nothing."""
    if f.tool == "search_file_content" and "No matches found" in f.text:
        return Label("not_a_failure", None, "empty-search")
    if f.exit_code == 1 and f.head in _GREPS:
        lines = [line for line in f.text.splitlines() if line.strip()]
        if all(re.search(r"binary file .* matches", line, re.IGNORECASE) or line.startswith("grep:") for line in lines):
            return Label("not_a_failure", None, "empty-search")
    return None


def rule_quiet_exit_1(f: Failure) -> Label | None:
    """12. not_a_failure: a shell command with exit 1 and no output — but not a path reader of
    rule 13 nor a builder of rule 16: their silent exit 1 says what failed."""
    if (is_shell_call(f.harness, f.tool) and f.exit_code == 1 and _no_output(f)
            and f.head not in _PROBE_HEADS and not _BUILDERS.search(f.command)):
        return Label("not_a_failure", None, "quiet-exit-1")
    return None


def rule_diff_differs(f: Failure) -> Label | None:
    """12. not_a_failure: diff/git diff/cmp saying the inputs differ."""
    if f.exit_code == 1 and f.head in ("diff", "git diff", "cmp"):
        return Label("not_a_failure", None, "diff-differs")
    return None


_REPRO = re.compile(r"(?:^|[\s/])repro\w*\.(?:py|js|ts|sh)\b", re.IGNORECASE)
_SETUP_ERRORS = re.compile(r"SyntaxError|IndentationError|ModuleNotFoundError|ImportError|NameError|No such file|"
                           r"can't open file")


def rule_repro_script(f: Failure) -> Label | None:
    """12. not_a_failure: a reproduction script doing its job (failing), not failing to start."""
    if not _REPRO.search(f.command) or _SETUP_ERRORS.search(f.text):
        return None
    if f.harness == "swe-agent" or (f.exit_code is not None and f.exit_code not in (0, 2, 127)):
        return Label("not_a_failure", None, "repro-script")
    return None


_PROBE_HEADS = frozenset({"ls", "cat", "stat", "head", "tail", "wc", "du", "file"})
_SHELL_SYNTAX = _rx(r"unmatched '", r"syntax error near unexpected token", r"parse error near",
                    r"unexpected EOF while looking for matching")


def rule_probe_missing_path(f: Failure) -> Label | None:
    """13. path_not_found: a probe of a path that is not there."""
    # Exit 2 is the search's error, not "no match" (1): silent, or with its errors sent to
    # /dev/null while the paths that are there gave matches, a path it was given is missing (a
    # bad pattern would have matched nothing anywhere).
    if f.head in ("grep", "rg") and f.exit_code == 2 and (
            _no_output(f) or "2>/dev/null" in f.command.replace(" ", "")):
        return Label("path_not_found", None, "probe-missing-path")
    if (f.head in _PROBE_HEADS and f.exit_code in (1, 2) and "Permission denied" not in f.text
            and (_no_output(f) or "2>/dev/null" in f.command.replace(" ", ""))):
        return Label("path_not_found", None, "probe-missing-path")
    return None


def rule_glob_no_match(f: Failure) -> Label | None:
    """13. path_not_found: the shell's `no matches found: <glob>`."""
    return Label("path_not_found", None, "glob-no-match") if "no matches found: " in f.text else None


def rule_shell_syntax(f: Failure) -> Label | None:
    """13. compile_error: the shell could not parse the command."""
    return Label("compile_error", None, "shell-syntax") if _SHELL_SYNTAX.search(f.text) else None


_MODULE = _rx(r"ModuleNotFoundError", r"No module named", r"Cannot find module", r"command not found",
              r"is not recognized as an internal or external command", r"Cannot find package", r"ERR_MODULE_NOT_FOUND",
              r"ImportError: cannot import name", r"No matching distribution", r"not installed",
              r"executable file not found", r"Unable to locate package")


def rule_harness_binary_missing(f: Failure) -> Label | None:
    """14. missing_module: the harness's own helper binary is gone."""
    if "posix_spawn" in f.text and "ENOENT" in f.text:
        return Label("missing_module", None, "harness-binary-missing")
    return None


def rule_module(f: Failure) -> Label | None:
    """14. missing_module, first 2,000 characters."""
    return Label("missing_module", None, "module") if _MODULE.search(f.text[:2000]) else None


_TEST_RUN = re.compile(r"\bpytest\b|\bjest\b|\bvitest\b|\bgo test\b|\bcargo test\b|"
                       r"\b(?:npm|pnpm|yarn)(?: run)? test\b|\bbun test\b|\bplaywright test\b|\bbin/test\b|\bruntests\.py\b|"
                       r"\btox\b|\bphpunit\b|\bmvn test\b|\bgradle test\b|\bdotnet test\b|\brspec\b|"
                       r"(?:^|[\s/])tests?_\w*\.py\b|(?:^|[\s/])tests?\.py\b")
_TEST_FAILED = re.compile(r"FAILED|\d+ failed|AssertionError|--- FAIL|FAIL|Tests: +\d+ failed|test result: FAILED|"
                          r"[✗✕×]|assert")


def is_test_run(f: Failure) -> bool:
    return bool(_TEST_RUN.search(f.command))


def rule_tests(f: Failure) -> Label | None:
    """15. test_failure: a test run that shows a failed test."""
    if is_test_run(f) and _TEST_FAILED.search(f.text):
        return Label("test_failure", None, "tests")
    return None


_BUILDERS = re.compile(r"\bgo (?:build|vet)\b|\btsc\b|\bcargo (?:build|check|clippy)\b|\bgolangci-lint\b|\bmypy\b|"
                       r"\bruff\b|\beslint\b|\bpylint\b|\bflake8\b|\bbiome\b|\bshellcheck\b|"
                       r"\b(?:run|mise run|make)\s+(?:lint|typecheck|check|build|vet)\b")
_GO_COMPILE = re.compile(r"imported and not used|declared and not used|undefined: \S|cannot use \S.* as .* value|"
                         r"missing return")
_COMPILE = re.compile(r"SyntaxError|IndentationError|error TS\d{4}|error\[E\d{4}\]|cannot find symbol|"
                      r"compilation failed|Build failed|introduced new syntax error|Found \d+ errors|found \d+ errors? in|"
                      r"error: expected|is not assignable to type|could not compile|\d+ problems? \(\d+ errors?|"
                      r"lint error")


def _nonzero(f: Failure) -> bool:
    return f.exit_code is not None and f.exit_code != 0


def rule_builder_exit(f: Failure) -> Label | None:
    """16. compile_error: a build, type-check or lint command that exited non-zero."""
    if _nonzero(f) and not is_test_run(f) and _BUILDERS.search(f.command):
        return Label("compile_error", None, "builder-exit")
    return None


def rule_go_compile(f: Failure) -> Label | None:
    """16. compile_error: the Go compiler's own messages."""
    return Label("compile_error", None, "go-compile") if _GO_COMPILE.search(f.text) else None


def rule_compile(f: Failure) -> Label | None:
    """16. compile_error: a compiler's or linter's message, when there is no Python traceback."""
    if "Traceback (most recent call last)" not in f.text and _COMPILE.search(f.text):
        return Label("compile_error", None, "compile")
    if _BUILDERS.search(f.command) and re.search(r"error", f.text, re.IGNORECASE):
        return Label("compile_error", None, "compile")
    return None


_PATH = _rx(r"No such file or directory", r"does not exist", r"File not found", r"ENOENT", r"cannot find the path",
            r"Path not found", r"cannot access", r"did not match any file", r"not found:", r"Could not find file",
            r"Directory not found", r"cannot open", r"can't open file", r"pathspec .* did not match",
            r"The system cannot find")


def rule_path(f: Failure) -> Label | None:
    """17. path_not_found."""
    return Label("path_not_found", None, "path") if _PATH.search(f.text) else None


_PERM = _rx(r"Permission denied", r"EACCES", r"Operation not permitted", r"EPERM", r"Access is denied",
            r"read-only file system")


def rule_perm(f: Failure) -> Label | None:
    """18. permission_denied."""
    return Label("permission_denied", None, "perm") if _PERM.search(f.text) else None


_REMOTE_404 = _rx(r"HTTP 404", r"\bE404\b", r"returned error: 404", r"404 Not Found", r"\"status\": ?\"404\"")
_NET = _rx(r"Could not resolve host", r"Connection refused", r"ECONNREFUSED", r"Network is unreachable",
           r"getaddrinfo", r"ENOTFOUND", r"Name or service not known", r"ECONNRESET", r"socket hang up",
           r"Failed to connect to", r"SSL certificate problem", r"unable to access 'http",
           r"Temporary failure in name resolution", r"HTTP 5\d\d", r"\b50[234]\b.{0,20}(?:Bad Gateway|Service|Gateway)",
           r"(?:Bad Gateway|Service Unavailable|Gateway Time-?out)", r"Failed to retrieve content from http")


def rule_remote_404(f: Failure) -> Label | None:
    """19. path_not_found: a remote resource that does not exist."""
    return Label("path_not_found", None, "remote-404") if _REMOTE_404.search(f.text) else None


def rule_net(f: Failure) -> Label | None:
    """19. network_error, first 1,500 characters."""
    if _NET.search(f.text[:1500]) or (f.head == "curl" and f.exit_code in (6, 7)):
        return Label("network_error", None, "net")
    return None


def rule_tests_exit(f: Failure) -> Label | None:
    """20. test_failure: a test run that exited non-zero for no reason given above."""
    return Label("test_failure", None, "tests-exit") if is_test_run(f) and _nonzero(f) else None


_RUNTIME = re.compile(r"Traceback|Error|Exception|panic:|fatal:|error:|ERR!|FATAL|failed|Failed|exit status|undefined")


def rule_runtime(f: Failure) -> Label | None:
    """21. runtime_error."""
    return Label("runtime_error", None, "runtime") if _RUNTIME.search(f.text) else None


def rule_quiet_exit(f: Failure) -> Label | None:
    """22. not_a_failure: any other shell command that exited non-zero and said nothing."""
    if is_shell_call(f.harness, f.tool) and _nonzero(f) and _no_output(f):
        return Label("not_a_failure", None, "quiet-exit")
    return None


def rule_other(f: Failure) -> Label | None:
    """23. other."""
    return Label("other", None, "other")


RULES: tuple[Rule, ...] = (
    rule_too_large, rule_gemini_cancelled, rule_user_said_no, rule_sibling_errored, rule_harness_refused,
    rule_format, rule_edit_miss, rule_pkill_exit, rule_timeout, rule_gone, rule_quota,
    rule_misuse_exists, rule_misuse_directory, rule_misuse_multiple, rule_misuse_parameter, rule_misuse_other,
    rule_negative_probe, rule_empty_search, rule_quiet_exit_1, rule_diff_differs, rule_repro_script,
    rule_probe_missing_path, rule_glob_no_match, rule_shell_syntax,
    rule_runner_build, rule_runtime_env, rule_harness_binary_missing, rule_module, rule_tests,
    rule_builder_exit, rule_go_compile, rule_compile, rule_path, rule_perm, rule_remote_404, rule_net,
    rule_tests_exit, rule_runtime, rule_quiet_exit, rule_other,
)


def failure_of(harness: str, call: Call) -> Failure:
    text, code = unwrap(harness, call.result)
    command = command_of(call.args)
    return Failure(harness, call.tool, call.args, call.result, text, code, command, command_head(command),
                   call.status)


def classify(f: Failure) -> Label:
    """The label of the first rule that matches (rule 23 always does)."""
    for rule in RULES:
        label = rule(f)
        if label is not None:
            return label
    raise AssertionError("rule_other always matches")


def label_text(harness: str, tool: str, args: dict[str, Any], result: str, status: str | None = None) -> Label:
    """The label of one failed call given as plain values (for tests and one-off checks)."""
    return classify(failure_of(harness, Call(0, tool, args, result, True, status)))


# --- fix (README "How `fix` is found") --------------------------------------------------------

_TARGET_KEYS = ("file_path", "path", "absolute_path", "notebook_path", "dir_path", "file", "url", "pattern")
_FILE_FAMILIES = ("read", "edit", "search")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)


def target_of(args: dict[str, Any]) -> str | None:
    for key in _TARGET_KEYS:
        value = args.get(key)
        if value:
            return str(value)
    command = command_of(args)
    if command:
        return command_head(command) or None
    body = args.get("input") or args.get("patch") or ""
    match = _PATCH_FILE.search(str(body))
    return match.group(1).strip() if match else None


def find_fix(calls: list[Call], index: int, label: Label) -> Call | None:
    """The first of the next 11 calls that did not fail, is of the failed call's family and has its
    target (a call with no target has no fix), with the README's exceptions."""
    failed = calls[index]
    fam, target = family(failed.tool), target_of(failed.args)
    any_target = label.kind == "format_rejected" or (label.kind == "path_not_found" and fam in _FILE_FAMILIES)
    for later in calls[index + 1:index + 1 + FIX_WINDOW]:
        if later.failed:
            continue
        later_fam = family(later.tool)
        same_family = later_fam == fam \
            or (label.misuse == "directory" and later_fam == "search") \
            or (label.misuse == "exists" and later_fam == "edit")
        if not same_family:
            continue
        if any_target or (target is not None and target_of(later.args) == target):
            return later
    return None


_PATHLIKE = re.compile(r"/|\.[A-Za-z0-9]+$")


def _pathlike(token: str) -> bool:
    return bool(_PATHLIKE.search(token.strip("\"'")))


def _only_paths_differ(failed: Call, fix: Call) -> bool:
    a, b = command_of(failed.args), command_of(fix.args)
    if a and b:
        wa, wb = a.split(), b.split()
        return len(wa) == len(wb) and all(x == y or (_pathlike(x) and _pathlike(y)) for x, y in zip(wa, wb, strict=True))
    if family(failed.tool) in _FILE_FAMILIES and failed.tool == fix.tool:
        key = next((k for k in _TARGET_KEYS if failed.args.get(k)), None)
        rest_a = {k: v for k, v in failed.args.items() if k != key}
        rest_b = {k: v for k, v in fix.args.items() if k != key}
        return rest_a == rest_b
    return False


_FIX_SOURCE = {"not_a_failure": "none", "user_rejected": "outside", "network_error": "outside",
               **dict.fromkeys(("output_too_large", "format_rejected", "tool_misuse", "edit_text_not_found"), "call"),
               **dict.fromkeys(("timeout", "missing_module", "policy_denied", "service_exhausted", "self_kill",
                                "stale_handle", "permission_denied", "runtime_version", "env_not_activated"),
                               "memory")}


def fix_source(label: Label, failed: Call, fix: Call | None) -> str:
    if label.kind == "path_not_found":
        return "memory" if fix is not None and _only_paths_differ(failed, fix) else "model"
    return _FIX_SOURCE.get(label.kind, "model")


# --- presentation of a row (README "One line") ------------------------------------------------

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_NOT_PERSONAL = re.compile(r"^(?:no-?reply|git)@|@(?:example\.(?:com|org|net)|test\.com|localhost)$", re.IGNORECASE)


def scrub(text: str) -> str:
    """redact(), then personal e-mail addresses (not noreply@, git@ or example domains) as «redacted:email»."""
    return _EMAIL.sub(lambda m: m.group(0) if _NOT_PERSONAL.search(m.group(0)) else "«redacted:email»",
                      redact(text))


def _scrub_obj(obj: Any) -> Any:
    if isinstance(obj, str):
        return scrub(obj)
    if isinstance(obj, dict):
        return {k: _scrub_obj(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scrub_obj(v) for v in obj]
    return obj


def _json_len(obj: Any) -> int:
    return len(json.dumps(obj, ensure_ascii=False))


def clip_args(args: dict[str, Any]) -> dict[str, Any]:
    """Presentation keys dropped, secrets redacted, and no longer than 400 characters as JSON: the
    longest string is cut first (`…` marks it); if no string is left to cut, the JSON text is kept."""
    out: dict[str, Any] = _scrub_obj({k: v for k, v in args.items() if k not in PRESENTATION_KEYS})
    spent: set[str] = set()  # strings already at their shortest: cutting them again gains nothing
    while (size := _json_len(out)) > ARGS_MAX:
        strings = [(k, v) for k, v in out.items()
                   if isinstance(v, str) and len(v) > _CUT_MIN and k not in spent]
        if not strings:
            break
        key, value = max(strings, key=lambda kv: len(kv[1]))
        cut = value[:max(_CUT_MIN, len(value) - (size - ARGS_MAX) - _CUT_SLACK)] + "…"
        if len(cut) >= len(value):
            spent.add(key)
        out[key] = cut
    if _json_len(out) > ARGS_MAX:
        out = {"_clipped": json.dumps(out, ensure_ascii=False)[:_CLIPPED_KEEP]}
    return out


def error_text(result: str) -> str:
    return scrub(result)[:ERROR_MAX]


# --- the corpus ---------------------------------------------------------------------------------

def load_manifest(path: Path = MANIFEST) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return manifest


def _sources(manifest: dict[str, Any]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(harness, <owner>__<repo>) -> its manifest sources (one per ref where a repository keeps
    each checkpoint on a ref of its own, each then under its `into` folder)."""
    out: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for s in manifest["sources"]:
        out[(s["harness"], s["repo"].replace("/", "__", 1))].append(s)
    return out


def _source_of(candidates: list[dict[str, Any]], path: str) -> dict[str, Any] | None:
    """The source a file at `path` (inside its repository's folder) came from."""
    for source in candidates:
        into = source.get("into")
        if not into or path.startswith(into.rstrip("/") + "/"):
            return source
    return None


def label_session(session: Session, source: dict[str, Any], path: str) -> Iterator[dict[str, Any]]:
    """One fixture row for every failed call of a session."""
    # the census's order, the order the harness recorded the results: "the next 11 calls" are
    # counted in it (Claude Code's parallel calls are answered out of their `seq` order)
    calls = list(session.calls)
    for i, call in enumerate(calls):
        if not call.failed:
            continue
        f = failure_of(session.harness, call)
        label = classify(f)
        fix = find_fix(calls, i, label)
        src: dict[str, Any] = {"repo": source["repo"], "commit": source["commit"], "path": path,
                               "harness": session.harness}
        if session.version:
            src["harness_version"] = session.version
        if source.get("ref"):
            src["ref"] = source["ref"]
        yield {"source": src, "session": session.session_id, "seq": call.seq, "tool": call.tool,
               "args": clip_args(call.args), "error": error_text(call.result), "kind": label.kind,
               "misuse": label.misuse, "benign": label.kind == "not_a_failure",
               "fix_source": fix_source(label, call, fix),
               "fix": None if fix is None else {"tool": fix.tool, "args": clip_args(fix.args)},
               "rule": label.rule}


def label_corpus(root: Path, split: str = "all", manifest: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    sources = _sources(manifest or load_manifest())
    for repo_dir, session in iter_sessions(root):
        path = session.path.relative_to(root / session.harness / repo_dir).as_posix()
        source = _source_of(sources.get((session.harness, repo_dir), []), path)
        if source is None or (split != "all" and source["split"] != split):
            continue
        yield from label_session(session, source, path)


# --- selection (README "Which failures were kept") -------------------------------------------

QUOTAS = {"dev": {"claude": 110, "codex": 70, "gemini": 70, "cline": 60, "mini-swe-agent": 80, "swe-agent": 20,
                  "openhands": 10, "aider": 10},
          "heldout": {"claude": 200, "codex": 10, "aider": 20, "gemini": 10},
          "heldout2": {"claude": 200, "codex": 200, "aider": 50}}
MIN_PER_KIND = 4
MAX_PER_SESSION = 4


def order_key(row: dict[str, Any]) -> str:
    src = row["source"]
    return hashlib.sha256(f"{src['repo']}|{src['path']}|{row['seq']}".encode()).hexdigest()


def kind_shares(counts: Counter[str], quota: int) -> dict[str, int]:
    """Each kind's share of the harness's quota: in proportion to its count (rounded), raised to
    4 where there are that many. The floor is added on top, so a harness with many rare kinds can
    end above its quota, as the committed files do (Claude 115 of 110 in DEV)."""
    total = sum(counts.values())
    if total <= quota:
        return dict(counts)
    return {kind: max(min(n, MIN_PER_KIND), round(quota * n / total)) for kind, n in counts.items()}


def select(rows: Iterable[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    """Per harness, each kind's share taken in sha256(repo|path|seq) order, at most 4 per session."""
    by_harness: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_harness[row["source"]["harness"]].append(row)
    quotas = QUOTAS[split]
    kept: list[dict[str, Any]] = []
    for harness, candidates in sorted(by_harness.items()):
        candidates.sort(key=order_key)
        shares = kind_shares(Counter(r["kind"] for r in candidates), quotas.get(harness, 0))
        taken: Counter[str] = Counter()
        per_session: Counter[tuple[str, str]] = Counter()
        for row in candidates:
            session = (row["source"]["path"], str(row["session"]))
            if taken[row["kind"]] >= shares.get(row["kind"], 0) or per_session[session] >= MAX_PER_SESSION:
                continue
            taken[row["kind"]] += 1
            per_session[session] += 1
            kept.append(row)
    return kept


# --- check ----------------------------------------------------------------------------------------

CHECK_FIELDS = ("kind", "misuse", "benign", "fix_source", "rule", "fix_present", "fix_equal", "tool", "args", "error")
_SHOWN = frozenset({"kind", "misuse", "benign", "fix_source", "rule", "fix_present"})


def _row_key(row: dict[str, Any]) -> tuple[str, str, str, int]:
    return row["source"]["repo"], row["source"]["path"], str(row["session"]), int(row["seq"])


def _field(row: dict[str, Any], name: str) -> Any:
    if name == "fix_present":
        return row["fix"] is not None
    if name == "fix_equal":
        return row["fix"]
    return row[name]


def check(fixture: Path, rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    mine = {_row_key(r): r for r in rows}
    committed = [json.loads(line) for line in fixture.read_text(encoding="utf-8").splitlines() if line.strip()]
    agree: Counter[str] = Counter()
    missing: list[int] = []
    disagreements: list[dict[str, Any]] = []
    for n, row in enumerate(committed, 1):
        ours = mine.get(_row_key(row))
        if ours is None:
            missing.append(n)
            continue
        differ = []
        for name in CHECK_FIELDS:
            if _field(row, name) == _field(ours, name):
                agree[name] += 1
            else:
                differ.append(name)
        if differ:
            disagreements.append({"line": n, "harness": row["source"]["harness"], "tool": row["tool"],
                                  "fields": differ,
                                  "committed": {k: _field(row, k) for k in differ if k in _SHOWN},
                                  "script": {k: _field(ours, k) for k in differ if k in _SHOWN},
                                  "rules": [row["rule"], ours["rule"]], "error": row["error"][:160]})
    found = len(committed) - len(missing)
    return {"fixture": str(fixture), "rows": len(committed), "found": found, "missing": missing,
            "agreement": {name: {"agree": agree[name], "of": found,
                                 "share": round(agree[name] / found, 4) if found else 0.0} for name in CHECK_FIELDS},
            "disagreements": disagreements}


LABEL_FIELDS = ("kind", "misuse", "benign", "fix_source", "fix", "rule")


def relabel(fixture: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Give every row of `fixture` the labels the rules give it now, and its arguments as the
    README's clipping gives them now (its call and text stay as they are); rows not found in
    the corpus are kept unchanged. Returns how many rows changed."""
    mine = {_row_key(r): r for r in rows}
    lines = [json.loads(line) for line in fixture.read_text(encoding="utf-8").splitlines() if line.strip()]
    changed = 0
    for row in lines:
        ours = mine.get(_row_key(row))
        if ours is None:
            continue
        new = {name: ours[name] for name in (*LABEL_FIELDS, "args")}
        if any(row[name] != value for name, value in new.items()):
            changed += 1
            row.update(new)
    fixture.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in lines), encoding="utf-8")
    return changed


def _print_check(report: dict[str, Any]) -> None:
    print(f"{report['fixture']}: {report['rows']} rows, {report['found']} found in the corpus")
    if report["missing"]:
        print(f"  not found: lines {report['missing']}")
    for name, entry in report["agreement"].items():
        print(f"  {name:<12}{entry['agree']:>5} / {entry['of']:<5}{100 * entry['share']:6.1f} %")
    for d in report["disagreements"]:
        print(f"- line {d['line']} {d['harness']} {d['tool']}: committed {d['committed']} script {d['script']} "
              f"rules {d['rules'][0]} -> {d['rules'][1]}"
              + "".join(f"  ({name} differs)" for name in d["fields"] if name not in _SHOWN))
        print(f"    {d['error']!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Label the real-sessions corpus's failed calls by the README rules.")
    parser.add_argument("root", nargs="?", type=Path, default=default_corpus())
    parser.add_argument("--split", choices=("dev", "heldout", "heldout2", "all"), default="all")
    parser.add_argument("--select", action="store_true", help="keep the README's selection (quota per harness)")
    parser.add_argument("--out", type=Path, help="write the rows here, one JSON object a line")
    parser.add_argument("--check", type=Path, metavar="FIXTURE", help="compare with a committed fixture")
    parser.add_argument("--relabel", type=Path, metavar="FIXTURE",
                        help="rewrite a fixture's labels (kind, misuse, benign, fix_source, fix, rule) by the rules")
    parser.add_argument("--json", action="store_true", help="print the check or the counts as JSON")
    args = parser.parse_args(argv)
    if args.relabel is not None:
        changed = relabel(args.relabel, label_corpus(args.root, "all"))
        print(f"{args.relabel}: {changed} rows relabelled")
        return 0
    if args.check is not None:
        report = check(args.check, label_corpus(args.root, "all"))
        if args.json:
            print(json.dumps(report, indent=2, ensure_ascii=False))
        else:
            _print_check(report)
        return 0
    rows = list(label_corpus(args.root, args.split))
    if args.select:
        if args.split == "all":
            parser.error("--select needs --split dev, heldout or heldout2 (the quotas are per split)")
        rows = select(rows, args.split)
    if args.out is not None:
        with args.out.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    counts = Counter((r["source"]["harness"], r["kind"]) for r in rows)
    if args.json:
        print(json.dumps({f"{h}/{k}": n for (h, k), n in sorted(counts.items())}, indent=2))
    else:
        print(f"{len(rows)} rows" + (f" -> {args.out}" if args.out else ""))
        for (harness, kind), n in sorted(counts.items()):
            print(f"  {harness:<16}{kind:<22}{n:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
