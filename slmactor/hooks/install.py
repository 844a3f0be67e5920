"""Put slmactor's hook entries into a harness's settings, and take exactly those out again.

Where a harness reads its hooks is its room's `settings` (`slmactor.harnesses`): a JSON settings
file with a `"hooks"` key (`JsonSettings`, project and user scope), or a folder with one
executable per event (`ScriptPerEvent`).

`entries(harness, command)` is what we add: per event the room handles, one handler (the room's
`handler`: `{"type": "command", ...}`, its timeout unit, `async` where the harness runs it in the
background) in a matcher group of its own (the room's `tool_matcher` for tool events).

Merging (`merge` / `unmerge`) works on the parsed document: other hooks, other events and
unrelated keys are kept; installing twice gives one entry (our handler is recognised by its
command: `... slmactor hook <harness> ...`). `apply` writes atomically, keeps the file's mode,
and saves the original bytes as `<file>.slmactor-backup` before the first change; `remove`
puts those bytes back when nothing else changed since, so the file is restored byte for byte.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from slmactor import harnesses
from slmactor.harnesses.base import PREFLIGHT, RECORD, ScriptPerEvent

BACKUP_SUFFIX = ".slmactor-backup"
#: Each user's own entry point for hooks kept in files a team shares: `hook install` writes it
#: (pointing at this machine's installation), and the shared command runs it when it exists and
#: answers the harness's neutral output when it does not — a teammate without slmactor gets no
#: hook error. Under $HOME, not an XDG directory: harnesses start hooks without XDG variables.
ENTRY_POINT = ".local/share/slmactor/bin/slmactor"
#: The `command` that means "the user's entry point" (shared files) rather than this machine's.
SHARED = "$HOME/" + ENTRY_POINT
TIMEOUT_S = 10
SCRIPT_MARKER = "# slmactor hook"


def installable() -> tuple[str, ...]:
    """Every harness whose hooks `hook install` can configure."""
    return tuple(n for n in harnesses.names() if harnesses.get(n).settings is not None and harnesses.get(n).events)


def next_step(harness: str) -> str:
    """What the user must do after an install (the harness will not run new hooks unseen)."""
    return harnesses.get(harness).next_step


class SettingsError(ValueError):
    """A settings file we cannot merge into safely (not JSON, not an object, odd `hooks`)."""


class Change(NamedTuple):
    """What an install or uninstall did (or, on a dry run, would do)."""

    harness: str
    path: Path
    changed: bool
    diff: str
    backup: Path | None
    notes: tuple[str, ...] = ()


def _room(harness: str) -> Any:
    room = harnesses.find(harness)
    if room is None or room.settings is None or not room.events:
        raise ValueError(f"unknown harness {harness!r} (one of {', '.join(installable())})")
    return room


def settings_path(harness: str, scope: str, project: Path, home: Path, env: Mapping[str, str]) -> Path:
    """The settings file (a script-per-event harness: the hooks directory) for `scope`
    "project" or "user"."""
    return Path(_room(harness).settings_path(scope, project, home, env))


def hook_line(harness: str, command: str, event: str) -> str:
    """The command line that runs `slmactor hook <harness> <event>`: this installation's
    (`command` an absolute command), or, for shared files (`command` is `SHARED`), each user's
    entry point when it is there and the neutral answer when it is not. `exec`: the hook is the
    process the harness waits on (a shell left as its parent costs Claude Code a second at exit)."""
    if command != SHARED:
        return f"exec {command} hook {harness} {event}"
    neutral = _room(harness).neutral_json()
    return (f'h="{SHARED}"; [ -x "$h" ] && exec "$h" hook {harness} {event}; '
            f"echo '{neutral}'")


def write_entry_point(home: Path, command: str) -> Path:
    """Write (or refresh) this user's hook entry point, running `command` (this installation)."""
    target = home / ENTRY_POINT
    text = f"#!/bin/sh\n# slmactor's hook entry point for this user (written by `slmactor hook install`)\nexec {command} \"$@\"\n"
    if not (target.exists() and target.read_text(errors="replace") == text):
        _write(target, text.encode(), 0o755)
    return target


