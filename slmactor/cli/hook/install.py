"""`slmactor hook install|uninstall|config`: our hook entries in a harness's settings, and out.

    slmactor hook install --harness claude [--user|--project] [--dry-run] [--json]
    slmactor hook uninstall --harness claude [--user|--project] [--dry-run] [--json]
    slmactor hook config <harness>          the hooks block to paste by hand

The project is the git root of the current directory (or the global `--project DIR`); `--user`
targets the harness's per-user file instead. A project's files are shared by a team, so they
run each user's own entry point (`~/.local/share/slmactor/bin/slmactor`, which every install
writes for its user) and answer neutrally where slmactor is not installed; a user's own file
runs this installation directly. The work is in `slmactor.hooks.install`.
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
                           help="the harness's per-user settings")
        scope.add_argument("--project", nargs="?", const=None, default=argparse.SUPPRESS, metavar="DIR",
                           help="the project's settings (the default); DIR: that project's root "
                                "(default: the git root of the current directory)")
        p.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
        p.set_defaults(func=cmd_install if name == "install" else cmd_uninstall, scope="project")
    p = sub.add_parser("config", help="print the hooks block for a harness's settings file")
    p.add_argument("format", choices=HARNESSES, help="the harness")
    p.set_defaults(func=cmd_config)


def _command() -> str:
    from ..service import shell_join, slmactor_command

    return shell_join(slmactor_command())


def _target(ctx: CliContext) -> Path:
    from slmactor.hooks.install import settings_path

    return settings_path(ctx.args.harness, ctx.args.scope, ctx.project, Path.home(), os.environ)


def _report(ctx: CliContext, change: Any, verb: str) -> int:
    from slmactor.hooks.install import next_step

    dry = ctx.args.dry_run
    data = {
        "ok": True, "harness": change.harness, "scope": ctx.args.scope, "path": str(change.path),
        "changed": change.changed, "dry_run": dry, "diff": change.diff,
        "backup": str(change.backup) if change.backup else None, "notes": list(change.notes),
        "next": next_step(change.harness) if verb == "install" and change.changed and not dry else "",
    }
    lines = []
    if dry:
        lines.append(change.diff.rstrip() or f"nothing to {verb} in {change.path}")
    elif change.changed:
        lines.append(f"{verb}ed slmactor hooks: {change.path}")
        if change.backup and verb == "install":
            lines.append(f"original saved as {change.backup}")
    else:
        lines.append(f"nothing to {verb}: {change.path} is already {'set' if verb == 'install' else 'clean'}")
    lines.extend(change.notes)
    if data["next"]:
        lines.append(f"next: {data['next']}")
    ctx.emit(data, "\n".join(lines))
    return EXIT_OK


def _scoped_command(ctx: CliContext) -> str:
    """What the hook entries run: each user's entry point in a project's shared files, this
    installation in a user's own."""
    from slmactor.hooks.install import SHARED

    return SHARED if ctx.args.scope == "project" else _command()


def cmd_install(ctx: CliContext) -> int:
    from slmactor.hooks.install import apply, write_entry_point

    try:
        if not ctx.args.dry_run:
            write_entry_point(Path.home(), _command())
        change = apply(ctx.args.harness, _target(ctx), _scoped_command(ctx), dry_run=ctx.args.dry_run)
    except (ValueError, OSError) as exc:
        return ctx.fail(str(exc), EXIT_USAGE)
    return _report(ctx, change, "install")


def cmd_uninstall(ctx: CliContext) -> int:
    from slmactor.hooks.install import remove

    try:
        change = remove(ctx.args.harness, _target(ctx), dry_run=ctx.args.dry_run)
    except (ValueError, OSError) as exc:
        return ctx.fail(str(exc), EXIT_USAGE)
    return _report(ctx, change, "uninstall")


def cmd_config(ctx: CliContext) -> int:
    from slmactor.hooks.install import snippet

    ctx.emit(snippet(ctx.args.format, _command()), None)
    return EXIT_OK
