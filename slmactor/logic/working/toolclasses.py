"""Which tool names read files, edit files or run shell commands (SPEC S-1.2).

Working memory (S-1.3) files a tool call under "files read", "files edited" or "commands run"
by the class of its tool. slmcode's own names (`ws_read`, `ws_edit`, `ws_shell`, ...) are only
one dialect: every harness calls the same things by names of its own, which its room
(`slmactor/harnesses/`) lists; `ToolClasses.with_harnesses` adds those tables to slmcode's
(`slmactor.harnesses.tool_classes()` is the table the daemon uses), and
`ToolClasses.from_config` adds or replaces names.

Some tools read *or* edit depending on a sub-command (an editor that can `view` a file or
`create`/`str_replace`/`insert`/`undo_edit` it). Those are "mode tools": the class comes from
the first word of the event's `command` field (where a hook adapter puts the tool input's
command), else of its `args`.

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
#: A harness's names: (read tools, edit tools, shell tools, mode tools → {sub-command: class}).
HarnessNames = tuple[Iterable[str], Iterable[str], Iterable[str], Mapping[str, Mapping[str, str]]]
_CANON = {READ: READ, EDIT: EDIT, SHELL: SHELL}

#: SPEC S-1.2 exactly (slmcode's names).
SEED_READ = ("ws_read", "ws_list", "ws_glob", "ws_grep", "read")
SEED_EDIT = ("ws_edit", "ws_write", "ws_patch", "ws_delete", "ws_mv", "edit", "write")
SEED_SHELL = ("ws_shell", "bash", "shell", "run_command")

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
    def with_harnesses(cls, tables: Iterable[HarnessNames]) -> ToolClasses:
        """S-1.2 plus each harness's `(read, edit, shell, modes)` names (its room's tables)."""
        read, edit, shell = list(SEED_READ), list(SEED_EDIT), list(SEED_SHELL)
        modes: dict[str, Mapping[str, str]] = {}
        for more_read, more_edit, more_shell, more_modes in tables:
            read.extend(more_read)
            edit.extend(more_edit)
            shell.extend(more_shell)
            for tool, table in more_modes.items():
                modes.setdefault(tool, table)
        return cls(read, edit, shell, modes)

    @classmethod
    def from_config(cls, config: Mapping[str, object], defaults: ToolClasses | None = None) -> ToolClasses:
        """Build from a config table: `read`/`edit`/`shell` lists of names, `modes` (tool →
        {sub-command: class}), and `replace_defaults` (bool; default false = extend the defaults).

        The defaults extended are `defaults` (the harnesses' table), else slmcode's own names.
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
        base = defaults if defaults is not None else cls.seed()
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


#: The table pure working-memory code uses when its caller passes none: slmcode's own names (the
#: daemon passes `slmactor.harnesses.tool_classes()`, every harness's names too).
DEFAULT_TOOL_CLASSES = ToolClasses.seed()
