"""Read through the presentational wrappers harnesses put around a program's output.

A failed tool call reaches us as the text the harness showed its model, and that text is mostly
frame: a status header, an exit-code line, tags, a labelled block. Classifying the frame files
every shell failure under whatever word the frame uses (a leading `Error: ` made every failed
command a runtime error; `Exit code 143` hid a timeout). `unwrap(text)` strips the frame and
reads what it says — the exit code, and the signal that ended the process — and returns the
*inner text*: what the program (or the tool) itself said.

The wrappers are text formats, recognised by their structure wherever they come from:

* a leading `Error: ` (Claude Code prefixes failed tool results with it; inside another frame
  it is the program's own, which `Unwrapped.said_error` keeps);
* an `Exit code N` / `Exit code: N` / `Process exited with code N` / `Exit Code: N` line;
* exec summaries made of `Chunk ID:`, `Wall time:`, `Original token count:`, `Total output
  lines:` lines and an `Output:` label (Codex CLI, `codex-rs/core/src/tools/mod.rs` and the
  unified exec);
* `<tool_use_error>…</tool_use_error>`, `<error>…</error>`, `<untrusted_context>…`,
  `<returncode>N</returncode>` with `<output>…</output>` or `<warning>…</warning>`
  (Claude Code, Cline, Gemini CLI hooks, mini-swe-agent's `<returncode>` observation template);
* a `Command: / Directory: / Output: / Error: / Exit Code: / Signal: / Background PIDs: /
  Process Group PGID:` block (Gemini CLI's `packages/core/src/tools/shell.ts`), of which only
  the `Output:` and `Error:` parts are the program's (`(empty)` and `(none)` are nothing);
* a `[tool for 'target'] Result:` line and `The tool execution failed with the following
  error:` (Cline's tool-result template);
* shell start-up noise: lines a shell prints about its own profile files (`~/.bashrc`,
  `.zshrc`, `/etc/profile`, ...), `no job control in this shell`, `cannot set terminal process
  group`, `setlocale` warnings — printed before any command runs, so never the program's.

Exit codes above 128 are a signal's (128 + n); 124 is coreutils `timeout`'s own status. So
`Exit code 143` is `terminated` (SIGTERM — how harnesses end a command that ran too long),
137 `killed` (SIGKILL), 124 `timeout`, 130 `interrupted`, 144 `signal 16` (what a shell
reports when a `pkill -f` took the harness's own shell down with it).

Pure and total: never raises, idempotent (`unwrap(unwrap(t).text).text == unwrap(t).text`), and
the inner text is made of the input's own lines (a wrapper line is dropped or cut at its label,
nothing is rewritten).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Signals by exit status (128 + n, plus `timeout`'s 124), named for what they mean to a caller.
SIGNALS: dict[int, str] = {124: "timeout", 130: "interrupted", 137: "killed", 143: "terminated"}
#: Signal names a `Signal:` line may give, folded to the same words.
_SIGNAL_NAMES = {"sigterm": "terminated", "sigkill": "killed", "sigint": "interrupted",
                 "15": "terminated", "9": "killed", "2": "interrupted"}

_EXIT_LINE = re.compile(r"(?:Exit [Cc]ode:? |Process exited with code |exit status )(-?\d{1,6})")
_SUMMARY_LINE = re.compile(r"(?:Chunk ID|Wall time|Original token count|Total output lines|"
                           r"Duration|Exit code|Process exited with code)\b.*")
_RESULT_HEADER = re.compile(r"\[[\w.-]+(?: for '.*'| for \".*\")?\] Result:\s*")
_FAILED_WITH = re.compile(r"The tool execution failed with the following error:\s*")
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d{1,6})\s*</returncode>")
_OPEN_TAG = re.compile(r"<(tool_use_error|error|output|warning|untrusted_context)>")
_CLOSE_TAG = re.compile(r"</(tool_use_error|error|output|warning|untrusted_context|returncode)>")
_BLOCK_LABEL = re.compile(r"(Command|Directory|Output|Stdout|Stderr|Error|Exit Code|Signal|"
                          r"Background PIDs|Process Group PGID): ?(.*)")
_BLOCK_PROGRAM = frozenset({"Output", "Stdout", "Stderr", "Error"})
_NOTHING = frozenset({"(empty)", "(none)", ""})
# mini-swe-agent's `timeout_template` (`src/minisweagent/config/default.yaml`): the command, then
# its output so far between <output> tags, then advice to the model.
_TIMED_OUT = re.compile(r"The last command <command>.*?</command> timed out and has been killed\.\s*"
                        r"(?:The output of the command was:\s*)?", re.DOTALL)
# A JavaScript Error serialised after what the tool was doing (Cline: `Error reading file:
# {"name":"Error","message":"File not found: ...","stack":"Error: ...\n    at ..."}`): the
# message is what happened, the stack is the tool's own source. Kept as written (escaped).
_JSON_ERROR = re.compile(r'([A-Z][^{}\n]{0,80}?): \{"name":"\w*","message":"((?:[^"\\]|\\.)*)"')
# `bash: /home/u/.bashrc: line 3: ...`, `/Users/u/.zshrc:12: command not found: x`,
# `/etc/profile: line 9: ...`: a message about a start-up file, whatever it says.
_PROFILE_FILE = re.compile(r"(?:-?\w*sh: )?(?:[~\w.@+-]*/)*(?:\.(?:bashrc|bash_profile|bash_login|"
                           r"profile|zshrc|zprofile|zshenv|zlogin|zlogout)|etc/(?:profile|"
                           r"bash\.bashrc|zshrc|zprofile|zshenv))(?::\d+)?: .*")
_SHELL_NOISE = re.compile(r"(?:-?(?:ba|z|da|k)?sh|bash): (?:no job control in this shell|"
                          r"cannot set terminal process group|warning: setlocale:|"
                          r"initialize_job_control:).*|.*setlocale: LC_\w+: cannot change locale.*")


@dataclass(frozen=True, slots=True)
class Unwrapped:
    """What a wrapped tool result says: the program's text, its exit code and signal."""

    text: str
    #: The exit status the wrapper reported (None when it reported none).
    exit_code: int | None = None
    #: How the process was ended: "timeout", "terminated", "killed", "interrupted",
    #: "signal N" — or "" (it exited on its own, or nothing says).
    signal: str = ""
    #: The wrappers read, outermost first (for explanations and tests).
    wrappers: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """The program printed nothing (only the frame was there)."""
        return not self.text.strip()

    @property
    def said_error(self) -> bool:
        """The program itself began with `Error: ` (one inside another frame: the outermost is
        the harness's way of saying the call failed)."""
        return "error_prefix" in self.wrappers[1:]


