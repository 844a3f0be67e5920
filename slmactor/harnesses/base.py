"""The interface every harness room implements, and the default behaviour rooms inherit.

A harness is one agent program slmactor serves (Claude Code, Codex CLI, ...). Everything that is
particular to it — its hook events and payload fields, how a tool response says "failed", the
JSON it reads back, its tool names and their families, its edit tools for pre-flight, its
transcript format, its trajectory format, its settings files — lives in its room
(`slmactor/harnesses/<name>.py`) as a subclass of `Harness`. The generic machinery (`hooks/`,
`hook install`, working memory, the session report, `metrics replay`) asks the room through the
registry (`slmactor.harnesses.get`) and never branches on a harness itself.

Cheap to import on purpose: a hook process for an event with nothing to do reads only the room's
event table, so nothing here (nor in a room) imports `typing`, `json`, `re` or `dataclasses` at
module level; the methods that need them import them when called.

Actions (what slmactor does with an event): RECORD a finished tool call, PREFLIGHT a call about
to run, CONTEXT (session start, prompt: the memory block), STOP (end of a turn), END (end of the
session), IGNORE.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from pathlib import Path
    from typing import Any

    from slmactor.logic.failures.call import ToolCall
    from slmactor.logic.loop.recorded import SessionRecord
    from slmactor.logic.loop.replay import Trajectory
    from slmactor.logic.loop.transcripts import TranscriptStats


RECORD = "record"
PREFLIGHT = "preflight"
CONTEXT = "context"
STOP = "stop"
END = "end"
IGNORE = ""

#: What a file is to a harness (`Harness.sniff_session`).
SESSION = "session"
COMPANION = "companion"

#: Hook-level kinds of a tool call (what a hook may do with it).
EDIT = "edit"
READ = "read"
SHELL = "shell"
#: Tool families (with EDIT, READ, SHELL): what a call is for, in every harness's vocabulary, so
#: a failure and its repair learned on one harness's tool serve another's tool of that family.
SEARCH = "search"
WEB = "web"
TASK = "task"
FAMILIES = (EDIT, READ, SHELL, SEARCH, WEB, TASK)

#: Argument key → the shared word it carries (`slmactor.logic.failures.call.SHARED`), for the
#: keys most harnesses spell the shared way; a room adds its own (`Harness.arg_words`).
SHARED_ARG_WORDS: dict[str, str] = {
    "path": "path", "command": "command", "cmd": "command", "content": "content",
    "patch": "patch", "old_str": "old_str", "new_str": "new_str", "replace_all": "replace_all",
}


def read_regular_file(path: str, limit: int, *, tail: bool = False) -> bytes | None:
    """Up to `limit` bytes of the regular file at `path` (its end with `tail`), None when it is
    not one or cannot be read. Opened non-blocking: a FIFO named in a payload must not hang a
    hook."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None
            if tail:
                fh.seek(max(0, info.st_size - limit))
            return fh.read(limit)
        except OSError:
            return None


def text(value: Any) -> str:
    """`value` if it is a string, else ""."""
    return value if isinstance(value, str) else ""


def content_text(value: Any) -> str:
    """Text of a string, or of a list of `{text}` parts (content blocks of most APIs)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return text(value.get("text"))
    if isinstance(value, list):
        return "\n".join(t for t in (content_text(v) for v in value) if t)
    return ""


#: A read tool's range words (Claude Code's and older Gemini's `offset`/`limit`; Gemini 0.61's and
#: Cline 3's `start_line`/`end_line`).
RANGE_WORDS = ("offset", "limit", "start_line", "end_line")


def asked_range(args: Any) -> bool:
    """Whether a read's arguments name a range (at any depth: Cline's `files` entries; a value
    given as JSON text, as Cline's `parameters` carry them): such a read got the part it asked
    for, whatever the harness says of the rest of the file."""
    if isinstance(args, str) and args.lstrip()[:1] in ("{", "["):
        import json

        try:
            args = json.loads(args)
        except ValueError:
            return False
    if isinstance(args, dict):
        return any(args.get(k) is not None and k in RANGE_WORDS for k in args) or any(
            asked_range(v) for v in args.values() if isinstance(v, (dict, list, str)))
    if isinstance(args, list):
        return any(asked_range(v) for v in args)
    return False


def error_text(value: Any) -> str:
    """The message of an error given as a string or as `{message|error|reason}`."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("message", "error", "reason"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return ""


_EXIT_KEYS = ("exit_code", "exitCode", "returncode", "return_code")


def generic_outcome(response: Any) -> tuple[bool, str]:
    """(ok, error) from a dict tool response: explicit failure flags, an error, a non-zero exit."""
    if not isinstance(response, dict):
        return True, ""
    error = response.get("error")
    if error and error_text(error):
        return False, error_text(error)
    if response.get("success") is False or response.get("is_error") is True or response.get("isError") is True:
        found = (text(response.get("stderr")) or text(response.get("message"))
                 or content_text(response.get("content")) or text(response.get("output")))
        return False, found or "the tool reported failure"
    for key in _EXIT_KEYS:
        code = response.get(key)
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            output = text(response.get("stderr")).strip() or content_text(response.get("content")).strip()
            return False, output or f"exit status {code}"
    if response.get("interrupted") is True:
        return False, "interrupted"
    return True, ""


