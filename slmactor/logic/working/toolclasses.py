"""Which tool names read files, edit files or run shell commands (SPEC S-1.2), per harness.

Working memory (S-1.3) files a tool call under "files read", "files edited" or "commands run"
by the class of its tool. slmcode's own names (`ws_read`, `ws_edit`, `ws_shell`, ...) are only
one dialect: real harnesses call the same things `Read`/`Edit`/`Bash` (Claude Code),
`shell`/`apply_patch` (Codex CLI), `str_replace_editor`/`execute_bash` (OpenHands),
`open`/`edit`/`create` (SWE-agent), `read_file`/`run_shell_command` (Gemini CLI), and so on.
`DEFAULT_TOOL_CLASSES` knows all of these; `ToolClasses.from_config` adds or replaces names.

Some tools read *or* edit depending on a sub-command: OpenHands' and SWE-agent's
`str_replace_editor` (and the SDK's `file_editor`) `view` a file or `create`/`str_replace`/
`insert`/`undo_edit` it. Those are "mode tools": the class comes from the first word of the
event's `command` field (where a hook adapter puts `tool_input.command`), else of its `args`.

Names are compared lower-cased and trimmed. `classify` sits on the hot path, so results are
memoised in a small bounded dict (one lookup per event instead of strip + lower + set probes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

#: Classes a tool can have. OTHER tools only count as calls (and failures), nothing more.
READ: Final = "read"
EDIT: Final = "edit"
SHELL: Final = "shell"
OTHER: Final = ""
#: Internal marker for tools whose class depends on a sub-command.
MODE: Final = "mode"

_CLASSES = (READ, EDIT, SHELL)
_CANON = {READ: READ, EDIT: EDIT, SHELL: SHELL}

#: SPEC S-1.2 exactly (slmcode's names).
SEED_READ = ("ws_read", "ws_list", "ws_glob", "ws_grep", "read")
SEED_EDIT = ("ws_edit", "ws_write", "ws_patch", "ws_delete", "ws_mv", "edit", "write")
SEED_SHELL = ("ws_shell", "bash", "shell", "run_command")

#: Other harnesses' names (Claude Code, Codex CLI, OpenHands, SWE-agent, Gemini CLI, Cline,
#: opencode). Lower-case; a name listed twice would be ambiguous, so each appears once.
HARNESS_READ = (
    # Claude Code: Read, Glob, Grep, LS, NotebookRead
    "glob", "grep", "ls", "notebookread",
    # Codex CLI (experimental file tools), Gemini CLI, Cline
    "read_file", "list_dir", "grep_files", "read_many_files", "list_directory",
    "search_file_content", "list_files", "search_files",
    # Cline SDK
    "read_files",
    # opencode
    "list",
    # SWE-agent (classic ACI)
    "open", "goto", "scroll_up", "scroll_down", "find_file", "search_file", "search_dir",
    # OpenHands
    "view",
)
HARNESS_EDIT = (
    # Claude Code: Edit, MultiEdit, Write, NotebookEdit
    "multiedit", "notebookedit",
    # Codex CLI, opencode
    "apply_patch", "patch",
    # Gemini CLI, Cline
    "write_file", "replace", "write_to_file", "replace_in_file",
    # SWE-agent
    "create", "insert", "append",
    # OpenHands (LLM-based editor)
    "edit_file",
    # Cline SDK
    "editor",
)
HARNESS_SHELL = (
    # Claude Code
    "bashoutput",
    # Codex CLI
    "local_shell", "exec_command", "unified_exec", "container.exec",
    # OpenHands
    "execute_bash", "terminal", "cmd_run",
    # Gemini CLI, Cline
    "run_shell_command", "execute_command",
    # Cline SDK
    "run_commands",
)
#: Mode tools: sub-command → class. Unknown sub-commands leave the call unclassified.
HARNESS_MODES: Mapping[str, Mapping[str, str]] = {
    "str_replace_editor": {
        "view": READ,
        "create": EDIT,
        "str_replace": EDIT,
        "insert": EDIT,
        "undo_edit": EDIT,
    },
    "file_editor": {
        "view": READ,
        "create": EDIT,
        "str_replace": EDIT,
        "insert": EDIT,
        "undo_edit": EDIT,
    },
}

#: Bound of the classify memo; real harnesses use a few dozen names.
_MEMO_LIMIT = 512


class ToolClassesConfigError(ValueError):
    """The `[tool_classes]` configuration table is malformed."""


def _norm(name: str) -> str:
    return name.strip().lower()


class ToolClasses:
    """A mapping from tool name to class (read / edit / shell / other), plus mode tools."""

    __slots__ = ("_modes", "_names", "memo")

    def __init__(
        self,
        read: Iterable[str] = (),
        edit: Iterable[str] = (),
        shell: Iterable[str] = (),
        modes: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        names: dict[str, str] = {}
        for cls, group in ((READ, read), (EDIT, edit), (SHELL, shell)):
            for name in group:
                key = _norm(name)
                if key:
                    names[key] = cls
        self._modes: dict[str, dict[str, str]] = {}
        for tool, table in (modes or {}).items():
            key = _norm(tool)
            if not key:
                continue
            # Canonical constants (not the config's equal strings): the hot path compares by identity.
            subs = {_norm(sub): _CANON[cls] for sub, cls in table.items() if cls in _CANON}
            self._modes[key] = subs
            names[key] = MODE
        self._names = names
        #: raw tool name → (normalised name, class); bounded, cleared in place when full (so a
        #: reader may keep a reference to this dict).
        self.memo: dict[str, tuple[str, str]] = {}

    @classmethod
    def seed(cls) -> ToolClasses:
        """Exactly SPEC S-1.2 (slmcode's names only)."""
        return cls(SEED_READ, SEED_EDIT, SEED_SHELL)

    @classmethod
    def default(cls) -> ToolClasses:
        """S-1.2 plus the names of Claude Code, Codex, OpenHands, SWE-agent, Gemini, Cline, opencode."""
        return cls(
            SEED_READ + HARNESS_READ,
            SEED_EDIT + HARNESS_EDIT,
            SEED_SHELL + HARNESS_SHELL,
            HARNESS_MODES,
        )

    @classmethod
    def from_config(cls, config: Mapping[str, object]) -> ToolClasses:
        """Build from a config table: `read`/`edit`/`shell` lists of names, `modes` (tool →
        {sub-command: class}), and `replace_defaults` (bool; default false = extend the defaults).

        A name given in the config wins over the same name in the defaults. Values of the wrong
        type raise ToolClassesConfigError so a typo in config.toml is reported, not silently ignored.
        """
        unknown = set(config) - {"read", "edit", "shell", "modes", "replace_defaults"}
        if unknown:
            raise ToolClassesConfigError(f"unknown tool-class keys: {', '.join(sorted(unknown))}")
        groups: dict[str, list[str]] = {}
        for name in _CLASSES:
            value = config.get(name, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ToolClassesConfigError(f"tool classes: {name} must be a list of strings")
            groups[name] = value
        modes_raw = config.get("modes", {})
        if not isinstance(modes_raw, Mapping):
            raise ToolClassesConfigError("tool classes: modes must be a table of tool → {sub-command: class}")
        modes: dict[str, dict[str, str]] = {}
        for tool, table in modes_raw.items():
            if not isinstance(tool, str) or not isinstance(table, Mapping):
                raise ToolClassesConfigError("tool classes: modes must be a table of tool → {sub-command: class}")
            for sub, klass in table.items():
                if not isinstance(sub, str) or klass not in _CLASSES:
                    raise ToolClassesConfigError(f"tool classes: mode {tool}.{sub} must be read, edit or shell")
            modes[tool] = dict(table)
        replace = config.get("replace_defaults", False)
        if not isinstance(replace, bool):
            raise ToolClassesConfigError("tool classes: replace_defaults must be true or false")
        if replace:
            return cls(groups[READ], groups[EDIT], groups[SHELL], modes)
        base = cls.default()
        names = dict(base._names)
        merged_modes: dict[str, Mapping[str, str]] = dict(base._modes)
        for klass in _CLASSES:
            for raw in groups[klass]:
                name = _norm(raw)
                if name:
                    names[name] = klass
                    merged_modes.pop(name, None)
        for tool, table in modes.items():
            merged_modes[_norm(tool)] = table
        read, edit, shell = ([n for n, c in names.items() if c == k] for k in _CLASSES)
        return cls(read, edit, shell, merged_modes)

    def classify(self, tool: str) -> tuple[str, str]:
        """`(normalised name, class)` of a raw tool name; class MODE needs `mode_class`."""
        hit = self.memo.get(tool)
        if hit is not None:
            return hit
        name = _norm(tool)
        result = (name, self._names.get(name, OTHER))
        if len(self.memo) >= _MEMO_LIMIT:
            self.memo.clear()
        self.memo[tool] = result
        return result

    def mode_class(self, name: str, command: str, args: str) -> str:
        """Class of a mode tool call, from the first word of `command`, else of `args`."""
        table = self._modes.get(name)
        if not table:
            return OTHER
        words = command.split(None, 1) or args.split(None, 1)
        if words:
            found = table.get(words[0].strip("\"',:").lower())
            if found is not None:
                return found
        # Adapters that pass the tool input as JSON: look for a quoted sub-command near the start.
        head = args[:256]
        for sub, cls in table.items():
            if f'"{sub}"' in head:
                return cls
        return OTHER

    def class_of(self, tool: str, command: str = "", args: str = "") -> str:
        """Class of one call (read / edit / shell / "" for other), resolving mode tools."""
        name, cls = self.classify(tool)
        return self.mode_class(name, command, args) if cls == MODE else cls

    def names(self) -> dict[str, list[str]]:
        """Every known name per class (mode tools under "modes"), for `status` and docs."""
        out: dict[str, list[str]] = {READ: [], EDIT: [], SHELL: [], "modes": []}
        for name, cls in self._names.items():
            out["modes" if cls == MODE else cls].append(name)
        return {k: sorted(v) for k, v in out.items()}


#: The table working memory uses unless the configuration says otherwise.
DEFAULT_TOOL_CLASSES = ToolClasses.default()
