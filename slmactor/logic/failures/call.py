"""One tool call as the house keeps it: built once, by the harness's room, and read everywhere.

A harness says what a call was in its own words: its tool names, its argument keys
(`file_path`, `absolute_path`, `old_string`, `allow_multiple`, an argv of `["bash", "-lc", …]`),
its way of saying "failed". The room of that harness (`slmactor.harnesses`) reads a payload or a
transcript entry once and builds a `ToolCall`; every shared module — the fingerprint, the
repair transforms, typed repairs, pre-flight, the rules actor, reflection — reads the record's
fields and never a harness's key.

* `args` is the call's arguments as a map, keys as the harness spells them (what a rewrite must
  give back); `words` says which of those keys carry the shared meanings (`SHARED`: the file,
  the text to replace and its replacement, replace-all, the file's content, the shell command,
  a patch). `shared()` is the arguments in the shared words (what transforms and typed repairs
  read, what rules are learned in), `localized()` turns shared-word arguments back into the
  harness's keys. No JSON is parsed for either: the map crosses the wire as a msgpack map.
* `command` is the shell command the call runs (an `sh -c` argv read as its script), `paths`
  every file it names, `error` the error text as the harness showed it (the fingerprint reads
  through the harness's wrappers, `unwrap`), `exit_code` the exit status the harness reported
  as a field (None when it reported none), `call_id` the id the harness and its transcript name
  the call by (how evidence of a later claim points back at it), `unparsed` arguments that were
  not a JSON object (a model's call cut off mid-string) as text.

`to_wire()` / `from_wire()` are the msgpack map `evolve.on_failure`, `evolve.resolved` and
`evolve.preflight` carry (`protocol.messages.CALL_FIELDS`, capped by the codec); `from_wire`
is total: a malformed map gives None, never an exception. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The shared words: what a call's argument means, whatever the harness calls the key.
PATH = "path"
OLD = "old_str"
NEW = "new_str"
REPLACE_ALL = "replace_all"
#: How many occurrences an edit expects to replace (an integer field some edit tools take).
EXPECTED = "expected"
CONTENT = "content"
COMMAND = "command"
PATCH = "patch"
SHARED = (PATH, OLD, NEW, REPLACE_ALL, EXPECTED, CONTENT, COMMAND, PATCH)

#: Caps of the wire map (characters; below the codec's caps of the fields carrying it).
MAX_TOOL = 200
MAX_COMMAND = 4_000
MAX_ERROR = 16_000
MAX_PATH = 4_000
MAX_PATHS = 64
MAX_ID = 200
MAX_UNPARSED = 16_000
#: Characters of text (keys and strings) a call's arguments may hold on the wire; larger
#: arguments are left out (the protocol's `MAX_CALL_ARGS`): a repair of them is not attempted.
MAX_ARGS_TEXT = 64 * 1024


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call (see the module docstring for each field)."""

    tool: str
    family: str = ""
    #: What a hook may do with it: edit / read / shell / "" (a mode editor's `view` reads).
    kind: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    #: Shared word → the key of `args` that carries it, for this call.
    words: Mapping[str, str] = field(default_factory=dict)
    command: str = ""
    paths: tuple[str, ...] = ()
    ok: bool = True
    error: str = ""
    exit_code: int | None = None
    call_id: str = ""
    unparsed: str = ""

    @property
    def path(self) -> str:
        """The first file the call names ("" when none)."""
        return self.paths[0] if self.paths else ""

    def arg(self, word: str) -> Any:
        """The value of the argument that means `word` (None when the call has none)."""
        key = self.words.get(word)
        return self.args.get(key) if key is not None else None

    def shared(self) -> dict[str, Any]:
        """The arguments in the shared words: each key that carries a shared meaning renamed to
        it, the command as its text (an argv read as its script), every other key as it is."""
        renamed = {key: word for word, key in self.words.items()}
        # The room gives a word to the key that spells it when there is one, so no key is
        # renamed onto another: the map is the same size, and `localized` gives it back whole.
        out = {renamed.get(key, key): value for key, value in self.args.items()}
        if self.command and COMMAND in self.words:
            out[COMMAND] = self.command
        return out

    def localized(self, shared: Mapping[str, Any]) -> dict[str, Any]:
        """`shared` (arguments in the shared words) in this call's keys: what the harness's
        tool takes. A command given as text where the call's was an argv becomes an argv again
        (`sh -c` kept, else the text split into words)."""
        out: dict[str, Any] = {}
        for key, value in shared.items():
            theirs = self.words.get(key, key)
            if key == COMMAND and isinstance(value, str):
                value = _as_argv(self.args.get(theirs), value)
            out[theirs] = value
        return out

    def rewritten(self, shared: Mapping[str, Any], tool: str = "") -> ToolCall:
        """This call with `shared` (arguments in the shared words) as its arguments, and `tool`
        when given: what a repair makes of it."""
        from dataclasses import replace

        return replace(self.with_input(self.localized(shared)), tool=tool or self.tool)

    @classmethod
    def in_shared_words(cls, tool: str, family: str, args: Mapping[str, Any], *, command: str = "",
                        path: str = "", ok: bool = True, error: str = "",
                        exit_code: int | None = None, call_id: str = "") -> ToolCall:
        """A call whose arguments are in the shared words already (a session ledger keeps them
        so): each shared word names itself; the command and the file are the ones the record
        names (a mode editor's `command: view` is no shell command)."""
        # The record's command and file fill in only for a call whose arguments were not kept:
        # kept arguments are the call as sent (Cline's `files` entries name their file inside),
        # and a key added to them would read as a difference from the call that fixed it.
        kept = bool(args)
        args = dict(args)
        if command and COMMAND not in args and not kept:
            args[COMMAND] = command
        if path and PATH not in args and not kept:
            args[PATH] = path
        return cls(tool, family, args=args, words={w: w for w in SHARED if w in args},
                   command=command, paths=(path,) if path else (), ok=ok, error=error,
                   exit_code=exit_code, call_id=call_id)

    def with_input(self, args: Mapping[str, Any]) -> ToolCall:
        """This call with `args` (in its harness's keys) as its arguments: its shared words
        still name the same keys, its command is read again."""
        words = {word: key for word, key in self.words.items() if key in args}
        command = self.command
        if COMMAND in words:
            command = command_text(args.get(words[COMMAND])) or command
        path = args.get(words[PATH]) if PATH in words else None
        paths = ((path,) + tuple(p for p in self.paths[1:] if p != path)
                 if isinstance(path, str) and path else self.paths)
        return ToolCall(self.tool, self.family, self.kind, dict(args), words, command, paths,
                        call_id=self.call_id)

    def to_wire(self) -> dict[str, Any]:
        """The call as a msgpack map, fields at their default left out."""
        out: dict[str, Any] = {"tool": _cut(self.tool, MAX_TOOL)}
        if self.family:
            out["family"] = self.family
        if self.kind:
            out["kind"] = self.kind
        if self.args and _text_size(self.args, MAX_ARGS_TEXT) <= MAX_ARGS_TEXT:
            out["args"] = dict(self.args)
        if self.words:
            out["words"] = dict(self.words)
        if self.command:
            out["command"] = _cut(self.command, MAX_COMMAND)
        if self.paths:
            out["paths"] = [_cut(p, MAX_PATH) for p in self.paths[:MAX_PATHS]]
        if not self.ok:
            out["ok"] = False
        if self.error:
            out["error"] = _cut(self.error, MAX_ERROR)
        if self.exit_code is not None:
            out["exit_code"] = self.exit_code
        if self.call_id:
            out["call_id"] = _cut(self.call_id, MAX_ID)
        if self.unparsed:
            out["unparsed"] = _cut(self.unparsed, MAX_UNPARSED)
        return out

    @classmethod
    def from_wire(cls, data: Any) -> ToolCall | None:
        """The call a wire map describes; None when it is not one (no tool name)."""
        if not isinstance(data, Mapping):
            return None
        tool = _str(data, "tool").strip()
        if not tool:
            return None
        args = data.get("args")
        words = data.get("words")
        paths = data.get("paths")
        code = data.get("exit_code")
        return cls(
            tool=tool, family=_str(data, "family"), kind=_str(data, "kind"),
            args=dict(args) if isinstance(args, Mapping) else {},
            words={str(k): v for k, v in words.items() if isinstance(v, str) and v}
            if isinstance(words, Mapping) else {},
            command=_str(data, "command"),
            paths=tuple(p for p in paths if isinstance(p, str) and p)[:MAX_PATHS]
            if isinstance(paths, list) else (),
            ok=data.get("ok") is not False, error=_str(data, "error"),
            exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
            call_id=_str(data, "call_id"), unparsed=_str(data, "unparsed"))