def _json_object(value: str) -> dict[str, Any] | None:
    """`value` parsed as a JSON object (None when it is not one)."""
    import json

    if not value.lstrip().startswith("{"):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def first_json_line(head: str) -> dict[str, Any] | None:
    """The first line of a file's head parsed as a JSON object (None when it is none)."""
    import json

    line = head.lstrip().split("\n", 1)[0]
    try:
        value = json.loads(line, strict=False)
    except (ValueError, RecursionError):  # a line nested past the stack is no session's first
        return None
    return value if isinstance(value, dict) else None


def compact_json(value: Any) -> str:
    """A tool input as the ledger keeps it: a string as is, anything else as compact JSON."""
    import json

    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def command_of(tool_input: Mapping[str, Any]) -> str:
    """The shell command a tool input runs ("" when it names none): `command` / `cmd` as a
    string or an argv (a `sh -c` script kept as the script), or a list of `commands`."""
    command = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        from slmactor.logic.failures.call import command_text

        return command_text(command)
    commands = tool_input.get("commands")  # a JSON list of commands, as a string
    if isinstance(commands, str) and commands.startswith("["):
        import contextlib
        import json

        with contextlib.suppress(ValueError):  # not a list after all: the string is the command
            commands = json.loads(commands)
    if isinstance(commands, list):
        return " && ".join(c if isinstance(c, str) else compact_json(c) for c in commands)
    return text(command) or text(commands)


def serves(tool_input: Any, said: str) -> bool:
    """Whether a shell call the harness kept running (it outlived its time limit) ran a server:
    its command serves, or its output says it listens. A long build the harness kept running is
    no failure; a server in the foreground did not return."""
    from slmactor.logic.failures.runtimes import is_server_command, says_listening
    from slmactor.logic.failures.verdict import command_heads

    command = command_of(tool_input) if isinstance(tool_input, dict) else ""
    return says_listening(said.lower()) or bool(command) and is_server_command(
        command, command_heads(command))


#: Longest error text a call keeps (the wire cap of `record_tool`).
MAX_CALL_ERROR = 16_000
#: Longest command a call keeps (the wire cap of `record_tool`'s command).
MAX_CALL_COMMAND = 4_000
#: Longest path a call keeps.
MAX_CALL_PATH = 4_000


def clip(value: str, limit: int) -> str:
    """`value` cut to `limit` characters, never through a secret (the daemon redacts what it is
    sent; a cut through a secret would leave it unrecognisable)."""
    if len(value) <= limit:
        return value
    from slmactor.logic.text.safecut import cut_chars

    return cut_chars(value, limit - 1) + "…"


def shared_json(call: ToolCall) -> str:
    """A call's arguments as the ledger keeps them: compact JSON in the shared words (what
    reflection and typed repairs read), or the unparsed text as it came."""
    import json

    if call.unparsed:
        return call.unparsed
    if not call.args:
        return ""
    return json.dumps(call.shared(), ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                      default=str)


def call_entry(room: Harness, *, at: float, call_id: str, tool: str, tool_input: Any, ok: bool,
               error: str = "", exit_code: int | None = None) -> dict[str, Any]:
    """One tool call a transcript shows, as a session-ledger `call` entry (unredacted: the
    ledger's writer redacts): the room's `tool_call`, then `ledger_entry`."""
    call = room.tool_call(tool, tool_input, ok=ok, error=error, exit_code=exit_code,
                          call_id=call_id)
    return ledger_entry(call, at)


def ledger_entry(call: ToolCall, at: float) -> dict[str, Any]:
    """A call as a session-ledger `call` entry: its tool and family, first path, arguments in the
    shared words, shell command, outcome and exit code (unredacted)."""
    entry: dict[str, Any] = {"e": "call", "at": at, "tool": call.tool, "ok": call.ok}
    if call.call_id:
        entry["id"] = call.call_id
    if call.family:
        entry["family"] = call.family
    if call.paths:
        entry["path"] = call.paths[0]
    args = shared_json(call)
    if args:
        entry["args"] = args
    if call.command:
        entry["command"] = call.command
    if not call.ok:
        entry["error"] = call.error or (
            f"exit status {call.exit_code}" if call.exit_code is not None else "the tool failed")
    if call.exit_code is not None:
        entry["exit_code"] = call.exit_code
    return entry


#: `*** Update File: p`, `*** Add File: p`, `*** Delete File: p`, `*** Move to: p`: the headers
#: of the `*** Begin Patch` envelope (a patch format several harnesses' tools take).
_PATCH_HEADER = r"(?m)^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$"


