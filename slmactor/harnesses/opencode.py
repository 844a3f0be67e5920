"""OpenCode: its tools, its session storage, and the plugin events slmactor's hook reads.

Follows OpenCode's own source (anomalyco/opencode, formerly sst/opencode):

* **Tools** (`packages/opencode/src/tool/`): `bash` (`{command, timeout, description}`; it
  *completes* whatever the exit code — a failed command is `metadata.exit` ≠ 0, or `null` when
  it was killed at its timeout; `tool/bash.ts`), `read` (`filePath`, `offset`, `limit`), `edit`
  (`filePath`, `oldString`, `newString`, `replaceAll`), `multiedit`, `write` (`filePath`,
  `content`), `patch` / `apply_patch` (a `*** Begin Patch` envelope in `patchText`), `list`,
  `glob`, `grep`, `webfetch`, `websearch`, `codesearch`, `todowrite`, `todoread`, `task`,
  `skill`, `question`, `lsp`.
* **Storage**, under `$XDG_DATA_HOME/opencode` (`~/.local/share/opencode`): since 1.2 one SQLite
  database, `opencode.db` (`session/session.sql.ts`: table `session` with `id`, `directory`,
  `title`, `parent_id`, `time_created`/`time_updated` in ms; `message` with `id`,
  `session_id`, `time_created` and the message as JSON in `data`; `part` with `id`,
  `message_id`, `session_id` and the part as JSON in `data`); before it, JSON files
  (`storage/json-migration.ts`): `storage/session/<projectID>/<sessionID>.json`,
  `storage/message/<sessionID>/<messageID>.json`, `storage/part/<messageID>/<partID>.json`.
  A message (`session/message-v2.ts`) is a user's (`role: "user"`) or an assistant's
  (`role: "assistant"`, `modelID`, `providerID`, `path: {cwd, root}`, `tokens: {input, output,
  reasoning, cache: {read, write}}`, `time: {created, completed}`); a part is `text`, `tool`
  (`callID`, `tool`, `state: {status: pending|running|completed|error, input, output | error,
  metadata, time: {start, end}}`), `step-start`, `step-finish`, `patch`, ...
* **Exports**: the same messages as `{info, parts}` — one per line (what Entire's checkpoint
  branch keeps as an OpenCode session's `full.jsonl`, entireio/cli
  `hooks_opencode_transcript.go`), or `opencode export`'s `{info, messages: [{info, parts}]}`.
* **Plugin events** (`Hooks` of the npm package @opencode-ai/plugin 1.18.33,
  `dist/index.d.ts`): `tool.execute.after(input: {tool, sessionID, callID, args}, output:
  {title, output, metadata})` is a finished call (`bash` finishes whatever its exit code); a
  call that throws (an `edit` whose oldString is not in the file) fires none, and shows only as
  the `event` `message.part.updated` of its tool part in state `error`; `session.idle` (an
  `event`) ends a turn. slmactor's plugin (`opencode_plugin.js`, written by `hook install` into
  `.opencode/plugins/` or `$XDG_CONFIG_HOME/opencode/plugins/`) sends each as a payload
  `{hook_event_name: "tool.execute.after", session_id, cwd, tool_name, tool_input, tool_use_id,
  tool_response: {output, metadata, title} | {status: "error", error}}` or
  `{hook_event_name: "session.idle", session_id, cwd}` to `slmactor hook opencode`, and appends
  the advice the hook answers after a failed call to the output the model reads. Measured with
  the real binary (opencode-ai 1.18.33, tests/realcli/test_opencode_plugin.py).

The database is opened read-only (`mode=ro`; `immutable=1` when the folder is not writable), one
session read at a time, each message's parts at most `MAX_PARTS`.
"""

from __future__ import annotations

