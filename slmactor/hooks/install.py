"""Put slmactor's hook entries into a harness's settings, and take exactly those out again.

Where a harness reads its hooks is its room's `settings` (`slmactor.harnesses`): a JSON settings
file with a `"hooks"` key (`JsonSettings`, project and user scope), a folder with one
executable per event (`ScriptPerEvent`), or a plugin file the harness loads (`PluginFile`,
`hooks/install_files.py`).

`entries(harness, command)` is what we add: per event the room handles, one handler (the room's
`handler`: `{"type": "command", ...}`, its timeout unit, `async` where the harness runs it in the
background) in a matcher group of its own (the room's `tool_matcher` for tool events).

Merging (`merge` / `unmerge`) works on the parsed document: other hooks, other events and
unrelated keys are kept; installing twice gives one entry (our handler is recognised by its
command: `... slmactor hook <harness> ...`). The file's text is then edited only where our
entries go (`slmactor.logic.text.jsonedit`): its indentation, key order, comments (where the
harness reads comments) and final newline stay. `apply` writes atomically, keeps the file's
mode, and records the original bytes outside the project (`slmactor.hooks.backups`) before the
first change; `remove` puts those bytes back when nothing else changed since, so the file is
restored byte for byte (and without the record, cutting our entries out gives the same bytes).

What the user set stays set: a harness's "hooks off" switch or a hook they disabled is never
flipped (the room's `settings_notes` says so in one line), and where the harness also reads
hooks from another file beside this one (`hooks_elsewhere`) that already runs ours, nothing is
added (it would run twice).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from slmactor import harnesses
from slmactor.harnesses.base import PREFLIGHT, RECORD, PluginFile, ScriptPerEvent
from slmactor.hooks import backups
from slmactor.hooks.files import Change, SettingsError, diff, mode, write
from slmactor.logic.text import jsonedit

#: Each user's own entry point for hooks kept in files a team shares: `hook install` writes it
#: (pointing at this machine's installation), and the shared command runs it when it exists and
#: answers the harness's neutral output when it does not — a teammate without slmactor gets no
#: hook error. Under $HOME, not an XDG directory: harnesses start hooks without XDG variables.
ENTRY_POINT = ".local/share/slmactor/bin/slmactor"
#: The `command` that means "the user's entry point" (shared files) rather than this machine's.
SHARED = "$HOME/" + ENTRY_POINT
TIMEOUT_S = 10


def installable() -> tuple[str, ...]:
    """Every harness whose hooks `hook install` can configure."""
    return tuple(n for n in harnesses.names() if harnesses.get(n).settings is not None and harnesses.get(n).events)


def next_step(harness: str) -> str:
    """What the user must do after an install (the harness will not run new hooks unseen)."""
    return harnesses.get(harness).next_step


def _room(harness: str) -> Any:
    room = harnesses.find(harness)
    if room is None or room.settings is None or not room.events:
        raise ValueError(f"unknown harness {harness!r} (one of {', '.join(installable())})")
    return room


def settings_path(harness: str, scope: str, project: Path, home: Path, env: Mapping[str, str]) -> Path:
    """The settings file (a script-per-event harness: the hooks directory) for `scope`
    "project" or "user"."""
    return Path(_room(harness).settings_path(scope, project, home, env))


def gate_line(harness: str) -> str:
    """The command line of a harness's pre-tool event: the user's pre-flight gate
    (`hooks/gate.py`, written by `write_gate` beside the entry point), which starts slmactor only
    for a call pre-flight may change, and answers neutrally when the gate is not there."""
    from slmactor.hooks.gate import GATE_POINT, gate_args

    room = _room(harness)
    args = gate_args(harness, room.pre_event, room.neutral_json(), room.read_path_key,
                     room.read_limit, room.gate_always())
    return f'g="$HOME/{GATE_POINT}"; [ -x "$g" ] && exec "$g" {args}; echo \'{room.neutral_json()}\''


def write_gate(home: Path, command: str) -> Path:
    """Write (or refresh) this user's pre-flight gate, running `command` (this installation)
    for the calls it lets through."""
    from slmactor.hooks.gate import GATE_POINT, gate_text

    target = home / GATE_POINT
    rooms = (harnesses.get(name) for name in harnesses.names())
    text = gate_text(command, tuple(sorted({r.project_env for r in rooms if r.project_env})))
    if not (target.exists() and target.read_text(errors="replace") == text):
        write(target, text.encode(), 0o755)
    return target


def hook_line(harness: str, command: str, event: str) -> str:
    """The command line that runs `slmactor hook <harness> <event>`: this installation's
    (`command` an absolute command), or, for shared files (`command` is `SHARED`), each user's
    entry point when it is there and the neutral answer when it is not. `exec`: the hook is the
    process the harness waits on (a shell left as its parent costs Claude Code a second at exit)."""
    room = _room(harness)
    if event == room.pre_event and (room.preflight_shell or room.read_limit):
        return gate_line(harness)
    # An end event the harness only waits on is answered at once and reported from a detached
    # process (`--background`): the harness's exit does not wait for the session's report.
    args = f"hook {harness} {event}" + (" --background" if event in room.background_events else "")
    if command != SHARED:
        return f"exec {command} {args}"
    neutral = room.neutral_json()
    return f'h="{SHARED}"; [ -x "$h" ] && exec "$h" {args}; echo \'{neutral}\''


def entry_point_text(command: str, program: str) -> str:
    """The entry point script: run `command` (this installation, whose executable is `program`);
    when that is gone (a clone moved, a venv removed) a `slmactor` on PATH; else say in one line
    what to run, and answer a hook neutrally (`{}`, exit 0) and an MCP start quietly, so no
    harness session fails."""
    return (
        "#!/bin/sh\n"
        "# slmactor's entry point for this user: hooks, plugins and extensions run it.\n"
        "# Written by `slmactor hook install` / `slmactor hook entry-point`; run either again\n"
        "# after moving or reinstalling slmactor.\n"
        f"if [ -x {shlex.quote(program)} ]; then exec {command} \"$@\"; fi\n"
        'p=$(command -v slmactor 2>/dev/null)\n'
        'if [ -n "$p" ] && [ "$p" != "$0" ]; then exec "$p" "$@"; fi\n'
        f"echo \"slmactor: {shlex.quote(program)} is gone; run 'slmactor hook entry-point' with "
        "slmactor where it is now\" >&2\n"
        'case "$1" in hook) echo \'{}\'; exit 0 ;; mcp) exit 0 ;; esac\n'
        "exit 127\n")


def write_entry_point(home: Path, command: str) -> Path:
    """Write (or refresh) this user's entry point, running `command` (this installation)."""
    target = home / ENTRY_POINT
    words = shlex.split(command)
    text = entry_point_text(command, words[0] if words else command)
    if not (target.exists() and target.read_text(errors="replace") == text):
        write(target, text.encode(), 0o755)
    return target