def signal_of(exit_code: int | None) -> str:
    """The signal an exit status stands for ("" for an ordinary exit)."""
    if exit_code is None:
        return ""
    if exit_code in SIGNALS:
        return SIGNALS[exit_code]
    if 128 < exit_code < 128 + 65:
        return f"signal {exit_code - 128}"
    return ""


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _is_profile_noise(line: str) -> bool:
    body = line.strip()
    if not body or len(body) > 400:
        return False
    return bool(_SHELL_NOISE.fullmatch(body)) or bool(_PROFILE_FILE.fullmatch(body))


def _command_block(lines: list[str]) -> tuple[list[str], int | None, str] | None:
    """The program's parts of a `Command:/Directory:/...` block, its exit code and signal."""
    if not lines or not lines[0].startswith("Command: "):
        return None
    labels = [(_BLOCK_LABEL.fullmatch(line), i) for i, line in enumerate(lines)]
    found = {m.group(1) for m, _ in labels if m}
    if not found & {"Directory", "Exit Code", "Output", "Signal"} or "Command" not in found:
        return None
    kept: list[str] = []
    exit_code: int | None = None
    signal = ""
    current = ""
    for match, i in labels:
        line = lines[i]
        if match and (i == 0 or match.group(1) != "Command"):
            current = match.group(1)
            value = match.group(2).strip()
            if current == "Exit Code":
                exit_code = _int(value)
            elif current == "Signal" and value not in _NOTHING and value != "0":
                signal = _SIGNAL_NAMES.get(value.lower(), value.lower())
            elif current in _BLOCK_PROGRAM and value not in _NOTHING:
                kept.append(match.group(2))
            continue
        if current in _BLOCK_PROGRAM:
            kept.append(line)
    return kept, exit_code, signal