def entries(harness: str, command: str, timeout_s: int = TIMEOUT_S) -> dict[str, dict[str, Any]]:
    """Per event, the matcher group we add: `{"matcher"?: str, "hooks": [handler]}`."""
    room = _room(harness)
    out: dict[str, dict[str, Any]] = {}
    for event, action in room.events.items():
        if not room.has_work(event):
            continue  # a process per event for nothing (a turn's end where a session end reports, ...)
        group: dict[str, Any] = {}
        pre_tools = sorted({*room.preflight_edits, *room.preflight_patches})
        if action == PREFLIGHT and pre_tools:
            # Pre-flight looks at edit tools only: a hook process on every Bash or Read call
            # would cost its whole run for nothing (matchers are regular expressions).
            group["matcher"] = "|".join(pre_tools)
        elif action in (RECORD, PREFLIGHT) and room.tool_matcher:
            group["matcher"] = room.tool_matcher
        group["hooks"] = [room.handler(hook_line(harness, command, event), event, timeout_s)]
        out[event] = group
    return out


def snippet(harness: str, command: str) -> dict[str, Any]:
    """The `hooks` block to paste by hand (what `merge` adds to an empty file)."""
    return {"hooks": {event: [group] for event, group in entries(harness, command).items()}}


def is_ours(handler: Any, harness: str) -> bool:
    """True for a handler that runs `slmactor hook <harness> ...`."""
    if not isinstance(handler, Mapping) or not isinstance(handler.get("command"), str):
        return False
    try:
        words = shlex.split(handler["command"])
    except ValueError:
        return False
    shared = any(w.startswith("h=") and ENTRY_POINT in w for w in words)
    for i in range(1, len(words) - 1):
        if words[i] == "hook" and words[i + 1] == harness and (
                words[i - 1].rsplit("/", 1)[-1] == "slmactor" or (shared and words[i - 1] == "$h")):
            return True
    return False


def _container(doc: dict[str, Any], harness: str, create: bool) -> dict[str, Any] | None:
    """The event → groups mapping of a settings document."""
    container: dict[str, Any] | None = _room(harness).hooks_container(doc, create)
    return container


def merge(doc: dict[str, Any], harness: str, command: str) -> dict[str, Any]:
    """`doc` with our entries in (a deep copy; other content untouched, ours updated in place)."""
    new: dict[str, Any] = json.loads(json.dumps(doc))
    container = _container(new, harness, create=True)
    if container is None:
        raise SettingsError("the settings file's \"hooks\" is not an object")
    for event, group in entries(harness, command).items():
        groups = container.setdefault(event, [])
        if not isinstance(groups, list):
            raise SettingsError(f"the settings file's hooks.{event} is not a list")
        ours = [(g, i) for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
                for i, h in enumerate(g["hooks"]) if is_ours(h, harness)]
        if ours:
            first_group, index = ours[0]
            first_group["hooks"][index] = group["hooks"][0]
        else:
            groups.append(group)
    return new