def entries(harness: str, command: str, timeout_s: int = TIMEOUT_S) -> dict[str, dict[str, Any]]:
    """Per event, the matcher group we add: `{"matcher"?: str, "hooks": [handler]}`."""
    room = _room(harness)
    out: dict[str, dict[str, Any]] = {}
    for event, action in room.events.items():
        if not room.has_work(event):
            continue  # a process per event for nothing (a turn's end where a session end reports, ...)
        group: dict[str, Any] = {}
        pre_tools = room.preflight_tools()
        if action == PREFLIGHT and pre_tools:
            # Pre-flight looks at edits, and at shell and read calls where it may change them;
            # those go through the gate, which starts Python only when the project's table (or
            # a read's size) says the call may be changed (matchers are regular expressions).
            group["matcher"] = "|".join(pre_tools)
        elif action in (RECORD, PREFLIGHT) and room.tool_matcher:
            group["matcher"] = room.tool_matcher
        group["hooks"] = [room.handler(hook_line(harness, command, event), event, timeout_s)]
        out[event] = group
    return out


def snippet(harness: str, command: str) -> dict[str, Any]:
    """The hooks block to paste by hand: what `merge` makes of an empty file (a plugin-file
    harness: the file's name and text)."""
    room = _room(harness)
    if isinstance(room.settings, PluginFile):
        lines = {event: hook_line(harness, command, event) for event in room.events if room.has_work(event)}
        return {"file": room.settings.name, "plugin": room.plugin_text(lines, TIMEOUT_S)}
    return merge({}, harness, command)


