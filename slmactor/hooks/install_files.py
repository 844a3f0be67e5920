"""Our hooks as files of their own, for a harness that does not read them from a settings file:
one small script per event in a folder (the room's `ScriptPerEvent`), marked as ours on its
second line; or one generated plugin file the harness loads (the room's `PluginFile`, its text
from `Harness.plugin_text`), marked as ours near its top.

Scripts: a user's own file for an event is never touched. Where the harness runs every file named
for an event (the room's `suffixes`: `<Event>`, `<Event>.sh`, ...), ours goes beside theirs under
the next free name and both run; where it runs only one, theirs is left and the event goes
without ours — each said in one line. A plugin: a user's own file of the same name is never
touched either; the install says so in one line and the harness runs without ours. Uninstall
removes only files marked as ours.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from slmactor.hooks.files import Change, SettingsError, diff, write

SCRIPT_MARKER = "# slmactor hook"


def event_script(harness: str, line: str) -> str:
    """The executable a script-per-event harness runs for an event: `line` runs our hook."""
    return (f"#!/bin/sh\n{SCRIPT_MARKER} (installed by `slmactor hook install --harness {harness}`; "
            f"`slmactor hook uninstall --harness {harness}` removes it)\n{line}\n")


def is_ours_file(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return SCRIPT_MARKER.encode() in fh.read(4096).splitlines()[1]
    except (OSError, IndexError):
        return False


def _names(room: Any, event: str) -> list[str]:
    return [event + suffix for suffix in room.settings.suffixes]


def install_scripts(room: Any, folder: Path, lines: Mapping[str, str], *, dry_run: bool) -> Change:
    """Our script per event (`lines`: event → the command line that runs our hook)."""
    diffs, notes, changed = [], [], False
    blocked = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise SettingsError(f"{blocked} is a file, not a folder: cannot put {room.title}'s hooks in {folder}")
    for event in room.events:
        paths = [folder / name for name in _names(room, event)]
        ours = [p for p in paths if p.is_file() and is_ours_file(p)]
        free = [p for p in paths if not p.exists()]
        path = ours[0] if ours else free[0] if free else None
        theirs = [p for p in paths if p.exists() and p not in ours]
        if path is None:
            notes.append(f"{', '.join(map(str, theirs))} not ours: left alone, so {event} runs without "
                         f"slmactor ({room.title} runs one file per event name there)")
            continue
        if theirs and not ours:
            notes.append(f"kept your {theirs[0]}: {room.title} runs every file named for the event, "
                         f"so slmactor's runs beside it as {path.name}")
        text = event_script(room.name, lines[event]).encode()
        old = path.read_bytes() if path.exists() else None
        if old == text:
            continue
        changed = True
        diffs.append(diff(path, old, text))
        if not dry_run:
            write(path, text, 0o755)
    return Change(room.name, folder, changed, "".join(diffs), None, tuple(notes))


def remove_scripts(room: Any, folder: Path, *, dry_run: bool) -> Change:
    diffs, changed = [], False
    for event in room.events:
        for path in (folder / name for name in _names(room, event)):
            if path.is_file() and is_ours_file(path):
                changed = True
                diffs.append(diff(path, path.read_bytes(), None))
                if not dry_run:
                    path.unlink()
    return Change(room.name, folder, changed, "".join(diffs), None)

#: The words every plugin file we write carries in its first lines (a room's `plugin_text` puts
#: them in a comment of its language).
PLUGIN_MARKER = "slmactor hook plugin"


def is_ours_plugin(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return PLUGIN_MARKER.encode() in fh.read(512)
    except OSError:
        return False


def install_plugin(room: Any, path: Path, lines: Mapping[str, str], timeout_s: int, *,
                   dry_run: bool) -> Change:
    """Write our plugin file at `path` (`lines`: event → the command line that runs our hook)."""
    blocked = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise SettingsError(f"{blocked} is a file, not a folder: cannot put {room.title}'s plugin in "
                            f"{path.parent}")
    if path.is_dir():
        raise SettingsError(f"{path} is a folder: cannot write {room.title}'s plugin there")
    text = room.plugin_text(lines, timeout_s).encode()
    if PLUGIN_MARKER.encode() not in text[:512]:
        raise SettingsError(f"{room.title}'s plugin text does not carry the marker {PLUGIN_MARKER!r}")
    old = path.read_bytes() if path.exists() else None
    if old is not None and not is_ours_plugin(path):
        return Change(room.name, path, False, "", None, (
            (f"{path} is not slmactor's: left alone, so {room.title} runs without slmactor "
            "(move it and install again)"),))
    if old == text:
        return Change(room.name, path, False, "", None)
    if not dry_run:
        write(path, text, 0o644)
    return Change(room.name, path, True, diff(path, old, text), None)


def remove_plugin(room: Any, path: Path, *, dry_run: bool) -> Change:
    if not (path.is_file() and is_ours_plugin(path)):
        return Change(room.name, path, False, "", None)
    shown = diff(path, path.read_bytes(), None)
    if not dry_run:
        path.unlink()
    return Change(room.name, path, True, shown, None)
