"""`slmactor hook install|uninstall|config`: our hook entries in a harness's settings, and out.

    slmactor hook install --harness claude [--user|--project [DIR]] [--dry-run] [--json]
    slmactor hook uninstall --harness claude [--user|--project [DIR]] [--dry-run] [--json]
    slmactor hook config <harness>          the hooks block to paste by hand

User scope by default: the harness's per-user settings (its own configuration-directory
variable honoured: `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, ...), which run this installation
directly. `--project` (the git root of the current directory, or DIR) writes the project's
files instead, which a team shares: they run each user's own entry point
(`~/.local/share/slmactor/bin/slmactor`, which every install writes for its user) and answer
neutrally where slmactor is not installed; the report names the files to commit. The work is in
`slmactor.hooks.install`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ..context import EXIT_OK, EXIT_USAGE, CliContext


def register(sub: Any) -> None:
    from slmactor.hooks.install import installable

    HARNESSES = installable()

    for name, verb in (("install", "merge slmactor's hooks into"), ("uninstall", "remove slmactor's hooks from")):
        # `--project` here is also the scope flag (`--user|--project`), so it may come without
        # its DIR: this parser's definition replaces the common one (conflict_handler).
        p = sub.add_parser(name, help=f"{verb} a harness's settings", conflict_handler="resolve")
        p.add_argument("--harness", required=True, choices=HARNESSES, help="the harness")
        scope = p.add_mutually_exclusive_group()
        scope.add_argument("--user", dest="scope", action="store_const", const="user",
                           help="the harness's per-user settings (the default)")
        # Given without DIR it is "" (this project: the git root of the current directory).
        scope.add_argument("--project", nargs="?", const="", default=argparse.SUPPRESS, metavar="DIR",
                           help="the project's settings, shared by its team; DIR: that project's root "
                                "(default: the git root of the current directory)")
        p.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
        p.set_defaults(func=cmd_install if name == "install" else cmd_uninstall, scope=None)
    p = sub.add_parser("config", help="print the hooks block for a harness's settings file")
    p.add_argument("format", choices=HARNESSES, help="the harness")
    p.set_defaults(func=cmd_config)


def _command() -> str:
    from ..service import shell_join, slmactor_command

    return shell_join(slmactor_command())


def _scope(ctx: CliContext) -> str:
    """"project" when asked for (`--project [DIR]`, before or after the command), else "user"."""
    return "user" if ctx.args.scope == "user" or ctx.args.project is None else "project"


def _target(ctx: CliContext, scope: str) -> tuple[Path, str]:
    """The settings file (or folder) to edit, and a line when it is not the usual one."""
    from slmactor import harnesses
    from slmactor.hooks.install import settings_path

    harness, project = ctx.args.harness, ctx.project if scope == "project" else Path.cwd()
    path = settings_path(harness, scope, project, Path.home(), os.environ)
    return path, harnesses.get(harness).settings_path_note(scope, project, Path.home(), os.environ)


def _committable(ctx: CliContext, change: Any) -> list[str]:
    """The project files a team commits after a project install (relative to the project)."""
    root = ctx.project
    path = Path(change.path)
    found = [path] if path.is_file() else sorted(p for p in path.glob("*") if p.is_file()) if path.is_dir() else []
    from slmactor.hooks.install_files import is_ours_file

    if path.is_dir():
        found = [p for p in found if is_ours_file(p)]
    return [str(p.relative_to(root)) if p.is_relative_to(root) else str(p) for p in found]


def _report(ctx: CliContext, change: Any, verb: str, scope: str, where_note: str) -> int:
    from slmactor.hooks.install import next_step

    dry = ctx.args.dry_run
    notes = [n for n in (*where_note.split("\n"), *change.notes) if n]
    commit = _committable(ctx, change) if scope == "project" and change.changed and not dry else []
    data = {
        "ok": True, "harness": change.harness, "scope": scope, "path": str(change.path),
        "changed": change.changed, "dry_run": dry, "diff": change.diff,
        "backup": str(change.backup) if change.backup else None, "notes": notes,
        "commit": commit if verb == "install" else [],
        "next": next_step(change.harness) if verb == "install" and change.changed and not dry else "",
    }
    lines = []
    if dry:
        lines.append(change.diff.rstrip() or f"nothing to {verb} in {change.path}")
    elif change.changed:
        lines.append(f"{verb}ed slmactor hooks ({scope}): {change.path}")
        if change.backup and verb == "install":
            lines.append(f"the file's bytes from before are kept at {change.backup}")
    else:
        lines.append(f"nothing to {verb}: {change.path} is already {'set' if verb == 'install' else 'clean'}")
    lines.extend(notes)
    if data["commit"]:
        lines.append("commit for your team: " + " ".join(data["commit"]) + " (each teammate runs "
                     f"`slmactor hook install --harness {change.harness} --project` once: it writes their "
                     "own entry point and leaves the shared file as it is)")
    elif verb == "uninstall" and scope == "project" and change.changed and not dry:
        lines.append(f"commit the change to {change.path} for your team")
    if data["next"]:
        lines.append(f"next: {data['next']}")
    ctx.emit(data, "\n".join(lines))
    return EXIT_OK


def cmd_install(ctx: CliContext) -> int:
    from slmactor.hooks.install import SHARED, apply, write_entry_point, write_gate

    try:
        scope = _scope(ctx)
        path, note = _target(ctx, scope)
        if not ctx.args.dry_run:
            write_entry_point(Path.home(), _command())
            # The pre-tool event's gate runs this installation for the calls it lets through.
            write_gate(Path.home(), _command())
        # Every file runs the user's entry point, never this installation's path: a clone that
        # moves (or a venv rebuilt elsewhere) is one file to refresh, not every harness's
        # settings, and a hook meanwhile still answers neutrally instead of failing.
        command = SHARED
        change = apply(ctx.args.harness, path, command, dry_run=ctx.args.dry_run)
        twice = _also_elsewhere(ctx, scope)
    except (ValueError, OSError) as exc:
        return ctx.fail(str(exc), EXIT_USAGE)
    return _report(ctx, change, "install", scope, "\n".join(n for n in (note, twice) if n))


def _also_elsewhere(ctx: CliContext, scope: str) -> str:
    """A line when the other scope's file (this project's, or the user's) runs our hooks too:
    where both apply, the harness runs each of ours twice."""
    from slmactor import harnesses
    from slmactor.hooks.install import has_ours, settings_path

    other = "user" if scope == "project" else "project"
    harness = ctx.args.harness
    try:
        path = settings_path(harness, other, ctx.project, Path.home(), os.environ)
    except ValueError:
        return ""
    if not has_ours(harness, path):
        return ""
    flag = " --project" if other == "project" else ""
    return (f"{path} runs slmactor's hooks too: in this project {harnesses.get(harness).title} would run "
            f"them twice; `slmactor hook uninstall --harness {harness}{flag}` takes those out")


def cmd_uninstall(ctx: CliContext) -> int:
    from slmactor.hooks.install import remove

    try:
        scope = _scope(ctx)
        path, note = _target(ctx, scope)
        change = remove(ctx.args.harness, path, dry_run=ctx.args.dry_run)
    except (ValueError, OSError) as exc:
        return ctx.fail(str(exc), EXIT_USAGE)
    return _report(ctx, change, "uninstall", scope, note)


def cmd_config(ctx: CliContext) -> int:
    from slmactor.hooks.install import snippet

    ctx.emit(snippet(ctx.args.format, _command()), None)
    return EXIT_OK