def _int(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def _peel(text: str) -> tuple[str, int | None, str, str]:
    """One wrapper off the outside of `text`: (rest, exit code, signal, wrapper name); the name
    is "" when there is none."""
    stripped = text.strip()
    if not stripped:
        return stripped, None, "", ""
    lines = _lines(stripped)
    first = lines[0].strip()
    block = _command_block(lines)
    if block is not None:
        kept, block_code, signal = block
        return "\n".join(kept), block_code, signal, "command_block"
    match = _TIMED_OUT.match(stripped)
    if match:
        rest = stripped[match.end():]
        opened, closed = rest.find("<output>"), rest.rfind("</output>")
        if opened != -1 and closed > opened:
            rest = rest[opened + len("<output>"):closed]
        return rest, None, "timeout", "timed_out"
    match = _JSON_ERROR.match(stripped)
    if match:
        return f"{match.group(1)}:\n{match.group(2)}", None, "", "json_error"
    if first.startswith("Error: ") and len(first) > 7:
        return stripped[len("Error: "):], None, "", "error_prefix"
    if first == "Error:" and len(lines) > 1:
        return "\n".join(lines[1:]), None, "", "error_prefix"
    match = _RETURNCODE.match(first)
    if match:
        rest = stripped[match.end():]
        return rest, int(match.group(1)), "", "returncode"
    match = _EXIT_LINE.fullmatch(first)
    if match:
        return "\n".join(lines[1:]), int(match.group(1)), "", "exit_header"
    if _SUMMARY_LINE.fullmatch(first) and len(lines) > 1 and any(
            line.strip() == "Output:" or line.startswith("Output: ") for line in lines[1:12]):
        code: int | None = None
        for i, line in enumerate(lines):
            exit_match = _EXIT_LINE.fullmatch(line.strip())
            if exit_match:
                code = int(exit_match.group(1))
            if line.strip() == "Output:":
                return "\n".join(lines[i + 1:]), code, "", "exec_summary"
            if line.startswith("Output: "):
                return "\n".join([line[len("Output: "):], *lines[i + 1:]]), code, "", "exec_summary"
            if not _SUMMARY_LINE.fullmatch(line.strip()):
                break
    if _RESULT_HEADER.fullmatch(first):
        return "\n".join(lines[1:]), None, "", "result_header"
    if _FAILED_WITH.fullmatch(first):
        return "\n".join(lines[1:]), None, "", "failed_with"
    match = _OPEN_TAG.match(stripped)
    if match:
        rest = stripped[match.end():]
        close = f"</{match.group(1)}>"
        if rest.rstrip().endswith(close):
            rest = rest.rstrip()[: -len(close)]
        return rest, None, "", match.group(1)
    last = lines[-1].strip()
    close_match = _CLOSE_TAG.fullmatch(last)
    if close_match and len(lines) > 1:
        return "\n".join(lines[:-1]), None, "", close_match.group(1)
    match = _EXIT_LINE.fullmatch(last)
    if match and len(lines) > 1:
        return "\n".join(lines[:-1]), int(match.group(1)), "", "exit_trailer"
    return stripped, None, "", ""


def unwrap(text: str) -> Unwrapped:
    """The inner text of a tool result, with the exit code and signal its wrappers report."""
    current = text.strip()
    exit_code: int | None = None
    signal = ""
    wrappers: list[str] = []
    while True:
        # Every peel and every noise cut makes the text shorter, so this ends.
        rest, code, sig, name = _peel(current)
        if name:
            wrappers.append(name)
            if code is not None and exit_code is None:
                exit_code = code
            signal = signal or sig
            current = rest.strip()
            continue
        lines = _lines(current)
        kept = [line for line in lines if not _is_profile_noise(line)]
        if len(kept) == len(lines):
            break
        wrappers.append("profile_noise")
        current = "\n".join(kept).strip()
    return Unwrapped(current, exit_code, signal or signal_of(exit_code), tuple(wrappers))
