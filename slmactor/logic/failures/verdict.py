"""What a failed call's *structure* says, before any wording is read: the verdicts that come
from the wrapper (exit code, signal, an empty output) and from the call (which command ran).

`read_call(unwrapped, command, family)` answers a class for the failures whose kind is decided
by who spoke and how, not by the program's words:

* the harness or the user refused the call (`user_rejected`, `policy_denied`), the harness
  refused the reply's format (`format_rejected`), the output was too large to show
  (`output_too_large`), the tool was used wrongly (`tool_misuse`, the misuse named);
* the process was ended: by a signal after a `pkill`/`killall` — the agent's own shell went
  with it (`self_kill`) — or by the harness's clock (`timeout`: exit 124, or 143 = SIGTERM);
* a handle that is gone (`stale_handle`), a quota or credit that is used up
  (`service_exhausted`), a target that is not there (`path_not_found`: a silent probe of a
  missing path, a glob that matched nothing, a remote 404);
* and **not a failure** (`not_a_failure`, with why): a search that found nothing, a probe
  (`which x`, `test -f`, `grep -q`, `pgrep`) answering "no", a quiet exit 1 with no output, a
  `diff` that differs, a reproduction script failing as it was written to, a call that never
  ran because a sibling call failed. Recorded, never counted, learned from or advised on.

Everything else returns None: the program's own words decide (`diagnose`). Pure; phrases are
ones the programs and harnesses print (each group says whose), matched on the lowercased inner
text, mostly at its head — a harness's verdict is its first words, a program's output may quote
anything further down.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from slmactor.logic.failures.runtimes import (
    SERVER_NO_RETURN,
    backgrounds,
    environment_class,
    is_server_command,
    says_listening,
)
from slmactor.logic.failures.unwrap import Unwrapped
from slmactor.logic.text.shell import segments

#: Tool families (what `harnesses.tool_family` answers).
EDIT, READ, SHELL, SEARCH, WEB, TASK = "edit", "read", "shell", "search", "web", "task"

#: Why a failed call is not a failure.
EMPTY_SEARCH = "empty_search"
NEGATIVE_PROBE = "negative_probe"
QUIET_EXIT = "quiet_exit"
DIFF_DIFFERS = "diff_differs"
REPRO_SCRIPT = "repro_script"
NOT_RUN = "not_run"

#: Misuses of a tool.
EXISTS, DIRECTORY, MULTIPLE_COMMANDS, MISSING_PARAMETER = (
    "exists", "directory", "multiple_commands", "missing_parameter")


@dataclass(frozen=True, slots=True)
class Verdict:
    """A class decided by structure, and its detail (the misuse, or why it is not a failure)."""

    cls: str
    detail: str = ""
    why: str = ""


def _phrases(*phrases: str) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(p) for p in phrases))


def _patterns(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns))


# The user said no (Claude Code's "The user doesn't want to proceed with this tool use",
# Cline's "The user denied this operation", Gemini CLI's "[Operation Cancelled] ... User
# cancelled", Claude Code's "[Request interrupted by user").
_USER = _phrases("the user doesn't want to proceed", "the user doesn't want to take this action",
                 "user rejected", "rejected by the user", "the user denied this operation",
                 "[request interrupted by user", "operation cancelled by user",
                 "user cancelled the operation", "[operation cancelled]", "user denied",
                 "the user declined")
# A call that never ran because a parallel one failed (Claude Code: "Sibling tool call
# errored"; later versions "Cancelled: parallel tool call Bash(…) errored", as recorded in the
# public Entire sessions of ShamsiievDmytro/entire-bmad).
_SIBLING = _patterns(r"sibling tool call errored", r"cancelled: parallel tool call .{0,200}errored")
# The harness's own policy (Claude Code's permission system and hooks, Gemini CLI's shell
# parser and workspace check, Codex's sandbox and approval policy): read at the head only.
_POLICY = _patterns(
    r"command rejected because it could not be parsed safely", r"permission for this tool use",
    # Claude Code's auto mode: "Permission for this action was denied by the Claude Code auto
    # mode classifier."
    r"permission for this action was denied", r"denied by (?:the )?[\w ]{0,40}classifier",
    r"^blocked:", r"\bwas blocked\b", r"has been denied", r"denied by (?:the )?(?:permission|policy|sandbox)",
    r"must be within one of the workspace directories", r"requires approval",
    r"pretooluse:\S+ hook", r"hook error", r"sandbox denied", r"approval policy",
    r"outside (?:of )?the (?:allowed|project) (?:directory|directories|workspace)",
    r"outside the workspace", r"not allowed in this (?:mode|context)", r"blocked by (?:a )?hook",
    # A plugin's or MCP server's own confinement ("File access blocked: … resolves outside the
    # project root", context-mode's ctx_execute_file).
    r"\baccess blocked: ", r"resolves outside the project root",
    r"is not in the allowed", r"for security, ", r"cd to '.*' was blocked",
    # Claude Code 2.1 when its auto mode's safety check cannot be had ("… was not run: …, so
    # auto mode cannot determine the safety of …"); Gemini CLI's read tools on an ignored path
    # ("File path '…' is ignored by configured ignore patterns.").
    r"auto mode cannot determine the safety of", r"is ignored by configured ignore patterns")
_TOO_LARGE = _patterns(
    r"output of your last command was too long", r"exceeds maximum allowed tokens",
    r"file content \(\S+ tokens\) exceeds", r"output (?:is )?too (?:large|long)",
    # Claude Code's Read over its byte limit: "File content (1.2MB) exceeds maximum allowed
    # size (256KB). Use offset and limit parameters …" (the 2.1 bundle's size error).
    r"exceeds maximum allowed size",
    r"exceeds the maximum (?:allowed )?(?:size|length|number of tokens)", r"too large to read",
    r"response too large", r"result exceeds", r"output was truncated because it exceeded")
# mini-swe-agent's format error, a harness that wanted a tool call, aider's edit format.
_FORMAT = _phrases("exactly one action", "exactly one bash", "you did not use a tool",
                   "did not conform to the edit format", "failed to parse function arguments",
                   "please always provide", "format error", "no tool use found in")
# Cline's SEARCH/REPLACE parser (src/core/assistant-message/diff.ts) refusing a diff whose
# markers do not form blocks: the edit's format, not the file, was wrong.
_DIFF_MARKERS = _patterns(
    r"invalid state transition", r"search/replace operations still active during finalization",
    r"malformed search/replace block", r"malformed replace block", r"malformed search block")
_STALE = _patterns(
    r"no shell found with id", r"no such process", r"shell \S+ (?:not found|is not running)",
    r"no task found", r"session not found", r"can't find session", r"no server running on",
    r"unknown process id", r"process \S+ not found", r"no background (?:shell|process|job)",
    r"no such job")
# Gone until it comes back (a throttled request is `rate_limit`, the words' class: retry later).
_EXHAUSTED = _patterns(
    r"quota (?:exceeded|exhausted)", r"exceeded your current quota", r"insufficient_quota",
    r"credit balance is too low", r"usage limit", r"resource_exhausted", r"hit your limit",
    r"out of credits", r"(?:usage|token|spend|monthly|daily) limit reached")
_EXISTS = re.compile(r"already exists|file exists|\beexist\b|cannot create")
_DIRECTORY = re.compile(r"\beisdir\b|is a directory|path is not a file|not a regular file")
_MULTIPLE = re.compile(r"cannot execute multiple commands|multiple commands at once|"
                       r"only one command")
_PARAMETER = _patterns(
    r"inputvalidationerror", r"required parameter", r"must have required property",
    r"missing required", r"missing field", r"parameter \S+ is required", r"is missing\b",
    r"invalid (?:input|arguments?|parameters?)\b", r"expected \S+(?: \S+)?, but received",
    r"expected \S+ but received", r"unexpected keyword", r"an unexpected parameter",
    r"must be an? \w+",
    # JSON-schema type errors as Ajv words them (Gemini CLI's parameter validation).
    r"must be (?:array|string|object|integer|number|boolean|null)\b")
_MISUSE_OTHER = re.compile(r"no such tool|unknown tool|not found in registry|"
                           r"tool \S+ (?:is )?not available|use the notebookedit|"
                           # Claude Code 2.1's Skill and Task tools named something that is
                           # not there ("Unknown skill: x", "Agent type 'x' not found").
                           r"^unknown skill: |^agent type '[^']*' (?:not found|is unavailable)")
_GLOB = re.compile(r"no matches found: |no match\.$|: no matches found$")
_REMOTE_404 = re.compile(r"\bhttp(?: error)? 404\b|\be404\b|returned error: 404|404 not found|"
                         r"\"status\": ?\"?404")
_PERMISSION = re.compile(r"permission denied|operation not permitted|\beacces\b|\beperm\b")
_SETUP_ERROR = re.compile(r"syntaxerror|indentationerror|modulenotfounderror|importerror|"
                          r"nameerror|no such file|can't open file")
_SAYS_MISSING = re.compile(r"no such file|cannot access|not found|does not exist")
_BINARY_MATCH = re.compile(r"(?:binary file \S+ matches|grep: .*|rg: .*)")

#: curl's exit codes (its manual, "EXIT CODES") that name a network failure or its timeout.
_CURL_EXITS = {6: ("provider_error", "could not resolve the host"),
               7: ("provider_error", "could not connect to the host"),
               28: ("timeout", "the operation timed out")}
#: Commands whose exit status 1 means "no" (a question with a yes/no answer).
_PROBES = frozenset({"which", "command", "type", "pgrep", "pidof", "where", "test", "[", "[[",
                     "hash", "id", "getent", "findstr", "cmp"})
_SEARCHES = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git grep", "findstr"})
_DIFFS = frozenset({"diff", "git diff", "cmp"})
#: How a one-word search starts the lines it writes about itself ("rg: x: No such file …").
_SEARCH_NAMES = tuple(sorted(name for name in _SEARCHES if " " not in name))
_SEARCH_PREFIXES = tuple(f"{name}: " for name in _SEARCH_NAMES)
#: Commands that list or print a path: exit 1/2 with no output means the path is not there.
_PATH_READERS = frozenset({"ls", "cat", "stat", "head", "tail", "wc", "du", "file", "realpath",
                           "readlink", "tree", "dir"})
_KILLERS = frozenset({"pkill", "killall"})
_SELF_KILL_SIGNALS = frozenset({"terminated", "killed", "interrupted", "signal 16"})
_PREFIX_WORDS = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "builtin",
                           "stdbuf", "nice", "ionice"})
_SUBCOMMAND_HEADS = frozenset({"git", "go", "cargo", "npm", "pnpm", "yarn", "bun", "npx", "uv",
                               "make", "python", "python3", "poetry", "dotnet", "mvn",
                               "gradle", "mise", "just", "deno"})
#: Package managers and task runners whose `run X` runs the project's script X.
_SCRIPT_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun", "mise", "deno", "uv", "poetry"})
#: Project scripts (`npm run build`, `make lint`) that build, type-check or lint.
_BUILD_SCRIPTS = frozenset({"build", "lint", "typecheck", "type-check", "check", "vet", "tsc",
                            "compile", "format:check", "lint:fix"})
_TEST_HEADS = frozenset({"pytest", "jest", "vitest", "go test", "cargo test", "npm test",
                         "pnpm test", "yarn test", "bun test", "tox", "phpunit", "mvn test",
                         "gradle test", "dotnet test", "rspec", "python pytest",
                         "python3 pytest", "uv pytest", "npx jest", "npx vitest",
                         "python unittest", "python3 unittest", "nox",
                         "make test", "mise test", "just test", "deno test"})
_TEST_SCRIPT = re.compile(r"(?:^|[\s/])(?:test_\w+|tests?|runtests)\.py\b|\bbin/test\b|"
                          r"\bplaywright test\b|"
                          # A runner behind options that take values (`pnpm -C web vitest run`).
                          r"(?:^|\s)(?:pytest|vitest|jest|phpunit|rspec)(?:\s|$)|"
                          r"(?:npm|pnpm|yarn|bun) (?:run )?test\b")
_BUILD_HEADS = frozenset({"go build", "go vet", "tsc", "cargo build", "cargo check",
                          "cargo clippy", "golangci-lint", "mypy", "ruff", "eslint", "pylint",
                          "flake8", "biome", "shellcheck", "npx tsc", "npx eslint", "python mypy",
                          "python3 mypy", "uv mypy", "uv ruff", "make build", "make lint",
                          "make check", "make vet", "make typecheck", "gcc", "g++", "clang",
                          "javac", "rustc", "dotnet build", "mvn compile", "gradle build"})
_REPRO = re.compile(r"(?:^|[\s/])repro\w*\.(?:py|js|ts|sh)\b")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=\S*$")


def command_heads(command: str) -> list[str]:
    """The head of every simple command in a shell line, in order: its first word after
    `cd X`, variable assignments, `sudo`/`env`/`time`/`nohup`, `timeout N`; with the
    sub-command of tools that have them (`git diff`, `python pytest`, `npm test`)."""
    heads: list[str] = []
    for segment in segments(command):
        words = segment.replace("(", " ").replace(")", " ").split()
        while words and (_ASSIGNMENT.match(words[0]) or words[0] in _PREFIX_WORDS
                         or words[0].startswith("-")):
            if words[0] == "command" and words[1:2] in (["-v"], ["-V"]):
                break  # `command -v x` asks whether x exists (a probe); `command x` runs x
            words = words[1:]
        if words and words[0] == "timeout":
            words = words[1:]
            while words and (words[0].startswith("-") or words[0][:1].isdigit()):
                words = words[1:]
        if not words or words[0] == "cd":
            continue
        # `/usr/bin/grep` is grep; `./bin/test` is a script of the project, named as written, and
        # so is `bin/test` (sympy's runner: never the shell's `test` probe), while
        # `node_modules/.bin/tsc` is tsc.
        word = words[0].lower()
        base = word.rsplit("/", 1)[-1]
        script = word.startswith(".") or ("/" in word and not word.startswith("/") and base in _PROBES)
        head = word if script else base
        rest = [w for w in words[1:] if not w.startswith("-")]
        if head in _SUBCOMMAND_HEADS and rest:
            sub = rest[0]
            if head.startswith("python") and len(words) > 2 and words[1] == "-m":
                sub = words[2]
            elif head in _SCRIPT_RUNNERS and sub in ("run", "run-script") and len(rest) > 1:
                sub = rest[1]  # `npm run build` runs the script `build`
            head = f"{head} {sub.rsplit('/', 1)[-1].lower()}"
        heads.append(head)
    return heads


def _first(head: str) -> str:
    return head.split(" ", 1)[0]


def is_test_run(command: str) -> bool:
    """Whether a shell line runs tests (a test runner, or a `test_*.py` script)."""
    heads = command_heads(command)
    return any(h in _TEST_HEADS or _first(h) in _TEST_HEADS for h in heads) or bool(
        _TEST_SCRIPT.search(command))


def is_build_run(command: str) -> bool:
    """Whether a shell line builds, type-checks or lints (a non-zero exit is a compile error)."""
    return any(h in _BUILD_HEADS or _first(h) in _BUILD_HEADS
               or (" " in h and _first(h) in _SCRIPT_RUNNERS | {"make", "just"}
                   and h.split(" ", 1)[1] in _BUILD_SCRIPTS)
               for h in command_heads(command))


def _misuse(low: str, family: str, named_tool: bool) -> str:
    if _MULTIPLE.search(low):
        return MULTIPLE_COMMANDS
    if family in (EDIT,) and _EXISTS.search(low):
        return EXISTS
    if family in (READ, EDIT) and _DIRECTORY.search(low):
        return DIRECTORY
    # A tool's input checked against its schema: every tool but a shell's (whose output is a
    # program's, not the tool's). A harness's own tools outside the six families (Claude Code's
    # TaskCreate, StructuredOutput, ScheduleWakeup) and MCP tools check their inputs the same way.
    if family != SHELL and (family or named_tool) and _PARAMETER.search(low):
        return MISSING_PARAMETER
    if _MISUSE_OTHER.search(low):
        return "other"
    return ""


def _search_then_and(command: str, heads: list[str]) -> bool:
    """Whether the line starts with a search whose success the rest waits on (`rg x && …`)."""
    if len(heads) < 2 or not (heads[0] in _SEARCHES or _first(heads[0]) in _SEARCHES):
        return False
    first = segments(command)[0]
    end = command.find(first) + len(first)
    return command[end:].lstrip().startswith("&&")


def search_diagnostics(command: str, lines: Sequence[str]) -> tuple[str, ...]:
    """The lines a search command (`rg`, `grep`) wrote about itself ("rg: tests: No such file or
    directory"), when `command` ends in one: its other lines are matches, and a pattern that
    looks for error words makes them read like errors."""
    if not command or not any(name in command for name in _SEARCH_NAMES):
        return ()  # the usual case, known without reading the lines or parsing the command
    own = [line for line in lines if line.startswith(_SEARCH_PREFIXES)]
    if not own:
        return ()
    heads = command_heads(command)
    name = _first(heads[-1]) if heads else ""
    if name not in _SEARCHES:
        return ()
    prefix = name + ": "
    return tuple(line for line in own if line.startswith(prefix))


def read_call(u: Unwrapped, command: str = "", family: str = "", *,
              named_tool: bool = False) -> Verdict | None:
    """The structural verdict on a failed call, or None (its words decide). `named_tool`: the
    call names a tool (one outside the six families when `family` is empty), not a bare
    message."""
    low = u.text.lower()
    head = low[:300]
    if _USER.search(head):
        return Verdict("user_rejected", why="the user refused the call")
    if _SIBLING.search(head):
        return Verdict("not_a_failure", NOT_RUN, "the call never ran: a parallel call failed")
    if _POLICY.search(head):
        return Verdict("policy_denied", why="the harness's policy refused the call")
    if _TOO_LARGE.search(low[:600]):
        return Verdict("output_too_large", why="the output was too large to show")
    if _FORMAT.search(head):
        return Verdict("format_rejected", why="the harness rejected the reply's format")
    if family == "edit" and _DIFF_MARKERS.search(head):
        return Verdict("format_rejected", why="the edit's SEARCH/REPLACE markers form no block")
    heads = command_heads(command) if command else []
    firsts = {_first(h) for h in heads}
    if firsts & _KILLERS and (u.signal in _SELF_KILL_SIGNALS or u.exit_code == -1):
        return Verdict("self_kill", why=f"ended by {u.signal or 'a signal'} after a pkill/killall")
    if u.signal in ("timeout", "terminated"):
        if is_server_command(command, heads) or (says_listening(low) and not backgrounds(command)):
            return Verdict(SERVER_NO_RETURN, why=f"exit {u.exit_code}: {u.signal}, on a command "
                                                 "that serves and does not return")
        return Verdict("timeout", why=f"exit {u.exit_code}: {u.signal}")
    env = environment_class(low)
    if env is not None:
        # The package manager's or version manager's own words: the runtime is the wrong
        # version, or the project's environment is not active in this shell.
        return Verdict(env[0], env[1], f"{env[0].replace('_', ' ')} ({env[1] or 'a runtime'})")
    if _STALE.search(low[:400]):
        return Verdict("stale_handle", why="the process, shell or session is gone")
    if _EXHAUSTED.search(low[:600]) and not is_test_run(command):
        return Verdict("service_exhausted", why="a quota, credit or rate limit is used up")
    misuse = _misuse(head, family, named_tool)
    if misuse:
        return Verdict("tool_misuse", misuse, f"tool misuse: {misuse.replace('_', ' ')}")
    return _shell_verdict(u, low, heads, command) if heads or u.exit_code is not None else None


def _shell_verdict(u: Unwrapped, low: str, heads: list[str], command: str) -> Verdict | None:
    code = u.exit_code
    last = heads[-1] if heads else ""
    lines = [line.strip() for line in low.splitlines() if line.strip()]
    if _first(last) == "curl" and code in _CURL_EXITS:
        # curl's documented exit codes say what failed even when `-s` silenced its message.
        cls, why = _CURL_EXITS[code]
        return Verdict(cls, why=f"curl exit {code}: {why}")
    if code == 1 and (last in _PROBES or _first(last) in _PROBES) and "not found" not in low:
        return Verdict("not_a_failure", NEGATIVE_PROBE, f"`{last}` answered no (exit 1)")
    if code == 1 and (last in _SEARCHES or _first(last) in _SEARCHES) and all(
            _BINARY_MATCH.fullmatch(line) for line in lines):
        return Verdict("not_a_failure", EMPTY_SEARCH, "the search found nothing (exit 1)")
    if code == 1 and not lines and _search_then_and(command, heads):
        # `rg x dir && cat f`, silent: the search found nothing, so what follows `&&` never ran.
        return Verdict("not_a_failure", EMPTY_SEARCH, "the search found nothing (exit 1)")
    if code == 1 and last in _DIFFS:
        return Verdict("not_a_failure", DIFF_DIFFERS, "the files differ (exit 1)")
    # A failed run of a reproduction script (no status recorded counts: the call is known to
    # have failed) that did not fail on its own setup; 2 and 127 are "could not run it".
    if code not in (0, 2, 127) and _REPRO.search(command) and not _SETUP_ERROR.search(low):
        return Verdict("not_a_failure", REPRO_SCRIPT, "a reproduction script failed as written")
    search = last in _SEARCHES or _first(last) in _SEARCHES
    # grep and rg exit 2 on an error, 1 on no match. Exit 2 and silent: a path they were given
    # is not there; saying so, it is the words' `file_not_found` (their other lines are matches
    # in the paths that are, never diagnostics to classify).
    silenced = "2>/dev/null" in command.replace(" ", "")
    if code == 2 and search and (not lines or (silenced and not search_diagnostics(command, lines))):
        # Silent, or its errors sent to /dev/null while the paths that are there gave matches
        # (a bad pattern matches nothing anywhere): its lines are matches, never diagnostics.
        return Verdict("path_not_found", why="a path the search was given is not there (exit 2)")
    if code == 2 and search and "no such file" in low:
        return Verdict("file_not_found", why="a path the search was given is not there (exit 2)")
    readers = [h for h in (heads[0], last) if _first(h) in _PATH_READERS] if heads else []
    if code in (1, 2) and readers and not _PERMISSION.search(low) and not _SAYS_MISSING.search(
            low) and (not lines or "2>/dev/null" in command.replace(" ", "")):
        # A reader whose errors were silenced or who printed none: a path it was given is not
        # there (its exit status says so; its message was thrown away). One that says so is
        # the words' `file_not_found`.
        return Verdict("path_not_found", why=f"`{readers[0]}` found no such path (exit {code})")
    if _GLOB.search(low[:400]):
        return Verdict("path_not_found", why="the glob matched nothing")
    if _REMOTE_404.search(low[:1500]):
        return Verdict("path_not_found", why="the remote resource does not exist (404)")
    if code == 1 and not lines and not is_test_run(command) and not is_build_run(command):
        return Verdict("not_a_failure", QUIET_EXIT, "exit 1 with no output")
    if code == 130 and not lines:
        # Interrupted (SIGINT, as a Ctrl-C the agent sent to its own process does) and silent.
        return Verdict("not_a_failure", QUIET_EXIT, "interrupted (exit 130) with no output")
    return None


#: Words a program uses when it reports that it failed (the last resort before `unknown`).
_FAILED_WORDS = re.compile(r"\b(?:error|fatal|exception|traceback|panic|failed|failure|"
                           r"err!|aborting|aborted)\b|is not recognized as|"
                           r"fullyqualifiederrorid")
#: A host name that does not resolve: the machine is offline or the name is wrong, whatever the
#: command was (a test run that cannot download its crates did not fail its tests).
_OFFLINE = re.compile(r"could not resolve host|temporary failure in name resolution|"
                      r"name or service not known|nodename nor servname provided|\benotfound\b")
#: git sub-commands that apply patches or merge histories.
_GIT_APPLIERS = frozenset({"git apply", "git am", "git merge", "git rebase", "git cherry-pick",
                           "git pull", "git stash", "git revert"})
#: Classes a test run's or a build's own verdict overrides (the words were incidental).
_WEAK_FOR_RUNS = frozenset({"unknown", "runtime_error", "malformed_json", "provider_error",
                            "timeout"})


def fallback(u: Unwrapped, command: str, cls: str, family: str = "") -> Verdict | None:
    """What the call says when the program's words gave `cls` (`unknown` or a class a run's own
    verdict overrides): a test run that exited non-zero failed its tests, a build or check
    failed to compile; else a program (a shell or search call: it has a command or an exit
    status) that said it failed, or a tool that threw (a serialised exception), crashed at run
    time — a tool's own unrecognised refusal stays `unknown`."""
    code = u.exit_code
    if cls == "timeout" and command and not backgrounds(command) and (
            is_server_command(command, command_heads(command)) or says_listening(u.text.lower())):
        # The words said it timed out, on a command that serves: it never returns.
        return Verdict(SERVER_NO_RETURN, why="timed out on a command that serves")
    if cls == "patch_failed" and _GIT_APPLIERS.intersection(command_heads(command)):
        # git's own words ("corrupt patch at line 13", "Merge conflict in x") from a shell call:
        # the repository's state or a patch file, not an edit tool's hunks (no edit repair).
        return Verdict("runtime_error", why="git could not apply or merge")
    if code not in (None, 0) and cls in _WEAK_FOR_RUNS and not (cls == "timeout" and u.signal) \
            and not (cls == "provider_error" and _OFFLINE.search(u.text[:3000].lower())):
        if is_test_run(command):
            return Verdict("test_failure", why=f"the test run exited {code}")
        if is_build_run(command):
            return Verdict("compile_error", why=f"the build or check exited {code}")
    if cls == "unknown" and "json_error" in u.wrappers:
        return Verdict("runtime_error", why="the tool threw an exception")
    program = bool(command) or u.exit_code is not None or family in (SHELL, SEARCH)
    if cls == "malformed_json" and family == SHELL and program:
        # `malformed_json` is the call's own arguments failing to parse (resent, repaired); a
        # program that could not parse the JSON it read (`json.load` of an API's answer, `jq`
        # on non-JSON) failed at run time, and no repair of the call applies.
        return Verdict("runtime_error", why="the program could not parse the JSON it read")
    if cls == "unknown" and program and (
            u.said_error or _FAILED_WORDS.search(u.text[:3000].lower())):
        return Verdict("runtime_error", why="the program said it failed")
    return None