def patch_paths(patch: str) -> tuple[str, ...]:
    """Every file a `*** Begin Patch` envelope names, in order, once each."""
    import re

    seen: dict[str, None] = {}
    for match in re.finditer(_PATCH_HEADER, patch):
        seen.setdefault((match.group(1) or match.group(2)).strip(), None)
    return tuple(p for p in seen if p)


class EditTool:
    """How one harness's search/replace edit tool names its fields and words its not-found error
    (what pre-flight needs to check an edit against the file and to rewrite it)."""

    __slots__ = ("error", "expected", "new", "normalizes_crlf", "old", "path", "replace_all")

    def __init__(self, error: str, old: str = "old_string", new: str = "new_string",
                 replace_all: str = "replace_all", expected: str = "", *, path: str = "file_path",
                 normalizes_crlf: bool = True) -> None:
        #: The error the harness would report, `{old}` and `{path}` filled in (so a failure
        #: pre-flight foresees is fingerprinted as the one a failed call of this tool records).
        self.error = error
        self.old = old
        self.new = new
        self.replace_all = replace_all
        self.expected = expected
        self.path = path
        #: The harness compares with the file's line endings normalised to `\n`.
        self.normalizes_crlf = normalizes_crlf


class JsonSettings:
    """A harness that reads its hooks from a JSON settings file under a `"hooks"` key."""

    __slots__ = ("comments", "folder", "name", "user_env")

    def __init__(self, folder: str, name: str, user_env: str = "", *, comments: bool = False) -> None:
        self.folder = folder
        self.name = name
        #: An environment variable that moves the user-scope folder (its value replaces `~/folder`).
        self.user_env = user_env
        #: The harness reads the file with `//` and `/* */` comments allowed (they are kept).
        self.comments = comments


class ScriptPerEvent:
    """A harness that runs one executable per event, named after the event, from a folder."""

    __slots__ = ("fallback", "project", "suffixes", "user")

    def __init__(self, project: tuple[str, ...], user: tuple[str, ...], *,
                 suffixes: tuple[str, ...] = ("",), fallback: tuple[str, ...] = ()) -> None:
        self.project = project
        self.user = user
        #: The names a file may have for one event (`Event` + suffix), in the order we use them:
        #: a harness that runs every file so named lets ours sit beside a user's own.
        self.suffixes = suffixes
        #: The project folder to use when a part of `project` is a file, not a folder.
        self.fallback = fallback


class PluginFile:
    """A harness that loads a plugin file of its own language from a folder: slmactor's hooks
    are one generated file (`Harness.plugin_text`) that runs `slmactor hook` for each event."""

    __slots__ = ("name", "project", "user", "user_env")

    def __init__(self, project: tuple[str, ...], user: tuple[str, ...], name: str, *,
                 user_env: str = "") -> None:
        #: The plugin folder, under the project and under the home.
        self.project = project
        self.user = user
        #: The file's name in that folder.
        self.name = name
        #: An environment variable whose value replaces the first part of `user` (its config
        #: home, `$XDG_CONFIG_HOME` for `~/.config`).
        self.user_env = user_env


