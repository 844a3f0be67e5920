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
from slmactor.cli.context import EXIT_USAGE, CliContext

#: group name → (help, modules that add its subcommands)
GROUPS: dict[str, tuple[str, list[str]]] = {
    "memory": ("inspect and reset memory", ["memory.episodes", "memory.facts", "memory.working"]),
    "evolve": ("repair rules, fingerprints, policy", ["evolve.rules", "evolve.policy", "evolve.loop"]),
    "metrics": ("run metrics, comparisons, replay, reports", ["metrics"]),
    "calibrate": ("model calibration profiles", ["calibrate"]),
    "hook": ("adapters for harness hook systems", ["hook"]),
    "graph": ("the knowledge graph over memory", ["graph"]),
}
#: commands of `daemon_cmds`, parsed without loading anything else
DAEMON_COMMANDS = frozenset({"serve", "start", "stop", "status"})
#: modules that add top-level commands (beside serve/start/stop/status)
TOP_LEVEL = ["demo", "service"]


def _exists(module: str) -> bool:
    return importlib.util.find_spec(f"slmactor.cli.{module}") is not None


def _load(module: str) -> Any:
    return importlib.import_module(f"slmactor.cli.{module}")


def build_parser(wanted: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="slmactor", description="Memory and self-improvement daemon for coding-agent harnesses."
    )
    parser.add_argument("--version", action="version", version=f"slmactor {__version__}")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--project", metavar="DIR", help="project root (default: git root of cwd)")
    parser.add_argument("--runtime-dir", metavar="DIR", help="socket dir (default: $XDG_RUNTIME_DIR/slmactor)")
    parser.add_argument("--no-autostart", action="store_true", help="do not start the daemon if it is down")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for the daemon")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from slmactor.cli import daemon_cmds

    daemon_cmds.register(sub)
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
        gp = sub.add_parser(group, help=help_text)
        gsub = gp.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
        gp.set_defaults(func=_group_usage(gp))
        if wanted in (None, group):
            for module in present:
                _load(module).register(gsub)
    return parser


def _group_usage(parser: argparse.ArgumentParser) -> Any:
    def usage(ctx: CliContext) -> int:
        parser.print_usage(sys.stderr)
        return EXIT_USAGE

    return usage


def _first_command(argv: Sequence[str]) -> str | None:
    takes_value = {"--project", "--runtime-dir", "--timeout"}
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        if token in takes_value:
            skip = True
            continue
        if token.startswith("-"):
            continue
        return token
    return None


def _status_fast_path(argv: Sequence[str]) -> argparse.Namespace | None:
    """The options of a plain `slmactor [--json] [--runtime-dir DIR] [--timeout S] status`.

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
        if values["command"] is not None:
            return None  # argparse reads nothing after the command at this level
        if token == "status":
            values["command"] = "status"
        elif token in ("--json", "--no-autostart"):
            values[token[2:].replace("-", "_")] = True
        elif token in ("--runtime-dir", "--project", "--timeout"):
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


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
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
    try:
        return int(func(CliContext(args)))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