def is_ours(handler: Any, harness: str) -> bool:
    """True for a handler that runs `slmactor hook <harness> ...`."""
    if not isinstance(handler, Mapping) or not isinstance(handler.get("command"), str):
        return False
    try:
        words = shlex.split(handler["command"])
    except ValueError:
        return False
    shared = any(w.startswith("h=") and ENTRY_POINT in w for w in words)
    gated = any(w.startswith("g=") and w.rstrip(";").endswith("slmactor-gate") for w in words)
    for i in range(len(words) - 1):
        if gated and words[i] == "$g" and words[i + 1] == harness:
            return True  # the pre-flight gate of this harness
    for i in range(1, len(words) - 1):
        if words[i] == "hook" and words[i + 1] == harness and (
                words[i - 1].rsplit("/", 1)[-1] == "slmactor" or (shared and words[i - 1] == "$h")):
            return True
    return False


def has_ours(harness: str, path: Path) -> bool:
    """Whether the settings file (or hooks folder) at `path` already runs our hooks."""
    room = _room(harness)
    if isinstance(room.settings, PluginFile):
        from slmactor.hooks.install_files import is_ours_plugin

        return path.is_file() and is_ours_plugin(path)
    if isinstance(room.settings, ScriptPerEvent):
        from slmactor.hooks.install_files import is_ours_file

        return path.is_dir() and any(is_ours_file(p) for p in path.iterdir() if p.is_file())
    try:
        _, _, doc = _read(path, harness)
    except (OSError, ValueError):
        return False
    container = _container(doc, harness, create=False)
    return container is not None and any(is_ours(h, harness) for *_, h in _handlers(container))


def _container(doc: dict[str, Any], harness: str, create: bool) -> dict[str, Any] | None:
    """The event → groups mapping of a settings document."""
    container: dict[str, Any] | None = _room(harness).hooks_container(doc, create)
    return container


def _handlers(container: Mapping[str, Any]) -> list[tuple[str, int, int, Any]]:
    """(event key, group index, handler index, handler) of every handler in `container`."""
    out: list[tuple[str, int, int, Any]] = []
    for key, groups in container.items():
        if isinstance(groups, list):
            for gi, group in enumerate(groups):
                if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                    out.extend((key, gi, hi, h) for hi, h in enumerate(group["hooks"]))
    return out


