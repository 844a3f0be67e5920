"""Entry point of the `slmactor` command.

Command groups live in their own modules, each exposing `register(subparsers)`. A module is
imported only when its group is on the command line (or for `--help`), so `slmactor status`
pays for nothing but the client.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from typing import Any

from slmactor import __version__
from slmactor.cli.context import (
    EXIT_CODES_HELP,
    EXIT_OK,
    EXIT_USAGE,
    CliContext,
    CliError,
    silence_stdout,
)

#: group name → (help, modules that add its subcommands)
GROUPS: dict[str, tuple[str, list[str]]] = {
    "memory": ("inspect and reset memory", ["memory.episodes", "memory.facts", "memory.working",
                                           "memory.audit"]),
    "evolve": ("repair rules, fingerprints, policy", ["evolve.rules", "evolve.policy", "evolve.loop"]),
    "metrics": ("run metrics, comparisons, replay, reports", ["loop.metrics"]),
    "calibrate": ("model calibration profiles", ["calibrate"]),
    "hook": ("adapters for harness hook systems", ["hook"]),
    "graph": ("the knowledge graph over memory", ["graph"]),
    "import": ("bring in memory kept elsewhere (a lesson corpus, a bundle, recorded sessions)",
               ["importing", "bundles", "import_sessions"]),
    "git": ("share the project's learning through git", ["gitshare"]),
    "keys": ("CurveZMQ keys for remote endpoints", ["keys"]),
}
#: commands of `daemon_cmds`, parsed without loading anything else
DAEMON_COMMANDS = frozenset({"serve", "start", "stop", "status"})
#: modules that add top-level commands (beside serve/start/stop/status)
TOP_LEVEL = ["loop.demo", "service", "mcp", "memory.ui", "trust", "share", "shell.completion"]


def _exists(module: str) -> bool:
    return importlib.util.find_spec(f"slmactor.cli.{module}") is not None


def _load(module: str) -> Any:
    return importlib.import_module(f"slmactor.cli.{module}")


#: The options every command accepts, before or after its name (`slmactor status --json` and
#: `slmactor --json status` alike, as in git, docker or uv): (flags, argparse keywords).
COMMON_OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("--json",), {"action": "store_true", "help": "machine-readable output (one JSON document)"}),
    (("--project",), {"metavar": "DIR", "help": "project root (default: the git root of the cwd)"}),
    (("--runtime-dir",), {"metavar": "DIR",
                          "help": "the daemon's socket dir (default: $SLMACTOR_RUNTIME_DIR, else "
                                  "/run/user/<uid>/slmactor, else $XDG_RUNTIME_DIR/slmactor, "
                                  "else /tmp/slmactor-<uid>; a running daemon of yours in any of "
                                  "them is used)"}),
    (("--no-autostart",), {"action": "store_true", "help": "do not start the daemon if it is down"}),
    (("--timeout",), {"type": float, "default": 5.0, "metavar": "S",
                      "help": "seconds to wait for the daemon (default 5)"}),
)
#: Option names whose value is the next token (for finding the command without argparse).
VALUE_OPTIONS = frozenset(flags[0] for flags, kw in COMMON_OPTIONS if kw.get("action") is None)



class CommandParser(argparse.ArgumentParser):
    """Every parser of the command line, the top one and each (sub)command's.

    Each holds the common options, so they are read wherever they stand. `add_subparsers` makes
    subparsers of its parser's own class, so a command a module registers — today's or one added
    later — gets them without doing anything. Only the top parser has defaults; below it an
    option that is not given leaves the value already read (argparse copies a subparser's
    namespace over its parent's).
    """

    def __init__(self, *args: Any, top: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        group = self.add_argument_group("options of every command (before or after it)")
        for flags, options in COMMON_OPTIONS:
            group.add_argument(*flags, **(options if top else {**options, "default": argparse.SUPPRESS}))

    def error(self, message: str) -> Any:
        from slmactor.cli.shell.suggest import with_suggestion

        message = with_suggestion(message)
        if wants_json(sys.argv[1:] if _ARGV is None else _ARGV):
            # A script asked for JSON: it gets JSON for a usage error too (exit 2, as ever).
            import json

            print(json.dumps({"ok": False, "error": f"{self.prog}: {message}",
                              "usage": self.format_usage().strip()}))
            sys.exit(EXIT_USAGE)
        super().error(message)

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        # argparse's own `parse_args` reports unknown options from the top parser, which does
        # not know the subcommand's: the suggestion looks in the (sub)command the line reached.
        argv = list(sys.argv[1:] if args is None else args)
        parsed, extras = self.parse_known_args(argv, namespace)
        if extras:
            from slmactor.cli.shell.suggest import leaf, unrecognized

            self.error(unrecognized(extras, leaf(self, argv)))
        return parsed


#: The argv being parsed (`main`'s), for `CommandParser.error` to see `--json` in it.
_ARGV: list[str] | None = None


def wants_json(argv: Sequence[str]) -> bool:
    """Whether the command line asks for JSON (before `--`, which ends the options)."""
    for token in argv:
        if token == "--":
            return False
        if token == "--json":
            return True
    return False


def build_parser(wanted: str | None) -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="slmactor", top=True, epilog=EXIT_CODES_HELP,
        description="Memory and self-improvement daemon for coding-agent harnesses.",
    )
    parser.add_argument("--version", action="version", version=f"slmactor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from slmactor.cli import daemon_cmds

    daemon_cmds.register(sub)
    helper = sub.add_parser("help", help="show the help of a command (`slmactor help memory recall`)")
    helper.add_argument("topic", nargs="*", metavar="COMMAND", help="the command (and subcommand)")
    helper.set_defaults(func=_help)
    for module in TOP_LEVEL:
        # Only when the command is not already known to be a daemon command or a group: a
        # top-level module may import more than `slmactor status` should pay for.
        if wanted is None and _exists(module):
            _load(module).register(sub)
    if wanted in DAEMON_COMMANDS:
        return parser  # `slmactor status` should not pay for finding the other groups
    for group, (help_text, modules) in GROUPS.items():
        present = [m for m in modules if _exists(m)]
        if not present:
            continue
        gp = sub.add_parser(group, help=help_text, description=help_text)
        gsub = gp.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
        gp.set_defaults(func=_group_usage(gp))
        if wanted in (None, group):
            for module in present:
                loaded = _load(module)
                loaded.register(gsub)
                # A module may give the group itself an option (`import --bundle FILE`).
                if hasattr(loaded, "register_group"):
                    loaded.register_group(gp, _group_usage(gp))
    return parser


def _help(ctx: CliContext) -> int:
    """`slmactor help [COMMAND …]`: the same page as `slmactor COMMAND … --help`."""
    return main([*ctx.args.topic, "--help"])


def _group_usage(parser: argparse.ArgumentParser) -> Any:
    def usage(ctx: CliContext) -> int:
        # A group without its subcommand: show what the subcommands are, not a bare usage line.
        parser.print_help(sys.stderr)
        return EXIT_USAGE

    return usage


def _first_command(argv: Sequence[str]) -> str | None:
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        if token in VALUE_OPTIONS:
            skip = True
            continue
        if token.startswith("-"):
            continue
        return token
    return None


def _status_fast_path(argv: Sequence[str]) -> argparse.Namespace | None:
    """The options of a plain `slmactor [OPTIONS] status [OPTIONS]` (common options only).

    Health checks run `status` often and argparse (with the shutil/locale imports its help
    formatter pulls in) is ~8 ms of a ~60 ms process, so that one shape skips it. Anything else
    — another flag, `--help`, a typo — returns None and goes through the full parser.
    """
    values: dict[str, Any] = {
        "json": False, "project": None, "runtime_dir": None, "no_autostart": False,
        "timeout": 5.0, "command": None,
    }
    tokens = iter(argv)
    for token in tokens:
        if token == "status" and values["command"] is None:
            values["command"] = "status"
        elif token in ("--json", "--no-autostart"):
            values[token[2:].replace("-", "_")] = True
        elif token in VALUE_OPTIONS:
            value = next(tokens, None)
            if value is None or value.startswith("-"):
                return None
            if token == "--timeout":
                try:
                    values["timeout"] = float(value)
                except ValueError:
                    return None
            else:
                values[token[2:].replace("-", "_")] = value
        else:
            return None
    return argparse.Namespace(**values) if values["command"] == "status" else None


#: What `pip install 'slmactor[daemon]'` adds to the client-only install (pyproject.toml).
_DAEMON_DEPENDENCIES = frozenset({"anyio", "aiofiles", "platformdirs", "psutil", "numpy"})


def _run(args_list: list[str]) -> int:
    global _ARGV
    _ARGV = args_list
    fast = _status_fast_path(args_list)
    if fast is not None:
        from slmactor.cli.daemon_cmds import cmd_status

        return int(cmd_status(CliContext(fast)))
    first = _first_command(args_list)
    parser = build_parser(first if first in GROUPS or first in DAEMON_COMMANDS else None)
    args = parser.parse_args(args_list)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return int(func(CliContext(args)))


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a failure the user can cause is one line on stderr and an exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    from slmactor.cli.hook import is_hook_event_call

    if is_hook_event_call(args_list):
        # A harness's hook event: its own argv parser (options anywhere, exit 0 always, never
        # argparse's exit 2). `slmactor.cli.entry` gets here without importing this module.
        from slmactor.cli.hook import main as hook_main

        return hook_main(args_list)
    try:
        return _run(args_list)
    except CliError as exc:
        return exc.report()
    except KeyboardInterrupt:
        return 130
    except ModuleNotFoundError as exc:
        if exc.name not in _DAEMON_DEPENDENCIES:
            raise
        # A client-only install (`pip install slmactor`) has the client, not the daemon.
        print(f"slmactor: this command needs the daemon's dependencies ({exc.name} is missing):"
              " pip install 'slmactor[daemon]'", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (`slmactor status | head -1`): nothing more to say to it, and
        # the interpreter's final flush must not fail on the same pipe either.
        silence_stdout()
        return EXIT_OK
