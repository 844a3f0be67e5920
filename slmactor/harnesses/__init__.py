"""One room per harness, and the registry the generic machinery asks.

Each module (or small package) here holds everything slmactor knows about one agent program:
`claude` (Claude Code), `codex` (Codex CLI), `gemini` (Gemini CLI), `cline` (Cline), `openhands`
(OpenHands and its SDK, with the in-process adapter), `mini_swe_agent` (with its agent adapter),
`sweagent` (SWE-agent trajectories), `opencode` (its tool names). Each begins with the harness
version and the source files it follows, and subclasses `base.Harness`.

Nothing outside this package branches on a harness: `hooks/`, `hook install`, working memory's
tool classes, the session report and `metrics replay` call `get(name)` (or iterate `every()`)
and use the room's tables and methods. Adding a harness means adding one room and registering
it: built in, by a line in `BUILTIN`; from outside, by naming its module in the environment
variable `SLMACTOR_HARNESSES` (comma-separated module paths, each exposing `HARNESS`) or by
calling `register` in process.

Cheap to import (a hook for an event with nothing to do loads only its own room): rooms are
imported on first use.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from slmactor.harnesses.base import Harness
    from slmactor.logic.failures.call import ToolCall
    from slmactor.logic.loop.replay import Trajectory
    from slmactor.logic.working.toolclasses import ToolClasses


#: Built-in harness name → the module of its room (in the order listings show them).
BUILTIN: dict[str, str] = {
    "claude": "slmactor.harnesses.claude",
    "codex": "slmactor.harnesses.codex",
    "gemini": "slmactor.harnesses.gemini",
    "openhands": "slmactor.harnesses.openhands",
    "cline": "slmactor.harnesses.cline",
    "mini_swe_agent": "slmactor.harnesses.mini_swe_agent",
    "sweagent": "slmactor.harnesses.sweagent",
    "opencode": "slmactor.harnesses.opencode",
}
#: Environment variable naming extra rooms (module paths, comma-separated).
EXTRA_ENV = "SLMACTOR_HARNESSES"

_loaded: dict[str, Harness] = {}
_extra_done = False
#: `tool_classes()` built once (a room registered later builds it again).
_classes: list[ToolClasses] = []


class UnknownHarness(KeyError):
    """No room of that name is registered."""


def register(harness: Harness) -> Harness:
    """Make a room known under its name (an in-process plugin; replaces one of the same name)."""
    if not harness.name:
        raise ValueError("a harness needs a name")
    _loaded[harness.name] = harness
    _classes.clear()
    _families.clear()
    return harness


def _import(module: str) -> Harness:
    __import__(module)
    harness: Harness = sys.modules[module].HARNESS
    return harness


def _load_extra() -> None:
    """Rooms named in `SLMACTOR_HARNESSES`; one that cannot be imported is reported, not fatal."""
    global _extra_done
    if _extra_done:
        return
    _extra_done = True
    for module in filter(None, (m.strip() for m in os.environ.get(EXTRA_ENV, "").split(","))):
        try:
            register(_import(module))
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not break the hook
            print(f"slmactor: harness module {module!r} not loaded: {type(exc).__name__}: {exc}",
                  file=sys.stderr)


def get(name: str) -> Harness:
    """The room of `name`; UnknownHarness when there is none."""
    found = _loaded.get(name)
    if found is not None:
        return found
    module = BUILTIN.get(name)
    if module is not None:
        return register(_import(module))
    _load_extra()
    found = _loaded.get(name)
    if found is None:
        raise UnknownHarness(name)
    return found


def find(name: str) -> Harness | None:
    """The room of `name`, or None."""
    try:
        return get(name)
    except UnknownHarness:
        return None


def names(*, hooks_only: bool = False) -> tuple[str, ...]:
    """Every registered harness (built in first); with `hooks_only`, those with hook events."""
    _load_extra()
    every_name = list(BUILTIN) + [n for n in _loaded if n not in BUILTIN]
    if not hooks_only:
        return tuple(every_name)
    return tuple(n for n in every_name if get(n).events)


def every() -> tuple[Harness, ...]:
    """Every registered room."""
    return tuple(get(n) for n in names())


def tool_classes() -> ToolClasses:
    """Working memory's default tool classes: slmcode's names (SPEC S-1.2) plus every room's."""
    if not _classes:
        from slmactor.logic.working.toolclasses import ToolClasses

        rooms = every()
        _classes.append(ToolClasses.with_harnesses(
            [(h.read_tools, h.edit_tools, h.shell_tools, h.mode_tools) for h in rooms]))
    return _classes[0]


