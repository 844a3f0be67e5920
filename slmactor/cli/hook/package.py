"""`slmactor hook package|entry-point`: a harness's own packaging of slmactor, and the per-user
entry point that packaging runs.

    slmactor hook package [--harness H] [--out DIR] [--check] [--dry-run] [--json]
    slmactor hook entry-point [--json]

`package` writes a Claude Code plugin (with the marketplace index beside it: `claude plugin
marketplace add DIR`, then `claude plugin install slmactor@slmactor`) or a Gemini CLI extension
(`gemini extensions link DIR/plugins/gemini`) under DIR (default: the project root), and writes
this user's entry point too, which the packages run. `--check` changes nothing and exits 1 when
a file on disk differs from what would be written (the repository's own packages are kept this
way). `entry-point` writes only the entry point: what a user who installed the plugin from a
marketplace runs once on each machine; it refuses, in one line naming the command that fixes
it, when this installation lacks the MCP SDK the plugin's server needs. The work is in `slmactor.hooks.package`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..context import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliContext


def register(sub: Any) -> None:
    from slmactor.hooks.package import packageable

    names = packageable()
    p = sub.add_parser("package", help="write a harness's plugin or extension of slmactor",
                       description="Write the Claude Code plugin (and its marketplace index) or "
                       "the Gemini CLI extension: slmactor's hooks and MCP server, running each "
                       "user's entry point, doing nothing where slmactor is not installed.")
    p.add_argument("--harness", choices=names,
                   help=f"only this harness's (default: every one: {', '.join(names)})")
    p.add_argument("--out", metavar="DIR", help="where to write (default: the project root)")
    p.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 when a file differs from what would be written")
    p.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
    p.set_defaults(func=cmd_package)
    e = sub.add_parser("entry-point", help="write this user's entry point that hooks and plugins run",
                       description="Write ~/.local/share/slmactor/bin/slmactor, running this "
                       "installation: the command shared hook files, plugins and extensions run.")
    e.set_defaults(func=cmd_entry_point)


def _write_entry_point() -> Path:
    """This user's entry point, and the pre-flight gate beside it (packaged hooks run both)."""
    from slmactor.hooks.install import write_entry_point, write_gate

    from ..service import shell_join, slmactor_command

    command = shell_join(slmactor_command())
    write_gate(Path.home(), command)
    return write_entry_point(Path.home(), command)


def cmd_package(ctx: CliContext) -> int:
    from slmactor.hooks.package import packageable, stale, write

    args = ctx.args
    root = Path(args.out) if args.out else ctx.project
    wanted = (args.harness,) if args.harness else packageable()
    if args.check:
        differ = {h: stale(h, root) for h in wanted}
        bad = sorted(f for files in differ.values() for f in files)
        ctx.emit({"ok": not bad, "root": str(root), "stale": bad},
                 "\n".join([f"differs from `slmactor hook package`: {root / f}" for f in bad])
                 or f"up to date: {root}")
        return EXIT_FAILED if bad else EXIT_OK
    try:
        written = {h: write(h, root, dry_run=args.dry_run) for h in wanted}
        entry = None if args.dry_run else _write_entry_point()
    except (ValueError, OSError) as exc:
        return ctx.fail(str(exc), EXIT_USAGE)
    lines = []
    for files in written.values():
        for f in files:
            verb = ("would write" if args.dry_run else "wrote") if f.changed else "unchanged"
            lines.append(f"{verb}: {f.path}")
    if entry:
        lines.append(f"entry point: {entry}")
    data = {"ok": True, "root": str(root), "dry_run": args.dry_run,
            "entry_point": str(entry) if entry else None,
            "files": [{"harness": h, "path": str(f.path), "changed": f.changed}
                      for h, files in written.items() for f in files]}
    ctx.emit(data, "\n".join(lines))
    return EXIT_OK


#: What the `[mcp]` extra installs (pyproject.toml).
MCP_REQUIREMENT = "mcp>=2.3,<3"


def mcp_fix_line() -> str:
    """The one command that gives this installation the MCP SDK (the `[mcp]` extra)."""
    import importlib.util
    import sys

    from ..service import shell_join

    prefix = sys.prefix.replace("\\", "/")
    if "/pipx/venvs/" in prefix:
        return f"pipx inject slmactor '{MCP_REQUIREMENT}'"
    if "/uv/tools/" in prefix:
        return "uv tool install --reinstall 'slmactor[daemon,mcp]'  (or from a clone: '.[daemon,mcp]')"
    if importlib.util.find_spec("pip") is not None:
        # The extra's one package, so an editable clone is not replaced by a published release.
        return shell_join([sys.executable, "-m", "pip", "install", MCP_REQUIREMENT])
    return f"pip install '{MCP_REQUIREMENT}'"


def cmd_entry_point(ctx: CliContext) -> int:
    from ..mcp import mcp_sdk_installed

    if not mcp_sdk_installed():
        # The plugin and the extension start `slmactor mcp` too: without the SDK their MCP
        # server would fail to connect while every step before said it was set up.
        return ctx.fail("hook entry-point: the plugin's MCP server needs the MCP SDK, which this "
                        f"installation lacks; install it with: {mcp_fix_line()} — then run "
                        "`slmactor hook entry-point` again", EXIT_FAILED)
    try:
        path = _write_entry_point()
    except OSError as exc:
        return ctx.fail(str(exc), EXIT_USAGE)
    ctx.emit({"ok": True, "entry_point": str(path)}, f"entry point: {path}")
    return EXIT_OK