def unmerge(doc: dict[str, Any], harness: str) -> dict[str, Any]:
    """`doc` without our handlers (and without the groups and events they leave empty)."""
    new: dict[str, Any] = json.loads(json.dumps(doc))
    container = _container(new, harness, create=False)
    if container is None:
        return new
    for event in list(container):
        groups = container[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                handlers = [h for h in group["hooks"] if not is_ours(h, harness)]
                if not handlers and group["hooks"]:
                    continue  # the group held only ours
                group["hooks"] = handlers
            kept.append(group)
        if kept:
            container[event] = kept
        else:
            del container[event]
    if container is not new and not container and new.get("hooks") == {}:
        del new["hooks"]
    return new


def _dump(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()


def _diff(path: Path, old: bytes | None, new: bytes | None) -> str:
    a = (old or b"").decode(errors="replace").splitlines(keepends=True)
    b = (new or b"").decode(errors="replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, f"{path} (before)", f"{path} (after)"))


def _read(path: Path) -> tuple[bytes | None, dict[str, Any]]:
    if not path.exists():
        return None, {}
    raw = path.read_bytes()
    try:
        doc = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (UnicodeDecodeError, ValueError) as exc:
        raise SettingsError(f"{path} is not valid JSON ({exc}); fix or move it first") from None
    if not isinstance(doc, dict):
        raise SettingsError(f"{path} does not hold a JSON object")
    return raw, doc


def _write(path: Path, data: bytes, mode: int | None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(temp, mode if mode is not None else 0o644)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return None


def apply(harness: str, path: Path, command: str, *, dry_run: bool = False) -> Change:
    """Install our entries into the settings file at `path` (a script-per-event harness: the
    hooks directory)."""
    if isinstance(_room(harness).settings, ScriptPerEvent):
        return _scripts_install(harness, path, command, dry_run=dry_run)
    old, doc = _read(path)
    new = _dump(merge(doc, harness, command))
    if old is not None and json.loads(new) == doc:
        return Change(harness, path, False, "", None)
    diff = _diff(path, old, new)
    backup = path.with_name(path.name + BACKUP_SUFFIX) if old is not None else None
    if not dry_run:
        if backup is not None and not backup.exists():
            _write(backup, old or b"", _mode(path))
        _write(path, new, _mode(path))
    return Change(harness, path, True, diff, backup)


def remove(harness: str, path: Path, *, dry_run: bool = False) -> Change:
    """Take our entries out again; the original bytes come back when nothing else changed."""
    if isinstance(_room(harness).settings, ScriptPerEvent):
        return _scripts_remove(harness, path, dry_run=dry_run)
    old, doc = _read(path)
    if old is None:
        return Change(harness, path, False, "", None)
    cleaned = unmerge(doc, harness)
    if cleaned == doc:
        return Change(harness, path, False, "", None)
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    original = backup.read_bytes() if backup.exists() else None
    notes: tuple[str, ...] = ()
    if original is not None and _same(original, cleaned):
        new: bytes | None = original
    elif original is None and not cleaned:
        new = None  # we created the file: it goes again
    else:
        new = _dump(cleaned)
        if original is not None:
            notes = (f"the file changed since the install; the original is kept at {backup}",)
    if not dry_run:
        if new is None:
            path.unlink()
        else:
            _write(path, new, _mode(path))
        if original is not None and not notes:
            backup.unlink()
    return Change(harness, path, True, _diff(path, old, new), backup if notes else None, notes)


def _same(raw: bytes, doc: dict[str, Any]) -> bool:
    try:
        return bool(json.loads(raw.decode("utf-8") or "{}") == doc)
    except (UnicodeDecodeError, ValueError):
        return False


def event_script(harness: str, command: str, event: str) -> str:
    """The executable a script-per-event harness runs for `event`."""
    return (f"#!/bin/sh\n{SCRIPT_MARKER} (installed by `slmactor hook install --harness {harness}`; "
            f"`slmactor hook uninstall --harness {harness}` removes it)\n{hook_line(harness, command, event)}\n")


def _is_ours_file(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return SCRIPT_MARKER.encode() in fh.read(4096).splitlines()[1]
    except (OSError, IndexError):
        return False


def _scripts_install(harness: str, folder: Path, command: str, *, dry_run: bool) -> Change:
    diffs, notes, changed = [], [], False
    for event in _room(harness).events:
        path = folder / event
        text = event_script(harness, command, event).encode()
        old = path.read_bytes() if path.exists() else None
        if old == text:
            continue
        if old is not None and not _is_ours_file(path):
            notes.append(f"{path} exists and is not ours: left alone (the harness runs one file per event)")
            continue
        changed = True
        diffs.append(_diff(path, old, text))
        if not dry_run:
            _write(path, text, 0o755)
    return Change(harness, folder, changed, "".join(diffs), None, tuple(notes))


def _scripts_remove(harness: str, folder: Path, *, dry_run: bool) -> Change:
    diffs, changed = [], False
    for event in _room(harness).events:
        path = folder / event
        if path.exists() and _is_ours_file(path):
            changed = True
            diffs.append(_diff(path, path.read_bytes(), None))
            if not dry_run:
                path.unlink()
    return Change(harness, folder, changed, "".join(diffs), None)