#: slmcode's own tool names (SPEC S-1.2) → family, below every room's.
_SEED_FAMILIES = {"ws_read": "read", "read": "read", "ws_edit": "edit", "ws_write": "edit",
                  "ws_patch": "edit", "ws_delete": "edit", "ws_mv": "edit", "edit": "edit",
                  "write": "edit", "ws_shell": "shell", "bash": "shell", "shell": "shell",
                  "run_command": "shell", "ws_list": "search", "ws_glob": "search",
                  "ws_grep": "search"}
#: `tool_family` answers memoised (tool names are few; rooms registered later clear it).
_families: dict[str, str] = {}


def tool_family(name: str) -> str:
    """The family of a tool (edit, read, shell, search, web, task) in any room's vocabulary:
    the name as a room spells it first, then compared lower-cased, then slmcode's own names;
    "" for a tool no room knows (it is then a family of its own)."""
    found = _families.get(name)
    if found is not None:
        return found
    key = name.strip()
    rooms = every()
    family = next((h.families[key] for h in rooms if key in h.families), "")
    if not family:
        low = key.lower()
        family = next((f for h in rooms for t, f in h.families.items() if t.lower() == low),
                      _SEED_FAMILIES.get(low, ""))
    if len(_families) < 4096:
        _families[name] = family
    return family


def edit_format(tool: str) -> str:
    """The edit format a tool stands for in any room ("" when none says)."""
    key = tool.lower()
    for harness in every():
        found = harness.edit_formats.get(key)
        if found:
            return found
    return ""


def room_of(tool: str) -> Harness:
    """The room whose tools include `tool` (as it spells it, then lower-cased), else the
    generic room (`base.Harness`: the shared words only) — for a call whose harness is not
    named (a replayed step, a library client's call)."""
    rooms = every()
    found = next((h for h in rooms if tool in h.families), None)
    if found is None:
        low = tool.lower()
        found = next((h for h in rooms if any(t.lower() == low for t in h.families)), None)
    if found is not None:
        return found
    from slmactor.harnesses.base import Harness as Generic

    return Generic()


def tool_call(tool: str, tool_input: Any, **outcome: Any) -> ToolCall:
    """`Harness.tool_call` of the room that has `tool` (`room_of`)."""
    return room_of(tool).tool_call(tool, tool_input, **outcome)


def read_trajectory(data: Any, default_id: str) -> Trajectory:
    """`data` (parsed JSON) as a replayable `Trajectory`: slmactor's own format, else the first
    room whose trajectory format it is; raises `UnknownTrajectoryFormat` when none is."""
    from slmactor.logic.loop.importers import own_trajectory, trajectory_format, unknown

    if trajectory_format(data):
        return own_trajectory(data, default_id)
    for harness in every():
        if harness.trajectory_format(data):
            return harness.trajectory(data, default_id)
    raise unknown(data, [hint for h in every() for hint in h.trajectory_hints])


def trajectory_format_of(data: Any) -> str:
    """The name of the trajectory format `data` is in ("slmactor", "mini-swe-agent",
    "swe-agent", "openhands", "openhands-sdk", ...), or ""."""
    from slmactor.logic.loop.importers import trajectory_format

    own = trajectory_format(data)
    if own:
        return own
    for harness in every():
        found = harness.trajectory_format(data)
        if found:
            return found
    return ""