from slmactor.harnesses.base import (
    EDIT,
    READ,
    RECORD,
    SEARCH,
    SHARED_ARG_WORDS,
    SHELL,
    STOP,
    TASK,
    WEB,
    Harness,
    PluginFile,
    text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from pathlib import Path
    from typing import Any

    from slmactor.logic.loop.recorded import SessionRecord

#: The database's first bytes (sqlite.org/fileformat.html: "SQLite format 3\000").
SQLITE_MAGIC = "SQLite format 3\x00"
DB_NAME = "opencode.db"
#: Parts read per message, messages per session (a bound on one session's memory).
MAX_PARTS = 2000
MAX_MESSAGES = 20_000
#: Longest legacy JSON file read (a message or part).
MAX_JSON_FILE = 8 << 20


class OpenCode(Harness):
    name = "opencode"
    title = "OpenCode"
    events = {"tool.execute.after": RECORD, "session.idle": STOP}
    #: The plugin appends the hook's advice after a failed call to the output the model reads.
    context_events = frozenset({"tool.execute.after"})
    settings = PluginFile(project=(".opencode", "plugins"), user=(".config", "opencode", "plugins"),
                          name="slmactor.js", user_env="XDG_CONFIG_HOME")
    next_step = "OpenCode loads the plugin when it next starts (`opencode` or `opencode run`)."
    #: `session.idle` ends a turn: the session is reported in segments, one per turn (as Codex's
    #: `Stop`), so nothing waits for an end OpenCode never announces.
    end_events = frozenset({"session.idle"})
    #: `opencode run` exits right after `session.idle`, killing a hook still reporting: the
    #: report comes from a detached process and the plugin's answer at once.
    background_events = frozenset({"session.idle"})
    tool_kinds = {"edit": EDIT, "multiedit": EDIT, "write": EDIT, "patch": EDIT, "apply_patch": EDIT,
                  "read": READ, "bash": SHELL}
    edit_keys = {"edit": ("oldString", "newString", "replaceAll")}
    #: `read`/`write`/`edit {filePath}`, `apply_patch {patchText}` (`packages/opencode/src/tool/`).
    arg_words = {"filePath": "path", **SHARED_ARG_WORDS}
    tool_words = {"patch": {"patchText": "patch"}, "apply_patch": {"patchText": "patch"}}
    read_tools = ("list",)
    edit_tools = ("patch", "apply_patch", "multiedit")
    edit_formats = {"edit": "search_replace", "multiedit": "search_replace", "write": "whole_file",
                    "patch": "apply_patch", "apply_patch": "apply_patch"}
    #: OpenCode's built-in tools (`packages/opencode/src/tool/`).
    families = {"edit": EDIT, "write": EDIT, "patch": EDIT, "apply_patch": EDIT, "multiedit": EDIT,
                "read": READ, "bash": SHELL, "grep": SEARCH, "glob": SEARCH, "list": SEARCH,
                "codesearch": SEARCH, "lsp": SEARCH, "webfetch": WEB, "websearch": WEB,
                "todowrite": TASK, "todoread": TASK, "task": TASK, "skill": TASK, "question": TASK}
    vocabulary = {
        "ws_read": "read", "ws_edit": "edit", "ws_write": "write", "ws_patch": "edit",
        "ws_glob": "glob", "ws_list": "list", "ws_grep": "grep", "ws_shell": "bash",
        "old_str": "oldString", "new_str": "newString", "path": "filePath",
    }

    def paths(self, tool: str, tool_input: Mapping[str, Any]) -> tuple[str, ...]:
        patch = tool_input.get("patchText")
        if isinstance(patch, str) and "*** Begin Patch" in patch:
            from slmactor.harnesses.base import patch_paths

            return patch_paths(patch)
        return super().paths(tool, tool_input)

    def outcome(self, tool: str, event: str, payload: Mapping[str, Any]) -> tuple[bool, str]:
        response = payload.get("tool_response")
        return call_outcome(tool, response if isinstance(response, dict) else {})

    def call_id(self, payload: Mapping[str, Any]) -> str:
        return text(payload.get("tool_use_id"))

    def output(self, event: str, context: str, new_input: Mapping[str, Any] | None) -> dict[str, Any]:
        """What the plugin reads back: the advice to append to the call's output, if any."""
        return {"additionalContext": context} if context else {}

    def plugin_text(self, lines: Mapping[str, str], timeout_s: int) -> str:
        """`opencode_plugin.js` with the command line of each event and the hook's deadline."""
        import json
        from importlib import resources

        template = resources.files("slmactor.harnesses").joinpath("opencode_plugin.js").read_text("utf-8")
        return (template.replace("__SLMACTOR_COMMANDS__", json.dumps(dict(lines), indent=2, sort_keys=True))
                .replace("__SLMACTOR_TIMEOUT_MS__", str(int(timeout_s * 1000))))

    # --------------------------------------------------------------------- recorded sessions

    def session_roots(self, env: Mapping[str, str], home: Path) -> tuple[Path, ...]:
        from pathlib import Path as _Path

        data = _Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else home / ".local" / "share"
        return (data / "opencode",)

    def sniff_session(self, name: str, head: str) -> str:
        from slmactor.harnesses.base import COMPANION, SESSION, first_json_line

        if head.startswith(SQLITE_MAGIC):
            return SESSION if name == DB_NAME else ""
        if name.endswith(".json") and name.startswith(("msg_", "prt_")):
            opening = head.lstrip()[:4000]
            if opening.startswith("{") and ('"sessionID"' in opening or '"messageID"' in opening):
                return COMPANION  # read beside its session's file
        if name.endswith(".json") and name.startswith("ses_"):
            opening = head.lstrip()[:4000]
            return SESSION if opening.startswith("{") and '"directory"' in opening else ""
        if name.endswith((".json", ".jsonl")):
            first = first_json_line(head)
            if first is not None and _is_message(first):
                return SESSION  # {info, parts} per line
            opening = head.lstrip()[:4000]
            if opening.startswith("{") and '"messages"' in opening and '"info"' in opening \
                    and '"sessionID"' in opening:
                return SESSION  # `opencode export`
        return ""

    def read_sessions(self, path: str, lines: Callable[[], Iterable[str]]) -> Iterator[SessionRecord]:
        import os

        name = os.path.basename(path)
        if name == DB_NAME:
            yield from read_database(path)
        elif name.startswith("ses_") and name.endswith(".json"):
            record = read_stored(path)
            if record is not None:
                yield record
        else:
            record = read_export(path, lines)
            if record is not None:
                yield record


def _map(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _is_message(entry: Any) -> bool:
    info = entry.get("info") if isinstance(entry, dict) else None
    return isinstance(info, dict) and isinstance(entry.get("parts"), list) and "role" in info


def call_outcome(tool: str, state: Mapping[str, Any]) -> tuple[bool, str]:
    """(ok, error) of a finished tool call, from its part's `state` (or a plugin's `output`:
    `{output, metadata}`). `bash` completes whatever its exit: `metadata.exit` says."""
    if state.get("status") == "error":
        return False, text(state.get("error")) or "the tool failed"
    metadata = _map(state.get("metadata"))
    if tool == "bash" and "exit" in metadata:
        code = metadata.get("exit")
        output = text(state.get("output")) or text(metadata.get("output"))
        if code is None:
            return False, output.strip() or "the command was killed (timeout or abort)"
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            return False, f"Exit code {code}\n{output.strip()}".strip()
    return True, ""


class _Session:
    """What one session's messages add up to."""

    def __init__(self, session_id: str, directory: str) -> None:
        self.session_id = session_id
        self.directory = directory
        self.calls: list[dict[str, Any]] = []
        self.models: dict[str, int] = {}
        self.llm_calls = self.tokens_in = self.tokens_out = 0
        self.started = self.ended = 0.0
        self.prompt = ""

    def message(self, info: Mapping[str, Any], parts: Iterable[Any]) -> None:
        from slmactor.harnesses.base import call_entry
        from slmactor.logic.loop.transcripts import as_count

        times = _map(info.get("time"))
        created = as_count(times.get("created")) / 1000.0
        if created:
            self.started = created if not self.started else min(self.started, created)
            self.ended = max(self.ended, as_count(times.get("completed")) / 1000.0 or created)
        role = info.get("role")
        if role == "assistant":
            model = text(info.get("modelID"))
            if model:
                self.models[model] = self.models.get(model, 0) + 1
            self.llm_calls += 1
            tokens = _map(info.get("tokens"))
            cache = _map(tokens.get("cache"))
            self.tokens_in += (as_count(tokens.get("input")) + as_count(cache.get("read"))
                               + as_count(cache.get("write")))
            self.tokens_out += as_count(tokens.get("output")) + as_count(tokens.get("reasoning"))
            where = _map(info.get("path"))
            self.directory = self.directory or text(where.get("root")) or text(where.get("cwd"))
        for count, part in enumerate(parts):
            if count >= MAX_PARTS or not isinstance(part, dict):
                break
            kind = part.get("type")
            if kind == "text" and role == "user" and not self.prompt and not part.get("synthetic"):
                self.prompt = text(part.get("text")).strip()
            if kind != "tool":
                continue
            state = _map(part.get("state"))
            tool = text(part.get("tool"))
            if not tool or state.get("status") not in ("completed", "error"):
                continue  # a call still pending or running never finished
            ok, error = call_outcome(tool, state)
            span = _map(state.get("time"))
            at = as_count(span.get("start")) / 1000.0 or created
            metadata = _map(state.get("metadata"))
            code = metadata.get("exit") if tool == "bash" else None
            self.calls.append(call_entry(HARNESS, at=at, call_id=text(part.get("callID")) or text(part.get("id")),
                                         tool=tool, tool_input=state.get("input"), ok=ok, error=error,
                                         exit_code=code if isinstance(code, int) and not isinstance(code, bool)
                                         else None))

    def record(self) -> SessionRecord:
        from slmactor.logic.loop.recorded import SessionRecord
        from slmactor.logic.loop.transcripts import TranscriptStats

        model = max(self.models, key=lambda m: (self.models[m], m)) if self.models else ""
        stats = TranscriptStats(model=model, llm_calls=self.llm_calls, tokens_in=self.tokens_in,
                                tokens_out=self.tokens_out, started_at=self.started, ended_at=self.ended,
                                first_prompt=self.prompt, calls=tuple(self.calls))
        return SessionRecord(session_id=self.session_id, cwd=self.directory, stats=stats)


def _loads(raw: Any) -> object:
    from slmactor.logic.loop.transcripts import parse_json

    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    return parse_json(raw)[0] if isinstance(raw, str) else None


def _connect(path: str) -> sqlite3.Connection:
    """The database, read-only (immutable when its folder cannot take the lock files)."""
    import sqlite3
    from urllib.parse import quote

    uri = f"file:{quote(path)}"
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=5)
        conn.execute("SELECT 1 FROM session LIMIT 1")
    except sqlite3.Error:
        conn = sqlite3.connect(f"{uri}?immutable=1", uri=True)
    conn.text_factory = lambda b: b.decode("utf-8", errors="replace")
    return conn


def read_database(path: str) -> Iterator[SessionRecord]:
    """Every session of an `opencode.db`, one at a time (a sub-agent's session is its own)."""
    conn = _connect(path)
    try:
        sessions = conn.execute("SELECT id, directory FROM session ORDER BY time_created, id").fetchall()
        for session_id, directory in sessions:
            one = _Session(str(session_id), directory if isinstance(directory, str) else "")
            rows = conn.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id "
                                "LIMIT ?", (session_id, MAX_MESSAGES)).fetchall()
            for message_id, data in rows:
                info = _loads(data)
                if not isinstance(info, dict):
                    continue
                parts = [_loads(p) for (p,) in conn.execute(
                    "SELECT data FROM part WHERE message_id = ? ORDER BY id LIMIT ?", (message_id, MAX_PARTS))]
                one.message(info, parts)
            yield one.record()
    finally:
        conn.close()