def merge(doc: dict[str, Any], harness: str, command: str,
          replaced: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """`doc` with our entries in (a deep copy; other content untouched, ours updated in place).
    `replaced` collects (event, command) of every entry taken for ours whose command was not
    the one written now: a user must see what goes — an entry that only imitates ours
    (`curl … | sh; exec …slmactor hook …`) included."""
    room = _room(harness)
    new: dict[str, Any] = json.loads(json.dumps(doc))
    container = _container(new, harness, create=True)
    if container is None:
        raise SettingsError("the settings file's \"hooks\" is not an object")
    for event, group in entries(harness, command).items():
        groups = container.setdefault(room.settings_key(new, container, event), [])
        if not isinstance(groups, list):
            raise SettingsError(f"the settings file's hooks.{event} is not a list")
        ours = [(g, i) for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
                for i, h in enumerate(g["hooks"]) if is_ours(h, harness)]
        if ours:
            first_group, index = ours[0]
            before = first_group["hooks"][index].get("command")
            if replaced is not None and before != group["hooks"][0].get("command"):
                replaced.append((str(event), str(before)))
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
        elif any(is_ours(h, harness) for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
                 for h in g["hooks"]):
            del container[event]  # only ours were there (an event the user had empty stays)
    if container is not new and not container and new.get("hooks") == {}:
        del new["hooks"]
    return new


def _reads_comments(harness: str) -> bool:
    """Whether the harness reads its settings file with comments allowed (they are kept)."""
    return bool(getattr(_room(harness).settings, "comments", False))


def _same_document(a: Any, b: Any) -> bool:
    """Equal as JSON documents, whatever the key order."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _read(path: Path, harness: str) -> tuple[bytes | None, str, dict[str, Any]]:
    """The file's bytes (None: no file), its text and its document."""
    if not path.exists():
        return None, "", {}
    raw = path.read_bytes()
    comments = _reads_comments(harness)
    try:
        text = raw.decode("utf-8")
        doc = jsonedit.loads(text, comments=comments) if text.strip() else {}
    except (UnicodeDecodeError, ValueError) as exc:
        kind = "JSON (comments allowed)" if comments else "JSON"
        raise SettingsError(f"{path} is not valid {kind} ({exc}); fix or move it first") from None
    if not isinstance(doc, dict):
        raise SettingsError(f"{path} does not hold a JSON object")
    return raw, text, doc


def _render(harness: str, text: str, doc: dict[str, Any]) -> bytes:
    """`text` edited in place to hold `doc` (a new or empty file: `doc` written out)."""
    if not text.strip():
        return jsonedit.dumps(doc).encode()
    comments = _reads_comments(harness)
    return jsonedit.rewrite(text, doc, comments=comments).encode()


def _where(home: Path | None, env: Mapping[str, str] | None) -> tuple[Path, Mapping[str, str]]:
    return (home if home is not None else Path.home()), (env if env is not None else os.environ)


def _elsewhere(harness: str, path: Path, home: Path, env: Mapping[str, str]) -> tuple[list[Path], list[Path]]:
    """Other files of this scope the harness reads hooks from: those running ours, and those
    holding only the user's."""
    with_ours, theirs = [], []
    for other, container in _room(harness).hooks_elsewhere(path, home, env):
        handlers = _handlers(container) if isinstance(container, Mapping) else []
        if any(is_ours(h, harness) for *_, h in handlers):
            with_ours.append(other)
        elif handlers:
            theirs.append(other)
    return with_ours, theirs


def apply(harness: str, path: Path, command: str, *, dry_run: bool = False, home: Path | None = None,
          env: Mapping[str, str] | None = None, store: Path | None = None) -> Change:
    """Install our entries into the settings file at `path` (a script-per-event harness: the
    hooks directory). `store`: where originals are kept (default `backups.root()`)."""
    room = _room(harness)
    if isinstance(room.settings, PluginFile):
        from slmactor.hooks.install_files import install_plugin

        lines = {event: hook_line(harness, command, event) for event in room.events
                 if room.has_work(event)}
        return install_plugin(room, path, lines, TIMEOUT_S, dry_run=dry_run)
    if isinstance(room.settings, ScriptPerEvent):
        from slmactor.hooks.install_files import install_scripts

        lines = {event: hook_line(harness, command, event) for event in room.events}
        return install_scripts(room, path, lines, dry_run=dry_run)
    home, env = _where(home, env)
    store = store if store is not None else backups.root()
    with_ours, theirs = _elsewhere(harness, path, home, env)
    if with_ours:
        return Change(harness, path, False, "", None, tuple(
            f"slmactor's hooks are already in {other}: {path} left as it is ({room.title} reads "
            f"both, so ours would run twice)" for other in with_ours))
    inline = room.inline_file(path)
    if inline is not None and not has_ours(harness, path) and (inline in theirs or _holds_block(room, inline)):
        change = _apply_inline(harness, path, inline, command, dry_run=dry_run, store=store)
        if change is not None:
            return change
    old, text, doc = _read(path, harness)
    replaced: list[tuple[str, str]] = []
    merged = merge(doc, harness, command, replaced)
    notes = [f"{other} has hooks of yours: kept; {room.title} runs those and slmactor's from "
             f"{path.name}" for other in theirs]
    notes.extend(f"replaced the {event} entry that ran `{before}` (it was taken for "
                 f"slmactor's; what else it ran is gone — check it was yours)"
                 for event, before in replaced)
    notes.extend(room.settings_notes(merged, path, lambda h: is_ours(h, harness), home, env))
    if old is not None and _same_document(merged, doc):
        return Change(harness, path, False, "", None, tuple(notes))
    new = _render(harness, text, merged)
    shown = diff(path, old, new)
    backup = backups.read(store, path).folder
    if not dry_run:
        if not backups.adopt_legacy(store, path):
            backups.save(store, path, old)
        write(path, new, mode(path))
    return Change(harness, path, True, shown, backup if old is not None else None, tuple(notes))


def remove(harness: str, path: Path, *, dry_run: bool = False, home: Path | None = None,
           env: Mapping[str, str] | None = None, store: Path | None = None) -> Change:
    """Take our entries out again; the original bytes come back when nothing else changed."""
    room = _room(harness)
    if isinstance(room.settings, PluginFile):
        from slmactor.hooks.install_files import remove_plugin

        return remove_plugin(room, path, dry_run=dry_run)
    if isinstance(room.settings, ScriptPerEvent):
        from slmactor.hooks.install_files import remove_scripts

        return remove_scripts(room, path, dry_run=dry_run)
    home, env = _where(home, env)
    store = store if store is not None else backups.root()
    notes = tuple(f"slmactor's hooks in {other} were put there by hand: left for you to remove"
                  for other in _elsewhere(harness, path, home, env)[0])
    inline = room.inline_file(path)
    if inline is not None and _holds_block(room, inline):
        change = _remove_inline(harness, inline, dry_run=dry_run, store=store)
        rest = remove(harness, path, dry_run=dry_run, home=home, env=env, store=store) \
            if has_ours(harness, path) else None
        if rest is None or not rest.changed:
            return change._replace(notes=notes)
        return rest._replace(diff=change.diff + rest.diff, notes=notes + rest.notes)
    old, text, doc = _read(path, harness)
    if old is None:
        return Change(harness, path, False, "", None, notes)
    if not dry_run:
        backups.adopt_legacy(store, path)
    cleaned = unmerge(doc, harness)
    if _same_document(cleaned, doc):
        return Change(harness, path, False, "", None, notes)
    record = backups.read(store, path)
    kept: Path | None = None
    if record.original is not None and _same(harness, record.original, cleaned):
        new: bytes | None = record.original
    elif record.known and record.original is None and not cleaned:
        new = None  # we created the file: it goes again
    else:
        new = _render(harness, text, cleaned)
        if record.original is not None:
            kept = record.folder / "original"
            notes += (f"the file changed since the install; its bytes from before are kept at {kept}",)
    if not dry_run:
        if new is None:
            path.unlink()
        else:
            write(path, new, mode(path))
        if kept is None:
            backups.drop(store, path)
    return Change(harness, path, True, diff(path, old, new), kept, notes)


def _holds_block(room: Any, inline: Path) -> bool:
    """Whether the room's inline file holds our block (an earlier install put it there)."""
    try:
        text = inline.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    cleaned = room.inline_render(text, {})
    return cleaned is not None and cleaned != text


def _apply_inline(harness: str, path: Path, inline: Path, command: str, *, dry_run: bool,
                  store: Path) -> Change | None:
    """Our entries as a block of the file where the user keeps their own hooks (None: the room
    cannot add them there safely)."""
    room = _room(harness)
    old = inline.read_bytes()
    new = room.inline_render(old.decode("utf-8"), entries(harness, command))
    if new is None:
        return None
    note = (f"{inline} has hooks of yours: slmactor's go beside them there, not in {path.name} "
            f"({room.title} then reads one file, and warns about none)")
    if new.encode() == old:
        return Change(harness, inline, False, "", None, ())
    if not dry_run:
        backups.save(store, inline, old)
        write(inline, new.encode(), mode(inline))
    return Change(harness, inline, True, diff(inline, old, new.encode()), backups.read(store, inline).folder, (note,))


def _remove_inline(harness: str, inline: Path, *, dry_run: bool, store: Path) -> Change:
    old = inline.read_bytes()
    cleaned = (_room(harness).inline_render(old.decode("utf-8"), {}) or "").encode()
    record = backups.read(store, inline)
    new = record.original if record.original is not None and record.original == cleaned else cleaned
    if not dry_run:
        write(inline, new, mode(inline))
        backups.drop(store, inline)
    return Change(harness, inline, True, diff(inline, old, new), None, ())


def _same(harness: str, raw: bytes, doc: dict[str, Any]) -> bool:
    comments = _reads_comments(harness)
    try:
        text = raw.decode("utf-8")
        value = jsonedit.loads(text, comments=comments) if text.strip() else {}
    except (UnicodeDecodeError, ValueError):
        return False
    return _same_document(value, doc)