def _text_size(value: Any, limit: int) -> int:
    """Characters of text in a plain value (keys and strings), counted up to past `limit`."""
    if isinstance(value, str):
        return len(value)
    total = 0
    if isinstance(value, Mapping):
        for key, item in value.items():
            total += len(str(key)) + _text_size(item, limit - total)
            if total > limit:
                break
    elif isinstance(value, list | tuple):
        for item in value:
            total += _text_size(item, limit - total)
            if total > limit:
                break
    return total


def _str(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    from slmactor.logic.text.safecut import cut_chars  # never half a secret

    return cut_chars(text, limit - 1) + "…"


def command_text(value: Any) -> str:
    """The shell command an argument holds: its text, or an argv's (an `sh -c` argv's script,
    else its words joined as a shell would read them); "" for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(w, str) for w in value):
        if len(value) == 3 and value[1] in ("-c", "-lc"):
            return str(value[2])
        import shlex

        return shlex.join(value)
    return ""


def _as_argv(before: Any, command: str) -> Any:
    """`command` in the shape the call's command had: text, or an argv."""
    if not (isinstance(before, list) and all(isinstance(w, str) for w in before)):
        return command
    if len(before) == 3 and before[1] in ("-c", "-lc"):
        return [before[0], before[1], command]
    import shlex

    try:
        return shlex.split(command)
    except ValueError:
        return command.split()