class Harness:
    """One harness. Class attributes are its tables; methods its behaviour (defaults: the
    Claude-Code-like hook shape most harnesses copied). Rooms subclass and override."""

    #: Registry name (`slmactor hook <name>`, `--harness <name>`).
    name = ""
    #: How people call it.
    title = ""
    #: Event → action, for every hook event slmactor handles (any other: IGNORE).
    events: Mapping[str, str] = {}
    #: Events whose output may carry text for the model.
    context_events: frozenset[str] = frozenset()
    #: Events whose output may replace the tool's input.
    input_events: frozenset[str] = frozenset()
    #: Events that end a session (a harness without one ends segments on STOP).
    end_events: frozenset[str] = frozenset()
    #: End events whose answer the harness ignores (it only waits for the process to exit):
    #: `hook install` runs them with `--background`, which answers at once and reports the
    #: session from a detached process, so the harness exits without waiting for the report.
    background_events: frozenset[str] = frozenset()
    #: Context events at which the daemon may be started (a session's first event).
    start_events: frozenset[str] = frozenset()
    #: Payload key of the event name (the command line names it too; this is the fallback).
    event_key = "hook_event_name"
    #: The payload keys this room's methods read (the defaults read Claude-Code-like payloads):
    #: no module outside the rooms uses one as a key (`tests/harnesses`).
    payload_keys: frozenset[str] = frozenset({
        "tool_use_id", "tool_name", "tool_input", "tool_response", "transcript_path",
        "stop_hook_active", "hook_event_name"})
    #: Environment variable naming the project root, and the payload key that does otherwise.
    project_env = ""
    project_key = "cwd"
    #: Tool name → EDIT / READ / SHELL, as the hook payloads spell it.
    tool_kinds: Mapping[str, str] = {}
    #: Tools that edit unless their `command` is `view` (and are search/replace only for
    #: `str_replace`).
    mode_editors: frozenset[str] = frozenset()
    #: Tool → (old key, new key, replace-all key) of its string-replacing edit.
    edit_keys: Mapping[str, tuple[str, str, str]] = {}
    #: Pre-flight: the search/replace tools it may rewrite, and its patch tools.
    preflight_edits: Mapping[str, EditTool] = {}
    preflight_patches: frozenset[str] = frozenset()
    #: Whether a shell call may be rewritten before it runs: only where `preflight_output` keeps
    #: the harness's own permission rules (no permission decision of ours).
    preflight_shell = False
    #: Pre-flight of reads: the size (bytes) over which the harness refuses a whole-file read
    #: (0: it reads any size, or cuts the read itself), and its read tool's path key.
    read_limit = 0
    read_path_key = ""
    #: The tools whose calls pre-flight may rewrite (the pre-tool event's matcher): the shell
    #: tools that run a command line, and the read tools bounded over `read_limit`.
    preflight_shells: frozenset[str] = frozenset()
    preflight_reads: frozenset[str] = frozenset()
    #: Whether the model reads a rewrite's announcement only after the call (the pre-tool
    #: output cannot carry text to it): the post-tool event of the rewritten call says it.
    says_rewrite_after = False
    #: The payload key naming the tool (what the pre-flight gate finds an edit by).
    tool_name_key = "tool_name"
    #: The error a patch tool reports for a hunk not in the file (`{path}`, `{old}` filled in).
    patch_error = ""
    #: Advice for a shell call refused by the harness's own sandbox, where the harness lets a
    #: call ask to run outside it ("" where it has no such request): in place of the shipped
    #: "do not retry the blocked command", which there is the wrong advice.
    sandbox_escape = ""
    #: Working memory's tool classes: lower-case names per class, and mode tools
    #: (sub-command → class).
    read_tools: tuple[str, ...] = ()
    edit_tools: tuple[str, ...] = ()
    shell_tools: tuple[str, ...] = ()
    mode_tools: Mapping[str, Mapping[str, str]] = {}
    #: Lower-case edit tool → the edit format it stands for (search_replace / apply_patch /
    #: whole_file: the arms of the `edit_format` decision).
    edit_formats: Mapping[str, str] = {}
    #: Tool name as the harness spells it → its family (EDIT, READ, SHELL, SEARCH, WEB, TASK):
    #: every tool the harness has that slmactor may see fail.
    families: Mapping[str, str] = {}
    #: Argument key → the shared word it carries (`logic.failures.call.SHARED`: path, old_str,
    #: new_str, replace_all, expected, content, command, patch), for every tool of the harness;
    #: the first key of this table a call has wins a word. The shared modules read a call's
    #: arguments in these words only (`ToolCall.shared`).
    arg_words: Mapping[str, str] = SHARED_ARG_WORDS
    #: Where one tool spells a shared meaning its own way: tool → (key → shared word).
    tool_words: Mapping[str, Mapping[str, str]] = {}
    #: slmcode's tool and field names (`ws_read`, `old_str`) → this harness's, for advice text.
    vocabulary: Mapping[str, str] = {}
    #: Where one tool of the harness comes with other words than `vocabulary` (another version's
    #: tool set): failed tool → the names advice on it uses instead.
    tool_vocabulary: Mapping[str, Mapping[str, str]] = {}
    #: Where its hooks are configured (None: no hooks to install).
    settings: JsonSettings | ScriptPerEvent | PluginFile | None = None
    #: Install: events whose handler may run in the background (output ignored).
    async_events: frozenset[str] = frozenset()
    #: Install: the matcher a tool event's group gets ("" = none).
    tool_matcher = "*"
    #: What the user must do after an install.
    next_step = ""

    # ------------------------------------------------------------------------- hook events

    def has_work(self, event: str) -> bool:
        """Whether slmactor does anything for this event (else the hook answers neutrally at
        once, and `hook install` does not register it): a STOP only where the harness has no END
        event, a PREFLIGHT only where the harness accepts a rewritten input."""
        action = self.events.get(event, IGNORE)
        if action == STOP:
            return END not in self.events.values()
        if action == PREFLIGHT:
            return event in self.input_events
        return action != IGNORE

    def is_stop_rerun(self, event: str, payload: Mapping[str, Any]) -> bool:
        """A turn's end that a stop hook caused by continuing the turn (nothing new to report)."""
        return self.events.get(event) == STOP and payload.get("stop_hook_active") is True

    def neutral_json(self) -> str:
        """The output that changes nothing, as text."""
        return "{}"

    def neutral(self) -> dict[str, Any]:
        """The output that changes nothing."""
        return {}

    def event_of(self, payload: Mapping[str, Any]) -> str:
        """The event a payload names (the command line names it too; this is the fallback)."""
        return text(payload.get(self.event_key))

    def call_id(self, payload: Mapping[str, Any]) -> str:
        """The id of the tool call a tool event reports ("" when none): the one its transcript
        names the call by, so a call seen by a hook and in the transcript is counted once."""
        return text(payload.get("tool_use_id"))

    def tool_fields(self, payload: Mapping[str, Any]) -> tuple[str, Any, Mapping[str, Any]]:
        """(tool name, raw input, input as a mapping) of a tool event."""
        tool, raw = text(payload.get("tool_name")), payload.get("tool_input")
        return tool.strip(), raw, raw if isinstance(raw, dict) else {}

    # ---------------------------------------------------------------------------- a tool call

    def words(self, tool: str, tool_input: Mapping[str, Any]) -> dict[str, str]:
        """Shared word → the key of `tool_input` that carries it, for a call of `tool`: the word
        itself where the call has it, else its `edit_keys` (the key the tool takes, also where
        the call left it out), then `tool_words`, then `arg_words`."""
        from slmactor.logic.failures.call import NEW, OLD, REPLACE_ALL, SHARED

        # A shared word the call spells itself carries its meaning (a library client naming the
        # tool; and no key is ever renamed onto another that is there).
        found = {word: word for word in SHARED if word in tool_input}
        # The tool's own key, also where the call left it out (a repair may set it).
        edit = self.edit_keys.get(tool, ("", "", ""))
        for word, key in zip((OLD, NEW, REPLACE_ALL), edit, strict=True):
            if key and word not in found:
                found[word] = key
        for table in (self.tool_words.get(tool, {}), self.arg_words):
            for key, word in table.items():
                if word not in found and key in tool_input:
                    found[word] = key
        return found

    def tool_call(self, tool: str, tool_input: Any, *, ok: bool = True, error: str = "",
                  exit_code: int | None = None, call_id: str = "") -> ToolCall:
        """The one `ToolCall` of a call of `tool` with `tool_input` (a map, JSON text, or the
        text of a shell action), however it reached us: a hook payload (`normalize`), a
        transcript or a trajectory (`call_entry`), a replayed step. Every field is clipped below
        the wire caps."""
        from slmactor.logic.failures.call import ToolCall

        tool = clip(tool.strip(), 200)
        unparsed = ""
        if isinstance(tool_input, str):
            parsed = _json_object(tool_input)
            if parsed is None:
                unparsed = tool_input
            tool_input = parsed if parsed is not None else {}
        mapping: Mapping[str, Any] = tool_input if isinstance(tool_input, dict) else {}
        kind = self.tool_kind(tool, mapping)
        family = self.families.get(tool, "")
        if not family:
            from slmactor import harnesses

            family = harnesses.tool_family(tool)
        shell = kind == SHELL or family == SHELL
        command = command_of(mapping) if shell else ""
        if shell and not command and unparsed:
            command, unparsed = unparsed, ""  # a shell action as the trajectory spells it
        paths = tuple(clip(p, MAX_CALL_PATH) for p in self.paths(tool, mapping))
        words = self.words(tool, mapping)
        if not shell and words.get("command") in ("command", "cmd"):
            del words["command"]  # a mode editor's sub-command (`view`), not a shell command
        return ToolCall(
            tool=tool, family=family, kind=kind, args=mapping,
            words=words, command=clip(command, MAX_CALL_COMMAND),
            paths=paths, ok=ok, error="" if ok else clip(error.strip(), MAX_CALL_ERROR),
            exit_code=exit_code, call_id=clip(call_id, 200),
            unparsed=clip(unparsed, MAX_CALL_ERROR))

    def normalize(self, event: str, payload: Mapping[str, Any]) -> ToolCall | None:
        """The tool call a RECORD or PREFLIGHT event's payload reports (None when it names no
        tool): a finished call with its outcome, a call about to run as ok."""
        tool, raw, _ = self.tool_fields(payload)
        if not tool:
            return None
        ok, error = (self.outcome(tool, event, payload) if self.events.get(event) == RECORD
                     else (True, ""))
        return self.tool_call(tool, raw if raw not in (None, "") else {}, ok=ok, error=error,
                              exit_code=self.exit_code(tool, payload), call_id=self.call_id(payload))

    def exit_code(self, tool: str, payload: Mapping[str, Any]) -> int | None:
        """The exit status a tool event's response reports as a field (None when none)."""
        response = payload.get("tool_response")
        if isinstance(response, dict):
            for key in _EXIT_KEYS:
                code = response.get(key)
                if isinstance(code, int) and not isinstance(code, bool):
                    return code
        return None

    def project(self, payload: Mapping[str, Any], env: Mapping[str, str], cwd: str) -> str:
        """The project root the harness works in: its env var first (the root the harness was
        started in, while a payload's cwd follows `cd`), else the payload's."""
        from_env = env.get(self.project_env, "") if self.project_env else ""
        return from_env or text(payload.get(self.project_key)) or cwd

    def run_id(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> str:
        """The session id ("" when there is none)."""
        return text(payload.get("session_id"))

    def prompt(self, payload: Mapping[str, Any]) -> str:
        """The user's prompt of a context event ("" when it has none)."""
        return text(payload.get("prompt"))

    def outcome(self, tool: str, event: str, payload: Mapping[str, Any]) -> tuple[bool, str]:
        """(ok, error) of the finished call a RECORD event reports."""
        return generic_outcome(payload.get("tool_response"))

    def paths(self, tool: str, tool_input: Mapping[str, Any]) -> tuple[str, ...]:
        """Every file the call names (a patch envelope's headers, else its path key)."""
        for key in ("command", "input", "patch"):
            value = tool_input.get(key)
            if isinstance(value, str) and "*** Begin Patch" in value:
                return patch_paths(value)
        path_key = self.words(tool, tool_input).get("path")
        value = tool_input.get(path_key) if path_key else None
        return (value,) if isinstance(value, str) and value else ()

    def tool_kind(self, tool: str, tool_input: Mapping[str, Any]) -> str:
        """EDIT / READ / SHELL / "" for a tool call (a mode editor by its sub-command)."""
        kind = self.tool_kinds.get(tool, "")
        if kind == EDIT and tool in self.mode_editors and tool_input.get("command") == "view":
            return READ
        return kind

    def is_search_replace(self, tool: str, tool_input: Mapping[str, Any]) -> bool:
        """Whether this call of an `edit_keys` tool is a string replacement."""
        return tool not in self.mode_editors or tool_input.get("command") == "str_replace"

    def truncation(self, tool: str, event: str, payload: Mapping[str, Any]) -> str:
        """The harness's own notice that it cut a successful call's output ("" when it did not):
        the output was too large to show, and the call is recorded as such."""
        return ""

    def outlived(self, tool: str, event: str, payload: Mapping[str, Any]) -> str:
        """The harness's own notice that a shell call outlived its time limit and the harness
        kept it running in the background ("" when it did not), with the output it had printed:
        the command did not return, and the call is recorded as such."""
        return ""

    def output(self, event: str, context: str, new_input: Mapping[str, Any] | None) -> dict[str, Any]:
        """The JSON the harness reads on stdout; `context` and `new_input` are already limited to
        the events that take them."""
        if not context and new_input is None:
            return {}
        specific: dict[str, Any] = {"hookEventName": event}
        if new_input is not None:
            specific["updatedInput"] = dict(new_input)
        if context:
            specific["additionalContext"] = context
        return {"hookSpecificOutput": specific}

    def failure_output(self, event: str, error: str, advice: str,
                       payload: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        """The output that carries `advice` to the model after a failed call, where the usual
        context channel does not reach it (None: the usual `output` does). `payload` is the
        hook's input, for a room whose answer must give back what the tool said, whole."""
        return None

    # --------------------------------------------------------------------------- pre-flight

    @property
    def pre_event(self) -> str:
        """The pre-tool event whose output can replace the input ("" when none can)."""
        for event, action in self.events.items():
            if action == PREFLIGHT and event in self.input_events:
                return event
        return ""

    def is_preflight_tool(self, tool: object) -> bool:
        """Whether pre-flight looks at calls of this tool (its edit and patch tools only)."""
        return isinstance(tool, str) and (tool in self.preflight_edits or tool in self.preflight_patches)

    def preflight_tools(self) -> tuple[str, ...]:
        """Every tool pre-flight looks at: edits and patches, shell tools where a shell call may
        be rewritten, read tools where a read over the limit is bounded."""
        tools = {*self.preflight_edits, *self.preflight_patches}
        if self.preflight_shell:
            tools |= self.preflight_shells
        if self.read_limit:
            tools |= self.preflight_reads
        return tuple(sorted(tools))

    def gate_always(self) -> tuple[str, ...]:
        """The payload fragments that send a call through the pre-flight gate whatever the
        project learned (an edit: pre-flight reads its file), as the harness writes its JSON."""
        return tuple(f'"{self.tool_name_key}":{sep}"{tool}"'
                     for tool in sorted({*self.preflight_edits, *self.preflight_patches})
                     for sep in ("", " "))

    def with_command(self, args: Mapping[str, Any], command: str) -> dict[str, Any] | None:
        """A shell tool's arguments running `command` instead, in the form its command had (text,
        an argv, a one-command list); None when the call's form cannot say it (several commands
        in a list: one rewrite of them all would change what runs)."""
        for key in ("command", "cmd"):
            before = args.get(key)
            if isinstance(before, str):
                return {**args, key: command}
            if isinstance(before, list) and len(before) == 3 and before[1] in ("-c", "-lc"):
                return {**args, key: [before[0], before[1], command]}  # an `sh -c` argv
            if isinstance(before, list):
                import shlex

                try:
                    return {**args, key: shlex.split(command)}
                except ValueError:
                    return None
        listed = args.get("commands")
        if isinstance(listed, str) and listed.startswith("["):
            import json

            try:
                listed = json.loads(listed)
            except ValueError:
                return None
        if isinstance(listed, list) and len(listed) == 1:
            return {**args, "commands": [command]}
        return None

    def bounded_read(self, args: Mapping[str, Any], lines: int) -> dict[str, Any] | None:
        """The read's arguments with the harness's own range set to the first `lines` lines
        (None: the read already names a range, or the harness has none)."""
        return None

    def preflight_output(self, payload: Mapping[str, Any], updated: dict[str, Any],
                         reason: str) -> dict[str, Any]:
        """What the hook prints to run the call with `updated` as its input."""
        # The reason beside an `allow` is the harness's to show (Codex: its event log); the
        # model reads the rewrite as the hook's additional context.
        return {"hookSpecificOutput": {"hookEventName": self.pre_event, "permissionDecision": "allow",
                                       "permissionDecisionReason": reason, "updatedInput": updated,
                                       "additionalContext": reason}}

    # --------------------------------------------------------------------------- transcripts

    def transcript_stats(self, path: str, lines: Iterable[str], since: float) -> TranscriptStats | None:
        """`TranscriptStats` of the session transcript at `path` (its lines given), of what
        happened after `since`; None when this harness writes none we read."""
        return None

    def transcript_path(self, payload: Mapping[str, Any]) -> str:
        """The session transcript a hook payload names ("" when none)."""
        return text(payload.get("transcript_path"))

    def transcript_suffix(self) -> str:
        """The file ending of the transcripts `transcript_stats` reads ("" = none)."""
        return ""

    # --------------------------------------------------------------------- recorded sessions

    def session_roots(self, env: Mapping[str, str], home: Path) -> tuple[Path, ...]:
        """Where the harness keeps its recorded sessions on this machine (what `import
        sessions` reads by default); folders that may not exist."""
        return ()

    def sniff_session(self, name: str, head: str) -> str:
        """What a file is to this harness, from its name and its first bytes (decoded):
        SESSION (a recorded session `read_sessions` reads), COMPANION (a file of a session that
        is read beside another, e.g. a task's UI log), or "" (not this harness's)."""
        if self.trajectory_suffixes and name.endswith(self.trajectory_suffixes):
            return SESSION
        return ""

    def read_sessions(self, path: str, lines: Callable[[], Iterable[str]]) -> Iterator[SessionRecord]:
        """Every `SessionRecord` of the recorded session file at `path`; `lines()` opens it
        again (bounded) as lines with their line ends. Nothing for a file that is none."""
        if not self.trajectory_hints:
            return iter(())
        return trajectory_sessions(self, path, lines)

    #: File endings of this harness's trajectory files (a sure sign, no sniffing needed).
    trajectory_suffixes: tuple[str, ...] = ()

    # -------------------------------------------------------------------------- trajectories

    #: How an error names its trajectory formats ("SWE-agent .traj (trajectory, info)").
    trajectory_hints: tuple[str, ...] = ()

    def trajectory_format(self, data: Any) -> str:
        """The name of this harness's trajectory format `data` is in, or ""."""
        return ""

    def trajectory(self, data: Any, default_id: str) -> Trajectory:
        """A replayable `Trajectory` of `data` (a format `trajectory_format` recognised)."""
        raise ValueError(f"{self.name} has no trajectory format")

    # ------------------------------------------------------------------------------ install

    def settings_path(self, scope: str, project: Path, home: Path, env: Mapping[str, str]) -> Path:
        """The settings file (or, for a script-per-event harness, the folder) of `scope`
        ("project" or "user")."""
        from pathlib import Path as _Path

        spec = self.settings
        if spec is None:
            raise ValueError(f"{self.name} has no hook settings")
        user = scope == "user"
        if isinstance(spec, PluginFile):
            if user and spec.user_env and env.get(spec.user_env):
                return _Path(env[spec.user_env]).joinpath(*spec.user[1:], spec.name)
            return (home if user else project).joinpath(*(spec.user if user else spec.project), spec.name)
        if isinstance(spec, ScriptPerEvent):
            if not user and spec.fallback and _blocked(project, spec.project):
                return project.joinpath(*spec.fallback)
            return (home if user else project).joinpath(*(spec.user if user else spec.project))
        if user and spec.user_env and env.get(spec.user_env):
            return _Path(env[spec.user_env]) / spec.name
        return (home if user else project) / spec.folder / spec.name

    def settings_path_note(self, scope: str, project: Path, home: Path, env: Mapping[str, str]) -> str:
        """One line when `settings_path` is not the usual place (and why), else ""."""
        spec = self.settings
        if isinstance(spec, ScriptPerEvent) and scope != "user" and spec.fallback \
                and _blocked(project, spec.project):
            first = project.joinpath(*spec.project)
            return (f"{first.parent} is a file, not a folder: left alone; the hooks go in "
                    f"{project.joinpath(*spec.fallback)}, which {self.title} also reads")
        return ""

    def settings_key(self, doc: Mapping[str, Any], container: Mapping[str, Any], event: str) -> str:
        """How the settings spell `event` as a key of `container` (the event → groups mapping)."""
        return event

    def settings_notes(self, doc: Mapping[str, Any], path: Path, ours: Callable[[Any], bool],
                       home: Path, env: Mapping[str, str]) -> tuple[str, ...]:
        """One line per setting of the user's that keeps hooks (or ours, `ours(handler)`) from
        running: installing never changes it."""
        return ()

    def hooks_elsewhere(self, path: Path, home: Path, env: Mapping[str, str]) -> tuple[tuple[Path, Any], ...]:
        """Other files the harness reads hooks from beside `path` (same scope): each file and its
        event → groups mapping."""
        return ()

    def inline_file(self, path: Path) -> Path | None:
        """A file beside `path` the harness also reads hooks from, where ours go instead when the
        user keeps theirs there (the harness then reads one representation), or None."""
        return None

    def inline_render(self, text: str, groups: Mapping[str, Any]) -> str | None:
        """`inline_file`'s `text` with our block (`groups`: event → our matcher group) in place
        of an earlier one — without it when `groups` is empty; None when that cannot be done
        safely (the file is then left alone)."""
        return None

    def handler(self, line: str, event: str, timeout_s: int) -> dict[str, Any]:
        """Our hook handler for `event` in the harness's settings; `line` is the command line
        that runs `slmactor hook <name> <event>`."""
        entry: dict[str, Any] = {"type": "command", "command": line, "timeout": timeout_s}
        if event in self.async_events:
            entry["async"] = True
        return entry

    def plugin_text(self, lines: Mapping[str, str], timeout_s: int) -> str:
        """The plugin file of a `PluginFile` harness: `lines` maps each event to the command line
        that runs `slmactor hook <name> <event>`; a hook still running after `timeout_s` is
        given up on (the harness goes on neutrally)."""
        raise ValueError(f"{self.name} loads no plugin file")

    def package(self, folder: str, hooks: dict[str, Any], server: dict[str, Any],
                about: Mapping[str, str]) -> dict[str, Any]:
        """The harness's own packaging of our hooks and MCP server (a plugin, an extension):
        file path under the output root → its JSON document. `folder` is where the package
        itself goes (a harness may also read a file beside it, a marketplace index); `hooks`
        the event → groups block `hook install` writes; `server` the MCP server's
        `{command, args}`; `about` its `name`, `version`, `description`, `author`, `license`.
        Empty: the harness has no packaging of its own."""
        return {}

    def hooks_container(self, doc: dict[str, Any], create: bool) -> dict[str, Any] | None:
        """The event → groups mapping of a settings document."""
        hooks = doc.get("hooks")
        if isinstance(hooks, dict):
            return hooks
        if hooks is None and create:
            doc["hooks"] = {}
            return doc["hooks"]  # type: ignore[no-any-return]
        return None


def _blocked(root: Path, parts: tuple[str, ...]) -> bool:
    """True when a folder on the way from `root` to `root/parts...` exists as a file."""
    at = root
    for part in parts[:-1]:
        at = at / part
        if at.is_file():
            return True
    return False


def trajectory_sessions(room: Harness, path: str, lines: Callable[[], Iterable[str]]) -> Iterator[SessionRecord]:
    """The session of a trajectory file (one JSON document, or JSON lines of events): its steps
    as ledger calls. A trajectory names no directory: `cwd` is "" (the user's `--project`)."""
    import json
    import os

    text_ = "".join(lines())
    try:
        data = json.loads(text_)
    except ValueError:
        try:  # JSON lines: the list of their values (an OpenHands SDK event log)
            data = [json.loads(line) for line in text_.splitlines() if line.strip()]
        except ValueError:
            return
    del text_
    if not room.trajectory_format(data):
        return
    stem = os.path.basename(path)
    for suffix in (".traj.json", ".traj", ".jsonl", ".json"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    yield trajectory_record(room, room.trajectory(data, stem), "")


def trajectory_record(room: Harness, trajectory: Trajectory, cwd: str) -> SessionRecord:
    """A replayable `Trajectory` as a `SessionRecord`: each tool step a ledger call."""
    from slmactor.logic.loop.recorded import SessionRecord
    from slmactor.logic.loop.transcripts import TranscriptStats

    calls = []
    tokens_in = tokens_out = llm_calls = 0
    for index, step in enumerate(trajectory.steps):
        tokens_in += step.tokens_in
        tokens_out += step.tokens_out
        if step.kind == "assistant":
            llm_calls += 1
        if step.kind != "tool" or not step.tool:
            continue
        # A trajectory has no clock: calls keep their order (ledger entries sort stably).
        entry = call_entry(room, at=0.0, call_id=f"{trajectory.id}:{index}", tool=step.tool,
                           tool_input=step.args, ok=step.ok, error=step.error)
        if step.args and "command" not in entry and not step.args.startswith("{"):
            entry["command"] = step.args  # a shell action, as the trajectory spells it
        calls.append(entry)
    stats = TranscriptStats(model=trajectory.model, llm_calls=llm_calls, tokens_in=tokens_in,
                            tokens_out=tokens_out, first_prompt=trajectory.query, calls=tuple(calls))
    return SessionRecord(session_id=trajectory.id, cwd=cwd, stats=stats)
