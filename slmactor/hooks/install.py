"""Put slmactor's hook entries into a harness's settings, and take exactly those out again.

Where each harness reads its hooks (`settings_path`), from each harness's docs and source:

    claude     .claude/settings.json (project) · ~/.claude/settings.json (user)     "hooks" key
    codex      .codex/hooks.json · $CODEX_HOME/hooks.json (~/.codex)                "hooks" key
    gemini     .gemini/settings.json · ~/.gemini/settings.json                      "hooks" key
    openhands  .openhands/hooks.json · ~/.openhands/hooks.json   "hooks" key, or the events at top
    cline      .clinerules/hooks/<Event> · ~/Documents/Cline/Hooks/<Event>: one executable each

`entries(harness, command)` is what we add: per event, one `{"type": "command", ...}` handler in
a matcher group of its own. Timeouts: seconds, Gemini milliseconds. `async: true` (run in the
background, output ignored) only where the harness supports it and we return nothing: Claude
Code and OpenHands `PostToolUse` (a success: it is only recorded). Claude's
`PostToolUseFailure` / `PreToolUse` stay synchronous — they may carry a repair or a rewritten
input. Codex parses `async` but skips such hooks, Gemini and Cline have no such flag.

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

from .events import EVENTS, PREFLIGHT, RECORD, has_work

HARNESSES = ("claude", "codex", "gemini", "openhands", "cline")
BACKUP_SUFFIX = ".slmactor-backup"
TIMEOUT_S = 10
CLINE_MARKER = "# slmactor hook"
#: What the user must do after an install (the harness will not run new hooks unseen).
NEXT_STEP = {
    "claude": "Restart Claude Code (or run /hooks to review): it reads hooks when a session starts.",
    "codex": "Start codex and trust the new hooks when it asks (it lists hooks that are new or "
             "changed and runs none of them until you accept). An older codex also needs "
             "[features] codex_hooks = true in ~/.codex/config.toml.",
    "gemini": "Start gemini and accept the new hooks when it warns about them (project hooks are "
              "fingerprinted); /hooks panel lists them.",
    "openhands": "Start the agent from this directory: the SDK loads .openhands/hooks.json from "
                 "the working directory, else ~/.openhands/hooks.json.",
    "cline": "In Cline's settings, Feature Settings → check \"Enable Hooks\" (hooks do not run on Windows).",
}
_ASYNC = {"claude": frozenset({"PostToolUse"}), "openhands": frozenset({"PostToolUse"})}


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


def settings_path(harness: str, scope: str, project: Path, home: Path, env: Mapping[str, str]) -> Path:
    """The settings file (Cline: the hooks directory) for `scope` "project" or "user"."""
    if harness not in HARNESSES:
        raise ValueError(f"unknown harness {harness!r} (one of {', '.join(HARNESSES)})")
    user = scope == "user"
    if harness == "cline":
        return home / "Documents" / "Cline" / "Hooks" if user else project / ".clinerules" / "hooks"
    if harness == "codex" and user:
        return Path(env["CODEX_HOME"]) / "hooks.json" if env.get("CODEX_HOME") else home / ".codex" / "hooks.json"
    folder = {"claude": ".claude", "codex": ".codex", "gemini": ".gemini", "openhands": ".openhands"}[harness]
    name = "settings.json" if harness in ("claude", "gemini") else "hooks.json"
    return (home if user else project) / folder / name


def _tool_event(harness: str, event: str) -> bool:
    return EVENTS[harness].get(event) in (RECORD, PREFLIGHT)


def entries(harness: str, command: str, timeout_s: int = TIMEOUT_S) -> dict[str, dict[str, Any]]:
    """Per event, the matcher group we add: `{"matcher"?: str, "hooks": [handler]}`."""
    out: dict[str, dict[str, Any]] = {}
    for event in EVENTS[harness]:
        if not has_work(harness, event):
            continue  # a process per event for nothing (a Stop where SessionEnd reports, ...)
        handler: dict[str, Any] = {"type": "command", "command": f"{command} hook {harness} {event}"}
        if harness == "gemini":
            handler = {"name": f"slmactor-{event}", **handler, "timeout": timeout_s * 1000}
        else:
            handler["timeout"] = timeout_s
        if event in _ASYNC.get(harness, frozenset()):
            handler["async"] = True
        group: dict[str, Any] = {}
        if _tool_event(harness, event):
            group["matcher"] = ".*" if harness == "gemini" else "*"
        group["hooks"] = [handler]
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
    for i in range(1, len(words) - 1):
        if words[i] == "hook" and words[i + 1] == harness and words[i - 1].rsplit("/", 1)[-1] == "slmactor":
            return True
    return False


def _container(doc: dict[str, Any], harness: str, create: bool) -> dict[str, Any] | None:
    """The event → groups mapping of a settings document (OpenHands also accepts it at the top)."""
    if harness == "openhands" and "hooks" not in doc and any(k in doc for k in EVENTS["openhands"]):
        return doc
    hooks = doc.get("hooks")
    if isinstance(hooks, dict):
        return hooks
    if hooks is None and create:
        doc["hooks"] = {}
        return doc["hooks"]  # type: ignore[no-any-return]
    return None


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
    """Install our entries into the settings file at `path` (Cline: the hooks directory)."""
    if harness == "cline":
        return _cline_install(path, command, dry_run=dry_run)
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
    if harness == "cline":
        return _cline_remove(path, dry_run=dry_run)
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


def cline_script(command: str, event: str) -> str:
    return (f"#!/bin/sh\n{CLINE_MARKER} (installed by `slmactor hook install --harness cline`; "
            f"`slmactor hook uninstall --harness cline` removes it)\nexec {command} hook cline {event}\n")


def _is_ours_file(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return CLINE_MARKER.encode() in fh.read(4096).splitlines()[1]
    except (OSError, IndexError):
        return False


def _cline_install(folder: Path, command: str, *, dry_run: bool) -> Change:
    diffs, notes, changed = [], [], False
    for event in EVENTS["cline"]:
        path = folder / event
        text = cline_script(command, event).encode()
        old = path.read_bytes() if path.exists() else None
        if old == text:
            continue
        if old is not None and not _is_ours_file(path):
            notes.append(f"{path} exists and is not ours: left alone (Cline runs one file per event)")
            continue
        changed = True
        diffs.append(_diff(path, old, text))
        if not dry_run:
            _write(path, text, 0o755)
    return Change("cline", folder, changed, "".join(diffs), None, tuple(notes))


def _cline_remove(folder: Path, *, dry_run: bool) -> Change:
    diffs, changed = [], False
    for event in EVENTS["cline"]:
        path = folder / event
        if path.exists() and _is_ours_file(path):
            changed = True
            diffs.append(_diff(path, path.read_bytes(), None))
            if not dry_run:
                path.unlink()
    return Change("cline", folder, changed, "".join(diffs), None)