def _json_file(path: str) -> object:
    from slmactor.harnesses.base import read_regular_file

    data = read_regular_file(path, MAX_JSON_FILE)
    return _loads(data) if data is not None else None


def read_stored(path: str) -> SessionRecord | None:
    """The session of the JSON storage (before 1.2) whose session file is at `path`:
    `storage/session/<project>/<id>.json`, its messages and their parts beside it."""
    import os

    session = _json_file(path)
    if not isinstance(session, dict):
        return None
    storage = os.path.dirname(os.path.dirname(os.path.dirname(path)))
    session_id = text(session.get("id")) or os.path.basename(path).removesuffix(".json")
    one = _Session(session_id, text(session.get("directory")))
    messages: list[tuple[float, str, dict[str, Any]]] = []
    folder = os.path.join(storage, "message", session_id)
    try:
        names = sorted(os.listdir(folder))[:MAX_MESSAGES]
    except OSError:
        names = []
    for name in names:
        info = _json_file(os.path.join(folder, name)) if name.endswith(".json") else None
        if isinstance(info, dict):
            times = _map(info.get("time"))
            created = times.get("created")
            messages.append((float(created) if isinstance(created, (int, float)) else 0.0, name, info))
    for _created, name, info in sorted(messages, key=lambda m: (m[0], m[1])):
        message_id = text(info.get("id")) or name.removesuffix(".json")
        part_folder = os.path.join(storage, "part", message_id)
        try:
            part_names = sorted(os.listdir(part_folder))[:MAX_PARTS]
        except OSError:
            part_names = []
        one.message(info, [_json_file(os.path.join(part_folder, p)) for p in part_names if p.endswith(".json")])
    return one.record()


def read_export(path: str, lines: Callable[[], Iterable[str]]) -> SessionRecord | None:
    """The session of an export: `{info, parts}` per line, or `opencode export`'s
    `{info, messages}` document (pretty-printed or not)."""
    from slmactor.logic.loop.transcripts import json_objects, parse_json

    first = next((line for line in lines() if line.strip()), "")
    head, _why = parse_json(first)
    one: _Session | None = None
    if _is_message(head):
        for entry in json_objects(lines()):
            if _is_message(entry):
                info = entry["info"]
                one = one or _Session(text(info.get("sessionID")), "")
                one.message(info, entry["parts"])
    else:
        whole = head if isinstance(head, dict) else parse_json("".join(lines()))[0]
        if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
            session = _map(whole.get("info"))
            one = _Session(text(session.get("id")), text(session.get("directory")))
            for message in whole["messages"]:
                if _is_message(message):
                    one.message(message["info"], message["parts"])
    if one is None or not one.session_id:
        return None
    return one.record()


HARNESS = OpenCode()
